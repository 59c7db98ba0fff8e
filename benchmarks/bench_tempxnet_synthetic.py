"""TempXNet at its default weight vs its static (λ = 0) control on synthetic temporal data.

The thesis' time-period inference: time-window mAP@50 (relevant = same category
and |Δt| ≤ window) of image→text and text→image retrieval over the test split.
TempXNet is trained at its default weight λ = 1 with each temporal
normalisation (``"active_triplets"``, the default; ``"triplets"``; and the
thesis' ``"literal"`` eq. 4.18, where the summed triplet term is ~100× the
temporal term) and with each correlation (recency, category KDE, word density),
against the same network trained with λ = 0, over seeds.  Prints mean ± std of
each, the default's difference to the control (also paired per seed) and the
ratio default / control; also reports the full-ranking category mAP, which the
temporal term should not cost.

The data: ``make_temporal_crossmodal`` with explicit arguments (8 categories:
spike, recurrent and steady profiles; time in [0, 10]); items of one burst
(event) share content, so temporal closeness within a category is learnable.

Run::

    python benchmarks/bench_tempxnet_synthetic.py          # 5 seeds, 25 epochs (~10 min on 2 cores)
    python benchmarks/bench_tempxnet_synthetic.py --quick  # 1 seed, 2 epochs, 450 items
"""

import numpy as np
from _common import make_parser, print_header, print_targets, target, write_results

from temporal_xmodal import TempXNetEmbedder
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.metrics import cross_modal_scores

WINDOW = 0.5  # time units of the generator (range 0..10): 5 % of the span
DATA = dict(n_categories=8, n_image_features=64, n_text_features=48, n_latent=16,
            time_range=(0.0, 10.0), profiles="mixed", drift=1.0, event_strength=1.0,
            noise=0.5, label_noise=0.05, n_recurrences=5, burst_width=0.02)
STATIC = "static (λ=0)"
DEFAULT = "recency λ=1 (default)"
#: name -> (correlation, temporal_weight, temporal_normalisation)
SETTINGS = {
    STATIC: ("recency", 0.0, "active_triplets"),
    DEFAULT: ("recency", 1.0, "active_triplets"),
    "recency λ=1 literal": ("recency", 1.0, "literal"),
    "recency λ=1 triplets": ("recency", 1.0, "triplets"),
    "category λ=1": ("category", 1.0, "active_triplets"),
    "topic λ=1": ("topic", 1.0, "active_triplets"),
}


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
    n_samples, n_train = (450, 300) if args.quick else (3000, 2000)
    runs = {name: [] for name in SETTINGS}
    for seed in seeds:
        X, y, info = make_temporal_crossmodal(n_samples, **DATA, return_info=True,
                                              random_state=seed)
        X_tr, y_tr, X_te, y_te = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
        for name, (corr, lam, norm) in SETTINGS.items():
            model = TempXNetEmbedder(correlation=corr, temporal_weight=lam,
                                     temporal_normalisation=norm, max_epochs=epochs,
                                     random_state=seed, n_image_features=info.n_image_features)
            runs[name].append(_figures(model.fit(X_tr, y_tr), X_te, y_te))

    print_header(f"time-window mAP@50 (window {WINDOW}) and category mAP, "
                 f"{len(seeds)} seed(s), {epochs} epochs, mean ± std")
    summary = {}
    for name, values in runs.items():
        mean = {k: float(np.mean([v[k] for v in values])) for k in values[0]}
        std = {k: float(np.std([v[k] for v in values])) for k in values[0]}
        summary[name] = {"mean": mean, "std": std, "runs": values}
        print(f"  {name:<22} t-mAP@50 {mean['tmap50']:.4f} ± {std['tmap50']:.4f} "
              f"(I→T {mean['tmap50_i2t']:.4f}, T→I {mean['tmap50_t2i']:.4f})   "
              f"mAP {mean['map']:.4f} ± {std['map']:.4f}")

    def tmaps(name):
        return np.array([v["tmap50"] for v in runs[name]])

    print_header(f"{DEFAULT} − {STATIC}")
    gain = tmaps(DEFAULT) - tmaps(STATIC)
    spread = max(summary[DEFAULT]["std"]["tmap50"], summary[STATIC]["std"]["tmap50"])
    in_stds = float(gain.mean() / spread) if spread > 0 else float("nan")
    ratio = float(tmaps(DEFAULT).mean() / tmaps(STATIC).mean())
    literal_gain = tmaps("recency λ=1 literal") - tmaps(STATIC)
    print(f"  difference of means  {gain.mean():+.4f}  = {in_stds:.1f} × the larger std "
          f"({spread:.4f})")
    print(f"  paired per seed      {gain.mean():+.4f} ± {gain.std():.4f}  {np.round(gain, 4)}")
    print(f"  ratio default/static {ratio:.3f}")
    print(f"  literal (thesis) λ=1 − static: {literal_gain.mean():+.4f} ± {literal_gain.std():.4f}")
    map_change = summary[DEFAULT]["mean"]["map"] - summary[STATIC]["mean"]["map"]
    targets = {
        "default_beats_static_by_2std": target(
            in_stds, 2.0, ">=", f"({DEFAULT} − static) mean t-mAP@50 in units of the larger "
            "per-setting std over seeds"),
        "default_keeps_category_map": target(
            map_change, -0.01, ">=", f"{DEFAULT} − static, mean category mAP"),
    }
    print_targets(targets)
    write_results("bench_tempxnet_synthetic", {
        "quick": args.quick,
        "parameters": {"seeds": seeds, "max_epochs": epochs, "window": WINDOW,
                       "n_samples": n_samples, "n_train": n_train, "data": DATA,
                       "settings": {k: dict(zip(("correlation", "temporal_weight",
                                                 "temporal_normalisation"), v))
                                    for k, v in SETTINGS.items()}},
        "results": summary,
        "comparison": {"default_minus_static": gain.tolist(), "in_stds": in_stds,
                       "ratio_default_over_static": ratio,
                       "literal_minus_static": literal_gain.tolist()},
        "targets": targets}, args.output_dir)


if __name__ == "__main__":
    main()
