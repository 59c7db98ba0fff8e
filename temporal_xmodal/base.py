"""The base class every estimator of the library inherits.

It owns, once for all six estimators, the column-block layout
``X = [image | text | time]``, input validation, ``transform`` /
``transform_image`` / ``transform_text``, ``score``,
``get_feature_names_out`` and ``set_output``.  A subclass implements three
hooks:

* ``_fit(X_image, X_text, time, labels)``: learn; set fitted attributes;
* ``_embed_image(X_image, time)`` and ``_embed_text(X_text, time)``: map one
  modality to the common space (un-normalised; the base L2-normalises) — or
  a single ``_embed(modality, X, time)`` that both default to.

and declares ``_time_at_inference = True`` when its projection depends on time
(the base then warns for instants outside the training range).
"""

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ._validation import (
    check_labels,
    check_time_argument,
    check_time_column,
    resolve_n_image_features,
    warn_if_outside,
)
from .metrics import cross_modal_scores


def l2_normalize(Z):
    """Scale each row of ``Z`` to unit L2 norm (zero rows stay zero).

    Parameters
    ----------
    Z : ndarray of shape (n, d)

    Returns
    -------
    Z_normalized : ndarray of shape (n, d)
    """
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    return Z / np.where(norms > 0, norms, 1.0)


class CrossModalEmbedder(TransformerMixin, BaseEstimator):
    """Base class of the cross-modal embedders (not used directly).

    Attributes
    ----------
    n_features_in_ : int
        Columns of X, time included.
    feature_names_in_ : ndarray of str
        Column names, when X was a DataFrame with string column names.
    n_image_features_ : int
        Leading image columns (resolved from ``n_image_features``).
    n_text_features_ : int
        Text columns (between the image block and the time column).
    time_range_ : tuple of float
        ``(min, max)`` of the training timestamps.
    embedding_dim_ : int
        Dimension D of the common space (set by the subclass).
    """

    #: Whether the projection depends on time (warn outside the training range).
    _time_at_inference = False
    #: Whether ``fit`` needs labels.
    _requires_labels = True

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Learn the common embedding space.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            ``[image features | text features | time]``; the last column is
            the timestamp on the user's own scale.
        y : array-like of shape (n_samples,) or (n_samples, n_labels), default=None
            Class labels or a multilabel indicator; items sharing a label are
            relevant to each other.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        X_image, X_text, time, labels = self._validate_fit(X, y)
        self._fit(X_image, X_text, time, labels)
        return self

    def _validate_fit(self, X, y):
        X_image, X_text, time = self._validate_layout(X)
        labels = check_labels(
            y, len(time), required=self._requires_labels,
            estimator_name=type(self).__name__,
        )
        return X_image, X_text, time, labels

    def _validate_layout(self, X, reset=True):
        """Validate a training X; with ``reset``, learn its layout and time range."""
        check_time_column(X)
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2, reset=reset)
        if reset:
            self.n_image_features_ = resolve_n_image_features(self.n_image_features,
                                                              X.shape[1])
            self.n_text_features_ = max(1, X.shape[1] - 1 - self.n_image_features_)
            self.time_range_ = (float(X[:, -1].min()), float(X[:, -1].max()))
        return self._split(X)

    def _split(self, X):
        """``(X_image, X_text, time)``: the text block is the columns just before time."""
        return (X[:, :self.n_image_features_], X[:, -1 - self.n_text_features_:-1],
                X[:, -1])

    # ------------------------------------------------------------ transform
    def transform(self, X):
        """Embed both modalities of each row, each at the row's own time.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)
            Same layout as in :meth:`fit`.

        Returns
        -------
        Z : ndarray of shape (n_samples, 2 * embedding_dim_)
            ``[image embedding | text embedding]``, each L2-normalised.
        """
        X_image, X_text, time = self._validate_transform(X)
        if self._time_at_inference:
            warn_if_outside(time, self.time_range_, type(self).__name__)
        return np.hstack([
            l2_normalize(self._embed_image(X_image, time)),
            l2_normalize(self._embed_text(X_text, time)),
        ])

    def _validate_transform(self, X):
        check_is_fitted(self)
        check_time_column(X)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._split(X)

    def transform_image(self, X_image, time=None):
        """Embed image features alone.

        Parameters
        ----------
        X_image : array-like of shape (n_samples, n_image_features_)
            Image feature block only (no time column).
        time : float or array-like of shape (n_samples,), default=None
            Instant(s) at which to project.  Time-conditioned models need it
            (this is how an item is projected at any instant); static models
            ignore it.

        Returns
        -------
        Z_image : ndarray of shape (n_samples, embedding_dim_)
            L2-normalised image embeddings.
        """
        return self._transform_modality(X_image, time, "image")

    def transform_text(self, X_text, time=None):
        """Embed text features alone.

        Parameters
        ----------
        X_text : array-like of shape (n_samples, n_text_features_)
            Text feature block only (no time column).
        time : float or array-like of shape (n_samples,), default=None
            Instant(s) at which to project; ignored by static models.

        Returns
        -------
        Z_text : ndarray of shape (n_samples, embedding_dim_)
            L2-normalised text embeddings.
        """
        return self._transform_modality(X_text, time, "text")

    def _transform_modality(self, A, time, modality):
        A = self._check_modality_block(A, modality)
        t = check_time_argument(time, A.shape[0])
        if self._time_at_inference:
            if t is None:
                raise ValueError(
                    f"{type(self).__name__} projects items at an instant: pass time= "
                    "(a scalar or one value per row)."
                )
            warn_if_outside(t, self.time_range_, type(self).__name__)
        embed = self._embed_image if modality == "image" else self._embed_text
        return l2_normalize(embed(A, t))

    def _check_modality_block(self, A, modality, dtype=np.float64, ensure_min_samples=1):
        """Validate one modality's feature block (no time column) of a fitted estimator."""
        check_is_fitted(self)
        expected = self.n_image_features_ if modality == "image" else self.n_text_features_
        A = check_array(A, dtype=dtype, ensure_min_samples=ensure_min_samples,
                        input_name=f"X_{modality}")
        if A.shape[1] != expected:
            raise ValueError(
                f"X_{modality} has {A.shape[1]} columns but {type(self).__name__} was "
                f"fitted with {expected} {modality} features (pass the {modality} block "
                "only, without the time column)."
            )
        return A

    def _embed_image(self, X_image, time):
        return self._embed("image", X_image, time)

    def _embed_text(self, X_text, time):
        return self._embed("text", X_text, time)

    # ---------------------------------------------------------------- score
    def score(self, X, y=None):
        """Mean of image→text and text→image retrieval quality over the rows of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
        y : array-like, default=None
            Labels: the score is the mean of I→T and T→I mAP (relevant =
            shares a label).  ``None``: the mean reciprocal rank of each item's
            own counterpart, averaged over both directions.

        Returns
        -------
        score : float
        """
        Z = self.transform(X)
        labels = check_labels(y, Z.shape[0], required=False)
        metric = "mrr" if labels is None else "map"
        d = Z.shape[1] // 2
        return cross_modal_scores(Z[:, :d], Z[:, d:], labels, metrics=(metric,))[metric]

    # --------------------------------------------------------- feature names
    def get_feature_names_out(self, input_features=None):
        """Names of the output columns: ``image0 … image{D-1}, text0 … text{D-1}``.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Ignored (the output columns do not correspond to input columns);
            validated against ``feature_names_in_`` when given.

        Returns
        -------
        feature_names_out : ndarray of str
        """
        check_is_fitted(self)
        if input_features is not None:
            input_features = np.asarray(input_features, dtype=object)
            if len(input_features) != self.n_features_in_:
                raise ValueError(
                    f"input_features should have length {self.n_features_in_}; got "
                    f"{len(input_features)}."
                )
            names_in = getattr(self, "feature_names_in_", None)
            if names_in is not None and not np.array_equal(input_features, names_in):
                raise ValueError("input_features is not equal to feature_names_in_.")
        D = self.embedding_dim_
        return np.asarray(
            [f"image{i}" for i in range(D)] + [f"text{i}" for i in range(D)], dtype=object
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self._requires_labels
        return tags
