"""The papers' exact settings (:func:`paper_settings`), one argument away from the defaults;
each estimator's ``paper`` entry of the registry."""

from sklearn.utils._param_validation import HasMethods, validate_params

from ._registry import _resolve, all_estimators, get_entry


@validate_params({"estimator": [str, type, HasMethods(["get_params"])]},
                 prefer_skip_nested_validation=True)
def paper_settings(estimator):
    """Parameters reproducing the source paper's configuration of an estimator.

    Read more in the user guide: docs/training.md.

    Parameters
    ----------
    estimator : estimator instance, class or class name
        One of this library's estimators.

    Returns
    -------
    params : dict
        Keyword arguments: ``est.set_params(**paper_settings(est))``.

    Raises
    ------
    ValueError
        For an estimator that is not registered or has no paper settings.

    Examples
    --------
    >>> from temporal_xmodal import DiachronicEmbedder, paper_settings
    >>> paper_settings(DiachronicEmbedder)["conditioning"]
    'concat'
    """
    papers = {entry.estimator.__name__: entry.paper for entry in all_estimators()
              if entry.paper is not None}
    try:
        entry = get_entry(estimator)
    except KeyError:
        entry = None
    if entry is None or entry.paper is None:
        raise ValueError(f"No paper settings for {_name(estimator)!r}; known: "
                         f"{sorted(papers)}.")
    return _resolve(entry.paper)


def _name(estimator):
    if isinstance(estimator, str):
        return estimator
    return estimator.__name__ if isinstance(estimator, type) else type(estimator).__name__
