"""The date filter: a query's candidates are the gallery items within ``within`` of its time.

:class:`._engine.Scan` sets the other pairs' scores to ``-inf`` in each product and the
relevance never counts them: a filtered figure is the figure over the candidates alone.
"""

import numpy as np
import torch

#: Temporaries of :meth:`TimeFilter.apply` per (query, gallery) pair of a block: the two
#: comparisons with the query's bounds and their union, one byte each.
BYTES_PER_PAIR = 3


class TimeFilter:
    """The candidates of each query: gallery items with ``|t_query - t_gallery| <= within``.

    Each query's lowest and highest candidate time are found once, on the distinct gallery
    times, with the window's own float64 test (edges included): a block's mask is then two
    comparisons.
    """

    def __init__(self, query_time, gallery_time, within, *, _bounds=None):
        self.query_time, self.gallery_time, self.within = query_time, gallery_time, within
        self.low, self.high = _bounds if _bounds is not None else _edges(
            _host(query_time), _host(gallery_time), within)

    def on(self, device):
        """This filter with its times as float64 tensors on ``device`` (``None``: NumPy)."""
        arrays = (self.query_time, self.gallery_time, self.low, self.high)
        if device is None:
            arrays = [_host(a) for a in arrays]
        else:
            arrays = [torch.as_tensor(a, dtype=torch.float64, device=device) for a in arrays]
        return TimeFilter(arrays[0], arrays[1], self.within, _bounds=arrays[2:])

    def outside(self, rows, cols):
        """Bool mask of the pairs (query ``rows``, gallery ``cols``) that are not candidates."""
        tg = self.gallery_time[cols][None, :]
        return (tg < self.low[rows][:, None]) | (tg > self.high[rows][:, None])

    def apply(self, S, rows, cols, *, in_place):
        """``S`` with the scores of non-candidates set to ``-inf`` (in place when allowed)."""
        out = self.outside(rows, cols)
        if isinstance(S, torch.Tensor):
            return S.masked_fill_(out, -torch.inf) if in_place else S.masked_fill(out,
                                                                                  -torch.inf)
        if not in_place:
            S = S.copy()
        S[out] = -np.inf
        return S


def _host(values):
    return np.asarray(values.cpu() if isinstance(values, torch.Tensor) else values,
                      dtype=np.float64)


def _edges(query_time, gallery_time, within):
    """Per query, the lowest and highest gallery time passing ``|t_query - t| <= within``
    (``+inf`` and ``-inf`` when none): bisection on the sorted distinct times, then moved to the
    test's exact edge (float64 rounding is monotone, so the candidates are one run)."""
    times = np.unique(gallery_time)
    n = len(times)
    if n == 0:
        return np.full(len(query_time), np.inf), np.full(len(query_time), -np.inf)

    def inside(i):
        j = np.clip(i, 0, n - 1)
        return (i >= 0) & (i < n) & (np.abs(query_time - times[j]) <= within)

    first = np.searchsorted(times, query_time - within, "left")
    while (move := inside(first - 1)).any():  # a time just below the bound passes the test
        first = first - move
    while (move := (first < n) & ~inside(first)
           & (times[np.clip(first, 0, n - 1)] < query_time)).any():
        first = first + move
    last = np.searchsorted(times, query_time + within, "right") - 1
    while (move := inside(last + 1)).any():
        last = last + move
    while (move := (last >= 0) & ~inside(last)
           & (times[np.clip(last, 0, n - 1)] > query_time)).any():
        last = last - move
    found = (first <= last) & inside(first)
    return (np.where(found, times[np.clip(first, 0, n - 1)], np.inf),
            np.where(found, times[np.clip(last, 0, n - 1)], -np.inf))
