"""The estimators of ``python -m temporal_xmodal compare``: one line each, with how they use time.

How an estimator uses time is read from its ``time_role`` attribute
(:func:`temporal_xmodal.time.time_role`): ``"none"`` (time required by the
layout and ignored), ``"training"`` (time shapes training only) or
``"inference"`` (projections depend on the time).  The comparison fits a
constant-time control of every estimator whose ``time_role`` is not ``"none"``.
"""

from collections import namedtuple
from numbers import Integral, Real

from sklearn.utils._param_validation import HasMethods, validate_params

from ..estimators import all_estimators
from ..estimators.binned import default_base_estimator
from .._constraints import Interval
from ..time import time_role

__all__ = ["Entry", "default_estimators", "estimator_registry", "left_out",
           "set_matching_params", "training_epochs"]

#: One compared estimator: how it uses time (``"none"``, ``"training"``,
#: ``"inference"``, read from the estimator) and the unfitted estimator.
Entry = namedtuple("Entry", ["time_role", "estimator"])
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
    in ``estimators/_registry.py``), with its data-set specific settings
    (``CompareEntry.datasets``).

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    n_image_features : int
        Leading image columns of X.
    random_state : int, default=0
        Seed for the stochastic estimators.
    time_window : float or None, default=1.0
        Time scale of the data, a number in the estimators' ``time_unit``
        (years for the real data sets), read by the estimators whose compare
        entry sets a parameter from it (``CompareEntry.time_window``; at their
        defaults none does: Diachronic's window shapes only L_intra, off at
        ``decay=0``); ``None``: the estimators' defaults.
    dataset : str, default="synthetic"
        Key of the data-set specific settings (any other name: none).

    Returns
    -------
    registry : dict of str -> Entry
        ``Entry.time_role`` is :func:`temporal_xmodal.time.time_role` of the
        estimator.
    """
    common = {"n_image_features": n_image_features}
    estimators = {entry.compare.name: entry.make_compared(common, random_state, time_window,
                                                          dataset)
                  for entry in all_estimators() if entry.compare is not None}
    return {name: Entry(time_role(est), est) for name, est in estimators.items()}


def left_out(dataset):
    """The compared estimators ``compare`` leaves out of ``dataset`` by default, with the
    reason it prints (``CompareEntry.leave_out``; ``--estimators`` runs them anyway).

    Parameters
    ----------
    dataset : str
        ``"ticrc"`` for data read as pairs without labels.

    Returns
    -------
    reasons : dict of str -> str
        By display name.
    """
    return {entry.compare.name: entry.compare.leave_out[dataset] for entry in all_estimators()
            if entry.compare is not None and dataset in entry.compare.leave_out}


@validate_params(_REGISTRY_CONSTRAINTS, prefer_skip_nested_validation=True)
def default_estimators(n_image_features, random_state=0, time_window=1.0, dataset="synthetic"):
    """The estimators compared by default, by display name.

    The unfitted estimators of :func:`estimator_registry`, without their
    ``time_role``.

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


def training_epochs(estimator):
    """Training epochs of one fit of a compared estimator; ``None`` for closed-form fits.

    The estimator's own ``max_epochs`` when set; else its base estimator's
    (``BinnedProcrustesEmbedder(max_epochs=None)`` trains its base's epochs per bin).
    The one reading of the job's time estimate and of ``results.json``'s ``epochs``.
    """
    params = estimator.get_params(deep=False)
    if params.get("max_epochs"):
        return params["max_epochs"]
    if "base_estimator" in params:
        base = params["base_estimator"] or default_base_estimator()
        return training_epochs(base)
    return None
