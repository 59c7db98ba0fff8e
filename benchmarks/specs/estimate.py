"""The costs behind ``compare``'s time estimate: fits per 1000 items x epochs, evaluation.

On one thread (torch and BLAS: the job's default), in process CPU seconds:

* **fits**: every compared estimator at its job settings on ``make_clip_like`` items, at
  112 features (64 + 48) and 1,024 (512 + 512), at two training sizes (2 epochs) and two
  epoch counts (the larger size): per 1000 items x epochs (the slope in the items), per
  epoch (the slope in the epochs less the items' share) and per fit (the rest), fitted by
  non-negative least squares;
* **sam**: SAM's default fit on the synthetic data at 10 and 100 epochs (its per epoch);
* **evaluation**: ``evaluate_estimator`` of a fitted CCA and Diachronic on growing test
  splits.

``temporal_xmodal/comparison/estimate.py``'s constants are these figures with headroom
(``tests/test_cli.py`` holds them to the JSON).  ``--part`` measures one part, merged into
the JSON already in ``--output-dir``.  Full run: about 10 min on 2 cores.
"""

import json
import time

import numpy as np

from _common import timed_fit

WIDTHS = {"112": (64, 48), "1024": (512, 512)}


def arguments(parser):
    parser.add_argument("--part", choices=("all", "fits", "evaluation", "sam"), default="all",
                        help="measure one part only, merged into the existing JSON")


def _data(n, widths, seed=0):
    from temporal_xmodal.datasets import make_clip_like

    X, y, info = make_clip_like(n, n_image_features=widths[0], n_text_features=widths[1],
                                return_info=True, random_state=seed)
    return X.astype(np.float32), y, info.n_image_features


def _fit_model(cost, runs):
    """seconds = per_fit + epochs x (per_kilo_item_epoch x items / 1000 + per_epoch), the
    three non-negative costs fitted to the three runs."""
    from scipy.optimize import nnls

    A = np.array([[1.0, cost[r][1] * r[0] / 1000, cost[r][1]] for r in runs])
    t = np.array([cost[r][0] for r in runs])
    (per_fit, per_item, per_epoch), _ = nnls(A, t)
    return {"seconds": {f"{n}x{e}": cost[(n, e)][0] for n, e in runs},
            "epochs": [cost[r][1] for r in runs], "per_kilo_item_epoch": float(per_item),
            "per_epoch": float(per_epoch), "per_fit": float(per_fit),
            "fit_error": [float(v) for v in A @ [per_fit, per_item, per_epoch] / t - 1]}


def fit_costs(sizes, epochs):
    from temporal_xmodal.comparison.settings import (estimator_registry, set_matching_params,
                                                     training_epochs)

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
                    seconds.setdefault(name, {})[(n, e)] = (timed_fit(est, X, y, time.process_time),
                                                           training_epochs(est) or 1)
                    print(f"  {width} features, {n} items, {e} epochs: {name} "
                          f"{seconds[name][(n, e)][0]:.2f} CPU s", flush=True)
        out[width] = {name: _fit_model(cost, runs) for name, cost in seconds.items()}
    return out


def sam_synthetic(n=2100, epochs=(10, 100)):
    """SAM's default fit on the synthetic data at two epoch counts: per epoch and per fit."""
    from temporal_xmodal.comparison.settings import estimator_registry, set_matching_params
    from temporal_xmodal.datasets import make_temporal_crossmodal

    X, y, info = make_temporal_crossmodal(n, return_info=True, random_state=0)
    seconds = {}
    for e in epochs:
        est = estimator_registry(info.n_image_features, 0, 1.0)["SAM"].estimator
        set_matching_params(est, max_epochs=e)
        seconds[e] = timed_fit(est, X, y, time.process_time)
    per_epoch = (seconds[epochs[1]] - seconds[epochs[0]]) / (epochs[1] - epochs[0])
    return {"items": n, "seconds": {str(e): v for e, v in seconds.items()},
            "per_epoch": per_epoch, "per_fit": seconds[epochs[0]] - epochs[0] * per_epoch}


def evaluation_costs(train, test_sizes):
    from temporal_xmodal.comparison.settings import estimator_registry, set_matching_params
    from temporal_xmodal.evaluation import evaluate_estimator

    X, y, n_image = _data(train + max(test_sizes), WIDTHS["112"], seed=1)
    registry, out = estimator_registry(n_image, 0, 1.0), {}
    for name in ("CCA", "Diachronic"):
        est = registry[name].estimator
        set_matching_params(est, max_epochs=1)
        timed_fit(est, X[:train], y[:train], time.process_time)
        out[name] = {}
        for n in test_sizes:
            start = time.process_time()
            evaluate_estimator(est, X[train:train + n], y[train:train + n], time_window=1.0)
            out[name][str(n)] = time.process_time() - start
    return out


def measure(args):
    from temporal_xmodal._device import thread_limits

    sizes = (300, 900) if args.quick else (2000, 8000)
    test_sizes = (300, 900) if args.quick else (2000, 5000, 15000, 30000)
    path = args.output_dir / "bench_estimate.json"
    previous = json.loads(path.read_text()) if args.part != "all" and path.exists() else {}
    payload = {key: previous[key] for key in ("fits", "evaluation", "sam_synthetic",
                                              "train_sizes", "test_sizes", "epochs")
               if key in previous}
    with thread_limits(1):
        if args.part in ("all", "fits"):
            payload.update(fits=fit_costs(sizes, epochs=(2, 4)), train_sizes=list(sizes),
                           epochs=[2, 4])
        if args.part in ("all", "sam"):
            payload["sam_synthetic"] = sam_synthetic(*((300, (2, 4)) if args.quick else ()))
        if args.part in ("all", "evaluation"):
            payload.update(evaluation=evaluation_costs(1000 if args.quick else 3000, test_sizes),
                           test_sizes=list(test_sizes))
    return payload
