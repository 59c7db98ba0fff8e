"""Temporal correlations f_t of TempXNet (Semedo, thesis, §4.4).

``fit(time, labels=None, X_text=None)`` learns from the training split;
``batch_matrix(time, labels=None, text=None)`` gives a mini-batch's (B, B) matrix in
[0, 1], on the device of ``time``.  Times are float64 on the user's axis, centred on
``time_origin_`` at fit; ``bandwidth`` is a duration in the axis' units.  Read more in
docs/estimators/tempxnet.md.
"""

import math
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_array, check_is_fitted

from ..._constraints import Interval
from ...time import centre_times, time_origin
from ._kde import BLOCK_ELEMENTS, grid_position, interpolate, tabulate_kde

__all__ = ["TemporalCorrelation", "RecencyCorrelation", "CategoryKDECorrelation",
           "WordTopicCorrelation"]

_NORMALISATIONS = {"max", "sum", "none"}
_LOG_FLOOR = math.log(1e-12)


def _check_time(time):
    return check_array(time, ensure_2d=False, dtype=np.float64, input_name="time").reshape(-1)


def _rows_match(name, a, n):
    if a.shape[0] != n:
        raise ValueError(f"{name} has {a.shape[0]} rows but time has {n} samples")


class TemporalCorrelation(BaseEstimator):
    """Base class of the temporal correlations f_t (Semedo, thesis, Eqs. 4.12–4.16).

    Subclasses implement ``fit(time, labels=None, X_text=None)`` and ``_matrix``;
    ``symmetric`` tells whether f_t(i, j) == f_t(j, i).
    """

    symmetric = True

    def _fit_origin(self, time):
        self.time_origin_ = time_origin(time)
        return centre_times(time, self.time_origin_)

    def tables(self):
        """The fitted arrays the batch matrix reads, by name, in float32 (the dtype of its
        computation); :class:`~temporal_xmodal.estimators.tempxnet.TempXNetLoss` holds them as
        buffers.

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
            Batch times on the axis of ``fit`` (float64 keeps epoch-second precision).
        labels : torch.Tensor of shape (B, n_categories), optional
            Category indicator (:class:`CategoryKDECorrelation`).
        text : torch.Tensor of shape (B, n_text_features), optional
            Text features (:class:`WordTopicCorrelation`).
        dtype : torch.dtype, default=torch.float32
            dtype of the result (computed in float32, times in float64).
        tables : dict of str -> torch.Tensor or None, default=None
            :meth:`tables` already on the device of ``time`` (uploaded when None).

        Returns
        -------
        F : torch.Tensor of shape (B, B)
            Values in [0, 1] on the device of ``time``.
        """
        check_is_fitted(self)
        if tables is None:
            tables = {name: torch.as_tensor(table, device=time.device)
                      for name, table in self.tables().items()}
        return self._batch_matrix(time, labels, text, dtype, tables)

    def _batch_matrix(self, time, labels, text, dtype, tables):
        """The batch matrix from tables on the device, unchecked (what a loss calls each step)."""
        with torch.no_grad():
            return self._matrix(centre_times(time.reshape(-1), self.time_origin_), labels, text,
                                tables).to(dtype)


class RecencyCorrelation(TemporalCorrelation):
    """Recency correlation of TempXNet-Rec, exp(−|t_i − t_j| / h) (Semedo, thesis, Eq. 4.12).

    Parameters
    ----------
    bandwidth : float, default=0.3
        h, a duration in the units of the time axis.

    Attributes
    ----------
    time_origin_ : float
        Midpoint of the training time range.
    """

    _parameter_constraints = {"bandwidth": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, bandwidth=0.3):
        self.bandwidth = bandwidth

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, time, labels=None, X_text=None):
        """Validate the training times and record their origin.

        Parameters
        ----------
        time : array-like of shape (n_samples,)
            Training times.
        labels, X_text : ignored

        Returns
        -------
        self : RecencyCorrelation
        """
        self._fit_origin(_check_time(time))
        return self

    def _matrix(self, t, labels, text, tables):
        # the differences of float64 times (exact for epoch seconds), then float32
        distance = (t[:, None] - t[None, :]).to(torch.float32).abs_()
        return torch.exp(distance.div_(-self.bandwidth))


class _GridDensity(TemporalCorrelation):
    """Weighted Gaussian KDEs over time tabulated on a grid (Cat and Lat)."""

    _parameter_constraints = {
        "bandwidth": [Interval(Real, 0, None, closed="neither")],
        "normalisation": [StrOptions(_NORMALISATIONS)],
        "n_grid": [Interval(Integral, 2, None, closed="left")],
    }

    def _fit_density(self, time, weights):
        """Tabulate the weighted KDEs of the centred training times; returns Σ_i w_ir."""
        table, totals, start, step = tabulate_kde(self._fit_origin(time), weights,
                                                  self.bandwidth, self.n_grid,
                                                  self.normalisation)
        self.density_ = table
        self.grid_ = self.time_origin_ + start + step * np.arange(self.n_grid)
        self._grid_start, self._grid_step = start, step  # on the centred axis
        return totals

    def density(self, time):
        """The curves at ``time`` (torch, on the axis of ``fit``), linearly interpolated, 0 off the
        grid: shape (B, n_curves), float64.
        """
        check_is_fitted(self)
        return self._interpolate(torch.as_tensor(self.density_, device=time.device),
                                 centre_times(time.reshape(-1), self.time_origin_), outside=0.0)

    def _interpolate(self, table, t, outside):
        return interpolate(table, t, self._grid_start, self._grid_step, outside)


class CategoryKDECorrelation(_GridDensity):
    """Per-category kernel-density correlation of TempXNet-Cat (Semedo, thesis, Eqs. 4.13–4.14).

    p(t | c) = 1 / (n_c h) Σ_k K((t − t_k) / h) with a Gaussian K over category c's
    training times (Eq. 4.14), and f_t(i, j) = max_{c ∈ c_i ∩ c_j} p(t_i | c) p(t_j | c)
    (Eq. 4.13), 0 when i and j share no category.  Symmetric.  The densities are tabulated
    on ``n_grid`` points over the training range extended by ``3 h`` each side, and are 0
    outside the grid.

    Parameters
    ----------
    bandwidth : float, default=1.0
        h, the kernel's standard deviation, a duration in the units of the time axis.
    normalisation : {"max", "sum", "none"}, default="max"
        Each curve divided by its peak, by its sum over the grid, or raw (f_t clipped to 1).
    n_grid : int, default=512
        Grid points.

    Attributes
    ----------
    time_origin_ : float
        Midpoint of the training time range.
    grid_ : ndarray of shape (n_grid,)
        The grid, on the time axis of ``fit``.
    density_ : ndarray of shape (n_categories_, n_grid)
        Normalised p(g | c) on ``grid_``.
    category_counts_ : ndarray of shape (n_categories_,)
        Training items per category.
    n_categories_ : int
        Label columns seen in ``fit``.
    """

    def __init__(self, bandwidth=1.0, normalisation="max", n_grid=512):
        self.bandwidth = bandwidth
        self.normalisation = normalisation
        self.n_grid = n_grid

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, time, labels=None, X_text=None):
        """Tabulate the per-category densities p(t | c).

        Parameters
        ----------
        time : array-like of shape (n_samples,)
            Training times.
        labels : array-like of shape (n_samples, n_categories)
            Indicator matrix (> 0: labelled c).
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
        return {"density": self.density_.astype(np.float32)}

    def _matrix(self, t, labels, text, tables):
        if labels is None or labels.shape[-1] != self.n_categories_:
            raise ValueError(f"CategoryKDECorrelation.batch_matrix needs labels with "
                             f"{self.n_categories_} category columns (those seen in fit)")
        # (B, C), 0 off-category
        q = self._interpolate(tables["density"], t, outside=0.0) * (labels > 0)
        B, C = q.shape
        out = torch.empty((B, B), dtype=q.dtype, device=q.device)
        rows = max(1, BLOCK_ELEMENTS // max(1, B * C))
        for start in range(0, B, rows):  # row blocks bound the (rows, B, C) temporary
            out[start:start + rows] = (q[start:start + rows, None, :] * q[None]).amax(-1)
        return out.clamp_(max=1.0) if self.normalisation == "none" else out


class WordTopicCorrelation(_GridDensity):
    """Word-density correlation of TempXNet-Lat (Semedo, thesis, Eqs. 4.15–4.16), asymmetric.

    f_t(i, j) = Π_{w ∈ text_i} φ_w(t_j) (Eq. 4.15): row i gives the text, column j the
    time.  A deviation: φ_w is a kernel density over time of each word's weight
    a_iw = max(x_iw, 0), not Dynamic LDA's (Eq. 4.16).  A text's words are those with
    a_iw > 0; words unseen in training are skipped (no known word: f_t = 1); log φ is
    floored at log(1e-12).

    Parameters
    ----------
    bandwidth : float, default=1.0
        h, a duration in the units of the time axis.
    aggregation : {"product", "geometric_mean"}, default="product"
        log f = Σ_w [a_iw > 0] log φ_w(t_j) (Eq. 4.15), or Σ_w a_iw log φ_w(t_j) / Σ_w a_iw.
    normalisation : {"max", "sum", "none"}, default="max"
        Per-word curve normalisation, as in :class:`CategoryKDECorrelation`.
    n_grid : int, default=256
        Grid points.

    Attributes
    ----------
    time_origin_ : float
        Midpoint of the training time range.
    grid_ : ndarray of shape (n_grid,)
        The grid, on the time axis of ``fit``.
    density_ : ndarray of shape (n_features_, n_grid)
        Normalised φ_w on ``grid_``.
    log_density_ : ndarray of shape (n_features_, n_grid)
        max(log φ_w, log 1e-12).
    word_weights_ : ndarray of shape (n_features_,)
        Σ_i a_iw over the training texts; 0 marks an unknown word.
    n_features_ : int
        Text features seen in ``fit``.
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
        """Tabulate the per-word curves φ_w.

        Parameters
        ----------
        time : array-like of shape (n_samples,)
            Training times.
        labels : ignored
        X_text : array-like of shape (n_samples, n_text_features)
            Dense training text features.

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
        return {"known": self.word_weights_ > 0,
                "log_density": self.log_density_.astype(np.float32)}

    def _matrix(self, t, labels, text, tables):
        if text is None or text.shape[-1] != self.n_features_:
            raise ValueError(f"WordTopicCorrelation.batch_matrix needs text with "
                             f"{self.n_features_} feature columns (those seen in fit)")
        dtype = tables["log_density"].dtype
        # (B, V), unknown words 0
        a = torch.clamp(text.to(dtype), min=0.0) * tables["known"]
        if self.aggregation == "product":
            w, norm = (a > 0).to(dtype), 1.0
        else:
            w, total = a, a.sum(1, keepdim=True)
            norm = torch.where(total > 0, total, torch.ones_like(total))
        s = (w @ tables["log_density"]) / norm  # (B_i, G)
        floor = w.sum(1, keepdim=True) / norm * _LOG_FLOOR  # every phi_w = 0 off the grid
        # per column j
        idx, frac, inside = grid_position(t, self._grid_start, self._grid_step, self.n_grid)
        frac = frac.to(dtype)
        logf = s[:, idx] * (1 - frac) + s[:, idx + 1] * frac  # (B_i, B_j)
        return torch.exp(torch.where(inside[None, :], logf, floor).clamp(max=0.0))
