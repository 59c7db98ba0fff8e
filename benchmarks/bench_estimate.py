"""The costs behind ``compare``'s time estimate: each estimator's fit per 1000 items × epochs at
two feature widths, and the evaluation's cost as the test split grows.

The main job prints its estimate before any fit (``temporal_xmodal/comparison/estimate.py``).
This benchmark measures what that estimate multiplies, on one thread (one torch thread, one
BLAS thread: the job's default), in process CPU seconds (on a free core, the wall time):

* **fits**: every compared estimator at its job settings on ``make_clip_like`` items, at 112
  features (64 + 48, the synthetic data's) and at 1024 (512 + 512, CLIP-sized), at two
  training sizes (2 epochs) and two epoch counts (2 and 4, the larger size): the cost per
  1000 items × epochs is the slope in the items, the cost per epoch that does not grow with
  the items the slope in the epochs less the items' share, the rest the cost per fit;
* **evaluation**: ``evaluate_estimator`` of a fitted CCA (32 dimensions) and of a fitted
  Diachronic (its default width) at growing test sizes: below ``QUERY_SAMPLE`` every item
  queries (n² query-item pairs), above it 5,000 do (5,000 × n), plus the per-bin protocol
  (n² / 10 pairs).

``estimate.py``'s constants are these figures with headroom; ``tests/test_cli.py`` holds them
to ``benchmarks/results/bench_estimate.json``.

Run: ``python benchmarks/bench_estimate.py`` (about 10 minutes on 2 cores; ``--quick``: seconds).
"""

import json
import time
import warnings

import numpy as np
import torch
from _common import make_parser, print_header, write_results

from temporal_xmodal._device import thread_limits
from temporal_xmodal.comparison.registry import (estimator_registry, set_matching_params,
                                                 training_epochs)
from temporal_xmodal.datasets import make_clip_like
from temporal_xmodal.evaluation import evaluate_estimator

NAME = "bench_estimate"
WIDTHS = {"112": (64, 48), "1024": (512, 512)}


def _data(n, widths, seed=0):
    X, y, info = make_clip_like(n, n_image_features=widths[0], n_text_features=widths[1],
                                return_info=True, random_state=seed)
    return X.astype(np.float32), y, info.n_image_features


def _cpu(func):
    start = time.process_time()
    result = func()
    return time.process_time() - start, result


def fit_costs(sizes, epochs):
    """Per width, each estimator's CPU seconds at (``sizes[0]``, ``epochs[0]``),
    (``sizes[1]``, ``epochs[0]``) and (``sizes[1]``, ``epochs[1]``), and what they give: the
    cost per 1000 items × epochs (the slope in the items), per epoch that does not grow with
    the items (the slope in the epochs, less the items' share) and per fit (the rest)."""
    runs = [(sizes[0], epochs[0]), (sizes[1], epochs[0]), (sizes[1], epochs[1])]
    out = {}
    for width, blocks in WIDTHS.items():
        seconds = {}
        for n in sizes:
            X, y, n_image = _data(n, blocks)
            for name, entry in estimator_registry(n_image, 0, 1.0).items():
                for e in [e for m, e in runs if m == n]:
                    est = entry.estimator
                    set_matching_params(est, max_epochs=e)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        cpu, _ = _cpu(lambda: est.fit(X, y))
                    seconds.setdefault(name, {})[(n, e)] = (cpu, training_epochs(est) or 1)
                    print(f"  {width} features, {n} items, {e} epochs: {name} {cpu:.2f} CPU s",
                          flush=True)
        out[width] = {name: _fit_model(cost, runs) for name, cost in seconds.items()}
    return out


def _fit_model(cost, runs):
    """seconds = per_fit + epochs × (per_kilo_item_epoch × items / 1000 + per_epoch), the
    three non-negative costs fitted to the three runs (non-negative least squares: timing
    noise does not make a cost negative); ``epochs`` as ``training_epochs`` counts them."""
    from scipy.optimize import nnls

    A = np.array([[1.0, cost[r][1] * r[0] / 1000, cost[r][1]] for r in runs])
    t = np.array([cost[r][0] for r in runs])
    (per_fit, per_item, per_epoch), _ = nnls(A, t)
    return {"seconds": {f"{n}x{e}": cost[(n, e)][0] for n, e in runs},
            "epochs": [cost[r][1] for r in runs], "per_kilo_item_epoch": float(per_item),
            "per_epoch": float(per_epoch), "per_fit": float(per_fit),
            "fit_error": [float(v) for v in A @ [per_fit, per_item, per_epoch] / t - 1]}


def sam_synthetic(n=2100, epochs=(10, 100)):
    """SAM's default fit on the synthetic data (the main job's: 3,000 items, 70 % train,
    112 features) at two epoch counts: its cost per epoch there (it samples its pairs per
    epoch, and the synthetic data's pairs cost less than make_clip_like's)."""
    from temporal_xmodal.datasets import make_temporal_crossmodal

    X, y, info = make_temporal_crossmodal(n, return_info=True, random_state=0)
    seconds = {}
    for e in epochs:
        est = estimator_registry(info.n_image_features, 0, 1.0)["SAM"].estimator
        set_matching_params(est, max_epochs=e)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seconds[e], _ = _cpu(lambda: est.fit(X, y))
        print(f"  SAM on the synthetic data, {n} items, {e} epochs: {seconds[e]:.2f} CPU s")
    per_epoch = (seconds[epochs[1]] - seconds[epochs[0]]) / (epochs[1] - epochs[0])
    return {"items": n, "seconds": {str(e): v for e, v in seconds.items()},
            "per_epoch": per_epoch, "per_fit": seconds[epochs[0]] - epochs[0] * per_epoch}


def evaluation_costs(train, test_sizes):
    """CPU seconds of ``evaluate_estimator`` on growing test splits, CCA and Diachronic."""
    X, y, n_image = _data(train + max(test_sizes), WIDTHS["112"], seed=1)
    registry = estimator_registry(n_image, 0, 1.0)
    out = {}
    for name in ("CCA", "Diachronic"):
        est = registry[name].estimator
        set_matching_params(est, max_epochs=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X[:train], y[:train])
        out[name] = {}
        for n in test_sizes:
            X_test, y_test = X[train:train + n], y[train:train + n]
            seconds, _ = _cpu(lambda: evaluate_estimator(est, X_test, y_test, time_window=1.0))
            out[name][str(n)] = seconds
            print(f"  evaluation of {name} on {n} test items: {seconds:.2f} CPU s", flush=True)
    return out


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--part", choices=("all", "fits", "evaluation", "sam"), default="all",
                        help="measure one part only, merged into the existing JSON")
    args = parser.parse_args()
    sizes = (300, 900) if args.quick else (2000, 8000)
    test_sizes = (300, 900) if args.quick else (2000, 5000, 15000, 30000)
    torch.set_num_threads(1)
    path = args.output_dir / f"{NAME}.json"
    previous = json.loads(path.read_text()) if args.part != "all" and path.exists() else {}
    payload = {key: previous[key] for key in ("fits", "evaluation", "sam_synthetic",
                                              "train_sizes", "test_sizes", "epochs")
               if key in previous}
    with thread_limits(1):
        if args.part in ("all", "fits"):
            print_header("Fits: CPU seconds (one thread)")
            payload.update(fits=fit_costs(sizes, epochs=(2, 4)), train_sizes=list(sizes),
                           epochs=[2, 4])
        if args.part in ("all", "sam"):
            print_header("SAM on the synthetic data")
            payload["sam_synthetic"] = sam_synthetic(*((300, (2, 4)) if args.quick else ()))
        if args.part in ("all", "evaluation"):
            print_header("Evaluation: CPU seconds (one thread)")
            payload.update(evaluation=evaluation_costs(1000 if args.quick else 3000, test_sizes),
                           test_sizes=list(test_sizes))
    fits = payload.get("fits", {})
    if fits:
        print_header("Per fit + per 1000 items x epochs + per epoch (CPU s)")
        for name in fits["112"]:
            print(f"  {name:18s} " + "   ".join(
                f"{w} features: {fits[w][name]['per_fit']:.2f} + "
                f"{fits[w][name]['per_kilo_item_epoch']:.3f} + {fits[w][name]['per_epoch']:.3f}"
                for w in WIDTHS))
    write_results(NAME, {"quick": args.quick, **payload}, args.output_dir)


if __name__ == "__main__":
    main()
