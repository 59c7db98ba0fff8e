"""The main job's time estimate, printed before any fit, without importing anything heavy.

Each fit costs a time per 1000 training items × epochs, a time per epoch and one per fit,
read at the data's feature count between the two widths they were measured at; each
evaluation a time per (query, test item) pair ranked, per pair of test items (the time bins)
and per item and feature projected (:func:`estimate_seconds`), all measured by
``benchmarks/bench_estimate.py``.  The command line scales the sum by the machine's load.
"""

__all__ = ["SECONDS_PER_KILO_ITEM_EPOCH", "estimate_seconds"]

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
    from .registry import estimator_registry, set_matching_params, training_epochs

    n_train = SYNTHETIC_TRAIN_SHARE * n_samples
    n_test = n_samples - n_train
    seconds, n_fits = STARTUP_SECONDS, 0
    for name, entry in estimator_registry(1).items():
        if estimators is not None and name not in estimators:
            continue
        est = entry.estimator
        if max_epochs is not None:
            set_matching_params(est, max_epochs=max_epochs)
        epochs = training_epochs(est) or 1
        per_item = _at_features(SECONDS_PER_KILO_ITEM_EPOCH.get(name, (0.3, 0.3)), n_features)
        per_epoch = _at_features(SECONDS_PER_EPOCH.get(name, (0.0, 0.0)), n_features)
        per_fit = _at_features(SECONDS_PER_FIT.get(name, (0.0, 0.0)), n_features)
        fit = FIT_SECONDS_FIXED + per_fit + epochs * (per_item * n_train / 1000 + per_epoch)
        role = time_role(est)
        copies = 1 if role == "none" else 2  # time-aware: its fit and its control
        seconds += copies * (fit + evaluation_seconds(n_test, role, n_features))
        n_fits += copies
    return seconds, n_fits
