"""CCACrossModal: regularised linear CCA in closed form, the classic cross-modal baseline."""

from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.utils._param_validation import Interval
from sklearn.utils.extmath import svd_flip

from ..base import LAYOUT_CONSTRAINTS, LAYOUT_PARAMETERS_DOC, CrossModalEmbedder

#: Components used when ``n_components=None`` (clipped to what the data allows).
DEFAULT_N_COMPONENTS = 32


def _inverse_sqrt_covariance(Xc, reg):
    """(Σ + r I)^{-1/2} with r = reg · trace(Σ) / d, via ``eigh``."""
    cov = Xc.T @ Xc / (Xc.shape[0] - 1)
    ridge = reg * np.trace(cov) / cov.shape[0]
    eigval, eigvec = linalg.eigh(cov)
    eigval = np.maximum(eigval, 0.0) + ridge
    floor = np.finfo(np.float64).eps * max(eigval.max(), 1.0) * cov.shape[0]
    inv_sqrt = 1.0 / np.sqrt(np.maximum(eigval, floor))
    return (eigvec * inv_sqrt) @ eigvec.T


class CCACrossModal(CrossModalEmbedder):
    __doc__ = r"""Regularised canonical correlation analysis between image and text features.

    The classic unsupervised cross-modal baseline (Rasiwasia et al., 2010;
    Semedo, thesis, Eq. 2.5): linear projections of the centred image and
    text features whose correlation is maximal, with a ridge on each view's
    covariance, solved in closed form.  Retrieval ranks by the cosine of the
    projected items.  The time column is required by the layout and
    ignored; ``y`` is optional and ignored.

    Read more in the user guide: docs/estimators/cca.md.

    Parameters
    ----------
    n_components : int or None, default=None
        Dimension of the common space.  ``None`` uses
        ``min(32, n_image_features, n_text_features, n_samples - 1)``; an
        explicit value above that limit raises a ``ValueError``.
    reg : float, default=1e-4
        Ridge on each view's covariance, relative to its mean variance:
        :math:`r = \mathrm{reg}\cdot\mathrm{tr}(\Sigma)/d`.  0 gives plain CCA.
    correlation_power : float, default=0.0
        Scale component j of both projections by :math:`\rho_j^{p}`, its
        canonical correlation to the power p, before normalisation (Gong et
        al., 2014 use p = 4).  0 gives plain CCA.""" + LAYOUT_PARAMETERS_DOC + """

    Attributes
    ----------
    n_components_ : int
        Components actually used.
    embedding_dim_ : int
        Same as ``n_components_``.
    canonical_correlations_ : ndarray of shape (n_components_,)
        Training-set canonical correlations, decreasing.
    image_weights_, text_weights_ : ndarray of shape (n_*_features_, n_components_)
        Projection matrices A and B (applied to centred features).
    image_mean_, text_mean_ : ndarray
        Training means of each view.
    n_features_in_, feature_names_in_, n_image_features_, n_text_features_, time_axis_, time_range_
        See :class:`~temporal_xmodal.base.CrossModalEmbedder`.

    See Also
    --------
    sklearn.cross_decomposition.CCA : iterative (NIPALS) CCA; same canonical
        correlations without regularisation, much slower.

    Examples
    --------
    >>> from temporal_xmodal import CCACrossModal
    >>> from temporal_xmodal.datasets import make_temporal_crossmodal
    >>> X, y, info = make_temporal_crossmodal(500, return_info=True, random_state=0)
    >>> cca = CCACrossModal(n_components=8, n_image_features=info.n_image_features).fit(X)
    >>> cca.transform(X).shape
    (500, 16)
    """

    _requires_labels = False
    time_use = "none"
    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "reg": [Interval(Real, 0, None, closed="left")],
        "correlation_power": [Interval(Real, 0, None, closed="left")],
        **LAYOUT_CONSTRAINTS,
    }

    def __init__(self, n_components=None, *, reg=1e-4, correlation_power=0.0,
                 n_image_features=None,
                 time_unit="years"):
        self.n_components = n_components
        self.reg = reg
        self.correlation_power = correlation_power
        self.n_image_features = n_image_features
        self.time_unit = time_unit

    def _fit(self, X_image, X_text, time, labels):
        X_image = np.asarray(X_image, dtype=np.float64)  # closed form in float64
        X_text = np.asarray(X_text, dtype=np.float64)
        n = X_image.shape[0]
        limit = min(X_image.shape[1], X_text.shape[1], n - 1)
        if self.n_components is None:
            k = min(DEFAULT_N_COMPONENTS, limit)
        elif self.n_components > limit:
            raise ValueError(
                f"n_components={self.n_components} exceeds min(n_image_features, "
                f"n_text_features, n_samples - 1) = {limit}."
            )
        else:
            k = self.n_components
        self.image_mean_ = X_image.mean(axis=0)
        self.text_mean_ = X_text.mean(axis=0)
        Xc, Yc = X_image - self.image_mean_, X_text - self.text_mean_
        for name, A in (("image", Xc), ("text", Yc)):
            largest = np.abs(A).max(initial=0.0)
            if largest > np.sqrt(np.finfo(np.float64).max / n):  # the covariance would overflow
                raise ValueError(
                    f"The {name} features deviate from their mean by up to {largest:.3g}: "
                    "their covariance overflows float64 (too large for CCA). Scale the "
                    "features (e.g. StandardScaler) before fitting.")
        Wx = _inverse_sqrt_covariance(Xc, self.reg)
        Wy = _inverse_sqrt_covariance(Yc, self.reg)
        cross = Xc.T @ Yc / (n - 1)
        U, rho, Vt = linalg.svd(Wx @ cross @ Wy, full_matrices=False)
        U, Vt = svd_flip(U[:, :k], Vt[:k], u_based_decision=True)
        self.image_weights_ = Wx @ U
        self.text_weights_ = Wy @ Vt.T
        self.canonical_correlations_ = np.clip(rho[:k], 0.0, 1.0)
        self.n_components_ = self.embedding_dim_ = k
        return self

    def _component_scale(self):
        return self.canonical_correlations_ ** self.correlation_power

    def _embed(self, modality, A, time):
        mean, weights = ((self.image_mean_, self.image_weights_) if modality == "image"
                         else (self.text_mean_, self.text_weights_))
        return (np.asarray(A, dtype=np.float64) - mean) @ weights * self._component_scale()
