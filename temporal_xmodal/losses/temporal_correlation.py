"""Temporal correlation functions ``f_t`` of TempXNet (spec ``tempxnet.md`` §2, thesis §4.4).

TempXNet adds a temporal soft-constraint to the cross-modal triplet loss.  How
strongly two items ``i`` and ``j`` of a mini-batch are pulled together depends on
a *temporal correlation* ``f_t(i, j)`` in ``[0, 1]``.  This module implements the
three functions of the thesis behind one interface, :class:`TemporalCorrelation`:

``fit(time, labels, X_text)``
    Estimate whatever the function needs from the **training split** (numpy
    arrays; amb. 11: the category KDE is fitted on the training split).
``batch_matrix(time, labels, text)``
    Return the ``(B, B)`` matrix ``F[i, j] = f_t(i, j)`` of one mini-batch as a
    torch tensor on the device of the inputs, without gradient.  Vectorised:
    there is no Python loop over the items of the batch.

The three functions
-------------------
:class:`RecencyCorrelation` (TempXNet-Rec, eq 4.12)
    ``f_t(i, j) = exp(-|t_i - t_j| / h)``, default ``h = 0.3``.  Parametric and
    pairwise; nothing is learned.  Symmetric.
:class:`CategoryKDECorrelation` (TempXNet-Cat, eqs 4.13-4.14)
    A Gaussian kernel density ``p(t | c)`` of the training timestamps of each
    category ``c`` (eq 4.14), and
    ``f_t(i, j) = max_{c in c_i ∩ c_j} p(t_i | c) p(t_j | c)`` (eq 4.13), which
    is ``0`` when ``i`` and ``j`` share no category.  Default ``h = 1``.
    Symmetric.
:class:`WordTopicCorrelation` (TempXNet-Lat, eqs 4.15-4.16)
    ``f_t(i, j) = p(t_j | text_i) = prod_{w in text_i} phi_w(t_j)``, a
    per-word temporal curve ``phi_w``.  **Asymmetric** (amb. 9): row ``i``
    supplies the text, column ``j`` the time.  The thesis obtains ``phi_w`` from
    Dynamic LDA; this library estimates it directly as a kernel density of word
    usage over time (a documented deviation, see the class).  Default ``h = 1``.

Time and bandwidth units
------------------------
Time is a float on the user's own scale (fractional years, day index, ...) and
every bandwidth is in those units (amb. 2).  The thesis uses integer day indices
(SocialStories) or years (NUS-WIDE); with ``h = 0.3`` the recency function is
then in effect a "same day" / "same year" correlation (``e^{-1/0.3} ≈ 0.036``
one unit apart).

Density normalisation (amb. 3)
------------------------------
The loss uses ``1 - f_t`` and so assumes ``f_t ∈ [0, 1]`` with values near 1
for strongly correlated pairs, but the thesis does not say how the densities
are normalised.  A raw Gaussian KDE with ``h = 1`` peaks at ``1/sqrt(2π) ≈
0.399``, so ``f_t ≤ 0.16`` and the constraint would push every pair apart.
The density-based functions therefore take ``normalisation``:

``"max"`` (default, best reading)
    each category's / word's curve is divided by its maximum over the grid, so
    its peak is 1;
``"sum"``
    each curve sums to 1 over the evaluation grid;
``"none"``
    the raw kernel density (eq 4.14).  Values of ``f_t`` above 1 (possible
    when ``h < 1/sqrt(2π) ≈ 0.4``) are clipped to 1.

For speed the densities are tabulated in :meth:`fit` on ``n_grid`` equally
spaced points spanning the training time range extended by ``3 h`` on both
sides; batch times are evaluated by linear interpolation in torch.  Times
outside that grid get density 0.

Fitted objects are picklable (the tables are kept as numpy arrays; torch copies
are cached per device and dtype and are not pickled) and work on CPU and CUDA
tensors alike.
"""

import math
import numbers
import warnings

import numpy as np
import torch
from sklearn.exceptions import NotFittedError

__all__ = [
    "TemporalCorrelation",
    "RecencyCorrelation",
    "CategoryKDECorrelation",
    "WordTopicCorrelation",
    "make_temporal_correlation",
    "DEFAULT_BANDWIDTHS",
]

#: Paper default bandwidth of each correlation (spec §2 and §7), in time units.
DEFAULT_BANDWIDTHS = {"recency": 0.3, "category": 1.0, "topic": 1.0}

_NORMALISATIONS = ("max", "sum", "none")
_AGGREGATIONS = ("product", "geometric_mean")
_LOG_FLOOR = math.log(1e-12)
_INT_DTYPES = (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# Largest number of elements of a temporary (rows, B, C) / (rows, G) block.
_BLOCK_ELEMENTS = 1 << 24


# ----------------------------------------------------------------------------- helpers
def _check_bandwidth(bandwidth):
    if (
        isinstance(bandwidth, (bool, np.bool_))
        or not isinstance(bandwidth, numbers.Real)
        or not np.isfinite(bandwidth)
        or bandwidth <= 0
    ):
        raise ValueError(
            f"bandwidth must be a finite number > 0 (in the units of the time axis); got {bandwidth!r}"
        )
    return float(bandwidth)


def _check_choice(name, value, allowed):
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}; got {value!r}")
    return value


def _check_n_grid(n_grid):
    if isinstance(n_grid, (bool, np.bool_)) or not isinstance(n_grid, numbers.Integral) or n_grid < 2:
        raise ValueError(f"n_grid must be an integer >= 2; got {n_grid!r}")
    return int(n_grid)


def _to_numpy(a, name):
    if a is None:
        return None
    if isinstance(a, torch.Tensor):
        a = a.detach()
        if a.is_sparse:
            a = a.to_dense()
        return a.cpu().numpy()
    if hasattr(a, "tocsr") and hasattr(a, "nnz"):  # scipy sparse, kept sparse
        return a.tocsr()
    try:
        return np.asarray(a)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise ValueError(f"{name} could not be converted to an array: {exc}") from None


def _check_fit_time(time):
    time = _to_numpy(time, "time")
    if time is None:
        raise ValueError("time is required: an array of shape (n_samples,)")
    if time.dtype.kind not in "biuf":
        raise ValueError(f"time must be numeric (a number on your own scale); got dtype {time.dtype}")
    time = time.astype(np.float64)
    if time.ndim == 2 and time.shape[1] == 1:
        time = time[:, 0]
    if time.ndim != 1:
        raise ValueError(f"time must have shape (n_samples,); got shape {time.shape}")
    if time.shape[0] == 0:
        raise ValueError("time is empty: fit needs at least one training sample")
    if not np.all(np.isfinite(time)):
        raise ValueError("time contains NaN or infinite values")
    return time


def _check_fit_labels(labels, n):
    labels = _to_numpy(labels, "labels")
    if labels is None:
        raise ValueError(
            "labels are required: a (n_samples, n_categories) indicator matrix of the training split"
        )
    if hasattr(labels, "nnz"):
        labels = labels.toarray()
    if labels.ndim != 2:
        raise ValueError(
            f"labels must be a 2-D (n_samples, n_categories) indicator matrix; got shape {labels.shape} "
            "(one-hot encode single-label class indices first)"
        )
    if labels.shape[0] != n:
        raise ValueError(f"labels has {labels.shape[0]} rows but time has {n} samples")
    if labels.shape[1] == 0:
        raise ValueError("labels has no category columns")
    if labels.dtype.kind not in "biuf":
        raise ValueError(f"labels must be a numeric/bool indicator matrix; got dtype {labels.dtype}")
    if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
        raise ValueError("labels contains NaN or infinite values")
    return labels > 0


def _check_fit_text(X_text, n):
    X_text = _to_numpy(X_text, "X_text")
    if X_text is None:
        raise ValueError("X_text is required: a (n_samples, n_text_features) matrix of the training split")
    if X_text.ndim != 2:
        raise ValueError(f"X_text must be 2-D (n_samples, n_text_features); got shape {X_text.shape}")
    if X_text.shape[0] != n:
        raise ValueError(f"X_text has {X_text.shape[0]} rows but time has {n} samples")
    if X_text.shape[1] == 0:
        raise ValueError("X_text has no feature columns")
    if hasattr(X_text, "nnz"):
        if X_text.dtype.kind not in "biuf":
            raise ValueError(f"X_text must be numeric; got dtype {X_text.dtype}")
        X_text = X_text.astype(np.float64)
        if not np.all(np.isfinite(X_text.data)):
            raise ValueError("X_text contains NaN or infinite values")
        return X_text.maximum(0).tocsr()
    if X_text.dtype.kind not in "biuf":
        raise ValueError(f"X_text must be numeric; got dtype {X_text.dtype}")
    X_text = X_text.astype(np.float64)
    if not np.all(np.isfinite(X_text)):
        raise ValueError("X_text contains NaN or infinite values")
    return np.maximum(X_text, 0.0)


def _as_tensor(a, name, device=None):
    if a is None:
        return None
    if not isinstance(a, torch.Tensor):
        a = torch.as_tensor(np.asarray(a))
    a = a.detach()
    if a.is_sparse:
        a = a.to_dense()
    if device is not None and a.device != device:
        a = a.to(device)
    return a


def _make_grid(time, bandwidth, n_grid):
    lo = float(time.min()) - 3.0 * bandwidth
    hi = float(time.max()) + 3.0 * bandwidth
    grid = np.linspace(lo, hi, n_grid)
    step = (hi - lo) / (n_grid - 1)
    if step > bandwidth / 2.0:
        needed = int(math.ceil((hi - lo) / (bandwidth / 4.0))) + 1
        warnings.warn(
            f"the density grid is coarse for bandwidth={bandwidth:g}: spacing {step:.3g} over a time "
            f"range of {hi - lo:.3g}; linear interpolation will be inaccurate. Use n_grid >= {needed} "
            "or a larger bandwidth.",
            UserWarning,
            stacklevel=3,
        )
    return grid, lo, step


def _kernel_sums(time, weights, grid):
    """``S[k, g] = sum_i weights[i, k] * K((grid[g] - time[i]) / h)`` with ``K`` unscaled by 1/h.

    ``weights`` is (n, K) dense or scipy sparse; the caller has already divided
    ``grid`` and ``time`` by the bandwidth.  Chunked over samples to bound memory.
    """
    n, k = weights.shape
    out = np.zeros((k, grid.shape[0]))
    rows = max(1, _BLOCK_ELEMENTS // max(1, grid.shape[0]))
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        kern = np.exp(-0.5 * (grid[None, :] - time[start:stop, None]) ** 2) * _INV_SQRT_2PI
        block = weights[start:stop]
        out += np.asarray(block.T @ kern)
    return out


def _normalise_rows(table, normalisation):
    """Apply the ``normalisation`` of amb. 3 to each row (curve) of ``table`` in place."""
    if normalisation == "max":
        scale = table.max(axis=1, keepdims=True)
    elif normalisation == "sum":
        scale = table.sum(axis=1, keepdims=True)
    else:
        return table
    np.divide(table, scale, out=table, where=scale > 0)
    return table


# ----------------------------------------------------------------------------- base class
class TemporalCorrelation:
    """Base class of the temporal correlation functions ``f_t`` (spec §2, eqs 4.12-4.16).

    Subclasses implement :meth:`fit` (on numpy training data) and
    ``_batch_matrix``; :meth:`batch_matrix` does the conversion, validation and
    ``torch.no_grad`` handling shared by all of them.

    Attributes
    ----------
    symmetric : bool
        Whether ``f_t(i, j) == f_t(j, i)`` (class attribute).  ``False`` only for
        :class:`WordTopicCorrelation` (amb. 9).
    requires_fit : bool
        Whether :meth:`fit` must be called before :meth:`batch_matrix`.
    """

    symmetric = True
    requires_fit = True

    def __init__(self, bandwidth):
        self.bandwidth = _check_bandwidth(bandwidth)
        self._device_cache = {}

    # -- pickling: drop the per-device torch caches
    def __getstate__(self):
        state = self.__dict__.copy()
        state["_device_cache"] = {}
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_device_cache", {})

    def __repr__(self):
        params = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._param_names())
        return f"{type(self).__name__}({params})"

    def _param_names(self):
        return ("bandwidth",)

    def get_params(self):
        """Constructor parameters as a dict (for display and re-creation)."""
        return {k: getattr(self, k) for k in self._param_names()}

    @property
    def is_fitted(self):
        """``True`` once :meth:`fit` has run (always ``True`` if nothing needs fitting)."""
        return not self.requires_fit or getattr(self, "_fitted", False)

    def _check_fitted(self):
        if not self.is_fitted:
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call "
                "'fit(time, labels, X_text)' with the training split before 'batch_matrix'."
            )

    def _cached(self, key, device, dtype, builder):
        """Torch copy of a fitted numpy table, cached per (key, device, dtype)."""
        if not hasattr(self, "_device_cache"):
            self._device_cache = {}
        ck = (key, str(device), dtype)
        t = self._device_cache.get(ck)
        if t is None:
            t = torch.as_tensor(builder(), dtype=dtype, device=device)
            self._device_cache[ck] = t
        return t

    def fit(self, time, labels=None, X_text=None):
        """Estimate the function from the training split.

        Parameters
        ----------
        time : array-like of shape (n_samples,)
            Training timestamps on the user's own scale.
        labels : array-like of shape (n_samples, n_categories), optional
            Bool / 0-1 category indicator matrix (multi-label allowed).
        X_text : array-like or sparse matrix of shape (n_samples, n_text_features), optional
            Text features (bag of words, TF-IDF...).

        Returns
        -------
        self : TemporalCorrelation
        """
        raise NotImplementedError

    def batch_matrix(self, time, labels=None, text=None):
        """Pairwise temporal correlation ``F[i, j] = f_t(i, j)`` of one mini-batch.

        Parameters
        ----------
        time : torch.Tensor of shape (B,)
            Timestamps of the batch items (numpy arrays are accepted too).
        labels : torch.Tensor of shape (B, n_categories), optional
            Bool / float category indicator (needed by the category function).
        text : torch.Tensor of shape (B, n_text_features), optional
            Text features (needed by the word/topic function).

        Returns
        -------
        F : torch.Tensor of shape (B, B)
            Values in ``[0, 1]`` on the device of ``time``, without gradient.
            The dtype is that of ``text`` if it is a floating tensor, else that of
            ``time`` if floating, else ``float32``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the function needs fitting and :meth:`fit` has not been called.
        ValueError
            On shape mismatches or missing inputs.
        """
        self._check_fitted()
        time = _as_tensor(time, "time")
        if time.ndim == 2 and time.shape[1] == 1:
            time = time[:, 0]
        if time.ndim != 1:
            raise ValueError(f"time must have shape (B,); got shape {tuple(time.shape)}")
        if not (time.is_floating_point() or time.dtype in _INT_DTYPES):
            raise ValueError(f"time must be a numeric tensor; got dtype {time.dtype}")
        device = time.device
        labels = _as_tensor(labels, "labels", device)
        text = _as_tensor(text, "text", device)
        B = time.shape[0]
        for name, a in (("labels", labels), ("text", text)):
            if a is not None:
                if a.ndim != 2:
                    raise ValueError(f"{name} must be 2-D (B, ...); got shape {tuple(a.shape)}")
                if a.shape[0] != B:
                    raise ValueError(f"{name} has {a.shape[0]} rows but time has {B} items")
        if text is not None and text.is_floating_point():
            dtype = text.dtype
        elif time.is_floating_point():
            dtype = time.dtype
        else:
            dtype = torch.float32
        with torch.no_grad():
            return self._batch_matrix(time, labels, text, dtype)

    def _batch_matrix(self, time, labels, text, dtype):  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def _precise(time):
        """Time as float64 where the device supports it (for grid positions / differences)."""
        if time.device.type == "mps":
            return time.to(torch.float32)
        return time.to(torch.float64)


class _GridDensityMixin:
    """Curves tabulated on a time grid and interpolated at batch times (Cat and Lat)."""

    def _fit_table(self, time, weights):
        """Weighted Gaussian KDE of each column of ``weights`` over ``time``, on the grid.

        Row r of ``density_table_`` is sum_i w_ir K((t - t_i)/h) / (h sum_i w_ir)
        (eq 4.14 for category indicators), then normalised; returns sum_i w_ir.
        """
        h = self.bandwidth
        grid, lo, step = _make_grid(time, h, self.n_grid)
        totals = np.asarray(weights.sum(axis=0)).ravel()
        sums = _kernel_sums(time / h, weights, grid / h)
        table = np.zeros_like(sums)
        np.divide(sums, (totals * h)[:, None], out=table, where=totals[:, None] > 0)
        self.density_table_ = _normalise_rows(table, self.normalisation)
        self.grid_start_ = lo
        self.grid_step_ = step
        self._device_cache = {}
        self._fitted = True
        return totals

    def _interpolate(self, time, dtype):
        """Rows of ``density_table_`` at ``time``: tensor (B, rows), 0 outside the grid."""
        table = self._cached("density", time.device, dtype, lambda: self.density_table_)
        idx, frac, inside = self._grid_position(time)
        frac = frac.to(dtype)
        p = table[:, idx] * (1 - frac) + table[:, idx + 1] * frac
        return torch.where(inside, p, torch.zeros((), dtype=dtype, device=time.device)).T

    def _grid_position(self, time):
        """Left grid index, interpolation weight and inside-grid mask of each time."""
        t = self._precise(time)
        pos = (t - self.grid_start_) / self.grid_step_
        inside = (pos >= 0) & (pos <= self.n_grid - 1)
        idx = torch.clamp(torch.floor(pos), 0, self.n_grid - 2).long()
        frac = torch.clamp(pos - idx.to(pos.dtype), 0.0, 1.0)
        return idx, frac, inside

    @property
    def grid_(self):
        """The evaluation grid (numpy, shape (n_grid,)); only after :meth:`fit`."""
        self._check_fitted()
        return self.grid_start_ + self.grid_step_ * np.arange(self.n_grid)


# ----------------------------------------------------------------------------- recency
class RecencyCorrelation(TemporalCorrelation):
    """Recency correlation of TempXNet-Rec (eq 4.12).

    ``f_t(t_i, t_j) = exp(-|t_i - t_j| / h)``, in ``]0, 1]``: 1 for equal
    times, ``e^{-1}`` one bandwidth apart.  The same function for all categories;
    nothing is learned, so :meth:`fit` only validates its input and
    :meth:`batch_matrix` may be called without it.

    Parameters
    ----------
    bandwidth : float, default=0.3
        The "recency bandwidth" ``h`` of eq 4.12, in the units of the time axis.
        With integer day/year indices the thesis default 0.3 gives
        ``e^{-3.33} ≈ 0.036`` one unit apart (amb. 1-2).

    Examples
    --------
    >>> import torch
    >>> f = RecencyCorrelation(bandwidth=1.0)
    >>> f.batch_matrix(torch.tensor([0.0, 1.0]))
    tensor([[1.0000, 0.3679],
            [0.3679, 1.0000]])
    """

    symmetric = True
    requires_fit = False

    def __init__(self, bandwidth=0.3):
        super().__init__(bandwidth)

    def fit(self, time, labels=None, X_text=None):
        """Validate the training timestamps; nothing is stored (eq 4.12 has no fitted state).

        Parameters
        ----------
        time : array-like of shape (n_samples,)
            Training timestamps (checked: 1-D, numeric, finite).
        labels, X_text : ignored
            Accepted for a uniform interface.

        Returns
        -------
        self : RecencyCorrelation
        """
        self.bandwidth = _check_bandwidth(self.bandwidth)
        _check_fit_time(time)
        self._fitted = True
        return self

    def _batch_matrix(self, time, labels, text, dtype):
        t = self._precise(time)
        diff = torch.abs(t[:, None] - t[None, :])
        return torch.exp(-diff / self.bandwidth).to(dtype)


# ----------------------------------------------------------------------------- category KDE
class CategoryKDECorrelation(_GridDensityMixin, TemporalCorrelation):
    """Per-category kernel-density correlation of TempXNet-Cat (eqs 4.13-4.14).

    For every category ``c`` a Gaussian KDE of the training timestamps
    ``T_c = {t_k : c ∈ c_k}`` (eq 4.14)::

        p(t | c) = 1 / (n_c h) * sum_k K((t - t_k) / h),   K(u) = exp(-u²/2) / sqrt(2π)

    and (eq 4.13)::

        f_t(i, j) = max_{c ∈ c_i ∩ c_j} p(t_i | c) * p(t_j | c)

    which is exactly 0 when ``i`` and ``j`` share no category; for multi-label
    pairs the shared category giving the largest value is used.  Symmetric.

    Parameters
    ----------
    bandwidth : float, default=1.0
        KDE bandwidth ``h`` (standard deviation of the Gaussian kernel), in the
        units of the time axis.
    normalisation : {"max", "sum", "none"}, default="max"
        How each category's curve ``p(. | c)`` is normalised (amb. 3): ``"max"``
        divides it by its peak (best reading, so ``f_t`` reaches 1);
        ``"sum"`` makes it sum to 1 over the grid; ``"none"`` keeps the raw
        density of eq 4.14 (``f_t`` clipped to 1).
    n_grid : int, default=512
        Number of grid points on which the densities are tabulated.  The grid
        spans the training time range extended by ``3 h`` on each side; batch
        times are linearly interpolated and times outside the grid get 0.

    Attributes
    ----------
    n_categories_ : int
        Number of label columns seen in :meth:`fit`.
    category_counts_ : ndarray of shape (n_categories_,)
        Training items per category.  A category without items has density 0.
    density_table_ : ndarray of shape (n_categories_, n_grid)
        Normalised ``p(g | c)`` on the grid :attr:`grid_`.
    grid_start_, grid_step_ : float
        First grid point and spacing.

    Notes
    -----
    Fitted on the training split (amb. 11): only annotated data has labels.
    """

    symmetric = True

    def __init__(self, bandwidth=1.0, normalisation="max", n_grid=512):
        super().__init__(bandwidth)
        self.normalisation = _check_choice("normalisation", normalisation, _NORMALISATIONS)
        self.n_grid = _check_n_grid(n_grid)

    def _param_names(self):
        return ("bandwidth", "normalisation", "n_grid")

    def fit(self, time, labels=None, X_text=None):
        """Tabulate the per-category KDE ``p(t | c)`` of eq 4.14 on the grid.

        Parameters
        ----------
        time : array-like of shape (n_samples,)
            Training timestamps.
        labels : array-like of shape (n_samples, n_categories)
            Bool / 0-1 indicator matrix (an entry > 0 means "labelled c").
        X_text : ignored
            Accepted for a uniform interface.

        Returns
        -------
        self : CategoryKDECorrelation
        """
        self.bandwidth = _check_bandwidth(self.bandwidth)
        _check_choice("normalisation", self.normalisation, _NORMALISATIONS)
        self.n_grid = _check_n_grid(self.n_grid)
        time = _check_fit_time(time)
        member = _check_fit_labels(labels, time.shape[0])
        counts = self._fit_table(time, member.astype(np.float64))
        self.category_counts_ = counts.astype(np.int64)
        self.n_categories_ = member.shape[1]
        return self

    def density(self, time):
        """Normalised category densities ``p(t | c)`` (eq 4.14) at the given times.

        Parameters
        ----------
        time : torch.Tensor or array-like of shape (B,)

        Returns
        -------
        P : torch.Tensor of shape (B, n_categories_)
            Linear interpolation of :attr:`density_table_`; 0 outside the grid.
            float64 (float32 on MPS), on the device of ``time``.
        """
        self._check_fitted()
        time = _as_tensor(time, "time").reshape(-1)
        with torch.no_grad():
            return self._density(time, self._precise(time).dtype)

    def _density(self, time, dtype):
        return self._interpolate(time, dtype)  # (B, C)

    def _batch_matrix(self, time, labels, text, dtype):
        if labels is None:
            raise ValueError("CategoryKDECorrelation.batch_matrix needs the (B, n_categories) labels")
        if labels.shape[1] != self.n_categories_:
            raise ValueError(
                f"labels has {labels.shape[1]} category columns but the function was fitted with "
                f"{self.n_categories_}"
            )
        work = torch.float64 if dtype == torch.float64 else torch.float32
        member = labels > 0
        q = self._density(time, work) * member.to(work)  # (B, C), 0 off-category
        B, C = q.shape
        k = int(member.sum(dim=1).max().item()) if B else 0  # most labels on one item
        if k == 0:
            return torch.zeros((B, B), dtype=dtype, device=time.device)
        if 3 * k * k <= C:  # cheaper than the dense (B, B, C) reduction
            out = self._max_over_label_slots(q, member, k)
        else:
            out = torch.empty((B, B), dtype=work, device=time.device)
            rows = max(1, _BLOCK_ELEMENTS // max(1, B * C))
            for start in range(0, B, rows):  # row blocks bound the (rows, B, C) temporary
                stop = min(B, start + rows)
                out[start:stop] = (q[start:stop, None, :] * q[None, :, :]).amax(dim=-1)
        if self.normalisation == "none":
            out.clamp_(max=1.0)
        return out.to(dtype)

    @staticmethod
    def _max_over_label_slots(q, member, k):
        """Eq 4.13 for sparse label sets: cost ``k² B²`` instead of ``C B²``.

        Each item's (at most ``k``) categories are packed into ``k`` slots
        ``(category id, p(t|c))``; ``f(i, j)`` is the max over slot pairs with the
        same category id.  Empty slots have value 0 and so never win.
        """
        order = torch.sort(member.to(torch.int8), dim=1, descending=True, stable=True).indices[:, :k]
        vals = torch.gather(q, 1, order)  # (B, k); 0 in empty slots
        out = torch.zeros((q.shape[0], q.shape[0]), dtype=q.dtype, device=q.device)
        zero = torch.zeros((), dtype=q.dtype, device=q.device)
        for a in range(k):  # k² slot pairs; vectorised over all (i, j)
            for b in range(k):
                same = order[:, a, None] == order[None, :, b]
                prod = vals[:, a, None] * vals[None, :, b]
                torch.maximum(out, torch.where(same, prod, zero), out=out)
        return out


# ----------------------------------------------------------------------------- word / topic
class WordTopicCorrelation(_GridDensityMixin, TemporalCorrelation):
    """Word-based ("topic") correlation of TempXNet-Lat (eqs 4.15-4.16), **asymmetric**.

    ``f_t(i, j) = p(t_j | text_i) = prod_{w in text_i} phi_w(t_j)`` (eq 4.15):
    row ``i`` supplies the text, column ``j`` the time, so in general
    ``f_t(i, j) != f_t(j, i)``; the matrix is not symmetrised (amb. 9).

    **Deviation from the thesis.**  The thesis takes ``phi_w(t)`` from a Dynamic
    LDA model (eq 4.16: the per-slice topic-word probabilities averaged over
    ``P = 10`` latent topics, then normalised; amb. 10).  This library does not
    depend on gensim / D-LDA and has **no latent topics**: ``phi_w`` is estimated
    directly as a per-word kernel density of word usage over time::

        phi_w(t) ∝ sum_i a_iw K((t - t_i) / h),     a_iw = max(x_iw, 0)

    (for a binary bag of words ``a_iw`` is presence, for TF-IDF a weighted
    presence), then normalised per word by ``normalisation``.  It is fitted on
    the text of the training split, not on an external un-annotated corpus.

    The words "in" ``text_i`` are those with ``a_iw > 0``.  Words never used in
    the training texts have no curve and are skipped (as words outside the
    D-LDA vocabulary would be).  A text with no known word gives the empty
    product, ``f_t = 1``.  Computed in log space, with ``log phi`` floored at
    ``log(1e-12)``.

    Parameters
    ----------
    bandwidth : float, default=1.0
        Kernel bandwidth ``h`` over time, in the units of the time axis.
    aggregation : {"product", "geometric_mean"}, default="product"
        ``"product"``: the literal eq 4.15,
        ``log f = sum_w [a_iw > 0] log phi_w(t_j)``; it may underflow to 0 for
        long texts (amb. 3).  ``"geometric_mean"``: a **non-thesis** option,
        ``log f = sum_w a_iw log phi_w(t_j) / sum_w a_iw`` (weighted geometric
        mean), which stays on the scale of a single word.
    normalisation : {"max", "sum", "none"}, default="max"
        Per-word curve normalisation (amb. 3): ``"max"`` (best reading, peak 1),
        ``"sum"`` (sums to 1 over the grid) or ``"none"`` (the weighted kernel
        density ``sum_i a_iw K(.) / (h sum_i a_iw)``; ``f_t`` clipped to 1).
    n_grid : int, default=256
        Number of grid points on which ``log phi_w`` is tabulated (training time
        range extended by ``3 h`` on each side).  Batch times are linearly
        interpolated in log space; times outside the grid have ``phi_w = 0``.

    Attributes
    ----------
    n_features_ : int
        Number of text features (vocabulary size) seen in :meth:`fit`.
    word_weights_ : ndarray of shape (n_features_,)
        ``sum_i a_iw`` over the training texts; 0 marks an unknown word.
    density_table_ : ndarray of shape (n_features_, n_grid)
        Normalised ``phi_w`` on the grid :attr:`grid_`.
    grid_start_, grid_step_ : float
        First grid point and spacing.
    """

    symmetric = False

    def __init__(self, bandwidth=1.0, aggregation="product", normalisation="max", n_grid=256):
        super().__init__(bandwidth)
        self.aggregation = _check_choice("aggregation", aggregation, _AGGREGATIONS)
        self.normalisation = _check_choice("normalisation", normalisation, _NORMALISATIONS)
        self.n_grid = _check_n_grid(n_grid)

    def _param_names(self):
        return ("bandwidth", "aggregation", "normalisation", "n_grid")

    def fit(self, time, labels=None, X_text=None):
        """Tabulate the per-word temporal curves ``phi_w`` (stand-in for eq 4.16).

        Parameters
        ----------
        time : array-like of shape (n_samples,)
            Training timestamps.
        labels : ignored
            Accepted for a uniform interface.
        X_text : array-like or scipy sparse matrix of shape (n_samples, n_text_features)
            Training text features; negative entries count as 0.

        Returns
        -------
        self : WordTopicCorrelation
        """
        self.bandwidth = _check_bandwidth(self.bandwidth)
        _check_choice("aggregation", self.aggregation, _AGGREGATIONS)
        _check_choice("normalisation", self.normalisation, _NORMALISATIONS)
        self.n_grid = _check_n_grid(self.n_grid)
        time = _check_fit_time(time)
        weights = _check_fit_text(X_text, time.shape[0])
        self.word_weights_ = self._fit_table(time, weights)
        self.n_features_ = weights.shape[1]
        return self

    def density(self, time):
        """Per-word curves ``phi_w(t)`` at the given times.

        Parameters
        ----------
        time : torch.Tensor or array-like of shape (B,)

        Returns
        -------
        Phi : torch.Tensor of shape (B, n_features_)
            Linear interpolation of :attr:`density_table_`; 0 outside the grid.
        """
        self._check_fitted()
        time = _as_tensor(time, "time").reshape(-1)
        with torch.no_grad():
            return self._interpolate(time, self._precise(time).dtype)

    def _log_table(self):
        with np.errstate(divide="ignore"):
            log = np.log(self.density_table_)
        return np.maximum(log, _LOG_FLOOR)  # (V, G)

    def _batch_matrix(self, time, labels, text, dtype):
        if text is None:
            raise ValueError("WordTopicCorrelation.batch_matrix needs the (B, n_text_features) text")
        if text.shape[1] != self.n_features_:
            raise ValueError(
                f"text has {text.shape[1]} feature columns but the function was fitted with "
                f"{self.n_features_}"
            )
        work = torch.float64 if dtype == torch.float64 else torch.float32
        device = time.device
        log_table = self._cached("log_table", device, work, self._log_table)  # (V, G)
        known = self._cached("known", device, work, lambda: (self.word_weights_ > 0).astype(float))
        a = torch.clamp(text.to(work), min=0.0) * known  # (B, V), unknown words dropped
        if self.aggregation == "product":
            w = (a > 0).to(work)
            norm = torch.ones(a.shape[0], dtype=work, device=device)
        else:
            w = a
            total = a.sum(dim=1)
            norm = torch.where(total > 0, total, torch.ones((), dtype=work, device=device))
        s = (w @ log_table) / norm[:, None]  # (B, G): log p(g | text_i)
        floor_row = (w.sum(dim=1) / norm) * _LOG_FLOOR  # every phi_w = 0 (outside the grid)
        idx, frac, inside = self._grid_position(time)  # per column j
        frac = frac.to(work)
        logf = s[:, idx] * (1 - frac) + s[:, idx + 1] * frac  # (B_i, B_j)
        logf = torch.where(inside[None, :], logf, floor_row[:, None])
        return torch.exp(torch.clamp(logf, max=0.0)).to(dtype)


# ----------------------------------------------------------------------------- factory
_ALIASES = {
    "recency": "recency", "rec": "recency",
    "category": "category", "cat": "category", "kde": "category",
    "topic": "topic", "lat": "topic", "word": "topic", "dlda": "topic",
}
_CLASSES = {
    "recency": RecencyCorrelation,
    "category": CategoryKDECorrelation,
    "topic": WordTopicCorrelation,
}


def make_temporal_correlation(name, bandwidth=None, **kwargs):
    """Build a temporal correlation function by name (spec §2, §7).

    Parameters
    ----------
    name : {"recency", "category", "topic"} or TemporalCorrelation
        ``"recency"`` (eq 4.12; alias ``"rec"``), ``"category"`` (eqs 4.13-4.14;
        aliases ``"cat"``, ``"kde"``) or ``"topic"`` (eqs 4.15-4.16; aliases
        ``"lat"``, ``"word"``, ``"dlda"``); case-insensitive.  An existing
        :class:`TemporalCorrelation` instance is returned unchanged (then
        ``bandwidth`` and ``kwargs`` must not be given).
    bandwidth : float, optional
        ``None`` picks the paper default: 0.3 for recency, 1.0 for category and
        topic (:data:`DEFAULT_BANDWIDTHS`).
    **kwargs
        Other constructor arguments (``normalisation``, ``n_grid``,
        ``aggregation``).

    Returns
    -------
    TemporalCorrelation
        An unfitted instance.

    Raises
    ------
    ValueError
        Unknown name or invalid parameters.
    """
    if isinstance(name, TemporalCorrelation):
        if bandwidth is not None or kwargs:
            raise ValueError("bandwidth / keyword arguments cannot be applied to an existing instance")
        return name
    key = _ALIASES.get(name.lower()) if isinstance(name, str) else None
    if key is None:
        raise ValueError(
            f"unknown temporal correlation {name!r}; expected one of {sorted(_CLASSES)}"
        )
    if bandwidth is None:
        bandwidth = DEFAULT_BANDWIDTHS[key]
    try:
        return _CLASSES[key](bandwidth=bandwidth, **kwargs)
    except TypeError as exc:
        raise ValueError(f"invalid arguments for the {key!r} correlation: {exc}") from None
