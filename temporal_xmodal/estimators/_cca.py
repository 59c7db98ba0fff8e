"""CCACrossModal: regularised linear CCA in closed form, the classic cross-modal baseline."""

from numbers import Integral, Real

import numpy as np
import torch
from scipy import linalg, sparse
from sklearn.utils.extmath import svd_flip

from .._device import resolve_device
from .._docs import fill_doc
from .._constraints import Interval
from ..base import LAYOUT_CONSTRAINTS, CrossModalEmbedder
from ..base._embedder import output_dtype

#: Components used when ``embedding_dim=None`` (clipped to what the data allows).
DEFAULT_N_COMPONENTS = 32

_EPS = np.finfo(np.float64).eps


#: Bytes of float64 temporaries the covariances are accumulated from: row blocks of both
#: views at once (a fixed budget, whatever the number of rows).
_BLOCK_BYTES = 16 * 2 ** 20


def _inverse_sqrt(cov, reg):
    """(Σ + r I)^{-1/2} with r = reg · trace(Σ) / d, via ``eigh`` (NumPy or torch)."""
    if isinstance(cov, torch.Tensor):
        ridge = reg * torch.trace(cov) / cov.shape[0]
        eigval, eigvec = torch.linalg.eigh(cov)
        eigval = eigval.clamp(min=0.0) + ridge
        floor = _EPS * eigval.max().clamp(min=1.0) * cov.shape[0]
        return (eigvec * (1.0 / torch.sqrt(torch.maximum(eigval, floor)))) @ eigvec.T
    ridge = reg * np.trace(cov) / cov.shape[0]
    eigval, eigvec = linalg.eigh(cov)
    eigval = np.maximum(eigval, 0.0) + ridge
    floor = _EPS * max(eigval.max(), 1.0) * cov.shape[0]
    return (eigvec * (1.0 / np.sqrt(np.maximum(eigval, floor)))) @ eigvec.T


def _closed_form(Cxx, Cyy, Cxy, reg, device=None):
    """Whitening matrices and the SVD of the whitened cross-covariance: NumPy/SciPy, or
    torch in float64 on ``device``; returns NumPy."""
    if device is None:
        Wx, Wy = _inverse_sqrt(Cxx, reg), _inverse_sqrt(Cyy, reg)
        U, rho, Vt = linalg.svd(Wx @ Cxy @ Wy, full_matrices=False)
        return Wx, Wy, U, rho, Vt
    Cxx, Cyy, Cxy = (torch.as_tensor(C, dtype=torch.float64, device=device)
                     for C in (Cxx, Cyy, Cxy))
    Wx, Wy = _inverse_sqrt(Cxx, reg), _inverse_sqrt(Cyy, reg)
    U, rho, Vt = torch.linalg.svd(Wx @ Cxy @ Wy, full_matrices=False)
    return tuple(t.cpu().numpy() for t in (Wx, Wy, U, rho, Vt))


def _row_blocks(n, width):
    """Row slices of about :data:`_BLOCK_BYTES` of float64 at ``width`` columns."""
    rows = max(1, _BLOCK_BYTES // (8 * max(width, 1)))
    return [slice(start, start + rows) for start in range(0, n, rows)]


def _column_means(A):
    """Column means of a dense or CSR block, in float64, read by row blocks (no copy)."""
    if sparse.issparse(A):
        return np.asarray(A.sum(axis=0, dtype=np.float64)).reshape(-1) / A.shape[0]
    total = np.zeros(A.shape[1])
    for rows in _row_blocks(A.shape[0], A.shape[1]):
        total += A[rows].sum(axis=0, dtype=np.float64)
    return total / A.shape[0]


def _shifted(A, rows, mean):
    """Rows of a view in float64, centred when dense (``mean``), as stored when sparse."""
    part = A[rows]
    if sparse.issparse(part):
        return part.astype(np.float64)
    return np.subtract(part, mean, dtype=np.float64)


def _product(a, b):
    """``aᵀ b`` of two float64 blocks (dense or CSR) as a dense float64 array."""
    if sparse.issparse(b) and not sparse.issparse(a):
        return np.asarray(b.T @ a).T
    out = a.T @ b
    return out.toarray() if sparse.issparse(out) else np.asarray(out)


def _largest_deviation(A, mean, block):
    """The largest |x − mean| of a block (exact when dense; a bound when sparse)."""
    if sparse.issparse(block):
        return float(np.abs(block.data).max(initial=0.0)) + float(np.abs(mean).max(initial=0.0))
    return max(float(block.max(initial=0.0)), -float(block.min(initial=0.0)))  # no |.| copy


def covariances(X, Y):
    """The covariances Σxx, Σyy, Σxy of two views (dense or CSR, never copied whole) and their
    means, in float64, accumulated by row blocks; a sparse view's centring is folded into the
    products, ``Σ = (AᵀA − n μμᵀ) / (n − 1)``.  Raises a ``ValueError`` naming a view whose
    covariance would overflow."""
    n = X.shape[0]
    means = [_column_means(X), _column_means(Y)]
    # what each view's blocks are shifted by (dense: their mean), and what is left (δ)
    deltas = [means[i] if sparse.issparse(A) else np.zeros_like(means[i])
              for i, A in enumerate((X, Y))]
    S = {key: 0.0 for key in ("xx", "yy", "xy")}
    sums = [np.zeros(X.shape[1]), np.zeros(Y.shape[1])]
    limit = np.sqrt(np.finfo(np.float64).max / n)
    for rows in _row_blocks(n, X.shape[1] + Y.shape[1]):
        blocks = [_shifted(A, rows, m) for A, m in zip((X, Y), means)]
        for name, A, mean, block in zip(("image", "text"), (X, Y), means, blocks):
            largest = _largest_deviation(A, mean, block)
            if largest > limit:  # the covariance would overflow
                raise ValueError(
                    f"The {name} features deviate from their mean by up to {largest:.3g}: "
                    "their covariance overflows float64 (too large for CCA). Scale the "
                    "features (e.g. StandardScaler) before fitting.")
        a, b = blocks
        S["xx"] = S["xx"] + _product(a, a)
        S["yy"] = S["yy"] + _product(b, b)
        S["xy"] = S["xy"] + _product(a, b)
        for total, block in zip(sums, blocks):
            total += np.asarray(block.sum(axis=0)).reshape(-1)
        del blocks, a, b  # before the next blocks are read: one block pair at a time
    (sx, sy), (dx, dy) = sums, deltas

    def folded(S_ab, s_a, s_b, d_a, d_b):  # Σ (ã − δa)(b̃ − δb)ᵀ / (n − 1)
        return (S_ab - np.outer(s_a, d_b) - np.outer(d_a, s_b) + n * np.outer(d_a, d_b)) / (n - 1)

    return (folded(S["xx"], sx, sx, dx, dx), folded(S["yy"], sy, sy, dy, dy),
            folded(S["xy"], sx, sy, dx, dy), means[0], means[1])


def closed_form_device(device):
    """Where CCA's closed form runs: ``None`` (NumPy and SciPy on the CPU) or a CUDA device
    (torch in float64), from ``device`` as :func:`temporal_xmodal._device.resolve_device`
    reads it."""
    device = torch.device(resolve_device(device))
    return None if device.type == "cpu" else device


@fill_doc
class CCACrossModal(CrossModalEmbedder):
    r"""Regularised canonical correlation analysis between image and text features.

    The classic unsupervised cross-modal baseline (Rasiwasia et al., 2010; Semedo, thesis,
    Eq. 2.5): linear projections of the centred image and text features of maximal
    correlation, with a ridge on each view's covariance, solved in closed form from
    covariances accumulated by row blocks (sparse X is never densified).  Retrieval ranks by
    the cosine of the projected items.  The time column is required and ignored; ``y`` is
    optional and ignored.

    Read more in the user guide: docs/estimators/cca.md.

    Parameters
    ----------
    embedding_dim : int or None, default=None
        Canonical components kept: the dimension of the common space.  ``None``:
        ``min(32, n_image_features, n_text_features, n_samples - 1)``; an explicit value
        above that limit raises a ``ValueError``.
    reg : float, default=1e-4
        Ridge on each view's covariance, relative to its mean variance:
        :math:`r = \mathrm{reg}\cdot\mathrm{tr}(\Sigma)/d`; 0 gives plain CCA.
    correlation_power : float, default=0.0
        Scale component j of both projections by :math:`\rho_j^{p}`, its canonical
        correlation to the power p, before normalisation (Gong et al., 2014 use p = 4);
        0 gives plain CCA.
    device : str or torch.device, default="auto"
        Where the closed form is solved: on the CPU with NumPy and SciPy, or on a CUDA
        device with torch in float64 (the CPU's solution up to float error); ``"auto"``:
        CUDA when torch finds a GPU.  The fitted weights are NumPy arrays either way.
    random_state : int, RandomState or None, default=None
        Unused (the closed form is deterministic); accepted as every estimator's.
    {layout_parameters}

    Attributes
    ----------
    embedding_dim_ : int
        Components used (the dimension of the common space).
    n_components_ : int
        Same as ``embedding_dim_``.
    canonical_correlations_ : ndarray of shape (n_components_,)
        Training-set canonical correlations, decreasing.
    image_weights_, text_weights_ : ndarray of shape (n_*_features_, n_components_)
        Projection matrices A and B (applied to centred features).
    image_mean_, text_mean_ : ndarray
        Training means of each view.
    {layout_attributes}

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
    _accepts_sparse = True
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
        # the closed form in float64, from covariances accumulated by row blocks
        Cxx, Cyy, Cxy, self.image_mean_, self.text_mean_ = covariances(X_image, X_text)
        Wx, Wy, U, rho, Vt = _closed_form(Cxx, Cyy, Cxy, self.reg, device)
        U, Vt = svd_flip(U[:, :k], Vt[:k], u_based_decision=True)
        self.image_weights_ = Wx @ U
        self.text_weights_ = Wy @ Vt.T
        self.canonical_correlations_ = np.clip(rho[:k], 0.0, 1.0)
        self.n_components_ = self.embedding_dim_ = k
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _component_scale(self):
        return self.canonical_correlations_ ** self.correlation_power

    def _embed(self, modality, A, time):
        mean, weights = ((self.image_mean_, self.image_weights_) if modality == "image"
                         else (self.text_mean_, self.text_weights_))
        offset = mean @ weights  # (A − μ) W as A W − μ W: a sparse A is never centred
        Z = np.empty((A.shape[0], weights.shape[1]), dtype=output_dtype(A))
        for rows in _row_blocks(A.shape[0], A.shape[1]):
            part = A[rows]
            part = part.astype(np.float64) if sparse.issparse(part) else np.asarray(
                part, dtype=np.float64)
            Z[rows] = part @ weights - offset
        Z *= self._component_scale()
        return Z
