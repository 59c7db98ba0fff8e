"""The main job's time estimate, printed before any fit, without importing anything heavy.

A fit costs a time per 1000 training items × epochs, per epoch and per fit; an evaluation a
time per pair ranked and per item and feature projected.  Every cost is a CPU time in
seconds, measured by ``benchmarks/run.py estimate`` at two feature counts and read
linearly between them.  Read more in docs/index.md ("Comparing the estimators").
"""

import os

from .job import COMPARED_NAMES, seconds_text

__all__ = ["SECONDS_PER_KILO_ITEM_EPOCH", "estimate_lines", "estimate_seconds", "fit_seconds",
           "fitting_left"]

#: The feature counts (image + text) the costs were measured at: the synthetic data's and
#: CLIP-sized.
MEASURED_FEATURES = (112, 1024)
#: Seconds of one fit per 1000 training items × epochs at each of :data:`MEASURED_FEATURES`,
#: one thread, with 20 % headroom over ``benchmarks/results/bench_estimate.json``.  A fit
#: without epochs counts one; Binned counts its base estimator's epochs, SCML one stage's.
SECONDS_PER_KILO_ITEM_EPOCH = {
    "CCA": (0.0, 0.046), "SM": (0.16, 0.59), "SAM": (0.0, 0.24), "TempXNet-Rec": (0.14, 0.19),
    "Diachronic": (0.27, 0.41), "Binned+Procrustes": (0.24, 0.48), "SCML": (1.1, 1.2)}
#: Seconds per epoch that do not grow with the items, and per fit; same source and headroom.
SECONDS_PER_EPOCH = {"SAM": (0.29, 0.0), "SCML": (0.44, 0.0)}
SECONDS_PER_FIT = {
    "CCA": (0.02, 0.29), "SAM": (2.0, 2.2), "TempXNet-Rec": (0.0, 0.12),
    "Diachronic": (0.04, 0.0), "Binned+Procrustes": (0.45, 0.98), "SCML": (0.12, 2.0)}
#: Seconds of one evaluation per (query, test item) pair ranked and per pair of test items
#: (the per-bin protocol), for a static model and one projecting at each instant, at 112
#: features; same source and headroom.
EVALUATION_SECONDS_PER_PAIR = {"static": (1.9e-7, 2.2e-8), "inference": (3.0e-7, 6.4e-8)}
#: Seconds per item, feature beyond 112 and projection.
EVALUATION_SECONDS_PER_ITEM_FEATURE = 1e-7
EVALUATION_PROJECTIONS = {"static": 1, "inference": 11}
#: Seconds of a fit's and an evaluation's fixed costs.
FIT_SECONDS_FIXED = 0.5
EVALUATION_SECONDS_FIXED = 0.5
#: ``temporal_xmodal.metrics.QUERY_SAMPLE``, written out (not imported: nothing heavy here).
QUERY_SAMPLE = 5000
#: Seconds of the interpreter's start, the imports and the synthetic data.
STARTUP_SECONDS = 5.0
#: Share of the items the synthetic split trains on (--data's too).
SYNTHETIC_TRAIN_SHARE = 0.7
#: Features (image + text) of the synthetic data.
SYNTHETIC_FEATURES = 64 + 48
#: Seconds of estimated fitting that weigh as much as the measured fits in
#: :func:`fitting_left`'s ratio.
PRIOR_SECONDS = 30.0


def _at_features(costs, n_features):
    """A cost measured at :data:`MEASURED_FEATURES`, read linearly at ``n_features``."""
    (low, high), (f_low, f_high) = costs, MEASURED_FEATURES
    value = low + (high - low) * (n_features - f_low) / (f_high - f_low)
    return max(value, min(low, high))


def evaluation_seconds(n_test, time_role="none", n_features=SYNTHETIC_FEATURES):
    """Estimated seconds of one evaluation on ``n_test`` items of ``n_features`` features."""
    kind = "inference" if time_role == "inference" else "static"
    per_query_item, per_pair = EVALUATION_SECONDS_PER_PAIR[kind]
    queries = min(n_test, QUERY_SAMPLE)
    wider = max(0, n_features - MEASURED_FEATURES[0])
    return (EVALUATION_SECONDS_FIXED + per_query_item * queries * n_test
            + per_pair * n_test ** 2
            + EVALUATION_SECONDS_PER_ITEM_FEATURE * EVALUATION_PROJECTIONS[kind] * n_test * wider)


def fit_seconds(name, estimator, n_train, n_features=SYNTHETIC_FEATURES):
    """Estimated seconds of one fit of the compared ``name`` (its ``estimator``'s epochs) on
    ``n_train`` items; an unknown name costs a mid-sized network's fit."""
    from .settings import training_epochs

    epochs = training_epochs(estimator) or 1
    per_item = _at_features(SECONDS_PER_KILO_ITEM_EPOCH.get(name, (0.3, 0.3)), n_features)
    per_epoch = _at_features(SECONDS_PER_EPOCH.get(name, (0.0, 0.0)), n_features)
    per_fit = _at_features(SECONDS_PER_FIT.get(name, (0.0, 0.0)), n_features)
    return FIT_SECONDS_FIXED + per_fit + epochs * (per_item * n_train / 1000 + per_epoch)


def fitting_left(left, results, expected):
    """Seconds of fitting the fits ``left`` (``(name, control)`` pairs) will take.

    Each fit's estimate (``expected``) scaled by how the finished fits (``results``)
    measured against theirs, the ratio shrunk towards 1 by :data:`PRIOR_SECONDS`; a
    control whose model is done takes as long as its model's fit.
    """
    measured = sum(results[key][0] for key in results if key in expected)
    estimated = sum(expected[key] for key in results if key in expected)
    ratio = (measured + PRIOR_SECONDS) / (estimated + PRIOR_SECONDS)
    return sum(results[(name, False)][0] if control and (name, False) in results
               else ratio * expected[(name, control)] for name, control in left)


def estimate_seconds(n_samples=3000, max_epochs=None, estimators=None,
                     n_features=SYNTHETIC_FEATURES):
    """``(seconds, n_fits)``: the main job's wall-clock estimate on 2 free CPU cores, one
    thread per fit, fits in sequence, and the fits it counts.

    The sum over the fits of the ``estimators`` (``None``: all), each time-aware one's
    control included, of its fit (:func:`fit_seconds`) and evaluation on ``n_samples``
    items (70 % train) of ``n_features`` features, plus the start-up; ``max_epochs``: the
    ``--max-epochs`` override.
    """
    from ..time import time_role
    from .settings import estimator_registry, set_matching_params

    n_train = SYNTHETIC_TRAIN_SHARE * n_samples
    n_test = n_samples - n_train
    seconds, n_fits = STARTUP_SECONDS, 0
    for name, entry in estimator_registry(1).items():
        if estimators is not None and name not in estimators:
            continue
        est = entry.estimator
        if max_epochs is not None:
            set_matching_params(est, max_epochs=max_epochs)
        fit = fit_seconds(name, est, n_train, n_features)
        role = time_role(est)
        copies = 1 if role == "none" else 2  # time-aware: its fit and its control
        seconds += copies * (fit + evaluation_seconds(n_test, role, n_features))
        n_fits += copies
    return seconds, n_fits


def busy_cores():
    """Cores that other work keeps busy: the 1-minute load average (0 when unknown)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def estimate_lines(n_samples, max_epochs=None, estimators=None, n_features=SYNTHETIC_FEATURES,
                   *, seeds=1, n_threads=1, pairs=False, load=None, cores=None):
    """The lines printed before the first fit: the estimate over ``seeds`` runs and, when
    more than half the cores are busy (``load``, ``cores``: this machine's when None), the
    same at that load.  ``pairs``: rows without labels, on which the estimators that need
    labels are not run (when ``estimators`` is None)."""
    if pairs and estimators is None:  # SCML, SM: not run on pairs
        from .settings import left_out

        estimators = [name for name in COMPARED_NAMES if name not in left_out("ticrc")]
    seconds, n_fits = estimate_seconds(n_samples, max_epochs, estimators, n_features)
    seconds, n_fits = seconds * seeds, n_fits * seeds
    lines = [f"time estimate: about {seconds_text(seconds)} on 2 free CPU cores "
             f"({n_fits} fit{'s' * (n_fits != 1)}, constant-time controls included"
             + (f", over {seeds} seeds" if seeds > 1 else "") + ", "
             f"{n_threads} thread{'s' * (n_threads != 1)} per fit, {n_features} features)"]
    busy = busy_cores() if load is None else load
    cores = (os.cpu_count() or 1) if cores is None else cores
    if busy > cores / 2:  # on 2 threads per fit a busy machine slows it several times more
        many = (f"; on {n_threads} threads per fit several times longer (--n-threads 1)"
                if n_threads > 1 else "")
        lines.append(f"  this machine is busy (load {busy:.1f} on {cores} cores): about "
                     f"{seconds_text(seconds * (1 + busy / cores))} at this load, and longer "
                     f"if it rises{many}")
    return lines
