"""TempXNet vs its static (λ = 0) control on the synthetic temporal data set.

The thesis' time-period inference: time-window mAP@50 (relevant = same category
and |Δt| ≤ window) of image→text and text→image retrieval over the test split,
for TempXNet with each temporal correlation (recency, category KDE, word density)
at the thesis weight λ = 1 and at λ = 20, against the same network trained with
λ = 0, averaged over seeds.  ``make_temporal_crossmodal`` has spike and recurrent
categories whose bursts (events) share content, so temporal closeness within a
category is learnable.  Also reports the full-ranking category mAP.

Run::

    python benchmarks/bench_tempxnet_synthetic.py          # 5 seeds (~3 min on 2 cores)
    python benchmarks/bench_tempxnet_synthetic.py --quick  # 1 seed, 2 epochs, 900 items
"""

import numpy as np
from _common import make_parser, print_header, print_targets, target, write_results

from temporal_xmodal import TempXNetEmbedder
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.metrics import cross_modal_scores

WINDOW = 0.5  # time units of the generator (range 0..10): 5 % of the span


def _figures(model, X, y):
    Z = model.transform(X)
    d = Z.shape[1] // 2
    windowed = cross_modal_scores(Z[:, :d], Z[:, d:], y, metrics=("map",), k=50,
                                  time=X[:, -1], time_window=WINDOW)
    full = cross_modal_scores(Z[:, :d], Z[:, d:], y, metrics=("map",))
    return {"tmap50": windowed["map"], "tmap50_i2t": windowed["map_i2t"],
            "tmap50_t2i": windowed["map_t2i"], "map": full["map"]}


def main():
    args = make_parser(__doc__).parse_args()
    seeds = [0] if args.quick else [0, 1, 2, 3, 4]
    epochs = 2 if args.quick else 25
    n_samples, n_train = (900, 600) if args.quick else (3000, 2000)
    settings = [("static (λ=0)", "recency", 0.0)] + [
        (f"{corr} λ={lam:g}", corr, lam) for corr in ("recency", "category", "topic")
        for lam in (1.0, 20.0)]
    runs = {name: [] for name, _, _ in settings}
    for seed in seeds:
        X, y, info = make_temporal_crossmodal(n_samples, return_info=True, random_state=seed)
        X_tr, y_tr, X_te, y_te = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
        for name, corr, lam in settings:
            model = TempXNetEmbedder(correlation=corr, temporal_weight=lam, max_epochs=epochs,
                                     random_state=seed, n_image_features=info.n_image_features)
            runs[name].append(_figures(model.fit(X_tr, y_tr), X_te, y_te))
    print_header(f"time-window mAP@50 (window {WINDOW}), {len(seeds)} seed(s), {epochs} epochs")
    summary = {}
    for name, values in runs.items():
        mean = {k: float(np.mean([v[k] for v in values])) for k in values[0]}
        summary[name] = {"mean": mean, "runs": values}
        print(f"  {name:<18} t-mAP@50 {mean['tmap50']:.4f} (I→T {mean['tmap50_i2t']:.4f}, "
              f"T→I {mean['tmap50_t2i']:.4f})   mAP {mean['map']:.4f}")
    base = summary["static (λ=0)"]["mean"]["tmap50"]
    targets = {
        f"{name}_beats_static": target(summary[name]["mean"]["tmap50"] - base, 0.0, ">=",
                                       f"{name} − static, mean t-mAP@50")
        for name in ("recency λ=1", "recency λ=20", "category λ=20", "topic λ=20")
    }
    print_targets(targets)
    write_results("bench_tempxnet_synthetic", {
        "quick": args.quick, "parameters": {"seeds": seeds, "max_epochs": epochs,
                                            "window": WINDOW, "n_samples": n_samples},
        "results": summary, "targets": targets}, args.output_dir)


if __name__ == "__main__":
    main()
