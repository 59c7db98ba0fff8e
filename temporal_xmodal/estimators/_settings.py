"""The papers' exact settings, one argument away from the defaults that work on real features.

The defaults of the neural estimators are chosen to train on real features out of the box
(Adam instead of the papers' SGD at lr 5e-3, which trains some of them poorly on real
features; docs/training.md).  :func:`paper_settings` returns the parameters that reproduce a
paper's configuration, to pass as keyword arguments.  The settings themselves are each
estimator's ``paper`` entry in the registry (``_registry.py``).
"""

from sklearn.utils._param_validation import HasMethods, validate_params

from ._registry import all_estimators


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
    papers = {entry.estimator.__name__: entry.paper for entry in all_estimators()
              if entry.paper is not None}
    if name not in papers:
        raise ValueError(f"No paper settings for {name!r}; known: {sorted(papers)}.")
    params = dict(papers[name])
    if not isinstance(estimator, str):
        known = (estimator if isinstance(estimator, type) else type(estimator))().get_params()
        params = {k: v for k, v in params.items() if k in known}
    return params
