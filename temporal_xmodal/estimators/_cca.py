"""CCACrossModal: regularised linear CCA in closed form, the classic cross-modal baseline."""

from numbers import Integral, Real

import numpy as np
import torch
from scipy import linalg
from sklearn.utils.extmath import svd_flip

from .._device import resolve_device
from .._validation import Interval
from ..base import LAYOUT_CONSTRAINTS, LAYOUT_PARAMETERS_DOC, CrossModalEmbedder

#: Components used when ``embedding_dim=None`` (clipped to what the data allows).
DEFAULT_N_COMPONENTS = 32

_EPS = np.finfo(np.float64).eps


def _inverse_sqrt_covariance(Xc, reg):
    """(Σ + r I)^{-1/2} with r = reg · trace(Σ) / d, via ``eigh``."""
    cov = Xc.T @ Xc / (Xc.shape[0] - 1)
    ridge = reg * np.trace(cov) / cov.shape[0]
    eigval, eigvec = linalg.eigh(cov)
    eigval = np.maximum(eigval, 0.0) + ridge
    floor = _EPS * max(eigval.max(), 1.0) * cov.shape[0]
    inv_sqrt = 1.0 / np.sqrt(np.maximum(eigval, floor))
    return (eigvec * inv_sqrt) @ eigvec.T


def _closed_form_numpy(Xc, Yc, reg):
    """Whitening matrices and the SVD of the whitened cross-covariance, in NumPy/SciPy."""
    Wx = _inverse_sqrt_covariance(Xc, reg)
    Wy = _inverse_sqrt_covariance(Yc, reg)
    U, rho, Vt = linalg.svd(Wx @ (Xc.T @ Yc / (Xc.shape[0] - 1)) @ Wy, full_matrices=False)
    return Wx, Wy, U, rho, Vt


def _inverse_sqrt_covariance_torch(A, reg):
    """:func:`_inverse_sqrt_covariance` with torch, on ``A``'s device."""
    cov = A.T @ A / (A.shape[0] - 1)
    ridge = reg * torch.trace(cov) / cov.shape[0]
    eigval, eigvec = torch.linalg.eigh(cov)
    eigval = eigval.clamp(min=0.0) + ridge
    floor = _EPS * eigval.max().clamp(min=1.0) * cov.shape[0]
    inv_sqrt = 1.0 / torch.sqrt(torch.maximum(eigval, floor))
    return (eigvec * inv_sqrt) @ eigvec.T


def _closed_form_torch(Xc, Yc, reg, device):
    """:func:`_closed_form_numpy` with torch in float64 on ``device``; returns NumPy."""
    X = torch.as_tensor(Xc, dtype=torch.float64, device=device)
    Y = torch.as_tensor(Yc, dtype=torch.float64, device=device)
    Wx = _inverse_sqrt_covariance_torch(X, reg)
    Wy = _inverse_sqrt_covariance_torch(Y, reg)
    U, rho, Vt = torch.linalg.svd(Wx @ (X.T @ Y / (X.shape[0] - 1)) @ Wy, full_matrices=False)
    return tuple(t.cpu().numpy() for t in (Wx, Wy, U, rho, Vt))


def closed_form_device(device):
    """Where CCA's closed form runs: ``None`` (NumPy and SciPy on the CPU) or a torch CUDA
    device (torch in float64 there).

    ``device`` means what it means for every estimator
    (:func:`temporal_xmodal._device.resolve_device`): ``"auto"`` is CUDA when torch finds a
    GPU, else the CPU; a CUDA device without a GPU raises a ``ValueError``, an unknown
    device string torch's ``RuntimeError``.
    """
    device = torch.device(resolve_device(device))
    return None if device.type == "cpu" else device


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
    embedding_dim : int or None, default=None
        Dimension of the common space: the number of canonical components
        kept.  ``None`` uses ``min(32, n_image_features, n_text_features,
        n_samples - 1)`` (the thesis states no dimension; 32 is ours, and the
        neural estimators' widths come from their papers); an explicit value
        above that limit raises a ``ValueError``.
    reg : float, default=1e-4
        Ridge on each view's covariance, relative to its mean variance:
        :math:`r = \mathrm{reg}\cdot\mathrm{tr}(\Sigma)/d`.  0 gives plain CCA.
    correlation_power : float, default=0.0
        Scale component j of both projections by :math:`\rho_j^{p}`, its
        canonical correlation to the power p, before normalisation (Gong et
        al., 2014 use p = 4).  0 gives plain CCA.
    device : str or torch.device, default="auto"
        Where the closed form is solved; ``"auto"`` is CUDA when torch finds a
        GPU, else the CPU, as for every estimator.  On the CPU: NumPy and SciPy.
        On a CUDA device (``"cuda"``, ``"cuda:1"``, a ``torch.device``): the
        covariances, their eigendecompositions and the SVD run with torch in
        float64 there (the CPU's solution up to float error).  Pass
        ``device="cpu"`` for the same solution, bit for bit, on every machine.
        A CUDA device on a machine without a GPU raises a ``ValueError``.  The
        fitted weights are NumPy arrays either way and ``transform`` runs in
        NumPy.
    random_state : int, RandomState or None, default=None
        Unused: the closed form is deterministic.  Accepted so that the six
        estimators take the same keywords (one loop, one grid, one
        ``BinnedProcrustesEmbedder`` base that receives per-bin seeds).""" + LAYOUT_PARAMETERS_DOC + """

    Attributes
    ----------
    embedding_dim_ : int
        Components actually used (the dimension of the common space).
    n_components_ : int
        Same as ``embedding_dim_``.
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
    >>> cca = CCACrossModal(embedding_dim=8, n_image_features=info.n_image_features).fit(X)
    >>> cca.transform(X).shape
    (500, 16)
    """

    _requires_labels = False
    time_role = "none"
    _parameter_constraints = {
        "embedding_dim": [Interval(Integral, 1, None, closed="left"), None],
        "reg": [Interval(Real, 0, None, closed="left")],
        "correlation_power": [Interval(Real, 0, None, closed="left")],
        "device": [str, torch.device],
        "random_state": ["random_state"],
        **LAYOUT_CONSTRAINTS,
    }

    def __init__(self, embedding_dim=None, *, reg=1e-4, correlation_power=0.0, device="auto",
                 random_state=None, n_image_features=None, time_unit="years"):
        self.embedding_dim = embedding_dim
        self.reg = reg
        self.correlation_power = correlation_power
        self.device = device
        self.random_state = random_state
        self.n_image_features = n_image_features
        self.time_unit = time_unit

    def _fit(self, X_image, X_text, time, labels):
        requested = self.embedding_dim
        device = closed_form_device(self.device)
        X_image = np.asarray(X_image, dtype=np.float64)  # closed form in float64
        X_text = np.asarray(X_text, dtype=np.float64)
        n = X_image.shape[0]
        limit = min(X_image.shape[1], X_text.shape[1], n - 1)
        if requested is None:
            k = min(DEFAULT_N_COMPONENTS, limit)
        elif requested > limit:
            raise ValueError(
                f"embedding_dim={requested} exceeds min(n_image_features, "
                f"n_text_features, n_samples - 1) = {limit}."
            )
        else:
            k = requested
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
        Wx, Wy, U, rho, Vt = (_closed_form_numpy(Xc, Yc, self.reg) if device is None else
                              _closed_form_torch(Xc, Yc, self.reg, device))
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
