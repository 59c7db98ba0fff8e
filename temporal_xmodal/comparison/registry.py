"""The estimators of ``python -m temporal_xmodal compare``: one line each, with how they use time.

How an estimator uses time is read from its ``time_use`` attribute
(:func:`temporal_xmodal.time.time_use`): ``"none"`` (time required by the
layout and ignored), ``"training"`` (time shapes training only) or
``"inference"`` (projections depend on the time).  The comparison fits a
constant-time control of every estimator whose ``time_use`` is not ``"none"``.
"""

from collections import namedtuple

from ..estimators import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    SequentialCrossModal,
    TempXNetEmbedder,
)
from ..estimators._binned import default_base_estimator
from ..time import time_use

__all__ = ["DATASET_PARAMS", "DATASET_TRAINING", "Entry", "NOT_APPLICABLE",
           "default_estimators", "estimator_registry", "set_matching_params"]

#: Training recipe per data set, set on every estimator having these parameters
#: (nested ones included).  Empty: every estimator trains at its own defaults on
#: every data set.  (TICRC used to force Adam at lr 1e-4 on all of them, from when
#: the defaults were the papers' SGD at lr 5e-3, which collapses there; it held
#: TempXNet at 0.137 held-out MRR against 0.183 at its default lr 1e-3.)
DATASET_TRAINING = {}
#: Parameters of one estimator per data set, by display name.
DATASET_PARAMS = {
    "wiki": {"Binned+Procrustes": {"bins": 1}},  # undated: a single bin
    # SCML trains a classifier with SGD (its stages are not the two-tower recipe).
    # Diachronic trains at its defaults: with the checkpoint chosen by validation mAP, the
    # paper's own-time loss does as well as same-time negatives (``same_time_anchors=64``)
    # at a third of the fit time (3 seeds, held-out MRR 0.180 against 0.177).
    "ticrc": {"SCML": {"lr": 0.01}},
}

#: Estimators that ``compare`` leaves out of a data set by default, with the reason it
#: prints (``--estimators`` names one to run it anyway).
NOT_APPLICABLE = {
    "ticrc": {"SCML": "it learns from shared class labels only, with no image–text pairing, "
                      "and TICRC's labels are the pairs, so every held-out caption is a class "
                      "it never saw: its ranking is at chance by construction (held-out MRR "
                      "0.017, random 0.016; `benchmarks/bench_ticrc_all.py` measures it)"},
}

#: One compared estimator: how it uses time (``"none"``, ``"training"``,
#: ``"inference"``, read from the estimator) and the unfitted estimator.
Entry = namedtuple("Entry", ["time_use", "estimator"])


def estimator_registry(n_image_features, random_state=0, time_window=1.0, dataset="synthetic"):
    """The compared estimators with how each uses time, by display name.

    Adding an estimator to ``compare`` and to the benchmarks is one line of
    the dictionary below; data-set specific settings come from
    :data:`DATASET_TRAINING` (recipe shared by the neural estimators) and
    :data:`DATASET_PARAMS` (per estimator).

    Parameters
    ----------
    n_image_features : int
        Leading image columns of X.
    random_state : int, default=0
        Seed for the stochastic estimators.
    time_window : float or None, default=1.0
        Time scale of the data, in the units of the time axis (years for the
        real data sets): the Diachronic window (decay = 1 / window); ``None``: the estimator's defaults.
    dataset : str, default="synthetic"
        Key of the data-set specific settings.

    Returns
    -------
    registry : dict of str -> Entry
        ``Entry.time_use`` is :func:`temporal_xmodal.time.time_use` of the
        estimator.
    """
    common = {"n_image_features": n_image_features}
    window = {} if time_window is None else {"window": time_window, "decay": 1.0 / time_window}
    neural = {**common, "random_state": random_state}
    estimators = {
        "CCA": CCACrossModal(**common),
        "SAM": SAMEmbedder(**neural),
        "TempXNet-Rec": TempXNetEmbedder(correlation="recency", **neural),
        "Diachronic": DiachronicEmbedder(**window, **neural),
        "Binned+Procrustes": BinnedProcrustesEmbedder(default_base_estimator(), bins=10,
                                                      min_bin_size=50, **neural),
        # 25 of the paper's 150 epochs per stage keep the default job to a few minutes
        "SCML": SequentialCrossModal(max_epochs=25, **neural),
    }
    registry = {}
    for name, estimator in estimators.items():
        set_matching_params(estimator, **DATASET_TRAINING.get(dataset, {}))
        estimator.set_params(**DATASET_PARAMS.get(dataset, {}).get(name, {}))
        registry[name] = Entry(time_use(estimator), estimator)
    return registry


def default_estimators(n_image_features, random_state=0, time_window=1.0, dataset="synthetic"):
    """The estimators compared by default, by display name.

    Parameters
    ----------
    n_image_features : int
        Leading image columns of X.
    random_state : int, default=0
        Seed for the stochastic estimators.
    time_window : float or None, default=1.0
        Time scale of the data (time-axis units): the Diachronic window; ``None``: the estimator's defaults.
    dataset : str, default="synthetic"
        Key of the data-set specific settings (see :func:`estimator_registry`).

    Returns
    -------
    estimators : dict of str -> estimator
    """
    registry = estimator_registry(n_image_features, random_state, time_window, dataset)
    return {name: entry.estimator for name, entry in registry.items()}


def set_matching_params(estimator, **params):
    """Set each parameter on every (nested) parameter of the estimator with that name.

    ``set_matching_params(binned, max_epochs=3)`` sets
    ``base_estimator__max_epochs``; names the estimator does not have are
    skipped.

    Parameters
    ----------
    estimator : estimator
    **params
        Parameter name (without ``__`` prefix) → value.

    Returns
    -------
    estimator : estimator
        The same object.
    """
    matching = {key: params[key.split("__")[-1]] for key in estimator.get_params()
                if key.split("__")[-1] in params}
    return estimator.set_params(**matching)
