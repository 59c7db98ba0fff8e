"""Exact ranks of the relevant items of a score block, sorted through 32-bit keys.

Each score is sorted as its float32 value, the lowest bit replaced by the relevance flag (no
argsort).  Rounding to float32 is monotone and clearing bit 0 merges only neighbouring float32
values: keys that differ beyond bit 0 are in float64 order, and the relevant items of a
*bucket* (keys equal up to bit 0) with another member are re-ranked by their float64 scores,
so the ranks are :func:`sklearn.metrics.average_precision_score`'s, ties included.
"""

import numpy as np

#: Ambiguous relevant items of a query above which the query is re-ranked whole
#: by argsort; below it each bucket is located by a compare (cost: buckets x gallery).
_MAX_AMBIGUOUS_PER_ROW = 8
#: Positions looked at each side of an ambiguous item for its bucket mates; a
#: longer bucket (many equal scores) sends its query to the argsort.
_WINDOW = 8
_FLOAT32_MAX = np.finfo(np.float32).max


def _bucket_keys(scores, clip=False):
    """int32 bit patterns of the float32 scores, bit 0 cleared (``-0.0`` as ``+0.0``); ``clip``
    keeps scores beyond float32's range finite."""
    if clip:
        scores = np.clip(scores, -_FLOAT32_MAX, _FLOAT32_MAX)
    with np.errstate(over="ignore"):  # C order: the flat positions below assume it
        keys = np.add(scores, 0.0, dtype=np.float32, order="C").view(np.int32)
    keys &= -2
    return keys


def _sorted_flagged_keys(scores, flags):
    """``(keys, clipped)``: each row's bucket keys, relevance flag in bit 0, sorted by float32 value
    (rebuilt from clipped scores when an out-of-range relevant score made a NaN key)."""
    for clip in (False, True):
        keys = _bucket_keys(scores, clip)
        keys |= flags
        as_float = keys.view(np.float32)
        as_float.sort(axis=1)
        if clip or not np.isnan(as_float[:, -1]).any():
            return keys, clip


def _shares_bucket(flat_keys, flat, cols, n):
    """Whether each relevant item (sorted position ``flat``) has a bucket mate beside it."""
    key = flat_keys[flat]
    left = (key ^ flat_keys[flat - 1]).view(np.uint32) < 2
    left &= cols > 0
    right = (key ^ flat_keys.take(flat + 1, mode="clip")).view(np.uint32) < 2
    right &= cols < n - 1
    return left | right


def _bucket_spans(flat_keys, flat, cols, n):
    """Sorted positions ``[start, stop)`` of the items' buckets, looked for at most ``_WINDOW`` each
    side, and ``long``: the buckets that may reach further."""
    steps = np.arange(1, _WINDOW + 1)
    key = flat_keys[flat][:, None]
    spans = []
    for sign, inside in ((-1, cols[:, None] - steps >= 0), (1, cols[:, None] + steps < n)):
        mates = (flat_keys.take(flat[:, None] + sign * steps, mode="clip") ^ key).view(np.uint32)
        mates = (mates < 2) & inside
        spans.append(np.cumprod(mates, axis=1).sum(axis=1))  # consecutive mates that side
    below, above = spans
    return cols - below, cols + above + 1, (below == _WINDOW) | (above == _WINDOW)


def _at_least_as_high(groups, scores, flags):
    """Members, and relevant members, of each one's group scoring at least as high (ties included);
    the items sorted by (group, score), ``groups`` 0, 1, ...."""
    m = groups.size
    run_start = np.ones(m, dtype=bool)
    run_start[1:] = (groups[1:] != groups[:-1]) | (scores[1:] != scores[:-1])
    run_first = np.maximum.accumulate(np.where(run_start, np.arange(m), 0))
    group_end = np.cumsum(np.bincount(groups))[groups]
    rel_cum = np.cumsum(flags)
    rel_before = rel_cum - flags
    return group_end - run_first, rel_cum[group_end - 1] - rel_before[run_first]


class _RelevantRanks:
    """Ranks of the relevant (query, item) pairs of a score block: ``rows`` (each pair's query,
    sorted), ``rank`` and ``hits`` (gallery items, and relevant items, scoring at least as
    high) and ``n_relevant`` (per query)."""

    def __init__(self, scores, relevance):
        scores = np.atleast_2d(np.asarray(scores))
        relevance = np.atleast_2d(np.asarray(relevance))
        if scores.shape != relevance.shape:
            raise ValueError(
                f"scores and relevance must have the same shape; got {scores.shape} and "
                f"{relevance.shape}."
            )
        n_q, n = scores.shape
        flags = relevance if relevance.dtype == bool else relevance != 0
        keys, clipped = _sorted_flagged_keys(scores, flags)
        # (keys & 1) is 0 or 1, so only one byte of each int32 can be non-zero:
        # nonzero over the bytes, then >> 2, is faster than over the int32s.
        flat = np.flatnonzero((keys & 1).view(bool)) >> 2
        rows, cols = np.divmod(flat, n)
        n_relevant = np.bincount(rows, minlength=n_q)
        row_start = np.cumsum(n_relevant) - n_relevant
        self.rows = rows
        self.rank = n - cols
        self.hits = n_relevant[rows] - (np.arange(flat.size) - row_start[rows])
        self.n_relevant = n_relevant
        self.n_queries = n_q
        self._flat = flat
        self._resolve(scores, flags, keys, cols, clipped)

    def _resolve(self, scores, flags, keys, cols, clipped):
        """Re-rank with the float64 scores the relevant items whose bucket has a mate."""
        n = keys.shape[1]
        flat_keys = keys.ravel()
        ambiguous = np.flatnonzero(_shares_bucket(flat_keys, self._flat, cols, n))
        if not ambiguous.size:
            return
        rows = self.rows[ambiguous]
        start, stop, long = _bucket_spans(flat_keys, self._flat[ambiguous], cols[ambiguous], n)
        dense = np.bincount(rows, minlength=self.n_queries) > _MAX_AMBIGUOUS_PER_ROW
        dense[rows[long]] = True
        sparse = ~dense[rows]
        if sparse.any():
            self._rerank_buckets(ambiguous[sparse], start[sparse], stop[sparse], flat_keys,
                                 scores, flags, clipped)
        if dense.any():
            self._rerank_rows(np.flatnonzero(dense), scores, flags)

    def _rerank_buckets(self, entries, start, stop, flat_keys, scores, flags, clipped):
        """Exact ranks of the relevant items ``entries``, in buckets located by compare."""
        n = scores.shape[1]
        rows = self.rows[entries]
        new = np.ones(entries.size, dtype=bool)
        new[1:] = (rows[1:] != rows[:-1]) | (start[1:] != start[:-1])
        head = np.flatnonzero(new)  # first entry of each bucket
        tail = np.append(head[1:], entries.size) - 1  # last (highest) entry of each bucket
        row = rows[head]
        bucket_key = flat_keys[row * n + start[head]] & -2
        unique_rows, local = np.unique(row, return_inverse=True)
        row_keys = _bucket_keys(scores[unique_rows], clipped)
        bucket, col = np.nonzero(row_keys[local] == bucket_key[:, None])
        member_scores = np.asarray(scores[row[bucket], col], dtype=np.float64)
        relevant = flags[row[bucket], col]
        order = np.lexsort((member_scores, bucket))
        bucket, relevant = bucket[order], relevant[order]
        ge, rel_ge = _at_least_as_high(bucket, member_scores[order], relevant)
        bucket = bucket[relevant]
        # entries and relevant members are both bucket-major with the same
        # counts per bucket, and a query's figures are sums over its items.
        self.hits[entries] = self.hits[entries[tail]][bucket] - 1 + rel_ge[relevant]
        self.rank[entries] = n - stop[head][bucket] + ge[relevant]

    def _rerank_rows(self, affected, scores, flags):
        """Exact ranks of every relevant item of the queries ``affected`` (float64 argsort)."""
        if affected.size < self.n_queries:  # else every row: no copies
            scores, flags = scores[affected], flags[affected]
        scores = np.asarray(scores, dtype=np.float64)
        n = scores.shape[1]
        order = np.argsort(scores, axis=1)
        ranked = np.take_along_axis(scores, order, 1)
        run_start = np.ones(ranked.shape, dtype=bool)  # first of a run of equal scores
        np.not_equal(ranked[:, 1:], ranked[:, :-1], out=run_start[:, 1:])
        starts = np.flatnonzero(run_start)
        relevant = np.flatnonzero(np.take_along_axis(flags, order, 1))
        # each relevant item's run start, and the relevant items (of its row) before it
        first = starts[np.searchsorted(starts, relevant, side="right") - 1]
        row = first // n
        n_relevant = self.n_relevant[affected]
        below = np.searchsorted(relevant, first) - (np.cumsum(n_relevant) - n_relevant)[row]
        in_rows = np.zeros(self.n_queries, dtype=bool)
        in_rows[affected] = True
        in_rows = in_rows[self.rows]  # entries of those rows, in row order like ``row``
        self.rank[in_rows] = n - (first - row * n)
        self.hits[in_rows] = n_relevant[row] - below

    def per_query_sum(self, values):
        return np.bincount(self.rows, weights=values, minlength=self.n_queries)

    def undefined_to_nan(self, values):
        return np.where(self.n_relevant > 0, values, np.nan)
