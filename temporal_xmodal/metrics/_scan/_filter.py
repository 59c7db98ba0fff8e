"""The date filter: each query's candidates are the gallery items within a distance of its time.

A user who holds the dates answers "same category, within half a year" by
restricting the candidates to the window; a time-aware model has to beat that
restriction on a static model to earn its place.  :class:`TimeFilter` is that
restriction inside the scan engine: :class:`._engine.Scan` hands every product
``S`` of a (query block, gallery chunk) to :meth:`TimeFilter.apply`, which sets
the scores of the pairs further apart than ``within`` to ``-inf``.  Every
reducer then reads filtered scores: a filtered-out item ranks below every
candidate, the top-k never returns it (:func:`._topk.topk` marks such slots
with index -1), and the relevance of a filtered evaluation
(:func:`._relevance.make_relevance` with ``time_filter``) never counts it, so
a figure with the filter equals the same figure computed over each query's
candidates alone.
"""

import numpy as np
import torch

#: Temporaries of :meth:`TimeFilter.apply` per (query, gallery) pair of a block: the two
#: comparisons with the query's bounds and their union, one byte each.
BYTES_PER_PAIR = 3


class TimeFilter:
    """The candidates of each query: gallery items with ``|t_query - t_gallery| <= within``.

    The test is made once per query, on the distinct gallery times: each query gets the
    smallest and the largest gallery time that pass it (``|t_query - t| <= within`` as
    float64 computes it, the time window's own test), so that a block's mask is two
    comparisons with those bounds (bool temporaries only, no matrix of distances) and an item
    on the window's edge is a candidate exactly when the window's relevance counts it.

    Parameters
    ----------
    query_time, gallery_time : array-like or torch.Tensor of float64
        One time per query / gallery row, on one axis.
    within : float
        Largest distance ``|t_query - t_gallery|`` of a candidate, ``>= 0``.
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
        """Bool mask of the pairs (query ``rows``, gallery ``cols``) that are not candidates:
        the gallery times below the query's lowest candidate time or above its highest."""
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
    """Per query, the lowest and highest gallery time ``t`` with ``|t_query - t| <= within``
    (``+inf`` and ``-inf`` when there is none).

    ``|t_query - t|`` as float64 computes it grows monotonically with ``t`` on either side of
    ``t_query`` (rounding is monotone), so each query's candidates are one run of the sorted
    distinct times: found by bisection at ``t_query ∓ within``, then moved to the exact edge
    of the test (the bisection's bound is itself rounded).
    """
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
