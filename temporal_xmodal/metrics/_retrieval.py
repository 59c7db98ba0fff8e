"""Embedding-level metrics: :mod:`._ranking`'s functions over :mod:`._full_ranking`'s blocks."""

from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import validate_params

from .._constraints import Interval
from .._docs import fill_doc
from ._full_ranking import SCAN_CONSTRAINTS, _per_query
from ._ranking import (
    RANKING_CONSTRAINTS,
    _average_precision,
    _ndcg,
    _recall,
    _reciprocal_rank,
    resolve_normaliser,
)
from ._scan import K_RANGE, check_lengths


def _nanmean(values):
    """Mean of the non-NaN values (NaN when there are none)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else float("nan")


def _scan_options(query_time, gallery_time, time_window, similarity, working_memory, n_jobs,
                  nan_policy, time_filter=None):
    """The keyword arguments of :func:`._full_ranking._per_query` shared by every metric."""
    return dict(query_time=query_time, gallery_time=gallery_time, time_window=time_window,
                similarity=similarity, working_memory=working_memory, n_jobs=n_jobs,
                nan_policy=nan_policy, time_filter=time_filter)


@fill_doc
@validate_params(
    {**SCAN_CONSTRAINTS, "k": [K_RANGE, None],
     "ap_at_k_normaliser": RANKING_CONSTRAINTS["ap_at_k_normaliser"],
     "return_per_query": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def mean_average_precision(
    query, gallery, query_labels=None, gallery_labels=None, *, k=None,
    ap_at_k_normaliser="auto", return_per_query=False, query_time=None,
    gallery_time=None, time_window=None, similarity="dot", working_memory=None, n_jobs=None,
    nan_policy="raise", time_filter=None,
):
    """Mean average precision (mAP, or mAP@k) of ranking ``gallery`` for each query.

    AP = (1/R) sum_k rel_k P@k (Semedo, thesis, Eqs. 2.19 and 2.22); without ``k`` it equals
    a per-query :func:`sklearn.metrics.average_precision_score` (docs/metrics.md).

    Parameters
    ----------
    {scan_parameters}
    k : int or None, default=None
        Truncate at ``k`` (mAP@k).
    ap_at_k_normaliser : {"auto", "relevant_in_topk", "min_k_total"}, default="auto"
        Denominator of AP@k: the relevant items within the top k, or min(k, R).  ``"auto"``:
        min(k, R) with ``time_window``, else the relevant items within the top k.
    return_per_query : bool, default=False
        Also return the per-query AP (NaN where a query has no relevant item).
    {scan_options}

    Returns
    -------
    map : float
        Mean over the queries with a relevant gallery item.
    per_query : ndarray of shape (n_queries,)
        Only with ``return_per_query``.
    """
    normaliser = resolve_normaliser(ap_at_k_normaliser, time_window)
    ap = _per_query(
        lambda s, r: _average_precision(s, r, k, normaliser),
        query, gallery, query_labels, gallery_labels,
        **_scan_options(query_time, gallery_time, time_window, similarity, working_memory,
                        n_jobs, nan_policy, time_filter),
    )
    return (_nanmean(ap), ap) if return_per_query else _nanmean(ap)


@fill_doc
@validate_params(SCAN_CONSTRAINTS, prefer_skip_nested_validation=True)
def mean_reciprocal_rank(query, gallery, query_labels=None, gallery_labels=None, *,
                         query_time=None, gallery_time=None, time_window=None,
                         similarity="dot", working_memory=None, n_jobs=None,
                         nan_policy="raise", time_filter=None):
    """Mean reciprocal rank of the first relevant gallery item.

    Parameters
    ----------
    {scan_parameters}
    {scan_options}

    Returns
    -------
    mrr : float
    """
    rr = _per_query(_reciprocal_rank, query, gallery, query_labels, gallery_labels,
                    **_scan_options(query_time, gallery_time, time_window, similarity,
                                    working_memory, n_jobs, nan_policy, time_filter))
    return _nanmean(rr)


@fill_doc
@validate_params({**SCAN_CONSTRAINTS, "k": [K_RANGE]}, prefer_skip_nested_validation=True)
def recall_at_k(query, gallery, query_labels=None, gallery_labels=None, *, k=10,
                query_time=None, gallery_time=None, time_window=None, similarity="dot",
                working_memory=None, n_jobs=None, nan_policy="raise", time_filter=None):
    """Mean fraction of each query's relevant items in the top ``k`` (R@k without labels).

    Parameters
    ----------
    {scan_parameters}
    k : int, default=10
    {scan_options}

    Returns
    -------
    recall : float
    """
    rec = _per_query(lambda s, r: _recall(s, r, k), query, gallery,
                     query_labels, gallery_labels,
                     **_scan_options(query_time, gallery_time, time_window, similarity,
                                     working_memory, n_jobs, nan_policy, time_filter))
    return _nanmean(rec)


@fill_doc
@validate_params(
    {**SCAN_CONSTRAINTS, "k": [K_RANGE, None], "gain": RANKING_CONSTRAINTS["gain"],
     "discount": RANKING_CONSTRAINTS["discount"]},
    prefer_skip_nested_validation=True,
)
def ndcg_at_k(
    query, gallery, query_labels=None, gallery_labels=None, *, k=50, gain="linear",
    discount="jarvelin", query_time=None, gallery_time=None, time_window=None,
    similarity="dot", working_memory=None, n_jobs=None, nan_policy="raise", time_filter=None,
):
    """Mean nDCG@k, graded by the number of labels a gallery item shares with the query.

    DCG@k = rel_1 + sum_{i=2..k} rel_i / log2(i) (Semedo, thesis, Eq. 2.20).

    Parameters
    ----------
    {scan_parameters}
    k : int or None, default=50
        Cut-off (``None``: the whole gallery).
    gain : {"linear", "exponential"}, default="linear"
    discount : {"jarvelin", "standard"}, default="jarvelin"
        As in :func:`ndcg_per_query`.
    {scan_options}

    Returns
    -------
    ndcg : float
        Mean over the queries with a non-zero ideal DCG.
    """
    nd = _per_query(lambda s, r: _ndcg(s, r, k, gain, discount),
                    query, gallery, query_labels, gallery_labels,
                    **_scan_options(query_time, gallery_time, time_window, similarity,
                                    working_memory, n_jobs, nan_policy, time_filter))
    return _nanmean(nd)


#: Items above which the library's own evaluations rank for a random sample of this many
#: queries instead of every item (:meth:`CrossModalEmbedder.score
#: <temporal_xmodal.base.CrossModalEmbedder.score>`,
#: :func:`~temporal_xmodal.evaluation.evaluate_estimator`): full rankings of n items cost
#: O(n²) (docs/evaluation.md, "At scale").
QUERY_SAMPLE = 5000

#: Metrics :func:`cross_modal_scores` computes.
CROSS_MODAL_METRICS = ("map", "mrr", "ndcg", "recall")


def _block_function(name, k, normaliser, gain, discount):
    """The per-query function of metric ``name`` on a block of (scores, relevance)."""
    if name == "map":
        return lambda s, r: _average_precision(s, r, k, normaliser)
    if name == "mrr":
        return _reciprocal_rank
    if name == "ndcg":
        return lambda s, r: _ndcg(s, r, k or 50, gain, discount)
    return lambda s, r: _recall(s, r, k or 10)


def sample_queries(n, query_sample, random_state=0):
    """Sorted rows of a random sample of ``query_sample`` of ``n`` items (seeded by
    ``random_state``); ``None`` when ``query_sample`` is None or at least ``n``.
    """
    if query_sample is None or n <= query_sample:
        return None
    return np.sort(check_random_state(random_state).choice(n, query_sample, replace=False))


def sample_standard_error(values, n_population):
    """Standard error of the mean of ``values``, a sample without replacement of ``n_population``.

    s / sqrt(m) times the finite-population correction sqrt((N - m) / (N - 1)) (Cochran,
    *Sampling Techniques*, 1977, Eq. 2.12), NaN values left out; 0 for the whole population.
    """
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    m = values.size
    if m < 2 or m >= n_population:
        return 0.0 if m >= n_population else float("nan")
    fpc = (n_population - m) / (n_population - 1)
    return float(values.std(ddof=1) / np.sqrt(m) * np.sqrt(fpc))


@validate_params(
    {"image_embedding": ["array-like"], "text_embedding": ["array-like"],
     "labels": ["array-like", None], "metrics": [str, "array-like"],
     "time": ["array-like", None], "k": [K_RANGE, None], **RANKING_CONSTRAINTS,
     **{name: SCAN_CONSTRAINTS[name] for name in ("time_window", "time_filter", "similarity",
                                                  "working_memory", "n_jobs", "nan_policy")},
     "query_sample": [Interval(Integral, 2, None, closed="left"), None],
     "random_state": ["random_state"]},
    prefer_skip_nested_validation=True,
)
def cross_modal_scores(
    image_embedding, text_embedding, labels=None, *, metrics=("map", "mrr"), time=None,
    time_window=None, k=None, ap_at_k_normaliser="auto", gain="linear",
    discount="jarvelin", similarity="dot", working_memory=None, n_jobs=None,
    nan_policy="raise", time_filter=None, query_sample=None, random_state=0,
):
    """Image→text and text→image retrieval figures over one set of paired items.

    Every image queries all texts and every text all images (its counterpart included); with
    ``query_sample``, a random sample of items (the same both ways) queries.  Read more in
    docs/metrics.md.

    Parameters
    ----------
    image_embedding, text_embedding : array-like of shape (n, dim)
        Row ``i`` of both is item ``i``.
    labels : array-like or None, default=None
        Relevance = a shared label; ``None``: counterpart relevance.
    metrics : str or sequence of {"map", "mrr", "ndcg", "recall"}, default=("map", "mrr")
        ``k`` truncates "map" and is the cut-off of "ndcg" and "recall" (50 and 10 when None).
    time : array-like of shape (n,) or None, default=None
        Item times, for ``time_window`` and ``time_filter``.
    k : int or None, default=None
    time_window, time_filter, ap_at_k_normaliser, gain, discount
        As in :func:`mean_average_precision` and :func:`ndcg_at_k` (times in ``time``'s unit).
    similarity, working_memory, n_jobs, nan_policy
        As in :func:`iter_score_blocks`.
    query_sample : int or None, default=None
        At most this many queries per direction, drawn at random (``random_state``): each
        figure is then an unbiased estimate.  ``None``: every item queries (exact).
    random_state : int, RandomState or None, default=0
        Seed of the query sample.

    Returns
    -------
    scores : dict
        ``"<metric>_i2t"``, ``"<metric>_t2i"`` and ``"<metric>"``, their mean; with
        ``query_sample`` also their standard errors (:func:`sample_standard_error`; 0 when
        every item queried) ``"<metric>_i2t_se"``, ``"<metric>_t2i_se"`` and
        ``"<metric>_se"`` (of each item's mean of both directions), and ``"n_queries"``.
    """
    metrics = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    unknown = set(metrics) - set(CROSS_MODAL_METRICS)
    if unknown:
        raise ValueError(f"Unknown metrics {sorted(unknown)}; choose from "
                         f"{sorted(CROSS_MODAL_METRICS)}.")
    n_image, n_text = np.shape(image_embedding)[0], np.shape(text_embedding)[0]
    if n_image != n_text:
        raise ValueError(f"image_embedding has {n_image} rows but text_embedding {n_text}: "
                         "row i of both must be item i.")
    check_lengths(labels, None, time, None, n_image, n_image,
                  names={"query_labels": "labels", "query_time": "time",
                         "query": "image_embedding and text_embedding have"})
    rows = sample_queries(n_image, query_sample, random_state)
    if labels is None and rows is not None:  # counterpart relevance: each item its own label
        labels = np.arange(n_image)
    query_labels = labels if rows is None or labels is None else np.asarray(labels)[rows]
    query_time = time if rows is None or time is None else np.asarray(time)[rows]
    options = _scan_options(query_time, time, time_window, similarity, working_memory,
                            n_jobs, nan_policy, time_filter)
    normaliser = resolve_normaliser(ap_at_k_normaliser, time_window)
    out = {}
    for name in metrics:
        block = _block_function(name, k, normaliser, gain, discount)
        per_item = []
        for Q, G in ((image_embedding, text_embedding), (text_embedding, image_embedding)):
            Q = Q if rows is None else np.asarray(Q)[rows]
            per_item.append(_per_query(block, Q, G, query_labels, labels, **options))
        i2t, t2i = _nanmean(per_item[0]), _nanmean(per_item[1])
        out.update({f"{name}_i2t": i2t, f"{name}_t2i": t2i, name: (i2t + t2i) / 2})
        if query_sample is not None:
            out.update({f"{name}_i2t_se": sample_standard_error(per_item[0], n_image),
                        f"{name}_t2i_se": sample_standard_error(per_item[1], n_image),
                        f"{name}_se": sample_standard_error(0.5 * (per_item[0] + per_item[1]),
                                                            n_image)})
    if query_sample is not None:
        out["n_queries"] = n_image if rows is None else len(rows)
    return out
