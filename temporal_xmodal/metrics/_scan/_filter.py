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

#: Temporaries of :meth:`TimeFilter.apply` per (query, gallery) pair of a block: the
#: float64 distance and the bool mask.
BYTES_PER_PAIR = 9


class TimeFilter:
    """The candidates of each query: gallery items with ``|t_query - t_gallery| <= within``.

    Parameters
    ----------
    query_time, gallery_time : ndarray of float64 or torch.Tensor
        One time per query / gallery row, on one axis; the backend's kind
        (NumPy arrays for NumPy scores, tensors on the scores' device for
        tensor scores; :meth:`on` converts).
    within : float
        Largest distance ``|t_query - t_gallery|`` of a candidate, ``>= 0``.
    """

    def __init__(self, query_time, gallery_time, within):
        self.query_time, self.gallery_time, self.within = query_time, gallery_time, within

    def on(self, device):
        """This filter with its times as float64 tensors on ``device`` (``None``: NumPy)."""
        if device is None:
            return TimeFilter(*(np.asarray(t.cpu() if isinstance(t, torch.Tensor) else t,
                                           dtype=np.float64)
                                for t in (self.query_time, self.gallery_time)), self.within)
        return TimeFilter(*(torch.as_tensor(t, dtype=torch.float64, device=device)
                            for t in (self.query_time, self.gallery_time)), self.within)

    def outside(self, rows, cols):
        """Bool mask of the pairs (query ``rows``, gallery ``cols``) that are not candidates:
        ``|t_query - t_gallery| > within``, the complement of the time window's test (so that
        an item on the window's edge is a candidate and relevant alike)."""
        tq, tg = self.query_time[rows], self.gallery_time[cols]
        if isinstance(tq, torch.Tensor):
            return (tq[:, None] - tg[None, :]).abs_() > self.within
        distance = np.subtract(tq[:, None], tg[None, :])
        return np.abs(distance, out=distance) > self.within

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
