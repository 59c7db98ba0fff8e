"""Per-query ranking metrics on a block of scores (the vectorised core).

Every function here takes a block of ``scores`` (one row per query, one column
per gallery item, higher = more similar) and a block of ``relevance`` of the
same shape, and returns one value per query.  The embedding-level metrics of
:mod:`temporal_xmodal.metrics._retrieval` run them over the score blocks of
:mod:`temporal_xmodal.metrics._blocks`, chunk by chunk, so that N x N work never
holds more than a bounded block in memory.

Ties
----
The rank of a gallery item is the number of gallery items that score **at
least as high** as it (ties count against the query).  This is the convention
of :func:`sklearn.metrics.average_precision_score`, whose value our full-ranking
AP reproduces exactly, ties included.  The truncated metrics (@k, MRR,
recall@k) use the same ranks, so an item whose tie group straddles position
``k`` is outside the top ``k``.  nDCG averages the gains of tied items, as
:func:`sklearn.metrics.ndcg_score` does (``ignore_ties=False``).

The full-ranking metrics (AP, RR, recall) sort 32-bit keys, the float32 value
of each score with the relevance flag in its lowest bit, and re-rank with the
float64 scores wherever float32 could merge or reorder two scores, so their
ranks are exactly those of the float64 scores (see :mod:`._exact_ranks`).
nDCG ranks an order-preserving int64 key of the float64 value.

Definitions (thesis, spec ``tempxnet.md`` §5 and ``diachronic_and_binned.md`` §8.0)
------------------------------------------------------------------------------------
* AP = (1/R) sum_k rel_k P@k  (eq. 2.19), R = number of relevant gallery items.
* AP@K: the sum runs over the top K; R = relevant items within the top K
  (``ap_at_k_normaliser="relevant_in_topk"``, the spec's best reading, AP = 0
  when there are none) or min(K, R_total) (``"min_k_total"``).
* DCG@K = rel_1 + sum_{i=2..K} rel_i / log2(i)  (eq. 2.20, Järvelin &
  Kekäläinen; ``discount="jarvelin"``) or sum_i rel_i / log2(i + 1)
  (``discount="standard"``, scikit-learn's); gain ``rel`` (``"linear"``) or
  ``2**rel - 1`` (``"exponential"``); nDCG = DCG / IDCG, IDCG from the ideal
  ordering of the whole gallery truncated at K.
* RR = 1 / rank of the first relevant item.
* recall@K = relevant items within the top K / R.

Queries with no relevant gallery item get NaN (they are skipped by the means).
"""

import numpy as np

from ._exact_ranks import _RelevantRanks

_AP_NORMALISERS = ("relevant_in_topk", "min_k_total")
_GAINS = ("linear", "exponential")
_DISCOUNTS = ("jarvelin", "standard")
_INT64_MAX = np.int64(0x7FFFFFFFFFFFFFFF)


def _orderable_keys(scores):
    """Map float64 scores to int64 keys with the same order (NaN-free input)."""
    s = np.add(scores, 0.0, dtype=np.float64)  # also maps -0.0 to +0.0
    bits = s.view(np.int64)
    sign = bits >> 63  # -1 for negative floats, 0 otherwise
    sign &= _INT64_MAX
    bits ^= sign  # negative floats: flip all but the sign bit
    return bits


def average_precision_per_query(
    scores, relevance, *, k=None, ap_at_k_normaliser="relevant_in_topk"
):
    """Average precision of each query (row) of a score block.

    Implements AP = (1/R) sum_k rel_k P@k (thesis eq. 2.19; spec
    ``diachronic_and_binned.md`` §8.0).  Without ``k`` it equals
    :func:`sklearn.metrics.average_precision_score` of each row, ties included.

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_gallery)
        Similarity of each query to each gallery item (higher = closer).
    relevance : array-like of bool, shape (n_queries, n_gallery)
        Whether each gallery item is relevant to each query.
    k : int or None, default=None
        Truncate the ranking at ``k`` (mAP@k).  ``None`` ranks the whole gallery.
    ap_at_k_normaliser : {"relevant_in_topk", "min_k_total"}, default="relevant_in_topk"
        Denominator R of AP@k: relevant items within the top k (the spec's
        best reading; AP = 0 when there are none) or ``min(k, total relevant)``.

    Returns
    -------
    ap : ndarray of shape (n_queries,)
        NaN for queries without any relevant gallery item.
    """
    _check_k(k)
    if ap_at_k_normaliser not in _AP_NORMALISERS:
        raise ValueError(
            f"ap_at_k_normaliser must be one of {_AP_NORMALISERS}; got {ap_at_k_normaliser!r}."
        )
    rr = _RelevantRanks(scores, relevance)
    precision = rr.hits / rr.rank
    if k is None:
        total = rr.per_query_sum(precision)
        denom = rr.n_relevant
    else:
        in_top = rr.rank <= k
        total = rr.per_query_sum(np.where(in_top, precision, 0.0))
        if ap_at_k_normaliser == "relevant_in_topk":
            denom = rr.per_query_sum(in_top)
        else:
            denom = np.minimum(k, rr.n_relevant)
    ap = np.divide(total, denom, out=np.zeros(rr.n_queries), where=denom > 0)
    return rr.undefined_to_nan(ap)


def reciprocal_rank_per_query(scores, relevance):
    """Reciprocal rank of the first relevant gallery item of each query.

    RR = 1 / rank, rank counting every gallery item scoring at least as high
    (spec ``sequential_ticrc_cca.md`` §B.4: MRR over the single relevant caption).

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_gallery)
    relevance : array-like of bool, shape (n_queries, n_gallery)

    Returns
    -------
    rr : ndarray of shape (n_queries,)
        NaN for queries without any relevant gallery item.
    """
    rr = _RelevantRanks(scores, relevance)
    best = np.full(rr.n_queries, np.iinfo(np.int64).max)
    np.minimum.at(best, rr.rows, rr.rank)
    return rr.undefined_to_nan(1.0 / best)


def recall_per_query(scores, relevance, *, k):
    """Fraction of each query's relevant gallery items ranked within the top ``k``.

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_gallery)
    relevance : array-like of bool, shape (n_queries, n_gallery)
    k : int
        Cut-off.

    Returns
    -------
    recall : ndarray of shape (n_queries,)
        NaN for queries without any relevant gallery item.
    """
    _check_k(k, required=True)
    rr = _RelevantRanks(scores, relevance)
    found = rr.per_query_sum(rr.rank <= k)
    recall = np.divide(found, rr.n_relevant, out=np.zeros(rr.n_queries),
                       where=rr.n_relevant > 0)
    return rr.undefined_to_nan(recall)


def ndcg_per_query(scores, gains, *, k=None, gain="linear", discount="jarvelin"):
    """Normalised discounted cumulative gain of each query.

    DCG@k = rel_1 + sum_{i=2..k} rel_i / log2(i) (thesis eq. 2.20,
    ``discount="jarvelin"``) or sum_i rel_i / log2(i + 1) (``"standard"``);
    nDCG = DCG / IDCG.  Tied scores share the mean gain of their tie group, as
    in :func:`sklearn.metrics.ndcg_score` (which it equals for
    ``discount="standard", gain="linear"``).

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_gallery)
    gains : array-like of shape (n_queries, n_gallery)
        Graded relevance, e.g. the number of labels shared with the query.
    k : int or None, default=None
        Cut-off; ``None`` uses the whole gallery.
    gain : {"linear", "exponential"}, default="linear"
        ``rel`` or ``2**rel - 1``.
    discount : {"jarvelin", "standard"}, default="jarvelin"

    Returns
    -------
    ndcg : ndarray of shape (n_queries,)
        NaN for queries whose ideal DCG is 0 (no relevant item; spec A-16).
    """
    _check_k(k)
    if gain not in _GAINS:
        raise ValueError(f"gain must be one of {_GAINS}; got {gain!r}.")
    if discount not in _DISCOUNTS:
        raise ValueError(f"discount must be one of {_DISCOUNTS}; got {discount!r}.")
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    g = np.atleast_2d(np.asarray(gains, dtype=np.float64))
    if scores.shape != g.shape:
        raise ValueError(
            f"scores and gains must have the same shape; got {scores.shape} and {g.shape}."
        )
    if gain == "exponential":
        g = np.exp2(g) - 1.0
    n_q, n = g.shape
    k_eff = n if k is None else min(k, n)
    disc = np.zeros(n)
    positions = np.arange(1, k_eff + 1, dtype=np.float64)
    if discount == "jarvelin":
        disc[:k_eff] = 1.0 / np.log2(np.maximum(positions, 2.0))
    else:
        disc[:k_eff] = 1.0 / np.log2(positions + 1.0)

    keys = _orderable_keys(scores)
    order = np.argsort(-keys, axis=1, kind="stable")
    ranked_keys = np.take_along_axis(keys, order, axis=1)
    ranked = np.take_along_axis(g, order, axis=1)
    is_last = np.ones((n_q, n), dtype=bool)
    is_last[:, :-1] = ranked_keys[:, 1:] != ranked_keys[:, :-1]
    # cumulative gains / discounts with a leading zero column, so that a tie
    # group (a, e] contributes mean(gain) * sum(discount) over its positions.
    cum_gain = np.zeros((n_q, n + 1))
    np.cumsum(ranked, axis=1, out=cum_gain[:, 1:])
    cum_disc = np.concatenate([[0.0], np.cumsum(disc)])
    idx = np.arange(n)
    prev_last = np.maximum.accumulate(np.where(is_last, idx, -1), axis=1)
    prev_last = np.concatenate([np.full((n_q, 1), -1), prev_last[:, :-1]], axis=1)
    size = idx - prev_last
    group_gain = np.take_along_axis(cum_gain, idx[None, :] + 1, 1) - np.take_along_axis(
        cum_gain, prev_last + 1, 1
    )
    group_disc = cum_disc[idx + 1][None, :] - cum_disc[prev_last + 1]
    dcg = np.where(is_last, group_gain / size * group_disc, 0.0).sum(axis=1)
    ideal = -np.sort(-g, axis=1)[:, :k_eff]
    idcg = ideal @ disc[:k_eff]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), np.nan)


def _check_k(k, required=False):
    if k is None:
        if required:
            raise ValueError("k is required for this metric.")
        return
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive int or None; got {k!r}.")
