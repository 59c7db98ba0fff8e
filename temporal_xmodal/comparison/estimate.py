"""The main job's time estimate, printed before any fit, without importing anything heavy.

Each fit costs a time per 1000 training items × epochs, a time per epoch and one per fit,
read at the data's feature count between the two widths they were measured at; each
evaluation a time per (query, test item) pair ranked, per pair of test items (the time bins)
and per item and feature projected (:func:`estimate_seconds`), all measured by
``benchmarks/bench_estimate.py``.  The command line and
:func:`~temporal_xmodal.comparison.compare_estimators` print the sum, and its reading at the
machine's load (:func:`estimate_lines`); the progress line after each fit reads each fit
still to go from its own estimate (:func:`fitting_left`).
"""

import os

from .job import COMPARED_NAMES, seconds_text

__all__ = ["SECONDS_PER_KILO_ITEM_EPOCH", "estimate_lines", "estimate_seconds", "fit_seconds",
           "fitting_left"]

#: The two feature counts (image + text) the costs were measured at: the synthetic data's
#: 64 + 48 and CLIP-sized 512 + 512.
MEASURED_FEATURES = (112, 1024)
#: CPU seconds of one fit per 1000 training items × epochs, at each of
#: :data:`MEASURED_FEATURES`, one torch thread and one BLAS thread (the job's default), with
#: 20 % headroom over ``benchmarks/results/bench_estimate.json`` (``tests/test_cli.py``
#: holds them to it).  A fit without epochs (CCA's closed form, SM's classifiers) counts one;
#: Binned counts its base estimator's epochs, SCML one stage's.
SECONDS_PER_KILO_ITEM_EPOCH = {
    "CCA": (0.0, 0.046), "SM": (0.16, 0.59), "SAM": (0.0, 0.24), "TempXNet-Rec": (0.14, 0.19),
    "Diachronic": (0.27, 0.41), "Binned+Procrustes": (0.24, 0.48), "SCML": (1.1, 1.2)}
#: CPU seconds per epoch that do not grow with the items (SAM samples a fixed number of
#: pairs per epoch) and per fit, at each of :data:`MEASURED_FEATURES`; same source and
#: headroom.  SAM's at 112 features are its fits on the synthetic data (``sam_synthetic``:
#: 0.24 s per epoch there, about 0.8 s on ``make_clip_like`` items of the same width).
SECONDS_PER_EPOCH = {"SAM": (0.29, 0.0), "SCML": (0.44, 0.0)}
SECONDS_PER_FIT = {
    "CCA": (0.02, 0.29), "SAM": (2.0, 2.2), "TempXNet-Rec": (0.0, 0.12),
    "Diachronic": (0.04, 0.0), "Binned+Procrustes": (0.45, 0.98), "SCML": (0.12, 2.0)}
#: CPU seconds of one evaluation per (query, test item) pair ranked (coarse mAP, MRR and the
#: four time-window figures: ``min(n_test, QUERY_SAMPLE)`` queries × ``n_test`` items) and per
#: pair of test items (the per-bin protocol ranks about n_test² / 10), for a model whose
#: projections ignore time and for one projecting at each instant (local alignment projects
#: at 10), at 112 features; same source and headroom.  Wider features cost
#: :data:`EVALUATION_SECONDS_PER_ITEM_FEATURE` per item, feature and projection beyond them.
EVALUATION_SECONDS_PER_PAIR = {"static": (1.9e-7, 2.2e-8), "inference": (3.0e-7, 6.4e-8)}
EVALUATION_SECONDS_PER_ITEM_FEATURE = 1e-7
EVALUATION_PROJECTIONS = {"static": 1, "inference": 11}
#: Seconds of a fit's and an evaluation's fixed costs.
FIT_SECONDS_FIXED = 0.5
EVALUATION_SECONDS_FIXED = 0.5
#: The queries of a large evaluation (``temporal_xmodal.metrics.QUERY_SAMPLE``, not imported
#: here: the estimate imports nothing heavy; tests/test_cli.py checks they agree).
QUERY_SAMPLE = 5000
#: Interpreter start, imports and the synthetic data.
STARTUP_SECONDS = 5.0
#: Share of the items the synthetic split trains on (its test fraction is 0.3; --data's too).
SYNTHETIC_TRAIN_SHARE = 0.7
#: Features (image + text) of the synthetic data.
SYNTHETIC_FEATURES = 64 + 48


def _at_features(costs, n_features):
    """A cost measured at the two :data:`MEASURED_FEATURES`, read linearly at
    ``n_features`` (not below the smaller of the two)."""
    (low, high), (f_low, f_high) = costs, MEASURED_FEATURES
    value = low + (high - low) * (n_features - f_low) / (f_high - f_low)
    return max(value, min(low, high))


def evaluation_seconds(n_test, time_role="none", n_features=SYNTHETIC_FEATURES):
    """Estimated seconds of one :func:`~temporal_xmodal.evaluation.evaluate_estimator` on
    ``n_test`` items of ``n_features`` features, for a model of ``time_role``
    (``"inference"``: projected at each instant)."""
    kind = "inference" if time_role == "inference" else "static"
    per_query_item, per_pair = EVALUATION_SECONDS_PER_PAIR[kind]
    queries = min(n_test, QUERY_SAMPLE)
    wider = max(0, n_features - MEASURED_FEATURES[0])
    return (EVALUATION_SECONDS_FIXED + per_query_item * queries * n_test
            + per_pair * n_test ** 2
            + EVALUATION_SECONDS_PER_ITEM_FEATURE * EVALUATION_PROJECTIONS[kind] * n_test * wider)


def fit_seconds(name, estimator, n_train, n_features=SYNTHETIC_FEATURES):
    """Estimated seconds of one fit of the registry's ``name`` (its ``estimator``, whose
    epochs it reads) on ``n_train`` items of ``n_features`` features; the evaluation not
    included.  A name the costs do not hold is costed as a mid-sized network's fit."""
    from .registry import training_epochs

    epochs = training_epochs(estimator) or 1
    per_item = _at_features(SECONDS_PER_KILO_ITEM_EPOCH.get(name, (0.3, 0.3)), n_features)
    per_epoch = _at_features(SECONDS_PER_EPOCH.get(name, (0.0, 0.0)), n_features)
    per_fit = _at_features(SECONDS_PER_FIT.get(name, (0.0, 0.0)), n_features)
    return FIT_SECONDS_FIXED + per_fit + epochs * (per_item * n_train / 1000 + per_epoch)


#: Seconds of estimated fitting that weigh as much as the measured fits in the ratio that
#: scales the estimates of the fits to go (:func:`fitting_left`): a first fit of a second
#: (CCA's) barely moves it.
PRIOR_SECONDS = 30.0


def fitting_left(left, results, expected):
    """Seconds of fitting the fits ``left`` will take, for the progress lines of the job.

    Each fit's estimate (``expected``, of :func:`fit_seconds`) scaled by how the finished
    fits measured against theirs, the ratio shrunk towards 1 by :data:`PRIOR_SECONDS`; a
    constant-time control whose model is done takes as long as its model's fit.  (The
    first fit's time times the fits to go read CCA's fraction of a second for a job of
    networks.)

    Parameters
    ----------
    left : list of (name, control)
    results : dict
        The finished fits, ``{(name, control): (fit seconds, figures)}``.
    expected : dict
        Every fit's estimate, ``{(name, control): seconds}``.

    Returns
    -------
    seconds : float
    """
    measured = sum(results[key][0] for key in results if key in expected)
    estimated = sum(expected[key] for key in results if key in expected)
    ratio = (measured + PRIOR_SECONDS) / (estimated + PRIOR_SECONDS)
    return sum(results[(name, False)][0] if control and (name, False) in results
               else ratio * expected[(name, control)] for name, control in left)


def estimate_seconds(n_samples=3000, max_epochs=None, estimators=None,
                     n_features=SYNTHETIC_FEATURES):
    """Wall-clock estimate of the main job, 2 free CPU cores, one thread per fit.

    The sum over the fits (each estimator, plus the constant-time control of each
    time-aware one) of a cost per 1000 training items × epochs and a cost per epoch
    and per fit (:data:`SECONDS_PER_KILO_ITEM_EPOCH`, :data:`SECONDS_PER_EPOCH`,
    :data:`SECONDS_PER_FIT`, read at ``n_features``), plus each fit's evaluation
    (:func:`evaluation_seconds`) and the start-up.  Sequential fits (``--n-jobs 1``); shared cores make it longer.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    n_samples : int, default=3000
        Items, train + test (70 % train).
    max_epochs : int or None, default=None
        The ``--max-epochs`` override (``None``: the registry's epochs).
    estimators : sequence of str or None, default=None
        Display names run (``None``: all).
    n_features : int, default=112
        Image + text features of the data.

    Returns
    -------
    seconds : float
        The estimate in seconds.
    n_fits : int
        Fits it counts (controls included).
    """
    from ..time import time_role
    from .registry import estimator_registry, set_matching_params

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
    """The lines the main job prints before its first fit: the time estimate
    (:func:`estimate_seconds` over ``seeds`` runs) and, on a busy machine, the same at its
    load.  The command line and :func:`~temporal_xmodal.comparison.compare_estimators`
    print these.

    Parameters
    ----------
    n_samples : float
        Items, train + test.
    max_epochs, estimators, n_features
        As :func:`estimate_seconds` (``estimators=None``: those the job runs).
    seeds : int, default=1
        Runs of the job.
    n_threads : int, default=1
        torch threads per fit.
    pairs : bool, default=False
        Rows are image–text pairs without labels: the estimators that need labels are not
        run (when ``estimators`` is None).
    load, cores : float and int or None, default=None
        The 1-minute load average and the cores (``None``: this machine's).

    Returns
    -------
    lines : list of str
    """
    if pairs and estimators is None:  # SCML, SM: not run on pairs
        from .registry import left_out

        estimators = [name for name in COMPARED_NAMES if name not in left_out("ticrc")]
    seconds, n_fits = estimate_seconds(n_samples, max_epochs, estimators, n_features)
    seconds, n_fits = seconds * seeds, n_fits * seeds
    lines = [f"time estimate: about {seconds_text(seconds)} on 2 free CPU cores "
             f"({n_fits} fit{'s' * (n_fits != 1)}, constant-time controls included"
             + (f", over {seeds} seeds" if seeds > 1 else "") + ", "
             f"{n_threads} thread{'s' * (n_threads != 1)} per fit, {n_features} features)"]
    busy = busy_cores() if load is None else load
    cores = (os.cpu_count() or 1) if cores is None else cores
    if busy > cores / 2:
        # the quick job on one thread per fit slowed by 1.6x beside two busy processes on 2
        # cores, and by 3.1x more on two threads (bench_threads_load.json, docs/index.md)
        many = (f"; on {n_threads} threads per fit several times longer (--n-threads 1)"
                if n_threads > 1 else "")
        lines.append(f"  this machine is busy (load {busy:.1f} on {cores} cores): about "
                     f"{seconds_text(seconds * (1 + busy / cores))} at this load, and longer "
                     f"if it rises{many}")
    return lines
