"""The papers' exact settings, one argument away from the defaults that work on real features.

The defaults of the neural estimators are chosen to train on real features out of the box
(Adam instead of the papers' SGD at lr 5e-3, which trains some of them poorly on real
features; docs/training.md).  :func:`paper_settings` returns the parameters that reproduce a
paper's configuration, to pass as keyword arguments.  The settings themselves are each
estimator's ``paper`` entry in the registry (``_registry.py``).
"""

from sklearn.utils._param_validation import HasMethods, validate_params

from ._registry import _resolve, all_estimators, get_entry


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
        or ``est.set_params(**paper_settings(est))``; each is a parameter of the estimator
        (the registry's ``make("paper")``, tested for every entry).

    Raises
    ------
    ValueError
        For an estimator that is not registered or has no paper settings.

    Examples
    --------
    >>> from temporal_xmodal import DiachronicEmbedder, SequentialCrossModal, paper_settings
    >>> paper_settings(DiachronicEmbedder)["conditioning"]
    'concat'
    >>> SequentialCrossModal(**paper_settings("SequentialCrossModal")).lr
    0.01
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
