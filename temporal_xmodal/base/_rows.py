"""Rows read through a fitted estimator (or a Pipeline ending in one): its blocks, and both
embeddings at the rows' times, for the scorers and the evaluation protocols."""

from .._pipelines import final_step
from ._embedder import CrossModalEmbedder


def embed_with_time(estimator, X):
    """Both embeddings of each row at its own time, and the rows' times on the axis.

    Read more in the user guide: docs/metrics.md.

    Parameters
    ----------
    estimator : CrossModalEmbedder or Pipeline ending in one
        Fitted.
    X : array-like or DataFrame
        Input as ``estimator`` takes it.

    Returns
    -------
    Z_image, Z_text : ndarray of shape (n_samples, D)
        L2-normalised.
    time : ndarray of float64 of shape (n_samples,)
    final : CrossModalEmbedder
        The estimator that embedded them (a Pipeline's last step).

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
    """``(final, X)``: the fitted cross-modal embedder at the end of ``estimator`` and ``X``
    as it receives it (through a Pipeline's preprocessing, run once); a ``TypeError`` for
    anything else."""
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
    """``type(obj).__name__``, or the repr of a string (a Pipeline's 'passthrough') or None."""
    return repr(obj) if isinstance(obj, str) or obj is None else type(obj).__name__


def layout_blocks(estimator, X):
    """``(X_image, X_text, time)`` of X read through a fitted estimator's layout, the time
    as float64 on its axis.

    Read more in the user guide: docs/index.md ("Data layout").

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
