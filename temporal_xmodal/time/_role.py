"""How an estimator uses time: the public ``time_role`` tag (a class attribute: ``"none"``,
``"training"`` or ``"inference"``), not to be confused with the ``use_time`` parameter of the
time-aware estimators (fit with the times, or as the constant-time control) and its fitted
``uses_time_``."""

from .._pipelines import final_estimator


#: The ways an estimator can use time (its public ``time_role`` attribute).
TIME_ROLES = ("none", "training", "inference")


def time_role(estimator):
    """How an estimator (or a Pipeline ending in one) uses time.

    Read more in the user guide: docs/time.md.

    Parameters
    ----------
    estimator : estimator or Pipeline

    Returns
    -------
    role : {"none", "training", "inference"}
        ``"inference"``: projections depend on the time (items can be
        projected at any instant); ``"training"``: time shapes training only;
        ``"none"``: time is required by the layout and ignored.  Objects that
        do not declare it are ``"none"``, and so is a fitted estimator that
        kept its constant-time control (``use_time=False``, ``uses_time_ = False``):
        its projections ignore time whatever its class does.
    """
    estimator = final_estimator(estimator)
    use = getattr(estimator, "time_role", "none")
    if use not in TIME_ROLES:  # a class attribute (a tag), not a parameter: no constraint applies
        raise ValueError(f"{type(estimator).__name__} declares time_role={use!r}, which is "
                         f"none of {TIME_ROLES}.")
    if getattr(estimator, "uses_time_", True) is False:
        return "none"
    return use
