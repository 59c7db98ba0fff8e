"""How an estimator uses time: the public ``time_role`` class attribute.

Not to be confused with the ``use_time`` parameter of the time-aware estimators.
"""

from .._pipelines import final_estimator


#: The ways an estimator can use time (its public ``time_role`` attribute).
TIME_ROLES = ("none", "training", "inference")


def time_role(estimator):
    """How an estimator (or a Pipeline ending in one) uses time.

    Read more in docs/time.md.

    Parameters
    ----------
    estimator : estimator or Pipeline

    Returns
    -------
    role : {"none", "training", "inference"}
        ``"inference"``: projections depend on the time; ``"training"``: time shapes training
        only; ``"none"``: time is required by the layout and ignored; also for objects that do not
        declare it and for a fitted constant-time control (``uses_time_ = False``).
    """
    estimator = final_estimator(estimator)
    use = getattr(estimator, "time_role", "none")
    if use not in TIME_ROLES:  # a class attribute (a tag), not a parameter: no constraint applies
        raise ValueError(f"{type(estimator).__name__} declares time_role={use!r}, which is "
                         f"none of {TIME_ROLES}.")
    if getattr(estimator, "uses_time_", True) is False:
        return "none"
    return use
