"""``GridSearchCV`` over ``DiachronicEmbedder`` with ``n_jobs=1`` and ``n_jobs=2``.

8 candidates (``decay`` x ``margin`` x ``lr``) of a small Diachronic (hidden 128, time 32,
D 64, 40 epochs, no validation) on ``make_temporal_crossmodal(2000)``, 3-fold CV; the
search's wall time (seconds) with ``n_jobs=1``, ``n_jobs=2`` on loky (cold: the first loky
search of the process, then with the workers started) and on threading (with and without
the per-worker thread limit).  Targets: loky's ``n_jobs=2`` under 0.9x the time of
``n_jobs=1``; every configuration gives the same ``best_params_`` and CV scores (1e-6).
Read more in docs/scaling.md.  Full run: a few minutes on 2 cores.
"""

import time
from contextlib import nullcontext
from unittest import mock

import numpy as np

from _common import target

FULL = {"n_samples": 2000, "max_epochs": 40, "cv": 3, "repeats": 1}
QUICK = {"n_samples": 400, "max_epochs": 1, "cv": 2, "repeats": 1}
# decay rather than window: at the default decay=0 a window shapes nothing (8 distinct fits)
GRID = {"decay": [0.0, 1.0], "margin": [0.5, 1.0], "lr": [5e-3, 2e-2]}
CONFIGS = {"n_jobs=1": dict(n_jobs=1),
           "n_jobs=2 loky": dict(n_jobs=2),  # the first loky call of the process: cold
           "n_jobs=2 loky, workers started": dict(n_jobs=2),
           "n_jobs=2 threading": dict(n_jobs=2, backend="threading"),
           "n_jobs=2 threading, no thread limit": dict(n_jobs=2, backend="threading",
                                                       limit=False)}


def _best_run(sizes, X, y, n_image, n_jobs, backend=None, limit=True):
    """The best wall time of ``repeats`` searches, and the last search."""
    from joblib import parallel_config
    from sklearn.model_selection import GridSearchCV

    from temporal_xmodal import DiachronicEmbedder

    best = float("inf")
    for _ in range(sizes["repeats"]):
        search = GridSearchCV(
            DiachronicEmbedder(hidden_dim=128, time_dim=32, embedding_dim=64,
                               max_epochs=sizes["max_epochs"], validation_fraction=0,
                               device="cpu", random_state=0, n_image_features=n_image),
            GRID, cv=sizes["cv"], n_jobs=n_jobs)
        with (parallel_config(backend=backend) if backend else nullcontext()), (
                nullcontext() if limit else
                mock.patch("temporal_xmodal._device.worker_threads", return_value=None)):
            start = time.perf_counter()
            search.fit(X, y)
            best = min(best, time.perf_counter() - start)
    return best, search


def measure(args):
    from temporal_xmodal.datasets import make_temporal_crossmodal

    sizes = QUICK if args.quick else FULL
    X, y, info = make_temporal_crossmodal(sizes["n_samples"], return_info=True, random_state=0)
    timings, searches = {}, {}
    for label, config in CONFIGS.items():
        timings[label], searches[label] = _best_run(sizes, X, y, info.n_image_features,
                                                    **config)
        print(f"  {label:38s} {timings[label]:8.2f} s", flush=True)
    reference = searches["n_jobs=1"]
    diffs = {label: float(np.abs(s.cv_results_["mean_test_score"]
                                 - reference.cv_results_["mean_test_score"]).max())
             for label, s in searches.items()}
    same = all(s.best_params_ == reference.best_params_ and diffs[label] <= 1e-6
               for label, s in searches.items())
    return {"parameters": {**sizes, "grid": GRID}, "timings": timings,
            "best_params": reference.best_params_, "cv_score_max_difference": diffs,
            "targets": {
                "n_jobs_2_faster": target(timings["n_jobs=2 loky"] / timings["n_jobs=1"], 0.9,
                                          "<", "GridSearchCV time n_jobs=2 (loky, the default "
                                          "and the docs' advice; cold: starting the workers "
                                          "included) / n_jobs=1"),
                "same_results": target(float(same), 1.0, ">=", "same best_params_ and CV "
                                       "scores (1e-6) in every configuration as with "
                                       "n_jobs=1")}}
