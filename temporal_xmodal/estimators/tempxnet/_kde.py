"""Weighted Gaussian kernel densities over time: tabulated on a grid (NumPy), interpolated (torch)."""

import math

import numpy as np
import torch

from ..._warnings import warn

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
#: Largest number of elements of one temporary block (rows × grid, rows × B × C).
BLOCK_ELEMENTS = 1 << 24


def tabulate_kde(t, weights, bandwidth, n_grid, normalisation):
    """Weighted Gaussian KDEs of centred times on a grid, one curve per weight column.

    Row r is Σ_i w_ir K((g − t_i)/h) / (h Σ_i w_ir) (Semedo, thesis, Eq. 4.14) on ``n_grid``
    points over the range of ``t`` extended by ``3 h`` each side, then divided by its peak
    ("max") or its sum ("sum"), or left raw ("none"); a curve of zero weight is 0.

    Returns
    -------
    table : ndarray of shape (n_curves, n_grid)
    totals : ndarray of shape (n_curves,)
        Σ_i w_ir.
    start, step : float
        First grid point and spacing, in the units of ``t``.
    """
    h = float(bandwidth)
    lo, hi = float(t.min()) - 3.0 * h, float(t.max()) + 3.0 * h
    step = (hi - lo) / (n_grid - 1)
    if step > h / 2.0:
        needed = int(math.ceil((hi - lo) / (h / 4.0))) + 1
        warn(
            f"the density grid is coarse for bandwidth={h:g}: spacing {step:.3g} over a time "
            f"range of {hi - lo:.3g}; linear interpolation will be inaccurate. Use "
            f"n_grid >= {needed} or a larger bandwidth.", UserWarning)
    grid = (lo + step * np.arange(n_grid)) / h
    sums = np.zeros((weights.shape[1], n_grid))
    rows = max(1, BLOCK_ELEMENTS // n_grid)
    for first in range(0, len(t), rows):  # sample blocks bound the (rows, n_grid) kernel
        u = grid[None, :] - t[first:first + rows, None] / h
        sums += weights[first:first + rows].T @ (np.exp(-0.5 * u * u) * _INV_SQRT_2PI)
    totals = weights.sum(axis=0)
    table = np.zeros_like(sums)
    np.divide(sums, (totals * h)[:, None], out=table, where=totals[:, None] > 0)
    if normalisation != "none":
        scale = table.max(1, keepdims=True) if normalisation == "max" else \
            table.sum(1, keepdims=True)
        np.divide(table, scale, out=table, where=scale > 0)
    return table, totals, lo, step


def grid_position(t, start, step, n_grid):
    """Left grid index, interpolation weight and inside-grid mask of centred times (torch)."""
    pos = (t - start) / step
    inside = (pos >= 0) & (pos <= n_grid - 1)
    idx = torch.clamp(torch.floor(pos), 0, n_grid - 2).long()
    return idx, torch.clamp(pos - idx.to(pos.dtype), 0.0, 1.0), inside


def interpolate(table, t, start, step, outside):
    """The table's curves at centred times ``t``, ``outside`` off the grid: shape (B, n_curves)."""
    idx, frac, inside = grid_position(t, start, step, table.shape[1])
    frac = frac.to(table.dtype)
    values = table[:, idx] * (1 - frac) + table[:, idx + 1] * frac  # (curves, B)
    return torch.where(inside, values, torch.full((), outside, dtype=values.dtype,
                                                  device=t.device)).T
