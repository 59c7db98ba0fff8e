"""Alignment and retrieval protocols of the diachronic evaluation.

Coarse and local alignment, temporally bounded retrieval and time-period inference, for any
fitted estimator (used only through its public projections). Read more in docs/evaluation.md
(including where the paper is unclear).
"""

from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions, validate_params

from .._constraints import Interval
from ..metrics import cross_modal_scores, mean_average_precision
from ..metrics._ranking import AP_NORMALISERS
from ..time import to_duration
from ._bins import evaluate_per_instant, fit_instants, stack_per_instant
from ._scores import DIRECTIONS, nanmean, scores_dict
from ._table import ResultTable
from .embedded import as_split

__all__ = [
    "coarse_alignment",
    "local_alignment",
    "temporally_bounded_retrieval",
    "time_period_inference",
]

_QUERY_TIMES = {"instant": "instant", "target_bin": "instant", "own": "own", "own_bin": "own"}
_AGGREGATES = {"micro": "micro", "macro": "macro", "macro_over_bins": "macro"}


def _sample_queries(labels, per_category, rng):
    """``per_category`` random rows of each category (a label column if multilabel)."""
    if labels.ndim == 1:
        members = [np.flatnonzero(labels == c) for c in np.unique(labels)]
    else:
        members = [np.flatnonzero(labels[:, j]) for j in range(labels.shape[1])]
    chosen = []
    for rows in members:
        if per_category is not None and rows.size > per_category:
            rows = rng.choice(rows, per_category, replace=False)
        chosen.append(rows)
    return np.unique(np.concatenate(chosen)) if chosen else np.empty(0, dtype=np.intp)


@validate_params(
    {
        "estimator": "no_validation",
        "X": "no_validation",
        "y": ["array-like", None],
        "k": [Interval(Integral, 1, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def coarse_alignment(estimator, X, y=None, *, k=None):
    """Coarse semantic alignment: full-ranking mAP over all items at their own time.

    Each image ranks all texts and each text all images, every item at its own time, relevant when
    sharing the query's label (Semedo & Magalhães, ACM MM 2019, §5.4; docs/evaluation.md).

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder, Pipeline ending in one, or None
        None when ``X`` is an :class:`EmbeddedSplit`.
    X : array-like of shape (n_samples, n_features_in_) or EmbeddedSplit
        Evaluation items, ``[image | text | time]``, or the output of :func:`embed_split`.
    y : array-like of shape (n_samples,) or (n_samples, n_labels), default=None
        Class labels or a multilabel indicator; required unless an ``EmbeddedSplit`` holds them.
    k : int or None, default=None
        ``None``: full-ranking mAP (the paper's); an int: mAP@k (``relevant_in_topk`` normaliser).

    Returns
    -------
    scores : dict
        ``{"i2t": float, "t2i": float, "mean": float}``.

    Raises
    ------
    ValueError
        If ``y`` is missing or does not match X, or ``k`` is not a positive int.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.

    Examples
    --------
    >>> from temporal_xmodal import CCACrossModal
    >>> from temporal_xmodal.datasets import make_temporal_crossmodal
    >>> from temporal_xmodal.evaluation import coarse_alignment
    >>> X, y, info = make_temporal_crossmodal(200, return_info=True, random_state=0)
    >>> cca = CCACrossModal(embedding_dim=4, n_image_features=info.n_image_features).fit(X)
    >>> sorted(coarse_alignment(cca, X, y))
    ['i2t', 'mean', 't2i']
    """
    split = as_split(estimator, X, y, need_labels=True)
    res = cross_modal_scores(split.Z_image, split.Z_text, split.labels, metrics=("map",), k=k)
    return scores_dict(res["map_i2t"], res["map_t2i"])


@validate_params(
    {
        "estimator": "no_validation",
        "X": "no_validation",
        "y": ["array-like", None],
        "bins": "no_validation",
        "queries_per_category": [Interval(Integral, 1, None, closed="left"), None],
        "k": [Interval(Integral, 1, None, closed="left")],
        "query_time": [StrOptions(set(_QUERY_TIMES))],
        "include_empty": ["boolean"],
        "ap_at_k_normaliser": [StrOptions(set(AP_NORMALISERS))],
        "random_state": ["random_state"],
        "return_details": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def local_alignment(
    estimator, X, y=None, *, bins=10, queries_per_category=50, k=10, query_time="instant",
    include_empty=True, ap_at_k_normaliser="relevant_in_topk", random_state=None,
    return_details=False,
):
    """Local semantic alignment: mAP@k of queries projected into every instant.

    Sampled queries, projected into each instant (time bin), rank that instant's other-modality
    items at their own times; the figure is the mean AP@k over (query, instant) pairs (Semedo &
    Magalhães, ACM MM 2019, §5.4; docs/evaluation.md).

    Parameters
    ----------
    estimator, X, y
        As in :func:`coarse_alignment`.
    bins : int, float, str, timedelta, array-like or fitted TimeBins, default=10
        The instants: a bin count, a bin width (a number in ``time_unit`` or a duration such as
        ``"30D"``), edges (numbers on the axis or dates) or a fitted ``TimeBins``.
    queries_per_category : int or None, default=50
        Random queries per category (all of a smaller one; a multilabel item once); ``None``: all.
    k : int, default=10
        Cut-off of AP@k.
    query_time : {"instant", "own", "target_bin", "own_bin"}, default="instant"
        ``"instant"`` (alias ``"target_bin"``): each query at the bin centre; ``"own"`` (alias
        ``"own_bin"``): its own-time embedding (the paper's binned model).  Same for static models.
    include_empty : bool, default=True
        Count (query, instant) pairs without a relevant candidate as AP = 0; ``False`` skips them.
    ap_at_k_normaliser : {"relevant_in_topk", "min_k_total"}, default="relevant_in_topk"
        AP@k's denominator: the relevant items in the top k (the paper's) or min(k, relevant).
    random_state : int, RandomState instance or None, default=None
        Seed of the query sampling.
    return_details : bool, default=False
        Also return the per-(query, instant) AP.

    Returns
    -------
    scores : dict
        ``{"i2t": float, "t2i": float, "mean": float}``.
    details : dict
        With ``return_details``: ``"query_index"`` (query rows of X), ``"bin_centers"``,
        ``"n_items"`` (per bin), ``"ap_i2t"`` and ``"ap_t2i"`` (shape (n_queries, n_bins), NaN for
        pairs without a relevant candidate and for empty bins).

    Raises
    ------
    ValueError
        On missing or mismatched y, edges not finite and increasing or leaving rows of X outside,
        or another bad parameter.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    mode = _QUERY_TIMES[query_time]
    split = as_split(estimator, X, y, need_labels=True)
    labels = split.labels
    instants = fit_instants(bins, split.time, split.estimator.time_unit)
    q = _sample_queries(labels, queries_per_category, check_random_state(random_state))

    def average_precision(Q, G, rows, members):  # AP@k of each query within this instant
        return mean_average_precision(Q, G, labels[rows], labels[members], k=k,
                                      ap_at_k_normaliser=ap_at_k_normaliser,
                                      return_per_query=True)[1]

    ap, means = {}, {}
    nonempty = instants.n_items > 0
    for direction in DIRECTIONS:
        ap[direction] = stack_per_instant(
            evaluate_per_instant(split, instants, direction, average_precision, query_rows=q,
                                 project_queries=mode == "instant"), q.size)
        pairs = ap[direction][:, nonempty]
        means[direction] = (np.nan_to_num(pairs, nan=0.0).mean() if include_empty and pairs.size
                            else nanmean(pairs))
    scores = scores_dict(means["i2t"], means["t2i"])
    if not return_details:
        return scores
    details = {"query_index": q, "bin_centers": instants.centers, "n_items": instants.n_items,
               "ap_i2t": ap["i2t"], "ap_t2i": ap["t2i"]}
    return scores, details


@validate_params(
    {
        "estimator": "no_validation",
        "X": "no_validation",
        "y": ["array-like", None],
        "bins": "no_validation",
        "aggregate": [StrOptions(set(_AGGREGATES))],
    },
    prefer_skip_nested_validation=True,
)
def temporally_bounded_retrieval(estimator, X, y=None, *, bins=10, aggregate="micro"):
    """Temporally bounded retrieval: each query ranks only the items of its own bin.

    Every item, at its own time, ranks the other-modality items of its own instant (time bin) at
    theirs; static models get the same restriction (Semedo & Magalhães, ACM MM 2019, §5.5;
    docs/evaluation.md).

    Parameters
    ----------
    estimator, X, y, bins
        As in :func:`local_alignment`.
    aggregate : {"micro", "macro", "macro_over_bins"}, default="micro"
        ``"micro"`` pools the queries of all bins; ``"macro"`` (alias ``"macro_over_bins"``)
        averages the per-bin mAPs.

    Returns
    -------
    scores : dict
        ``{"i2t": float, "t2i": float, "mean": float}``.
    per_bin : ResultTable
        One row per bin: ``bin``, ``start``, ``end`` (edges on the axis), ``center``, ``n_items``,
        ``map_i2t``, ``map_t2i``, ``map_mean`` (NaN for bins without items).

    Raises
    ------
    ValueError
        On missing or mismatched y, bad ``bins`` (as in :func:`local_alignment`) or ``aggregate``.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    mode = _AGGREGATES[aggregate]
    split = as_split(estimator, X, y, need_labels=True)
    labels = split.labels
    instants = fit_instants(bins, split.time, split.estimator.time_unit)

    def ranked_in_bin(Q, G, rows, members):  # the bin's items query the bin
        return members, mean_average_precision(Q, G, labels[rows], labels[members],
                                               return_per_query=True)

    per_bin = {d: np.full(instants.n_bins, np.nan) for d in DIRECTIONS}
    per_query = {d: np.full(split.n_samples, np.nan) for d in DIRECTIONS}
    for direction in DIRECTIONS:
        for b, result in enumerate(evaluate_per_instant(split, instants, direction,
                                                        ranked_in_bin)):
            if result is not None:
                members, (per_bin[direction][b], per_query[direction][members]) = result
    source = per_query if mode == "micro" else per_bin
    scores = scores_dict(nanmean(source["i2t"]), nanmean(source["t2i"]))
    table = ResultTable({
        "bin": np.arange(instants.n_bins),
        "start": instants.edges[:-1],
        "end": instants.edges[1:],
        "center": instants.centers,
        "n_items": instants.n_items,
        "map_i2t": per_bin["i2t"],
        "map_t2i": per_bin["t2i"],
        "map_mean": (per_bin["i2t"] + per_bin["t2i"]) / 2,
    })
    return scores, table


@validate_params(
    {
        "estimator": "no_validation",
        "X": "no_validation",
        "y": ["array-like", None],
        "window": "no_validation",
        "k": [Interval(Integral, 1, None, closed="left"), None],
        "time_filter": ["boolean"],
        "ap_at_k_normaliser": [StrOptions(set(AP_NORMALISERS))],
    },
    prefer_skip_nested_validation=True,
)
def time_period_inference(estimator, X, y=None, *, window, k=50, time_filter=False,
                          ap_at_k_normaliser="min_k_total"):
    """Media time-period inference: t-mAP@k with same-label, same-period relevance.

    Every item, at its own time, ranks all other-modality items at theirs; relevant: same label
    and within ``window`` of the query's time, boundary included (Semedo & Magalhães, ACM MM 2019,
    §5.6; docs/evaluation.md).

    Parameters
    ----------
    estimator, X, y
        As in :func:`coarse_alignment`.
    window : float, str or timedelta
        Half-width of the relevant period (the paper's: one month): a number in ``time_unit`` or a
        duration (``"30D"``, ``"1M"``, ``pandas.Timedelta``, ``numpy.timedelta64``).
    k : int or None, default=50
        Cut-off (t-mAP@50 in the paper); ``None`` ranks everything.
    time_filter : bool, default=False
        Restrict each query's candidates to the items within ``window`` of its time.
    ap_at_k_normaliser : {"relevant_in_topk", "min_k_total"}, default="min_k_total"
        AP@k's denominator: min(k, R), R the relevant items (a date filter never lowers it), or the
        relevant items in the top k.

    Returns
    -------
    scores : dict
        ``{"i2t": float, "t2i": float, "mean": float}``.

    Raises
    ------
    ValueError
        On missing or mismatched y, a bad ``k``, or a negative, NaN, infinite or unreadable window.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    split = as_split(estimator, X, y, need_labels=True)
    window = to_duration(window, split.estimator.time_unit, name="window")
    res = cross_modal_scores(split.Z_image, split.Z_text, split.labels, metrics=("map",),
                             time=split.time, time_window=window, k=k,
                             time_filter=window if time_filter else None,
                             ap_at_k_normaliser=ap_at_k_normaliser)
    return scores_dict(res["map_i2t"], res["map_t2i"])
