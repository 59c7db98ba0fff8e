"""The alignment and retrieval protocols: coarse and local alignment, temporally bounded
retrieval and time-period inference.

Each takes any fitted estimator of the library (or a Pipeline ending in one)
and an evaluation set ``X = [image | text | time]`` or an
:class:`~temporal_xmodal.evaluation.EmbeddedSplit`, plus labels; the
estimator is used only through its public projections.  What each protocol
computes, its instants (time bins) and the choices where the paper is unclear
are described in docs/evaluation.md.  Semantic dispersion and cross-modal
evolution live in :mod:`temporal_xmodal.evaluation.dispersion`.
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

    Every image and text is projected at its own timestamp; each image ranks
    all texts of every instant (and each text all images), and a candidate is
    relevant when it shares the query's label (Semedo & Magalhães, "Diachronic
    Cross-modal Embeddings", ACM MM 2019).

    Read more in the user guide: docs/evaluation.md.

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder, Pipeline ending in one, or None
        Any estimator of the library (static ones ignore time); None when
        ``X`` is an :class:`EmbeddedSplit`.
    X : array-like of shape (n_samples, n_features_in_) or EmbeddedSplit
        Evaluation items, ``[image | text | time]``, or the output of
        :func:`embed_split` (embedded once for several protocols).
    y : array-like of shape (n_samples,) or (n_samples, n_labels), default=None
        Class labels or a multilabel indicator; required unless ``X`` is an
        ``EmbeddedSplit`` holding labels.
    k : int or None, default=None
        ``None``: full-ranking mAP, as in the paper.  An int: mAP@k with the
        ``relevant_in_topk`` normaliser.

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

    A sample of queries per category is projected into every instant (time
    bin) and ranks the other-modality items of that instant only, each at its
    own timestamp; mAP@k is the mean AP@k over all (query, instant) pairs
    (Semedo & Magalhães, "Diachronic Cross-modal Embeddings", ACM MM 2019).
    ``query_time="own"`` keeps each query at its own time instead, the
    reading that reproduces the paper's binned model.

    Read more in the user guide: docs/evaluation.md.

    Parameters
    ----------
    estimator, X, y
        The fitted estimator (None with an ``EmbeddedSplit``), the evaluation
        items and their labels, as in :func:`coarse_alignment`.
    bins : int, float, str, timedelta, array-like or fitted TimeBins, default=10
        The instants: a number of equal-width bins, a bin width (a number in
        the estimator's ``time_unit`` or a duration such as ``"30D"``), bin
        edges (numbers on the time axis or dates), or a fitted ``TimeBins``.
    queries_per_category : int or None, default=50
        Random queries per category (all members of a smaller category; a
        multilabel item is used once).  ``None`` uses every item as a query.
    k : int, default=10
        Cut-off of AP@k.
    query_time : {"instant", "own", "target_bin", "own_bin"}, default="instant"
        ``"instant"`` (alias ``"target_bin"``) projects each query at the bin
        centre; ``"own"`` (alias ``"own_bin"``) keeps its own-time embedding.
        Both give the same result for static models.
    include_empty : bool, default=True
        Count (query, instant) pairs without any relevant candidate as AP = 0;
        ``False`` skips them.
    ap_at_k_normaliser : {"relevant_in_topk", "min_k_total"}, default="relevant_in_topk"
        Denominator of AP@k: the relevant items within the top k (the paper's
        figure), or ``min(k, number of relevant items)``.  The date filter is
        built in (each pool is one bin), and a query's counterpart is in one
        bin only, so the time-window figures' reason for min(k, R) is weaker
        here (docs/evaluation.md).
    random_state : int, RandomState instance or None, default=None
        Seed of the query sampling.
    return_details : bool, default=False
        Also return the per-(query, instant) AP.

    Returns
    -------
    scores : dict
        ``{"i2t": float, "t2i": float, "mean": float}``.
    details : dict
        Only with ``return_details``: ``"query_index"`` (rows of X used as
        queries), ``"bin_centers"`` (on the time axis), ``"n_items"`` (items
        per bin) and ``"ap_i2t"``, ``"ap_t2i"``: arrays of shape (n_queries,
        n_bins) with NaN for pairs without a relevant candidate and for empty
        bins.

    Raises
    ------
    ValueError
        On missing or mismatched y, a bad ``bins`` (edges that are not finite
        and strictly increasing, or that leave rows of X outside them), or a
        bad value of another parameter.
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

    Each query, at its own timestamp, ranks only the other-modality items of
    its own instant (time bin), also at their own timestamps: how well a model
    preserves the temporal locality of the data (Semedo & Magalhães,
    "Diachronic Cross-modal Embeddings", ACM MM 2019).  Static models get the
    same candidate restriction.

    Read more in the user guide: docs/evaluation.md.

    Parameters
    ----------
    estimator, X, y, bins
        The fitted estimator (None with an ``EmbeddedSplit``), the evaluation
        items, their labels and the instants (default 10 bins), as in
        :func:`local_alignment`.
    aggregate : {"micro", "macro", "macro_over_bins"}, default="micro"
        ``"micro"`` pools the queries of all bins; ``"macro"`` (alias
        ``"macro_over_bins"``) averages the per-bin mAPs.

    Returns
    -------
    scores : dict
        ``{"i2t": float, "t2i": float, "mean": float}``.
    per_bin : ResultTable
        One row per bin: ``bin``, ``start``, ``end`` (edges on the time
        axis), ``center``, ``n_items``, ``map_i2t``, ``map_t2i``,
        ``map_mean`` (NaN for bins without items).

    Raises
    ------
    ValueError
        On missing or mismatched y, a bad ``bins`` (edges that are not finite
        and strictly increasing, or that leave rows of X outside them) or
        ``aggregate``.
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

    Every image and text, at its own timestamp, ranks all other-modality items
    at theirs; a candidate is relevant when it shares the query's label and
    lies within ``window`` of the query's time, boundary included (Semedo &
    Magalhães, "Diachronic Cross-modal Embeddings", ACM MM 2019).

    Read more in the user guide: docs/evaluation.md.

    Parameters
    ----------
    estimator, X, y
        The fitted estimator (None with an ``EmbeddedSplit``), the evaluation
        items and their labels, as in :func:`coarse_alignment`.
    window : float, str or timedelta
        Half-width of the relevant period: a number in the estimator's
        ``time_unit``, or a duration (``"30D"``, ``"1M"``,
        ``pandas.Timedelta``, ``numpy.timedelta64``).  The paper uses one
        month: ``window=1`` with ``time_unit="months"``, ``"1M"`` (or
        ``1/12``) with years.
    k : int or None, default=50
        Cut-off (t-mAP@50 in the paper); ``None`` ranks everything.
    time_filter : bool, default=False
        Restrict each query's candidates to the items within ``window`` of
        its time (the search a user holding the dates would run, with any
        model): the figure a time-aware model must beat on a static one.
    ap_at_k_normaliser : {"relevant_in_topk", "min_k_total"}, default="min_k_total"
        Denominator of AP@k: ``min(k, R)``, R the relevant items (same label,
        within the window), so that the date filter can never lower the
        figure and a ranking that finds only each query's counterpart scores
        1 / min(k, R); ``"relevant_in_topk"`` (the relevant items found in the
        top k) gives the figures published before (docs/evaluation.md).

    Returns
    -------
    scores : dict
        ``{"i2t": float, "t2i": float, "mean": float}``.

    Raises
    ------
    ValueError
        On missing or mismatched y, a negative, non-finite or unreadable
        ``window`` or a bad ``k``.
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
