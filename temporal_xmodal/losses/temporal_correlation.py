"""Temporal correlation functions ``f_t`` of TempXNet (spec ``tempxnet.md`` §2, thesis §4.4).

How strongly TempXNet's soft constraint pulls two same-category items ``i`` and
``j`` of a mini-batch together depends on their temporal correlation
``f_t(i, j)`` in ``[0, 1]``.  The three functions of the thesis are
scikit-learn-style objects (``clone``, ``get_params``, ``repr`` and pickling
come from :class:`sklearn.base.BaseEstimator`):

``fit(time, labels=None, X_text=None)``
    Estimates what the function needs from the training split (dense numpy
    arrays; amb. 11) and sets attributes ending in ``_``.
``batch_matrix(time, labels=None, text=None)``
    The ``(B, B)`` matrix ``F[i, j] = f_t(i, j)`` of one mini-batch, a torch
    tensor on the device of ``time``, vectorised over the batch.

=========================  ======================================  ===========  =========
class                      f_t(i, j)                               equations    default h
=========================  ======================================  ===========  =========
:class:`RecencyCorrelation`  ``exp(-|t_i - t_j| / h)``               4.12         0.3
:class:`CategoryKDECorrelation`  ``max_{c∈c_i∩c_j} p(t_i|c) p(t_j|c)``  4.13-4.14    1.0
:class:`WordTopicCorrelation`  ``prod_{w∈text_i} phi_w(t_j)`` (asym.)  4.15-4.16    1.0
=========================  ======================================  ===========  =========

Time
----
Times are float64 numbers on the user's time axis and every ``bandwidth`` is a
duration in the units of that axis (amb. 2).  Only differences of times
matter: :meth:`fit` keeps the midpoint of the training range as
``time_origin_`` and works on ``time - time_origin_`` in float64, so epoch
seconds (~1.7e9) lose no precision.  ``fit`` and ``batch_matrix`` must receive
times on the same axis (the estimators pass centred times to both).

Density normalisation (amb. 3)
------------------------------
The loss uses ``1 - f_t`` and so needs ``f_t`` near 1 for correlated pairs, but
a raw Gaussian KDE with ``h = 1`` peaks at ``1/sqrt(2π) ≈ 0.399``.  The density
functions take ``normalisation``: ``"max"`` (default, best reading: each
curve divided by its peak), ``"sum"`` (each curve sums to 1 over the grid) or
``"none"`` (the raw density; ``f_t`` clipped to 1).  Densities are tabulated
on ``n_grid`` equally spaced points over the training range extended by
``3 h`` on both sides and linearly interpolated at batch times; times outside
the grid have density 0.
"""

import math
import warnings
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted

__all__ = [
    "TemporalCorrelation",
    "RecencyCorrelation",
    "CategoryKDECorrelation",
    "WordTopicCorrelation",
]

_NORMALISATIONS = {"max", "sum", "none"}
_LOG_FLOOR = math.log(1e-12)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
#: Largest number of elements of one temporary block (rows × grid, rows × B × C).
_BLOCK_ELEMENTS = 1 << 24


def _check_time(time):
    return check_array(time, ensure_2d=False, dtype=np.float64, input_name="time").reshape(-1)


def _rows_match(name, a, n):
    if a.shape[0] != n:
        raise ValueError(f"{name} has {a.shape[0]} rows but time has {n} samples")


class TemporalCorrelation(BaseEstimator):
    """Base class of the temporal correlations ``f_t`` (spec §2, eqs. 4.12–4.16).

    Subclasses implement ``fit(time, labels=None, X_text=None)`` and
    :meth:`batch_matrix`.  ``symmetric`` tells whether ``f_t(i, j) == f_t(j, i)``.
    """

    symmetric = True

    def _centre(self, time):
        """Batch times as float64 offsets from ``time_origin_`` (differences are exact)."""
        return time.to(torch.float64) - self.time_origin_

    def _fit_origin(self, time):
        self.time_origin_ = float((time.min() + time.max()) / 2.0)
        return time - self.time_origin_

    def tables(self):
        """The fitted arrays the batch matrix reads, by name (none by default).

        :class:`~temporal_xmodal.losses.TempXNetLoss` holds them as buffers, so they move
        to the training device once, with the loss.

        Returns
        -------
        tables : dict of str -> ndarray
        """
        return {}

    def batch_matrix(self, time, labels=None, text=None, *, dtype=torch.float32, tables=None):
        """``F[i, j] = f_t(i, j)`` of one mini-batch, without gradient.

        Parameters
        ----------
        time : torch.Tensor of shape (B,)
            Batch times on the axis of :meth:`fit` (float64 keeps epoch-second
            precision).
        labels : torch.Tensor of shape (B, n_categories), optional
            Category indicator (needed by :class:`CategoryKDECorrelation`).
        text : torch.Tensor of shape (B, n_text_features), optional
            Text features (needed by :class:`WordTopicCorrelation`).
        dtype : torch.dtype, default=torch.float32
            dtype of the result; the computation runs in float64.
        tables : dict of str -> torch.Tensor or None, default=None
            :meth:`tables` already on the device of ``time`` (uploaded here when None).

        Returns
        -------
        F : torch.Tensor of shape (B, B)
            Values in ``[0, 1]`` on the device of ``time``.
        """
        check_is_fitted(self)
        if tables is None:
            tables = {name: torch.as_tensor(table, device=time.device)
                      for name, table in self.tables().items()}
        with torch.no_grad():
            return self._matrix(self._centre(time.reshape(-1)), labels, text,
                                tables).to(dtype)


class RecencyCorrelation(TemporalCorrelation):
    """Recency correlation of TempXNet-Rec (eq. 4.12): ``f_t = exp(-|t_i - t_j| / h)``.

    1 for equal times, ``e^{-1}`` one bandwidth apart; the same function for
    every category.  Nothing is estimated: :meth:`fit` validates the training
    times and records their origin.

    Parameters
    ----------
    bandwidth : float, default=0.3
        The "recency bandwidth" ``h`` of eq. 4.12, a duration in the units of the
        time axis.  With integer day/year indices 0.3 gives ``e^{-3.33} ≈ 0.036``
        one unit apart (amb. 1–2).

    Attributes
    ----------
    time_origin_ : float
        Midpoint of the training time range (only differences matter).

    Examples
    --------
    >>> import numpy as np, torch
    >>> f = RecencyCorrelation(bandwidth=1.0).fit(np.array([0.0, 1.0]))
    >>> f.batch_matrix(torch.tensor([0.0, 1.0], dtype=torch.float64))
    tensor([[1.0000, 0.3679],
            [0.3679, 1.0000]])
    """

    _parameter_constraints = {"bandwidth": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, bandwidth=0.3):
        self.bandwidth = bandwidth

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, time, labels=None, X_text=None):
        """Validate the training times (eq. 4.12 has nothing to estimate).

        Parameters
        ----------
        time : array-like of shape (n_samples,)
            Training times on the user's axis.
        labels, X_text : ignored
            Accepted for a uniform interface.

        Returns
        -------
        self : RecencyCorrelation
        """
        self._fit_origin(_check_time(time))
        return self

    def _matrix(self, t, labels, text, tables):
        return torch.exp(-torch.abs(t[:, None] - t[None, :]) / self.bandwidth)


class _GridDensity(TemporalCorrelation):
    """Weighted Gaussian KDEs over time tabulated on a grid (Cat and Lat)."""

    _parameter_constraints = {
        "bandwidth": [Interval(Real, 0, None, closed="neither")],
        "normalisation": [StrOptions(_NORMALISATIONS)],
        "n_grid": [Interval(Integral, 2, None, closed="left")],
    }

    def _fit_density(self, time, weights):
        """Row r of ``density_`` = Σ_i w_ir K((g − t_i)/h) / (h Σ_i w_ir) (eq. 4.14), normalised.

        Returns the column totals Σ_i w_ir.
        """
        h = float(self.bandwidth)
        t = self._fit_origin(time)
        lo, hi = float(t.min()) - 3.0 * h, float(t.max()) + 3.0 * h
        step = (hi - lo) / (self.n_grid - 1)
        if step > h / 2.0:
            needed = int(math.ceil((hi - lo) / (h / 4.0))) + 1
            warnings.warn(
                f"the density grid is coarse for bandwidth={h:g}: spacing {step:.3g} over a time "
                f"range of {hi - lo:.3g}; linear interpolation will be inaccurate. Use "
                f"n_grid >= {needed} or a larger bandwidth.", UserWarning, stacklevel=4)
        grid = (lo + step * np.arange(self.n_grid)) / h
        sums = np.zeros((weights.shape[1], self.n_grid))
        rows = max(1, _BLOCK_ELEMENTS // self.n_grid)
        for start in range(0, len(t), rows):  # sample blocks bound the (rows, n_grid) kernel
            u = grid[None, :] - t[start:start + rows, None] / h
            sums += weights[start:start + rows].T @ (np.exp(-0.5 * u * u) * _INV_SQRT_2PI)
        totals = weights.sum(axis=0)
        table = np.zeros_like(sums)
        np.divide(sums, (totals * h)[:, None], out=table, where=totals[:, None] > 0)
        if self.normalisation != "none":
            scale = table.max(1, keepdims=True) if self.normalisation == "max" else \
                table.sum(1, keepdims=True)
            np.divide(table, scale, out=table, where=scale > 0)
        self.density_ = table
        self.grid_ = self.time_origin_ + lo + step * np.arange(self.n_grid)
        self._grid_start, self._grid_step = lo, step  # on the centred axis
        return totals

    def _grid_position(self, t):
        """Left grid index, interpolation weight and inside-grid mask of centred times."""
        pos = (t - self._grid_start) / self._grid_step
        inside = (pos >= 0) & (pos <= self.n_grid - 1)
        idx = torch.clamp(torch.floor(pos), 0, self.n_grid - 2).long()
        return idx, torch.clamp(pos - idx.to(pos.dtype), 0.0, 1.0), inside

    def density(self, time):
        """The normalised curves at the given times (eq. 4.14 for categories, ``phi_w`` for words).

        Parameters
        ----------
        time : torch.Tensor of shape (B,)
            Times on the axis of :meth:`fit`.

        Returns
        -------
        P : torch.Tensor of shape (B, n_curves), float64
            Linear interpolation of ``density_``; 0 outside the grid.
        """
        check_is_fitted(self)
        return self._interpolate(torch.as_tensor(self.density_, device=time.device),
                                 self._centre(time.reshape(-1)), outside=0.0)

    def _interpolate(self, table, t, outside):
        idx, frac, inside = self._grid_position(t)
        values = table[:, idx] * (1 - frac) + table[:, idx + 1] * frac  # (curves, B)
        return torch.where(inside, values, torch.full((), outside, dtype=values.dtype,
                                                      device=t.device)).T


class CategoryKDECorrelation(_GridDensity):
    """Per-category kernel-density correlation of TempXNet-Cat (eqs. 4.13–4.14).

    A Gaussian KDE of the training times of each category ``c`` (eq. 4.14)::

        p(t | c) = 1 / (n_c h) Σ_k K((t − t_k) / h),   K(u) = exp(−u²/2) / sqrt(2π)

    and ``f_t(i, j) = max_{c ∈ c_i ∩ c_j} p(t_i | c) p(t_j | c)`` (eq. 4.13), 0 when
    ``i`` and ``j`` share no category; for multi-label pairs the shared category
    with the largest value is used.  Symmetric.

    Parameters
    ----------
    bandwidth : float, default=1.0
        KDE bandwidth ``h`` (standard deviation of the kernel), a duration in the
        units of the time axis.
    normalisation : {"max", "sum", "none"}, default="max"
        Per-category curve normalisation (amb. 3): peak 1 (best reading), sum 1
        over the grid, or the raw density of eq. 4.14 (``f_t`` clipped to 1).
    n_grid : int, default=512
        Grid points of the tabulated densities.

    Attributes
    ----------
    time_origin_ : float
        Midpoint of the training time range.
    grid_ : ndarray of shape (n_grid,)
        The grid, on the time axis of :meth:`fit`.
    density_ : ndarray of shape (n_categories_, n_grid)
        Normalised ``p(g | c)`` on ``grid_``; a category without items is 0.
    category_counts_ : ndarray of shape (n_categories_,)
        Training items per category.
    n_categories_ : int
        Label columns seen in :meth:`fit`.
    """

    def __init__(self, bandwidth=1.0, normalisation="max", n_grid=512):
        self.bandwidth = bandwidth
        self.normalisation = normalisation
        self.n_grid = n_grid

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, time, labels=None, X_text=None):
        """Tabulate the per-category KDEs ``p(t | c)`` of eq. 4.14.

        Parameters
        ----------
        time : array-like of shape (n_samples,)
            Training times.
        labels : array-like of shape (n_samples, n_categories)
            Indicator matrix (an entry > 0 means "labelled c"; multi-label allowed).
        X_text : ignored

        Returns
        -------
        self : CategoryKDECorrelation
        """
        time = _check_time(time)
        if labels is None:
            raise ValueError("CategoryKDECorrelation.fit needs labels: the (n_samples, "
                             "n_categories) indicator matrix of the training split")
        labels = check_array(labels, dtype=np.float64, input_name="labels")
        _rows_match("labels", labels, len(time))
        counts = self._fit_density(time, (labels > 0).astype(np.float64))
        self.category_counts_ = counts.astype(np.int64)
        self.n_categories_ = labels.shape[1]
        return self

    def tables(self):
        check_is_fitted(self)
        return {"density": self.density_}

    def _matrix(self, t, labels, text, tables):
        if labels is None or labels.shape[-1] != self.n_categories_:
            raise ValueError(f"CategoryKDECorrelation.batch_matrix needs labels with "
                             f"{self.n_categories_} category columns (those seen in fit)")
        # (B, C), 0 off-category
        q = self._interpolate(tables["density"], t, outside=0.0) * (labels > 0)
        B, C = q.shape
        out = torch.empty((B, B), dtype=q.dtype, device=q.device)
        rows = max(1, _BLOCK_ELEMENTS // max(1, B * C))
        for start in range(0, B, rows):  # row blocks bound the (rows, B, C) temporary
            out[start:start + rows] = (q[start:start + rows, None, :] * q[None]).amax(-1)
        return out.clamp_(max=1.0) if self.normalisation == "none" else out


class WordTopicCorrelation(_GridDensity):
    """Word-density correlation of TempXNet-Lat (eqs. 4.15–4.16), **asymmetric**.

    ``f_t(i, j) = p(t_j | text_i) = Π_{w ∈ text_i} phi_w(t_j)`` (eq. 4.15): row
    ``i`` gives the text, column ``j`` the time; not symmetrised (amb. 9).

    **Deviation from the thesis.**  The thesis takes ``phi_w`` from Dynamic LDA
    (eq. 4.16, P = 10 latent topics).  Here ``phi_w`` is a kernel density of
    each word's weight over the training times, with no latent topics::

        phi_w(t) ∝ Σ_i a_iw K((t − t_i) / h),    a_iw = max(x_iw, 0)

    normalised per word by ``normalisation``.  The words of ``text_i`` are those
    with ``a_iw > 0``; words unused in training are skipped; a text with no
    known word gives the empty product, ``f_t = 1``.  Computed in log space with
    ``log phi`` floored at ``log(1e-12)``.

    Parameters
    ----------
    bandwidth : float, default=1.0
        Kernel bandwidth ``h``, a duration in the units of the time axis.
    aggregation : {"product", "geometric_mean"}, default="product"
        ``"product"``: eq. 4.15, ``log f = Σ_w [a_iw > 0] log phi_w(t_j)`` (may
        underflow for long texts).  ``"geometric_mean"`` (**non-thesis**):
        ``log f = Σ_w a_iw log phi_w(t_j) / Σ_w a_iw``.
    normalisation : {"max", "sum", "none"}, default="max"
        Per-word curve normalisation (amb. 3), as in :class:`CategoryKDECorrelation`.
    n_grid : int, default=256
        Grid points of the tabulated curves.

    Attributes
    ----------
    time_origin_ : float
        Midpoint of the training time range.
    grid_ : ndarray of shape (n_grid,)
        The grid, on the time axis of :meth:`fit`.
    density_ : ndarray of shape (n_features_, n_grid)
        Normalised ``phi_w`` on ``grid_``.
    log_density_ : ndarray of shape (n_features_, n_grid)
        ``max(log phi_w, log 1e-12)``.
    word_weights_ : ndarray of shape (n_features_,)
        ``Σ_i a_iw`` over the training texts; 0 marks an unknown word.
    n_features_ : int
        Text features seen in :meth:`fit`.
    """

    symmetric = False
    _parameter_constraints = {**_GridDensity._parameter_constraints,
                              "aggregation": [StrOptions({"product", "geometric_mean"})]}

    def __init__(self, bandwidth=1.0, aggregation="product", normalisation="max", n_grid=256):
        self.bandwidth = bandwidth
        self.aggregation = aggregation
        self.normalisation = normalisation
        self.n_grid = n_grid

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, time, labels=None, X_text=None):
        """Tabulate the per-word temporal curves ``phi_w`` (stand-in for eq. 4.16).

        Parameters
        ----------
        time : array-like of shape (n_samples,)
            Training times.
        labels : ignored
        X_text : array-like of shape (n_samples, n_text_features)
            Dense training text features; negative entries count as 0.

        Returns
        -------
        self : WordTopicCorrelation
        """
        time = _check_time(time)
        if X_text is None:
            raise ValueError("WordTopicCorrelation.fit needs X_text: the (n_samples, "
                             "n_text_features) text features of the training split")
        X_text = check_array(X_text, dtype=np.float64, input_name="X_text")
        _rows_match("X_text", X_text, len(time))
        self.word_weights_ = self._fit_density(time, np.maximum(X_text, 0.0))
        with np.errstate(divide="ignore"):
            self.log_density_ = np.maximum(np.log(self.density_), _LOG_FLOOR)
        self.n_features_ = X_text.shape[1]
        return self

    def tables(self):
        check_is_fitted(self)
        return {"known": self.word_weights_ > 0, "log_density": self.log_density_}

    def _matrix(self, t, labels, text, tables):
        if text is None or text.shape[-1] != self.n_features_:
            raise ValueError(f"WordTopicCorrelation.batch_matrix needs text with "
                             f"{self.n_features_} feature columns (those seen in fit)")
        # (B, V), unknown words 0
        a = torch.clamp(text.to(torch.float64), min=0.0) * tables["known"]
        if self.aggregation == "product":
            w, norm = (a > 0).to(torch.float64), 1.0
        else:
            w, total = a, a.sum(1, keepdim=True)
            norm = torch.where(total > 0, total, torch.ones_like(total))
        s = (w @ tables["log_density"]) / norm  # (B_i, G)
        floor = w.sum(1, keepdim=True) / norm * _LOG_FLOOR  # every phi_w = 0 off the grid
        idx, frac, inside = self._grid_position(t)  # per column j
        logf = s[:, idx] * (1 - frac) + s[:, idx + 1] * frac  # (B_i, B_j)
        return torch.exp(torch.where(inside[None, :], logf, floor).clamp(max=0.0))
