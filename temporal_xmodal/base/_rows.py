"""Rows read through a fitted estimator: its blocks, and both embeddings at the rows' times.

The scorers (:mod:`temporal_xmodal.scoring`) and the evaluation protocols
(:mod:`temporal_xmodal.evaluation`) read ``X`` here, so that a Pipeline ending
in an estimator of this library is read through its fitted layout, never
through the raw last column.
"""

from .._pipelines import final_step
from ._embedder import CrossModalEmbedder


def embed_with_time(estimator, X):
    """Both embeddings of each row at its own time, and the rows' times on the axis.

    Works for a fitted estimator of this library or a Pipeline ending in one
    (the preprocessing steps run once; time is read through the fitted
    layout, never from the raw last column).

    Read more in the user guide: docs/metrics.md.

    Parameters
    ----------
    estimator : CrossModalEmbedder or Pipeline
        Fitted.
    X : array-like or DataFrame
        Input as the estimator (or Pipeline) takes it.

    Returns
    -------
    Z_image, Z_text : ndarray of shape (n_samples, D)
        L2-normalised embeddings of each row, at the row's time.
    time : ndarray of float64 of shape (n_samples,)
        The rows' times on the estimator's time axis.
    final : CrossModalEmbedder
        The estimator that embedded them (the Pipeline's last step).

    Raises
    ------
    TypeError
        If ``estimator`` is neither a cross-modal embedder nor a Pipeline ending in one
        (e.g. a retrieval scorer given a classifier), naming what it got.

    Examples
    --------
    >>> from temporal_xmodal import CCACrossModal
    >>> from temporal_xmodal.base import embed_with_time
    >>> from temporal_xmodal.datasets import make_temporal_crossmodal
    >>> X, y, info = make_temporal_crossmodal(200, return_info=True, random_state=0)
    >>> cca = CCACrossModal(embedding_dim=4, n_image_features=info.n_image_features).fit(X)
    >>> Z_image, Z_text, time, final = embed_with_time(cca, X)
    >>> Z_image.shape, time.shape
    ((200, 4), (200,))
    """
    final, X = through_pipeline(estimator, X)
    Z, time = final._embed_rows(X)
    d = Z.shape[1] // 2
    return Z[:, :d], Z[:, d:], time, final


def through_pipeline(estimator, X):
    """The cross-modal embedder at the end of ``estimator`` and ``X`` as it receives it.

    For a Pipeline, its preprocessing steps transform ``X`` once; an embedder is returned
    with ``X`` as given.

    Parameters
    ----------
    estimator : CrossModalEmbedder or Pipeline
        Fitted.
    X : array-like or DataFrame
        Input as the estimator (or Pipeline) takes it.

    Returns
    -------
    final : CrossModalEmbedder
        The embedder (the Pipeline's last step).
    X : array-like or DataFrame
        The rows as ``final`` takes them.

    Raises
    ------
    TypeError
        If ``estimator`` is neither a cross-modal embedder nor a Pipeline ending in one,
        naming what it got.
    """
    step, final = final_step(estimator)
    if not isinstance(final, CrossModalEmbedder):
        kind = (f"the Pipeline's final step ({step!r}) is {_class_name(final)}"
                if step is not None else f"got {_class_name(final)}")
        raise TypeError(
            "Embedding rows at their times (retrieval scorers, evaluation protocols) needs a "
            "cross-modal embedder of temporal_xmodal (or a Pipeline ending in one), which "
            f"embeds each row's image and text to rank one against the other; {kind}. Score "
            "a classifier with a scikit-learn scorer (e.g. scoring='accuracy'), or end the "
            "Pipeline with an embedder such as CCACrossModal.")
    if step is not None and len(estimator.steps) > 1:
        X = estimator[:-1].transform(X)
    return final, X


def _class_name(obj):
    """``type(obj).__name__``, or the string itself (e.g. a Pipeline's 'passthrough')."""
    return repr(obj) if isinstance(obj, str) or obj is None else type(obj).__name__


def layout_blocks(estimator, X):
    """``(X_image, X_text, time)`` of X read through a fitted estimator's layout.

    Read more in the user guide: docs/index.md ("Data layout").

    Parameters
    ----------
    estimator : CrossModalEmbedder
        Fitted.
    X : array-like or DataFrame
        ``[image | text | time]`` as the estimator takes it.

    Returns
    -------
    X_image, X_text : ndarray
        The feature blocks.
    time : ndarray of float64
        On the estimator's time axis.

    Examples
    --------
    >>> from temporal_xmodal import CCACrossModal
    >>> from temporal_xmodal.base import layout_blocks
    >>> from temporal_xmodal.datasets import make_temporal_crossmodal
    >>> X, y, info = make_temporal_crossmodal(200, return_info=True, random_state=0)
    >>> cca = CCACrossModal(embedding_dim=4, n_image_features=info.n_image_features).fit(X)
    >>> X_image, X_text, time = layout_blocks(cca, X)
    >>> X_image.shape[1] == info.n_image_features
    True
    """
    return estimator._validate_transform(X)
