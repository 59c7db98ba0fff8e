"""Per-query ranking metrics of one block of ``scores`` and ``relevance`` (one row per query).

Ranks count the gallery items scoring at least as high; a query without a relevant item gets
NaN.  Definitions (Semedo, thesis, Eqs. 2.19-2.22) and ties: docs/metrics.md.
"""

import numpy as np
from sklearn.utils._param_validation import StrOptions, validate_params

from ._exact_ranks import _RelevantRanks
from ._scan import K_RANGE, sortable_keys

#: The denominators of AP@k (docs/metrics.md, "AP@k normaliser").
AP_NORMALISERS = ("relevant_in_topk", "min_k_total")
#: Constraints of the ranking options, shared by every metric that takes them
#: (``"auto"``: see :func:`resolve_normaliser`).
RANKING_CONSTRAINTS = {
    "ap_at_k_normaliser": [StrOptions({"auto", *AP_NORMALISERS})],
    "gain": [StrOptions({"linear", "exponential"})],
    "discount": [StrOptions({"jarvelin", "standard"})],
}
_BLOCK_CONSTRAINTS = {"scores": ["array-like"], "relevance": ["array-like"]}


@validate_params(
    {**_BLOCK_CONSTRAINTS, "k": [K_RANGE, None],
     "ap_at_k_normaliser": [StrOptions(set(AP_NORMALISERS))]},
    prefer_skip_nested_validation=True,
)
def average_precision_per_query(
    scores, relevance, *, k=None, ap_at_k_normaliser="relevant_in_topk"
):
    """Average precision of each query (row) of a score block.

    AP = (1/R) sum_k rel_k P@k (Semedo, thesis, Eq. 2.19); without ``k`` it equals
    :func:`sklearn.metrics.average_precision_score` of each row, ties included.  Read more in
    docs/metrics.md.

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_gallery)
        Similarity of each query to each gallery item (higher = closer).
    relevance : array-like of bool, shape (n_queries, n_gallery)
    k : int or None, default=None
        Truncate the ranking at ``k`` (AP@k).
    ap_at_k_normaliser : {"relevant_in_topk", "min_k_total"}, default="relevant_in_topk"
        Denominator of AP@k: the relevant items within the top k (AP = 0 when there are
        none), or min(k, R).

    Returns
    -------
    ap : ndarray of shape (n_queries,)
        NaN for queries without a relevant gallery item.
    """
    return _average_precision(scores, relevance, k, ap_at_k_normaliser)


@validate_params(_BLOCK_CONSTRAINTS, prefer_skip_nested_validation=True)
def reciprocal_rank_per_query(scores, relevance):
    """Reciprocal rank of the first relevant gallery item of each query.

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_gallery)
    relevance : array-like of bool, shape (n_queries, n_gallery)

    Returns
    -------
    rr : ndarray of shape (n_queries,)
        NaN for queries without a relevant gallery item.
    """
    return _reciprocal_rank(scores, relevance)


@validate_params({**_BLOCK_CONSTRAINTS, "k": [K_RANGE]}, prefer_skip_nested_validation=True)
def recall_per_query(scores, relevance, *, k):
    """Fraction of each query's relevant gallery items ranked within the top ``k``.

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_gallery)
    relevance : array-like of bool, shape (n_queries, n_gallery)
    k : int

    Returns
    -------
    recall : ndarray of shape (n_queries,)
        NaN for queries without a relevant gallery item.
    """
    return _recall(scores, relevance, k)


@validate_params(
    {"scores": ["array-like"], "gains": ["array-like"], "k": [K_RANGE, None],
     "gain": RANKING_CONSTRAINTS["gain"],
     "discount": RANKING_CONSTRAINTS["discount"]},
    prefer_skip_nested_validation=True,
)
def ndcg_per_query(scores, gains, *, k=None, gain="linear", discount="jarvelin"):
    """Normalised discounted cumulative gain of each query.

    DCG@k = rel_1 + sum_{i=2..k} rel_i / log2(i) (Semedo, thesis, Eq. 2.20;
    ``discount="jarvelin"``) or sum_i rel_i / log2(i + 1) (``"standard"``); tied items share
    their group's mean gain, as in :func:`sklearn.metrics.ndcg_score`.

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_gallery)
    gains : array-like of shape (n_queries, n_gallery)
        Graded relevance, e.g. the number of labels shared with the query.
    k : int or None, default=None
        Cut-off; ``None``: the whole gallery.
    gain : {"linear", "exponential"}, default="linear"
        ``rel`` or ``2**rel - 1``.
    discount : {"jarvelin", "standard"}, default="jarvelin"

    Returns
    -------
    ndcg : ndarray of shape (n_queries,)
        NaN for queries whose ideal DCG is 0.
    """
    return _ndcg(scores, gains, k, gain, discount)


def resolve_normaliser(ap_at_k_normaliser, time_window):
    """The AP@k normaliser of ``"auto"``: ``"min_k_total"`` with a time window, else
    ``"relevant_in_topk"`` (docs/metrics.md, "AP@k normaliser").
    """
    if ap_at_k_normaliser != "auto":
        return ap_at_k_normaliser
    return "relevant_in_topk" if time_window is None else "min_k_total"


def _average_precision(scores, relevance, k, ap_at_k_normaliser):
    """The unchecked body of :func:`average_precision_per_query`."""
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


def _reciprocal_rank(scores, relevance):
    """The unchecked body of :func:`reciprocal_rank_per_query`."""
    rr = _RelevantRanks(scores, relevance)
    best = np.full(rr.n_queries, np.iinfo(np.int64).max)
    np.minimum.at(best, rr.rows, rr.rank)
    return rr.undefined_to_nan(1.0 / best)


def _recall(scores, relevance, k):
    """The unchecked body of :func:`recall_per_query`."""
    rr = _RelevantRanks(scores, relevance)
    found = rr.per_query_sum(rr.rank <= k)
    recall = np.divide(found, rr.n_relevant, out=np.zeros(rr.n_queries),
                       where=rr.n_relevant > 0)
    return rr.undefined_to_nan(recall)


def _ndcg(scores, gains, k, gain, discount):
    """The unchecked body of :func:`ndcg_per_query`."""
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

    keys = sortable_keys(scores)
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
