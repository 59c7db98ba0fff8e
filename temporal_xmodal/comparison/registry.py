"""The estimators of ``python -m temporal_xmodal compare``: one line each, with how they use time.

How an estimator uses time is read from its ``time_use`` attribute
(:func:`temporal_xmodal.time.time_use`): ``"none"`` (time required by the
layout and ignored), ``"training"`` (time shapes training only) or
``"inference"`` (projections depend on the time).  The comparison fits a
constant-time control of every estimator whose ``time_use`` is not ``"none"``.
"""

from collections import namedtuple
from numbers import Integral, Real

from sklearn.utils._param_validation import HasMethods, validate_params

from ..estimators import all_estimators
from .._constraints import Interval
from ..time import time_use

__all__ = ["DATASET_PARAMS", "DATASET_TRAINING", "Entry", "NOT_APPLICABLE",
           "default_estimators", "estimator_registry", "set_matching_params"]

#: Training recipe per data set, set on every estimator having these parameters
#: (nested ones included).  Empty: every estimator trains at its own defaults on
#: every data set (docs/index.md gives the measurements behind that choice).
DATASET_TRAINING = {}
#: Parameters of one estimator per data set, by display name.
DATASET_PARAMS = {
    "wiki": {"Binned+Procrustes": {"bins": 1}},  # undated: a single bin
    # SCML trains a classifier with SGD (its stages are not the two-tower recipe).
    # Diachronic: TICRC's labels are the pairs, so no two items share a category and L_intra
    # has no pair to act on; a time input that resolves nearby dates (the default one-hot
    # bins, no time dropout) then only helps the loss tell negatives by their dates, which
    # the evaluation (every caption read at the query's date) cannot use: held-out MRR with
    # dates, seeds 0 and 1, 0.173 / 0.144 at the defaults against 0.181 / 0.178 with the
    # scalar input and time dropout of before (docs/estimators/diachronic.md, "Deviations").
    "ticrc": {"SCML": {"lr": 0.01},
              "Diachronic": {"time_encoding": "minmax", "time_dropout": 0.5}},
}

#: Estimators that ``compare`` leaves out of a data set by default, with the reason it
#: prints (``--estimators`` names one to run it anyway).
NOT_APPLICABLE = {
    "ticrc": {"SCML": "it learns from shared class labels only, with no image–text pairing, "
                      "and TICRC's labels are the pairs, so every held-out caption is a class "
                      "it never saw: its ranking is at chance by construction "
                      "(`benchmarks/bench_ticrc_all.py` measures it)"},
}

#: One compared estimator: how it uses time (``"none"``, ``"training"``,
#: ``"inference"``, read from the estimator) and the unfitted estimator.
Entry = namedtuple("Entry", ["time_use", "estimator"])
Entry.__doc__ = """One compared estimator: how it uses time and the unfitted estimator.

Read more in the user guide: docs/index.md.
"""


_REGISTRY_CONSTRAINTS = {
    "n_image_features": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
    "time_window": [Interval(Real, 0, None, closed="neither"), None],
    "dataset": [str],
}


@validate_params(_REGISTRY_CONSTRAINTS, prefer_skip_nested_validation=True)
def estimator_registry(n_image_features, random_state=0, time_window=1.0, dataset="synthetic"):
    """The compared estimators with how each uses time, by display name.

    Each is the ``compare`` entry of an estimator of the library's registry
    (:func:`temporal_xmodal.estimators.all_estimators`, one line per estimator
    in ``estimators/_registry.py``); data-set specific settings come from
    :data:`DATASET_TRAINING` (recipe shared by the neural estimators) and
    :data:`DATASET_PARAMS` (per estimator).

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    n_image_features : int
        Leading image columns of X.
    random_state : int, default=0
        Seed for the stochastic estimators.
    time_window : float or None, default=1.0
        Time scale of the data, a number in the estimators' ``time_unit``
        (years for the real data sets): the Diachronic window (decay = 1 /
        window); ``None``: the estimator's defaults.
    dataset : str, default="synthetic"
        Key of the data-set specific settings (any other name: none).

    Returns
    -------
    registry : dict of str -> Entry
        ``Entry.time_use`` is :func:`temporal_xmodal.time.time_use` of the
        estimator.
    """
    common = {"n_image_features": n_image_features}
    estimators = {entry.compare.name: entry.make_compared(common, random_state, time_window)
                  for entry in all_estimators() if entry.compare is not None}
    registry = {}
    for name, estimator in estimators.items():
        set_matching_params(estimator, **DATASET_TRAINING.get(dataset, {}))
        estimator.set_params(**DATASET_PARAMS.get(dataset, {}).get(name, {}))
        registry[name] = Entry(time_use(estimator), estimator)
    return registry


@validate_params(_REGISTRY_CONSTRAINTS, prefer_skip_nested_validation=True)
def default_estimators(n_image_features, random_state=0, time_window=1.0, dataset="synthetic"):
    """The estimators compared by default, by display name.

    The unfitted estimators of :func:`estimator_registry`, without their
    ``time_use``.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    n_image_features, random_state, time_window, dataset
        As in :func:`estimator_registry` (``time_window`` a number in the
        estimators' ``time_unit``).

    Returns
    -------
    estimators : dict of str -> estimator
    """
    registry = estimator_registry(n_image_features, random_state, time_window, dataset)
    return {name: entry.estimator for name, entry in registry.items()}


@validate_params({"estimator": [HasMethods(["get_params", "set_params"])]},
                 prefer_skip_nested_validation=True)
def set_matching_params(estimator, **params):
    """Set each parameter on every (nested) parameter of the estimator with that name.

    ``set_matching_params(binned, max_epochs=3)`` sets
    ``base_estimator__max_epochs``; names the estimator does not have are
    skipped.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    estimator : estimator
        Any scikit-learn estimator (a meta-estimator's nested parameters
        included).
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
