"""Retrieval metrics on embeddings: mAP, MRR, recall@k, nDCG@k and the cross-modal summary.

Each metric runs its per-query function (:mod:`._ranking`) over the memory-bounded
score blocks of :mod:`._blocks`.
"""

import numpy as np

from ._blocks import _per_query
from ._ranking import (
    average_precision_per_query,
    ndcg_per_query,
    recall_per_query,
    reciprocal_rank_per_query,
)


def _nanmean(values):
    """Mean of the non-NaN values (NaN when there are none)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else float("nan")


_BLOCK_DOC = """query : array-like of shape (n_queries, dim)
        Query embeddings.
    gallery : array-like of shape (n_gallery, dim)
        Gallery embeddings in the same space.
    query_labels, gallery_labels : array-like or None, default=None
        1-D class labels or 2-D multilabel indicators (relevant = shares at
        least one label).  ``None`` for both: query ``i``'s only relevant item
        is gallery item ``i`` (its counterpart).
    **kwargs
        ``query_time``, ``gallery_time``, ``time_window``, ``similarity``,
        ``working_memory``, ``n_jobs``, ``nan_policy`` (``"raise"`` by default,
        or ``"omit"``): see :func:`iter_score_blocks`."""


def mean_average_precision(
    query,
    gallery,
    query_labels=None,
    gallery_labels=None,
    *,
    k=None,
    ap_at_k_normaliser="relevant_in_topk",
    return_per_query=False,
    **kwargs,
):
    """Mean average precision (mAP, or mAP@k) of ranking ``gallery`` for each query.

    mAP = mean over queries of AP = (1/R) sum_k rel_k P@k (thesis eq. 2.19,
    2.22).  Equals a per-query loop over
    :func:`sklearn.metrics.average_precision_score` when ``k is None``.

    Parameters
    ----------
    {block}
    k : int or None, default=None
        Truncate at ``k`` (mAP@k); see :func:`average_precision_per_query`.
    ap_at_k_normaliser : {{"relevant_in_topk", "min_k_total"}}
        Denominator of AP@k.
    return_per_query : bool, default=False
        Also return the per-query AP array (NaN where a query has no relevant item).

    Returns
    -------
    map : float
        Mean over queries with at least one relevant gallery item.
    per_query : ndarray of shape (n_queries,)
        Only when ``return_per_query``.
    """
    ap = _per_query(
        lambda s, r: average_precision_per_query(
            s, r, k=k, ap_at_k_normaliser=ap_at_k_normaliser
        ),
        query, gallery, query_labels, gallery_labels, **kwargs,
    )
    return (_nanmean(ap), ap) if return_per_query else _nanmean(ap)


def mean_reciprocal_rank(query, gallery, query_labels=None, gallery_labels=None, **kwargs):
    """Mean reciprocal rank of the first relevant gallery item.

    Parameters
    ----------
    {block}

    Returns
    -------
    mrr : float
    """
    rr = _per_query(reciprocal_rank_per_query, query, gallery, query_labels, gallery_labels,
                    **kwargs)
    return _nanmean(rr)


def recall_at_k(query, gallery, query_labels=None, gallery_labels=None, *, k=10, **kwargs):
    """Mean fraction of each query's relevant items found in the top ``k``.

    With counterpart relevance (no labels) this is the usual R@k of
    image-caption retrieval.

    Parameters
    ----------
    {block}
    k : int, default=10

    Returns
    -------
    recall : float
    """
    rec = _per_query(lambda s, r: recall_per_query(s, r, k=k), query, gallery,
                     query_labels, gallery_labels, **kwargs)
    return _nanmean(rec)


def ndcg_at_k(
    query, gallery, query_labels=None, gallery_labels=None, *, k=50, gain="linear",
    discount="jarvelin", **kwargs,
):
    """Mean nDCG@k, graded by the number of labels a gallery item shares with the query.

    DCG@k = rel_1 + sum_{{i=2..k}} rel_i / log2(i) (thesis eq. 2.20); see
    :func:`ndcg_per_query` for the options.

    Parameters
    ----------
    {block}
    k : int or None, default=50
    gain : {{"linear", "exponential"}}, default="linear"
    discount : {{"jarvelin", "standard"}}, default="jarvelin"

    Returns
    -------
    ndcg : float
        Mean over queries with a non-zero ideal DCG.
    """
    nd = _per_query(lambda s, r: ndcg_per_query(s, r, k=k, gain=gain, discount=discount),
                    query, gallery, query_labels, gallery_labels, **kwargs)
    return _nanmean(nd)


for _f in (mean_average_precision, mean_reciprocal_rank, recall_at_k, ndcg_at_k):
    _f.__doc__ = _f.__doc__.format(block=_BLOCK_DOC)
del _f


def cross_modal_scores(
    image_embedding, text_embedding, labels=None, *, metrics=("map", "mrr"), time=None,
    time_window=None, k=None, **kwargs,
):
    """Image→text and text→image retrieval figures over one set of paired items.

    Every image queries all texts and every text queries all images (each
    candidate pool includes the query's own counterpart).

    Parameters
    ----------
    image_embedding : array-like of shape (n, dim)
    text_embedding : array-like of shape (n, dim)
        Row ``i`` of both is item ``i``.
    labels : array-like or None
        Labels of the items (relevance = shared label); ``None``: counterpart
        relevance.
    metrics : str or sequence of {"map", "mrr", "ndcg", "recall"}
        Figure(s) to compute (``"map"`` alone is accepted).  ``k`` truncates "map" (mAP@k) and sets the cut-off
        of "ndcg" and "recall" (default 50 and 10 when ``k`` is None).
    time : array-like of shape (n,), optional
        Item timestamps, with ``time_window`` for time-window relevance.
    time_window : float, optional
    **kwargs
        Passed on (``similarity``, ``working_memory``, ``nan_policy``,
        ``ap_at_k_normaliser``...).

    Returns
    -------
    scores : dict
        ``{"<metric>_i2t": ..., "<metric>_t2i": ..., "<metric>": mean of both}``.
    """
    ap_norm = kwargs.pop("ap_at_k_normaliser", "relevant_in_topk")
    ndcg_opts = {key: kwargs.pop(key) for key in ("gain", "discount") if key in kwargs}
    funcs = {
        "map": lambda q, g, ll, **kw: mean_average_precision(
            q, g, ll, ll, k=k, ap_at_k_normaliser=ap_norm, **kw),
        "mrr": lambda q, g, ll, **kw: mean_reciprocal_rank(q, g, ll, ll, **kw),
        "ndcg": lambda q, g, ll, **kw: ndcg_at_k(q, g, ll, ll, k=k or 50, **ndcg_opts, **kw),
        "recall": lambda q, g, ll, **kw: recall_at_k(q, g, ll, ll, k=k or 10, **kw),
    }
    metrics = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    unknown = set(metrics) - set(funcs)
    if unknown:
        raise ValueError(f"Unknown metrics {sorted(unknown)}; choose from {sorted(funcs)}.")
    kwargs.update(query_time=time, gallery_time=time, time_window=time_window)
    out = {}
    for name in metrics:
        i2t = funcs[name](image_embedding, text_embedding, labels, **kwargs)
        t2i = funcs[name](text_embedding, image_embedding, labels, **kwargs)
        out.update({f"{name}_i2t": i2t, f"{name}_t2i": t2i, name: (i2t + t2i) / 2})
    return out
