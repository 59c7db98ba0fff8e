"""Chunked query x gallery evaluation: relevance, time windows, NaN handling, score blocks.

Queries are processed in blocks of rows sized so that the temporaries of one
block (scores, sort keys, ranks: about ``_BYTES_PER_PAIR`` bytes per
query-gallery pair) stay under ``working_memory`` MiB; each block's scores come
from one matrix product and are ranked in cache-sized slices of rows.  A
20,000 x 20,000 evaluation therefore never materialises the 400-million-entry
score matrix.  The metrics of :mod:`._retrieval` run their per-query functions
over these blocks.
"""

import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from joblib import effective_n_jobs
from sklearn.utils import gen_batches
from threadpoolctl import threadpool_limits

#: Upper estimate of the bytes of temporaries per (query, gallery) pair.
_BYTES_PER_PAIR = 64
#: Default memory budget of one block, in MiB.
DEFAULT_WORKING_MEMORY = 64
#: Most (query, gallery) pairs a metric ranks at once: the block's scores come
#: from one product, but are ranked in slices whose 32-bit sort keys (512 KiB)
#: stay in a core's L2 cache.  5,000 x 5,000 mAP on 1 thread: 0.42 s with
#: slices of 2**17 pairs, 0.72 s with 2**18 or more.
_CACHE_PAIRS = 2**17
_SIMILARITIES = ("dot", "cosine", "hamming")
_NAN_POLICIES = ("raise", "omit")


def _as_embeddings(A, name):
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_items, dim); got shape {A.shape}.")
    if A.shape[0] == 0:
        raise ValueError(f"{name} is empty.")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return A


def _prepare_labels(query_labels, gallery_labels, n_query, n_gallery):
    """Return a callable (rows) -> relevance-count block, or counterpart mode."""
    if (query_labels is None) != (gallery_labels is None):
        raise ValueError("Give both query_labels and gallery_labels, or neither.")
    if query_labels is None:
        if n_query != n_gallery:
            raise ValueError(
                "Without labels each query's relevant item is its counterpart (same row), "
                f"which needs as many queries as gallery items; got {n_query} and {n_gallery}."
            )
        return lambda rows: (np.arange(rows.start, rows.stop)[:, None]
                             == np.arange(n_gallery)[None, :])
    ql, gl = np.asarray(query_labels), np.asarray(gallery_labels)
    if ql.shape[0] != n_query or gl.shape[0] != n_gallery:
        raise ValueError(
            f"Labels must have one row per item: query_labels {ql.shape[0]} vs {n_query} "
            f"queries, gallery_labels {gl.shape[0]} vs {n_gallery} gallery items."
        )
    if ql.ndim != gl.ndim or ql.ndim not in (1, 2) or (ql.ndim == 2 and ql.shape[1] != gl.shape[1]):
        raise ValueError(
            "query_labels and gallery_labels must both be 1-D class labels or both be "
            f"multilabel indicators with the same columns; got shapes {ql.shape} and {gl.shape}."
        )
    if ql.ndim == 2 and _one_label_each(ql) and _one_label_each(gl):
        ql, gl = ql.argmax(axis=1), gl.argmax(axis=1)  # one-hot: the same relevance, cheaper
    if ql.ndim == 1:
        return lambda rows: ql[rows, None] == gl[None, :]
    # shared labels through a float64 BLAS product (exact for counts below 2**53;
    # NumPy's int64 product has no BLAS and took 16 s of a 5,000 x 70,000 mAP)
    Q, G = ql.astype(np.float64), gl.astype(np.float64).T
    return lambda rows: (Q[rows] @ G).astype(np.int64)


def _one_label_each(indicator):
    """Whether a 0/1 indicator has exactly one label in every row."""
    return bool(np.isin(indicator, (0, 1)).all() and (indicator.sum(axis=1) == 1).all())


def _prepare_time(query_time, gallery_time, time_window, n_query, n_gallery):
    if time_window is None:
        return None
    if query_time is None or gallery_time is None:
        raise ValueError("time_window needs both query_time and gallery_time.")
    if not np.isscalar(time_window) or not time_window >= 0:
        raise ValueError(f"time_window must be a non-negative number; got {time_window!r}.")
    tq = np.asarray(query_time, dtype=np.float64).ravel()
    tg = np.asarray(gallery_time, dtype=np.float64).ravel()
    if tq.shape[0] != n_query or tg.shape[0] != n_gallery:
        raise ValueError("query_time / gallery_time must have one value per item.")
    return lambda rows: np.abs(tq[rows, None] - tg[None, :]) <= time_window


def _missing(values, n):
    """Rows of ``values`` (1-D, or 2-D: any column) that are NaN / None; all False for None."""
    if values is None:
        return np.zeros(n, dtype=bool)
    a = np.asarray(values)
    if a.dtype.kind == "f":
        bad = np.isnan(a)
    elif a.dtype.kind == "O":
        bad = np.frompyfunc(lambda v: v is None or v != v, 1, 1)(a).astype(bool)
    else:
        return np.zeros(n, dtype=bool)
    return bad.reshape(len(a), -1).any(axis=1)


def _nan_masks(query_labels, gallery_labels, query_time, gallery_time, time_window,
               nan_policy, n_query, n_gallery):
    """Queries and gallery items whose label, or time under a window, is missing.

    Returns ``(bad_queries, kept_gallery)``: a boolean mask of the queries to
    report as NaN, and the boolean mask of the gallery items to keep (``None``
    when all are kept).  ``nan_policy="raise"`` raises instead when any is
    missing; ``"omit"`` warns with the counts.
    """
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(f"nan_policy must be one of {_NAN_POLICIES}; got {nan_policy!r}.")
    bad_q = _missing(query_labels, n_query)
    bad_g = _missing(gallery_labels, n_gallery)
    what = "label"
    if time_window is not None:
        bad_q = bad_q | _missing(None if query_time is None else
                                 np.asarray(query_time, dtype=np.float64).ravel(), n_query)
        bad_g = bad_g | _missing(None if gallery_time is None else
                                 np.asarray(gallery_time, dtype=np.float64).ravel(), n_gallery)
        what = "label or time (time_window is set)"
    n_bad_q, n_bad_g = int(bad_q.sum()), int(bad_g.sum())
    if not (n_bad_q or n_bad_g):
        return bad_q, None
    message = (f"{n_bad_q} of {n_query} queries and {n_bad_g} of {n_gallery} gallery items "
               f"have a missing (NaN) {what}")
    if nan_policy == "raise":
        raise ValueError(message + "; they cannot be scored. Fix them, or pass "
                         "nan_policy='omit' to leave them out (with a warning).")
    if n_bad_g == n_gallery:
        raise ValueError(message + "; no gallery item is left to rank.")
    warnings.warn(message + "; nan_policy='omit': those queries are left out of the means "
                  "(NaN per query) and those gallery items out of the rankings.", stacklevel=4)
    return bad_q, (~bad_g if n_bad_g else None)


def _similarity(Q, G, similarity):
    if similarity not in _SIMILARITIES:
        raise ValueError(f"similarity must be one of {_SIMILARITIES}; got {similarity!r}.")
    if similarity == "cosine":
        Q = Q / np.maximum(np.linalg.norm(Q, axis=1, keepdims=True), 1e-12)
        G = G / np.maximum(np.linalg.norm(G, axis=1, keepdims=True), 1e-12)
    elif similarity == "hamming":
        # bits = sign; -Hamming distance = (agreements - dim) is monotone in
        # the dot product of the +-1 codes, and integer-valued (ties kept).
        Q = np.where(Q > 0, 1.0, -1.0)
        G = np.where(G > 0, 1.0, -1.0)
    return Q, G


class _Blocks:
    """Query x gallery evaluation split into memory-bounded row blocks."""

    def __init__(self, query, gallery, query_labels=None, gallery_labels=None, *,
                 query_time=None, gallery_time=None, time_window=None, similarity="dot",
                 working_memory=None, n_jobs=None, nan_policy="raise"):
        Q = _as_embeddings(query, "query")
        G = _as_embeddings(gallery, "gallery")
        if Q.shape[1] != G.shape[1]:
            raise ValueError(
                f"query and gallery embeddings differ in dimension: {Q.shape[1]} vs "
                f"{G.shape[1]}."
            )
        self.bad_queries, keep = _nan_masks(query_labels, gallery_labels, query_time,
                                            gallery_time, time_window, nan_policy, len(Q),
                                            len(G))
        if keep is not None:
            G = G[keep]
            gallery_labels = np.asarray(gallery_labels)[keep] if gallery_labels is not None \
                else None
            gallery_time = np.asarray(gallery_time).ravel()[keep] if gallery_time is not None \
                else None
        self.Q, self.G = _similarity(Q, G, similarity)
        self.relevance_of = _prepare_labels(query_labels, gallery_labels, len(Q), len(G))
        self.in_window = _prepare_time(query_time, gallery_time, time_window, len(Q), len(G))
        self.n_jobs = effective_n_jobs(n_jobs)
        budget = (DEFAULT_WORKING_MEMORY if working_memory is None else working_memory) * 2**20
        budget /= self.n_jobs  # blocks in flight at once share the budget
        rows_per_block = max(1, int(budget // (_BYTES_PER_PAIR * len(G))))
        self.row_blocks = list(gen_batches(len(Q), rows_per_block))

    def __call__(self, rows):
        relevance = self.relevance_of(rows)
        if self.in_window is not None:
            relevance = relevance * self.in_window(rows)
        return self.Q[rows] @ self.G.T, relevance

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
        # per-block products made 1-thread mAP (5,000 x 5,000) 2-3x slower.
        with threadpool_limits(1):
            if self.n_jobs == 1:
                for rows in self.row_blocks:
                    work(rows)
            else:  # numpy's sort and ufuncs release the GIL
                with ThreadPoolExecutor(self.n_jobs) as pool:
                    list(pool.map(work, self.row_blocks))
        out[self.bad_queries] = np.nan
        return out


def iter_score_blocks(query, gallery, query_labels=None, gallery_labels=None, **kwargs):
    """Yield ``(rows, scores, relevance)`` blocks of a query x gallery evaluation.

    Parameters
    ----------
    query : array-like of shape (n_queries, dim)
        Query embeddings.
    gallery : array-like of shape (n_gallery, dim)
        Gallery (database) embeddings, in the same space.
    query_labels, gallery_labels : array-like or None
        1-D class labels or 2-D multilabel indicators (both of the same kind).
        ``None`` for both: the relevant item of query ``i`` is gallery item
        ``i`` (its counterpart).
    query_time, gallery_time : array-like of shape (n,), optional
        Timestamps, needed with ``time_window``.
    time_window : float or None, default=None
        If set, relevant additionally requires ``|t_query - t_gallery| <= time_window``
        (time-window relevance, spec ``diachronic_and_binned.md`` §8.4).
    similarity : {"dot", "cosine", "hamming"}, default="dot"
        Score of a pair.  Embeddings from our estimators are L2-normalised, so
        "dot" is the cosine.  "hamming" ranks the sign codes by (negative)
        Hamming distance.
    working_memory : float or None
        Budget of the blocks in flight, in MiB (default ``DEFAULT_WORKING_MEMORY``).
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
    blocks = _Blocks(query, gallery, query_labels, gallery_labels, **kwargs)
    for rows in blocks.row_blocks:
        yield (rows, *blocks(rows))


def _per_query(block_metric, query, gallery, query_labels, gallery_labels, **kwargs):
    """Run ``block_metric(scores, relevance)`` over all blocks, concatenated."""
    return _Blocks(query, gallery, query_labels, gallery_labels, **kwargs).map(block_metric)


