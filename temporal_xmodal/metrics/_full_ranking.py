"""The full-ranking reducer: per-query metrics over NumPy blocks of whole-gallery rows.

Full rankings need each query's scores against the whole gallery, so this
reducer of the scan engine (:class:`._scan.Scan`) asks for blocks that span the
gallery: the engine splits only the queries, in blocks whose temporaries
(scores, sort keys, ranks: about ``_FOOTPRINT.bytes_per_pair`` bytes per
query-gallery pair) stay within ``working_memory`` MiB, shared by the
``n_jobs`` blocks in flight.  Each block's scores come from one matrix product
and reach the reducer in cache-sized slices of rows.  A 20,000 x 20,000
evaluation therefore never materialises the 400-million-entry score matrix.
The metrics of :mod:`._retrieval` run their per-query functions
(:mod:`._ranking`) through :func:`_per_query`.
"""

from numbers import Integral, Real

import numpy as np
from joblib import effective_n_jobs
from sklearn.utils._param_validation import StrOptions, validate_params

from .._constraints import Interval
from .._validation import check_embeddings
from ._scan import (
    SIMILARITIES,
    WORKING_MEMORY_RANGE,
    Footprint,
    Reducer,
    Scan,
    make_relevance,
    prepare_similarity,
)

#: Most (query, gallery) pairs a metric ranks at once: the block's scores come
#: from one product, but are ranked in slices whose 32-bit sort keys (512 KiB)
#: stay in a core's L2 cache (larger slices ran at DRAM speed).
_CACHE_PAIRS = 2**17
#: Blocks span the whole gallery; about 64 bytes of temporaries per pair.  One
#: BLAS thread per block: BLAS threads spinning between the small per-block
#: products made 1-thread mAP several times slower.
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
    """The checked scan of a full-ranking evaluation and its :class:`._scan.NumpyRelevance`."""
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
    """Yield ``(rows, scores, relevance)`` blocks of a query x gallery evaluation.

    Read more in the user guide: docs/metrics.md.

    Parameters
    ----------
    query : array-like of shape (n_queries, dim)
        Query embeddings.
    gallery : array-like of shape (n_gallery, dim)
        Gallery (database) embeddings, in the same space.
    query_labels, gallery_labels : array-like or None, default=None
        1-D class labels or 2-D multilabel indicators (both of the same kind).
        ``None`` for both: the relevant item of query ``i`` is gallery item
        ``i`` (its counterpart).
    query_time, gallery_time : array-like of shape (n,) or None, default=None
        Timestamps, needed with ``time_window``.
    time_window : float or None, default=None
        If set, relevant additionally requires ``|t_query - t_gallery| <=
        time_window`` (time-window relevance), in the unit of the times.
    similarity : {"dot", "cosine", "hamming"}, default="dot"
        Score of a pair.  Embeddings from our estimators are L2-normalised, so
        "dot" is the cosine.  "hamming" ranks the sign codes by (negative)
        Hamming distance.
    working_memory : float or None, default=None
        Budget of the blocks in flight, in MiB (default 64).
    n_jobs : int or None, default=None
        Threads evaluating blocks in parallel (``None``: 1, ``-1``: all cores).
    time_filter : float or None, default=None
        The date filter: only gallery items within ``time_filter`` of the
        query's time are candidates (a search restricted to that window, in
        the unit of the times); the others get the score ``-inf`` in the
        blocks and are never relevant.
    nan_policy : {"raise", "omit"}, default="raise"
        Items whose label, or time when ``time_window`` or ``time_filter`` is
        set, is NaN (or None) cannot be scored.  ``"raise"``: a ValueError that counts them.
        ``"omit"``: a warning that counts them; such queries get NaN (left out
        of the means) and such gallery items are removed from the rankings.

    Yields
    ------
    rows : slice
        Query rows of the block.
    scores : ndarray of shape (n_rows, n_gallery)
    relevance : ndarray of shape (n_rows, n_gallery)
        Bool (single-label or counterpart relevance) or the number of shared
        labels (multilabel); 0 = not relevant.
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
