"""The papers' exact settings, one argument away from the defaults that work on real features.

The defaults of the neural estimators are chosen to train on real features out of the box
(Adam instead of the papers' SGD at lr 5e-3, which trains some of them poorly on real
features; docs/training.md).  :func:`paper_settings` returns the parameters that reproduce a
paper's configuration, to pass as keyword arguments.
"""

from sklearn.utils._param_validation import HasMethods, validate_params

#: Per estimator class name: the parameters of its source paper.
PAPER_SETTINGS = {
    # Semedo & Magalhães, ACM MM 2019 (SAM): SGD, Nesterov momentum 0.9, lr 5e-3, decay 1e-6
    "SAMEmbedder": {"optimizer": "sgd", "lr": 5e-3, "momentum": 0.9, "nesterov": True,
                    "lr_decay": 1e-6},
    # Semedo & Magalhães, ACM MM 2018 (TempXNet): SGD, momentum 0.9, lr 5e-3, decay 1e-6,
    # the temporal term at λ = 1 and the recency bandwidth of the thesis' tables (0.3 years)
    "TempXNetEmbedder": {"optimizer": "sgd", "lr": 5e-3, "momentum": 0.9, "lr_decay": 1e-6,
                         "temporal_weight": 1.0, "bandwidth": "0.3Y", "use_time": True},
    # Semedo & Magalhães, ACM MM 2019 (DCM), §5.2: w = 4 months, λ = 0.1 per month (in any
    # time unit), the concatenation architecture, the summed loss, the lowest validation loss
    "DiachronicEmbedder": {"optimizer": "sgd", "lr": 5e-3, "momentum": 0.9,
                           "conditioning": "concat", "loss_reduction": "sum", "window": "4M",
                           "decay": "0.1/M", "time_dropout": 0.0, "time_lr_scale": 1.0,
                           "selection_metric": "valid_loss", "use_time": True},
    "SequentialCrossModal": {"optimizer": "sgd", "lr": 0.01},
    "CCACrossModal": {"reg": 0.0},
    # DCM-Binned: every bin trained from its own initialisation
    "BinnedProcrustesEmbedder": {"bins": "1M", "min_bin_size": 100, "init": "independent",
                                 "use_time": True},
}


@validate_params({"estimator": [str, type, HasMethods(["get_params"])]},
                 prefer_skip_nested_validation=True)
def paper_settings(estimator):
    """Parameters reproducing the source paper's configuration of an estimator.

    The neural estimators' defaults differ from their papers' where the papers'
    settings train poorly on real features (mostly the optimiser); this gives
    the papers' values back.

    Read more in the user guide: docs/training.md.

    Parameters
    ----------
    estimator : estimator instance, class or class name
        One of this library's estimators.

    Returns
    -------
    params : dict
        Keyword arguments, e.g. ``DiachronicEmbedder(**paper_settings("DiachronicEmbedder"))``
        or ``est.set_params(**paper_settings(est))``; parameters the estimator does not have
        are left out.

    Examples
    --------
    >>> from temporal_xmodal import DiachronicEmbedder, paper_settings
    >>> paper_settings(DiachronicEmbedder)["conditioning"]
    'concat'
    """
    if isinstance(estimator, str):
        name = estimator
    else:
        name = estimator.__name__ if isinstance(estimator, type) else type(estimator).__name__
    if name not in PAPER_SETTINGS:
        raise ValueError(f"No paper settings for {name!r}; known: {sorted(PAPER_SETTINGS)}.")
    params = dict(PAPER_SETTINGS[name])
    if not isinstance(estimator, str):
        known = (estimator if isinstance(estimator, type) else type(estimator))().get_params()
        params = {k: v for k, v in params.items() if k in known}
    return params
