"""The full-ranking reducer: per-query metrics over NumPy blocks of whole-gallery rows, the
queries split within ``working_memory`` and each product ranked in cache-sized slices."""

from numbers import Integral, Real

import numpy as np
from joblib import effective_n_jobs
from sklearn.utils._param_validation import StrOptions, validate_params

from .._constraints import Interval
from .._input import check_embeddings
from ._scan import (
    SIMILARITIES,
    WORKING_MEMORY_RANGE,
    Footprint,
    Reducer,
    Scan,
    make_relevance,
    prepare_similarity,
)

#: Most (query, gallery) pairs a metric ranks at once: their 32-bit sort keys (512 KiB) stay
#: in a core's L2 cache.
_CACHE_PAIRS = 2**17
#: Blocks span the whole gallery, about 64 bytes of temporaries per pair; one BLAS thread per
#: block (BLAS threads spinning between the small per-block products slow them down).
_FOOTPRINT = Footprint(64, whole_gallery=True, reduce_pairs=_CACHE_PAIRS, blas_threads=1)

#: Constraints of the arguments every embedding-level metric takes.
SCAN_CONSTRAINTS = {
    "query": ["array-like"],
    "gallery": ["array-like"],
    "query_labels": ["array-like", None],
    "gallery_labels": ["array-like", None],
    "query_time": ["array-like", None],
    "gallery_time": ["array-like", None],
    "time_window": [Interval(Real, 0, None, closed="left"), None],
    "time_filter": [Interval(Real, 0, None, closed="left"), None],
    "similarity": [StrOptions(set(SIMILARITIES))],
    "working_memory": [WORKING_MEMORY_RANGE, None],
    "n_jobs": [Integral, None],
    "nan_policy": [StrOptions({"raise", "omit"})],
}


class _PerQuery(Reducer):
    """``block_metric(scores, relevance)`` of every query: one value per query."""

    def __init__(self, block_metric, relevance, n_query):
        self.block_metric, self.relevance = block_metric, relevance
        self.out = np.empty(n_query)

    def reduce(self, state, rows, cols, S):
        self.out[rows] = self.block_metric(S, self.relevance.block(rows))


def _checked_scan(query, gallery, query_labels, gallery_labels, *, query_time=None,
                  gallery_time=None, time_window=None, similarity="dot", working_memory=None,
                  n_jobs=None, nan_policy="raise", time_filter=None):
    """The checked scan of a full-ranking evaluation and its relevance."""
    Q, G = check_embeddings(query, gallery)
    relevance = make_relevance(query_labels, gallery_labels, query_time, gallery_time,
                               time_window, n_query=len(Q), n_gallery=len(G),
                               nan_policy=nan_policy, time_filter=time_filter)
    if relevance.kept_gallery is not None:
        G = G[relevance.kept_gallery]
    Q, G = prepare_similarity(Q, G, similarity)
    scan = Scan(Q, G, _FOOTPRINT, working_memory=working_memory,
                n_jobs=effective_n_jobs(n_jobs), time_filter=relevance.time_filter)
    return scan, relevance


def _per_query(block_metric, query, gallery, query_labels, gallery_labels, **kwargs):
    """``block_metric(scores, relevance)`` of every query (NaN for the omitted ones)."""
    scan, relevance = _checked_scan(query, gallery, query_labels, gallery_labels, **kwargs)
    out = scan.run(_PerQuery(block_metric, relevance, scan.n_query)).out
    out[relevance.bad_queries] = np.nan
    return out


@validate_params(SCAN_CONSTRAINTS, prefer_skip_nested_validation=True)
def iter_score_blocks(query, gallery, query_labels=None, gallery_labels=None, *,
                      query_time=None, gallery_time=None, time_window=None, similarity="dot",
                      working_memory=None, n_jobs=None, nan_policy="raise", time_filter=None):
    """Yield ``(rows, scores, relevance)`` blocks of a query × gallery evaluation.

    For custom metrics: each block is a slice of queries against the whole gallery, within
    ``working_memory``.  Read more in docs/metrics.md.

    Parameters
    ----------
    query, gallery : array-like of shape (n, dim)
        Query and gallery embeddings, in the same space.
    query_labels, gallery_labels : array-like or None, default=None
        1-D class labels or 2-D multilabel indicators (both of one kind); ``None`` for both:
        query ``i``'s relevant item is gallery item ``i``.
    query_time, gallery_time : array-like of shape (n,) or None, default=None
        Times, needed with ``time_window`` or ``time_filter``.
    time_window : float or None, default=None
        Relevant also requires ``|t_query - t_gallery| <= time_window`` (unit of the times).
    time_filter : float or None, default=None
        Only gallery items within ``time_filter`` of the query's time are candidates; the
        others score ``-inf`` and are never relevant.
    similarity : {"dot", "cosine", "hamming"}, default="dot"
        Dot product, cosine, or negative Hamming distance of the sign codes.
    working_memory : float or None, default=None
        Budget of the blocks in flight, in MiB (default 64).
    n_jobs : int or None, default=None
        Blocks sharing the budget (``None``: 1, ``-1``: all cores); yielded one at a time.
    nan_policy : {"raise", "omit"}, default="raise"
        Items with a NaN label (or time, under ``time_window`` or ``time_filter``): raise, or
        warn, their queries NaN and their gallery items out of the rankings.

    Yields
    ------
    rows : slice
        Query rows of the block.
    scores : ndarray of shape (n_rows, n_gallery)
    relevance : ndarray of shape (n_rows, n_gallery)
        Bool, or the number of shared labels (multilabel); 0 = not relevant.
    """
    scan, relevance = _checked_scan(query, gallery, query_labels, gallery_labels,
                                    query_time=query_time, gallery_time=gallery_time,
                                    time_window=time_window, similarity=similarity,
                                    working_memory=working_memory, n_jobs=n_jobs,
                                    nan_policy=nan_policy, time_filter=time_filter)

    def block(rows):
        ((_, _, scores),) = scan.products(rows, sliced=False)  # the whole gallery
        return rows, scores, relevance.block(rows)

    yield from scan.each_block(block, threads=False)
