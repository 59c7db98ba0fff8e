"""The full-ranking scan: NumPy score blocks of whole-gallery rows, ranked in slices.

Full rankings need each query's scores against the whole gallery, so this
reducer of the scan engine (:mod:`._scan`) splits only the queries: blocks of
rows sized so that their temporaries (scores, sort keys, ranks: about
``_FOOTPRINT.bytes_per_pair`` bytes per query-gallery pair) stay within
``working_memory`` MiB, shared by the ``n_jobs`` blocks in flight.  Each
block's scores come from one matrix product and are ranked in cache-sized
slices of rows.  A 20,000 x 20,000 evaluation therefore never materialises the
400-million-entry score matrix.  The metrics of :mod:`._retrieval` run their
per-query functions (:mod:`._ranking`) over these blocks.
"""

from concurrent.futures import ThreadPoolExecutor
from numbers import Integral

import numpy as np
from joblib import effective_n_jobs
from sklearn.utils import gen_batches
from sklearn.utils._param_validation import StrOptions, validate_params
from threadpoolctl import threadpool_limits

from .._validation import RealInterval, check_embeddings
from ._relevance import _keep_gallery, _nan_masks, _prepare_labels, _prepare_time
from ._scan import (
    SIMILARITIES,
    WORKING_MEMORY_RANGE,
    Footprint,
    chunk_products,
    plan_scan,
    prepare_similarity,
)

#: Blocks span the whole gallery; about 64 bytes of temporaries per pair.
_FOOTPRINT = Footprint(64, whole_gallery=True)
#: Most (query, gallery) pairs a metric ranks at once: the block's scores come
#: from one product, but are ranked in slices whose 32-bit sort keys (512 KiB)
#: stay in a core's L2 cache (larger slices ran at DRAM speed).
_CACHE_PAIRS = 2**17
#: Constraints of the arguments every embedding-level metric takes.
SCAN_CONSTRAINTS = {
    "query": ["array-like"],
    "gallery": ["array-like"],
    "query_labels": ["array-like", None],
    "gallery_labels": ["array-like", None],
    "query_time": ["array-like", None],
    "gallery_time": ["array-like", None],
    "time_window": [RealInterval(0, None, closed="left"), None],
    "similarity": [StrOptions(set(SIMILARITIES))],
    "working_memory": [WORKING_MEMORY_RANGE, None],
    "n_jobs": [Integral, None],
    "nan_policy": [StrOptions({"raise", "omit"})],
}


class _Blocks:
    """Query x gallery evaluation split into memory-bounded row blocks."""

    def __init__(self, query, gallery, query_labels=None, gallery_labels=None, *,
                 query_time=None, gallery_time=None, time_window=None, similarity="dot",
                 working_memory=None, n_jobs=None, nan_policy="raise"):
        Q, G = check_embeddings(query, gallery)
        self.bad_queries, keep = _nan_masks(query_labels, gallery_labels, query_time,
                                            gallery_time, time_window, nan_policy, len(Q),
                                            len(G))
        if keep is not None:
            G = G[keep]
        gallery_labels, gallery_time = _keep_gallery(keep, gallery_labels, gallery_time)
        self.Q, self.G = prepare_similarity(Q, G, similarity)
        self.relevance_of = _prepare_labels(query_labels, gallery_labels, len(Q), len(G))
        self.in_window = _prepare_time(query_time, gallery_time, time_window, len(Q), len(G))
        self.n_jobs = effective_n_jobs(n_jobs)
        plan = plan_scan(_FOOTPRINT, len(Q), len(G), working_memory, "cpu", n_jobs=self.n_jobs)
        self.row_blocks = list(gen_batches(len(Q), plan.query_block))

    def __call__(self, rows):
        relevance = self.relevance_of(rows)
        if self.in_window is not None:
            relevance = relevance * self.in_window(rows)
        ((_, scores),) = chunk_products(self.Q, self.G, rows, len(self.G))  # one chunk
        return scores, relevance

    def map(self, block_metric):
        """Apply ``block_metric(scores, relevance)`` to every block (threads if n_jobs > 1)."""
        out = np.empty(len(self.Q))
        step = max(1, _CACHE_PAIRS // self.G.shape[0])

        def work(rows):
            scores, relevance = self(rows)
            block_out = out[rows]  # a view: row blocks are slices
            for start in range(0, len(scores), step):
                part = slice(start, start + step)
                block_out[part] = block_metric(scores[part], relevance[part])

        # one BLAS thread per block: BLAS threads spinning between the small
        # per-block products made 1-thread mAP several times slower.
        with threadpool_limits(1):
            if self.n_jobs == 1:
                for rows in self.row_blocks:
                    work(rows)
            else:  # numpy's sort and ufuncs release the GIL
                with ThreadPoolExecutor(self.n_jobs) as pool:
                    list(pool.map(work, self.row_blocks))
        out[self.bad_queries] = np.nan
        return out


@validate_params(SCAN_CONSTRAINTS, prefer_skip_nested_validation=True)
def iter_score_blocks(query, gallery, query_labels=None, gallery_labels=None, *,
                      query_time=None, gallery_time=None, time_window=None, similarity="dot",
                      working_memory=None, n_jobs=None, nan_policy="raise"):
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
    nan_policy : {"raise", "omit"}, default="raise"
        Items whose label, or time when ``time_window`` is set, is NaN (or
        None) cannot be scored.  ``"raise"``: a ValueError that counts them.
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
    blocks = _Blocks(query, gallery, query_labels, gallery_labels, query_time=query_time,
                     gallery_time=gallery_time, time_window=time_window,
                     similarity=similarity, working_memory=working_memory, n_jobs=n_jobs,
                     nan_policy=nan_policy)
    for rows in blocks.row_blocks:
        yield (rows, *blocks(rows))


def _per_query(block_metric, query, gallery, query_labels, gallery_labels, **kwargs):
    """Run ``block_metric(scores, relevance)`` over all blocks, concatenated."""
    return _Blocks(query, gallery, query_labels, gallery_labels, **kwargs).map(block_metric)
