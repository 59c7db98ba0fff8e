"""The main job's time estimate, printed before any fit, without importing anything heavy.

A cost per 1000 training items × epochs for each estimator, measured at one torch thread
per fit on a free CPU core, summed over the fits and the constant-time controls
(:func:`estimate_seconds`); the command line scales it by the machine's load.
"""

__all__ = ["SECONDS_PER_KILO_ITEM_EPOCH", "estimate_seconds"]

#: Seconds of one fit per 1000 training items × epochs at one torch thread on a free CPU core,
#: with some headroom, from the fit times the main job prints on the synthetic data (docs/index.md,
#: "Comparing the estimators", describes the estimate).  Binned counts its base estimator's epochs (one fit on every row,
#: then each bin's short continuation); SCML one stage's epochs (it trains four stages).
SECONDS_PER_KILO_ITEM_EPOCH = {"SAM": 0.14, "TempXNet-Rec": 0.065, "Diachronic": 0.14,
                               "Binned+Procrustes": 0.08, "SCML": 0.4}
#: Seconds of a fit without epochs (CCA's closed form) and of one evaluation on the test split.
FIT_SECONDS_FIXED = 0.5
EVALUATION_SECONDS = 1.0
#: Interpreter start, imports and the synthetic data.
STARTUP_SECONDS = 5.0
#: Share of the items the synthetic split trains on (its test fraction is 0.3; --data's too).
SYNTHETIC_TRAIN_SHARE = 0.7
#: Features (image + text) of the synthetic data the costs were measured on.
SYNTHETIC_FEATURES = 64 + 48


def estimate_seconds(n_samples=3000, max_epochs=None, estimators=None):
    """Wall-clock estimate of the main job on the synthetic data set, 2 free CPU cores.

    The sum over the fits (each estimator, plus the constant-time control of
    each time-aware one) of a per-estimator cost per 1000 training items ×
    epochs (:data:`SECONDS_PER_KILO_ITEM_EPOCH`, measured at the job's default
    of one torch thread per fit), plus the evaluations and the start-up.
    Sequential fits (``--n-jobs 1``); shared cores make it longer.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    n_samples : int, default=3000
        Items of the synthetic data set, train + test.
    max_epochs : int or None, default=None
        The ``--max-epochs`` override (``None``: the registry's epochs).
    estimators : sequence of str or None, default=None
        Display names run (``None``: all).

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
    seconds, n_fits = STARTUP_SECONDS, 0
    for name, entry in estimator_registry(1).items():
        if estimators is not None and name not in estimators:
            continue
        est = entry.estimator
        if max_epochs is not None:
            set_matching_params(est, max_epochs=max_epochs)
        fit = (FIT_SECONDS_FIXED + SECONDS_PER_KILO_ITEM_EPOCH.get(name, 0.0)
               * n_train * (training_epochs(est) or 0) / 1000 + EVALUATION_SECONDS)
        copies = 1 if time_role(est) == "none" else 2  # time-aware: its fit and its control
        seconds += copies * fit
        n_fits += copies
    return seconds, n_fits
