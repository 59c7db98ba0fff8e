"""The diachronic alignment and retrieval protocols (spec ``diachronic_and_binned.md`` §8.1-8.5).

Every protocol takes any fitted estimator of the library (or a Pipeline
ending in one) and an evaluation set ``X = [image | text | time]``, plus
labels where relevance is needed.  ``X`` may also be an
:class:`~temporal_xmodal.evaluation.EmbeddedSplit` from
:func:`~temporal_xmodal.evaluation.embed_split`: the set is then embedded
once for all protocols, ``estimator`` may be None and ``y`` defaults to the
split's labels.  The estimator is only used through its public projections:

* ``estimator.transform(X)``: every item at its **own** time (Diachronic
  Operation #1 projections, spec §8.0);
* ``estimator.transform_image(X_image, time=t)`` / ``transform_text``: items
  projected at an arbitrary instant ``t`` (Operation #3).  Static models
  ignore ``t``; models whose ``time_use`` is ``"inference"`` are projected
  there.

Instants
--------
The spec's instants are months.  Here they are **time bins**: the ``bins``
argument of each binned protocol is an int (that many equal-width bins), a
bin width (a number in the estimator's ``time_unit``, e.g. ``1/12`` for
months when time is in fractional years, or a duration such as ``"30D"``,
``pandas.Timedelta(days=30)``), an array of edges (numbers on the time axis
or dates), or a fitted :class:`~temporal_xmodal.binning.TimeBins` (used as it
is, e.g. the bins of a binned model).  Anything else but a fitted
``TimeBins`` is fitted on the times of the evaluation X (empty bins are
merged into a neighbour by ``TimeBins``, with a warning); explicit edges must
then cover every row of X, else a ``ValueError`` names how many rows fall
outside them and where (rows are never clipped into the end bins).  A fitted
``TimeBins`` puts rows outside its edges in its first / last bin and warns
(:class:`~temporal_xmodal.TimeRangeWarning`, counting them).  An item's instant
is its bin; "projecting at instant b" means projecting at the bin centre
``centers_[b]``.  Candidates "of instant b projected at b" are projected at
their **own** timestamps (the rows of ``transform(X)``), which equal the
instant when the time column is already discretised at the bin granularity
(the spec's monthly setting) and keep each candidate at its true time
otherwise.

Relevance
---------
``y`` holds class labels (1-D) or a multilabel indicator (2-D); two items are
relevant to each other when they share a label (spec §8.0; the DCM data are
single-label).  Candidate pools include the query's own counterpart (§8.0).
Directions are always image→text (``"i2t"``) and text→image (``"t2i"``) and
their arithmetic mean (``"mean"``).

Results
-------
Scalar results are plain dicts ``{"i2t", "t2i", "mean"}``.  Tabular results
(per bin, per query) are :class:`~temporal_xmodal.evaluation.ResultTable`
objects.  Semantic dispersion and cross-modal evolution live in
:mod:`temporal_xmodal.evaluation.dispersion`.
"""

import numpy as np
from sklearn.utils import check_random_state

from ..metrics import cross_modal_scores, mean_average_precision
from ..time import to_duration
from ._bins import evaluate_per_instant, fit_instants, stack_per_instant
from ._checks import DIRECTIONS, check_choice, check_int, nanmean, scores_dict
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
_AP_NORMALISERS = ("relevant_in_topk", "min_k_total")


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


def coarse_alignment(estimator, X, y=None, *, k=None):
    """Coarse semantic alignment: full-ranking mAP over all items at their own time.

    Spec ``diachronic_and_binned.md`` §8.1, Diachronic Operation #1: every
    image and text is projected at its own timestamp (``estimator.transform``;
    a binned model uses its own-bin aligned embedding), each image query ranks
    **all** texts from all instants and vice versa, and a candidate is
    relevant when it shares the query's label (no time constraint).  The
    candidate pool includes the query's own counterpart (§8.0).

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
        ``None``: full-ranking mAP (the spec).  An int: mAP@k with the
        ``relevant_in_topk`` normaliser (spec A8).

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
    """
    k = check_int(k, "k", allow_none=True)
    split = as_split(estimator, X, y, need_labels=True)
    res = cross_modal_scores(split.Z_image, split.Z_text, split.labels, metrics=("map",), k=k)
    return scores_dict(res["map_i2t"], res["map_t2i"])


def local_alignment(
    estimator, X, y=None, *, bins=10, queries_per_category=50, k=10, query_time="instant",
    include_empty=True, ap_at_k_normaliser="relevant_in_topk", random_state=None,
    return_details=False,
):
    """Local semantic alignment: mAP@k of queries projected into every instant.

    Spec ``diachronic_and_binned.md`` §8.2 (and §8.3), Diachronic Operation
    #3.  ``queries_per_category`` random items of each category are the
    queries; each serves as an image query (I→T) and a text query (T→I).  For
    every query and every instant (time bin) b:

    * the query is projected **at the instant** (the bin centre,
      ``transform_image(x, time=centers_[b])``) with ``query_time="instant"``,
      or keeps its own-time embedding with ``query_time="own"``;
    * the candidate pool is the other-modality items of bin b, each projected
      at its own timestamp (see the module notes on instants);
    * AP@k is computed with same-label relevance.

    mAP@k is the mean over all (query, instant) pairs.

    Ambiguity choices: pairs whose pool holds no item of the query's category
    count as AP = 0 (``include_empty=True``, spec A11) and are skipped
    otherwise; the AP@k denominator is the number of relevant items within the
    top k (``ap_at_k_normaliser="relevant_in_topk"``, spec A8).  Bins that hold
    no evaluation item at all (possible only with a passed, pre-fitted
    ``TimeBins``) are not instants of the evaluation set and are skipped.

    ``query_time`` implements spec §8.3 / A7 for any estimator: ``"instant"``
    (alias ``"target_bin"``) is the literal Op #3, and the reading for
    continuous time-conditioned models; ``"own"`` (alias ``"own_bin"``) keeps
    the query's own-time embedding, which for a binned model is its own-bin
    aligned embedding f^(b(ts_i))(x) R_b(ts_i) compared against the aligned
    embeddings of bin b, the spec's default for reproducing DCM-Binned in
    Table 1.  Both give the same result for static models.

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder, Pipeline ending in one, or None
        None when ``X`` is an :class:`EmbeddedSplit`.
    X : array-like of shape (n_samples, n_features_in_) or EmbeddedSplit
    y : array-like of shape (n_samples,) or (n_samples, n_labels), default=None
        Required unless ``X`` is an ``EmbeddedSplit`` holding labels.
    bins : int, float, duration, array-like or fitted TimeBins, default=10
        The instants: a count, a bin width (a number in the estimator's
        ``time_unit``, or a duration such as ``"30D"``), edges (numbers on
        the time axis or dates) or a fitted ``TimeBins`` (see the module notes).
    queries_per_category : int or None, default=50
        Random queries per category (all members when a category is smaller;
        a multilabel item may be drawn for several labels and is used once).
        ``None`` uses every item as a query.
    k : int, default=10
        Cut-off of AP@k.
    query_time : {"instant", "own", "target_bin", "own_bin"}, default="instant"
        Where queries are projected (see above).
    include_empty : bool, default=True
        Count (query, instant) pairs without any relevant candidate as AP = 0.
    ap_at_k_normaliser : {"relevant_in_topk", "min_k_total"}, default="relevant_in_topk"
        Denominator of AP@k (spec A8).
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
        and strictly increasing, or that leave rows of X outside them), ``k``,
        ``queries_per_category``, ``query_time`` or ``ap_at_k_normaliser``.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    k = check_int(k, "k")
    queries_per_category = check_int(queries_per_category, "queries_per_category",
                                     allow_none=True)
    mode = _QUERY_TIMES[check_choice(query_time, "query_time", _QUERY_TIMES)]
    check_choice(ap_at_k_normaliser, "ap_at_k_normaliser", _AP_NORMALISERS)
    split = as_split(estimator, X, y, need_labels=True)
    labels = split.labels
    instants = fit_instants(bins, split.time, split.estimator.time_unit)
    q = _sample_queries(labels, queries_per_category, check_random_state(random_state))

    def average_precision(Q, G, rows, members):  # Op #3: AP@k of each query in this instant
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


def temporally_bounded_retrieval(estimator, X, y=None, *, bins=10, aggregate="micro"):
    """Temporally-bounded retrieval: each query ranks only the items of its own bin.

    Spec ``diachronic_and_binned.md`` §8.4, Diachronic Operation #4 (the
    "preservation of temporal locality biases"): each query is projected at
    its own timestamp and ranks only the other-modality items of the same
    instant (time bin), also at their own timestamps (rows of
    ``transform(X)``); relevance is the same label; full-ranking AP.  Static
    models get the same candidate restriction (they are "artificially fed
    with the relevant time period", P1 §5.6).

    Ambiguity choice (spec A10): the overall figure pools the queries of all
    bins (``aggregate="micro"``, default); ``"macro"`` (alias
    ``"macro_over_bins"``) averages the per-bin mAPs.  Both can be read from
    the per-bin table (``n_items`` gives the micro weights).

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder, Pipeline ending in one, or None
        None when ``X`` is an :class:`EmbeddedSplit`.
    X : array-like of shape (n_samples, n_features_in_) or EmbeddedSplit
    y : array-like of shape (n_samples,) or (n_samples, n_labels), default=None
        Required unless ``X`` is an ``EmbeddedSplit`` holding labels.
    bins : int, float, duration, array-like or fitted TimeBins, default=10
        The instants: a count, a bin width (a number in the estimator's
        ``time_unit``, or a duration such as ``"30D"``), edges (numbers on
        the time axis or dates) or a fitted ``TimeBins`` (see the module notes).
    aggregate : {"micro", "macro", "macro_over_bins"}, default="micro"
        How the overall figure combines the bins.

    Returns
    -------
    scores : dict
        ``{"i2t": float, "t2i": float, "mean": float}``.
    per_bin : ResultTable
        One row per bin: ``bin``, ``start``, ``end`` (edges on the time
        axis), ``center``, ``n_items``, ``map_i2t``, ``map_t2i``,
        ``map_mean`` (NaN for bins without items).  The per-month curve of
        P1 Fig. 4.

    Raises
    ------
    ValueError
        On missing or mismatched y, a bad ``bins`` (edges that are not finite
        and strictly increasing, or that leave rows of X outside them) or
        ``aggregate``.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    mode = _AGGREGATES[check_choice(aggregate, "aggregate", _AGGREGATES)]
    split = as_split(estimator, X, y, need_labels=True)
    labels = split.labels
    instants = fit_instants(bins, split.time, split.estimator.time_unit)

    def ranked_in_bin(Q, G, rows, members):  # Op #4: the bin's items query the bin
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


def time_period_inference(estimator, X, y=None, *, window, k=50):
    """Media time-period inference: t-mAP@k with same-label, same-period relevance.

    Spec ``diachronic_and_binned.md`` §8.5, Diachronic Operation #1: every
    image and text is a query projected at its own timestamp and ranks all
    other-modality items at their own timestamps (``transform(X)``); a
    candidate is relevant when it shares the query's label **and**
    ``|t_query - t_candidate| <= window`` (inclusive boundary, spec A4);
    AP@k with the ``relevant_in_topk`` normaliser (A8).

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder, Pipeline ending in one, or None
        None when ``X`` is an :class:`EmbeddedSplit`.
    X : array-like of shape (n_samples, n_features_in_) or EmbeddedSplit
    y : array-like of shape (n_samples,) or (n_samples, n_labels), default=None
        Required unless ``X`` is an ``EmbeddedSplit`` holding labels.
    window : float or duration
        Half-width of the relevant period: a number in the estimator's
        ``time_unit``, or a duration (``"30D"``, ``"1M"``,
        ``pandas.Timedelta``, ``numpy.timedelta64``).  The paper uses 1 month
        (spec A9): ``window=1`` with ``time_unit="months"``, ``"1M"`` (or
        ``1/12``) with years.
    k : int or None, default=50
        Cut-off (t-mAP@50 in the thesis); ``None`` ranks everything.

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
    k = check_int(k, "k", allow_none=True)
    split = as_split(estimator, X, y, need_labels=True)
    window = to_duration(window, split.estimator.time_unit, name="window")
    res = cross_modal_scores(split.Z_image, split.Z_text, split.labels, metrics=("map",),
                             time=split.time, time_window=window, k=k)
    return scores_dict(res["map_i2t"], res["map_t2i"])
