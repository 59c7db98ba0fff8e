"""Embed an evaluation set once and pass it to every protocol: :func:`embed_split`."""

from dataclasses import dataclass, replace

import numpy as np
from sklearn.utils._param_validation import validate_params

from .._pipelines import final_estimator, final_step
from .._input import check_labels
from ..base import embed_with_time, layout_blocks
from ..search._pipeline import refuse_raw_columns

__all__ = ["EmbeddedSplit", "embed_split"]


@dataclass(frozen=True, eq=False)
class EmbeddedSplit:
    """An evaluation set embedded once, accepted by every protocol in place of ``X``.

    Build it with :func:`embed_split`; it is frozen and its arrays are read-only.  Read more in
    docs/evaluation.md.

    Attributes
    ----------
    Z_image, Z_text : ndarray of shape (n_samples, embedding_dim)
        L2-normalised image and text embeddings, each at its row's own time.
    X_image, X_text : ndarray of shape (n_samples, n_image_features or n_text_features)
        The feature blocks as the embedder takes them (after a Pipeline's preprocessing), to
        project queries at other instants.
    time : ndarray of float64 of shape (n_samples,)
        The rows' times on the estimator's axis (unit ``estimator.time_unit``).
    labels : ndarray or None
        Encoded labels (1-D class codes or a 2-D indicator); None without ``y``.
    estimator : CrossModalEmbedder
        The fitted embedder that produced them (a Pipeline's last step).
    """

    Z_image: np.ndarray
    Z_text: np.ndarray
    X_image: np.ndarray
    X_text: np.ndarray
    time: np.ndarray
    labels: object
    estimator: object

    @property
    def n_samples(self):
        """Number of rows (int)."""
        return self.Z_image.shape[0]

    def __repr__(self):
        labels = "none" if self.labels is None else f"shape {self.labels.shape}"
        return (f"EmbeddedSplit({self.n_samples} rows, embedding_dim={self.Z_image.shape[1]}, "
                f"labels {labels}, estimator={type(self.estimator).__name__})")


def _read_only(a):
    a = np.asarray(a)
    a = a.view()
    a.flags.writeable = False
    return a


@validate_params(
    {"estimator": "no_validation", "X": "no_validation", "y": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def embed_split(estimator, X, y=None):
    """Embed an evaluation set once (every item at its own time) for every protocol.

    Every protocol accepts the returned :class:`EmbeddedSplit` in place of ``X`` (``y`` then
    comes from the split and ``estimator`` may be None).  A Pipeline's preprocessing runs once.
    Read more in docs/evaluation.md.

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder or Pipeline ending in one
    X : array-like or DataFrame of shape (n_samples, n_features_in_)
        ``[image | text | time]`` as the estimator takes it (times as numbers or dates).
    y : array-like of shape (n_samples,) or (n_samples, n_labels), default=None
        Class labels or a multilabel indicator, for the protocols whose relevance is "shares a
        label" (a protocol's own ``y`` overrides it).

    Returns
    -------
    split : EmbeddedSplit

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    ValueError
        If ``y`` does not match X, or X does not match the fitted layout.

    Examples
    --------
    >>> from temporal_xmodal import CCACrossModal
    >>> from temporal_xmodal.datasets import make_temporal_crossmodal
    >>> from temporal_xmodal.evaluation import coarse_alignment, embed_split
    >>> X, y, info = make_temporal_crossmodal(200, return_info=True, random_state=0)
    >>> cca = CCACrossModal(embedding_dim=4, n_image_features=info.n_image_features).fit(X)
    >>> split = embed_split(cca, X, y)
    >>> coarse_alignment(cca, split) == coarse_alignment(cca, X, y)
    True
    """
    step, final = final_step(estimator)
    if step is not None:
        if len(estimator.steps) > 1:
            X = estimator[:-1].transform(X)
    else:  # pipe[-1] given the raw rows its Pipeline's preprocessing reads: say so
        refuse_raw_columns(final, X)
    Z_image, Z_text, time, final = embed_with_time(final, X)
    X_image, X_text, _ = layout_blocks(final, X)
    labels = None if y is None else check_labels(y, Z_image.shape[0], required=False)
    return EmbeddedSplit(
        Z_image=_read_only(Z_image), Z_text=_read_only(Z_text), X_image=_read_only(X_image),
        X_text=_read_only(X_text), time=_read_only(time),
        labels=None if labels is None else _read_only(labels), estimator=final,
    )


def as_split(estimator, X, y=None, *, need_labels=False):
    """The protocols' entry: an :class:`EmbeddedSplit` from ``(estimator, X, y)``.

    With an ``EmbeddedSplit`` as ``X``, ``estimator`` is None or its embedder, and ``y`` replaces
    its labels.
    """
    if isinstance(X, EmbeddedSplit):
        split = X
        if estimator is not None:
            final = final_estimator(estimator)
            if final is not split.estimator:
                raise ValueError(
                    f"X is an EmbeddedSplit made by a {type(split.estimator).__name__}, but "
                    f"estimator is a different {type(final).__name__}: pass estimator=None "
                    "or the estimator given to embed_split.")
        if y is not None:
            split = replace(split, labels=_read_only(
                check_labels(y, split.n_samples, required=False)))
    else:
        if estimator is None:
            raise ValueError("estimator is None: pass a fitted estimator, or an "
                             "EmbeddedSplit from embed_split as X.")
        split = embed_split(estimator, X, y)
    if need_labels and split.labels is None:
        raise ValueError(
            "y is required: relevance in this protocol is 'shares a label' (give class "
            "labels or a multilabel indicator, here or to embed_split)."
        )
    return split
