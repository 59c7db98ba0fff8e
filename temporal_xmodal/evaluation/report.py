"""The report of a fitted estimator: the figures of ``python -m temporal_xmodal compare``.

:func:`evaluate_estimator` (labelled relevance) and :func:`evaluate_undated` (the TICRC
protocol) embed the test split once and derive the own-time figures from that embedding.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import validate_params

from .._constraints import Interval
from .._input import check_labels
from ..base import layout_blocks
from ..estimators import query_time_scores
from ..metrics import (QUERY_SAMPLE, counterpart_reciprocal_ranks, cross_modal_scores,
                       mean_average_precision)
from ..metrics._retrieval import sample_queries
from ..time import TimeRangeWarning, time_role
from .embedded import embed_split
from .protocols import local_alignment, temporally_bounded_retrieval

__all__ = ["TEMPORAL_KEYS", "evaluate_estimator", "evaluate_undated", "time_window_figures"]


#: The diachronic protocols of :func:`evaluate_estimator` (NaN when the data is undated).
TEMPORAL_KEYS = ("tmap50", "tmap50_filter", "tmap50_topk", "tmap50_filter_topk",
                 "local_map10", "local_map10_i2t", "local_map10_t2i", "bounded_map")
#: The time-window figures: (key, AP@50 normaliser, date filter); docs/evaluation.md.
_TIME_WINDOW_FIGURES = (("tmap50", "min_k_total", False), ("tmap50_filter", "min_k_total", True),
                        ("tmap50_topk", "relevant_in_topk", False),
                        ("tmap50_filter_topk", "relevant_in_topk", True))


def time_window_figures(Z_image, Z_text, labels, time, time_window, *, query_sample=None,
                        random_state=0):
    """The four time-window mAP@50 figures of embedded items.

    Relevant: same label and ``|Δt| <= time_window`` of ``time`` (on the axis); without and with
    the date filter, each with both AP@50 normalisers. ``query_sample`` and ``random_state``: as in
    :func:`~temporal_xmodal.metrics.cross_modal_scores` (the same queries for every figure).

    Returns
    -------
    figures : dict of str -> float
        ``tmap50``, ``tmap50_filter``, ``tmap50_topk``, ``tmap50_filter_topk``; with
        ``query_sample`` also each one's standard error, ``<key>_se``.
    """
    window = float(time_window)
    figures = {}
    for key, normaliser, filtered in _TIME_WINDOW_FIGURES:
        scores = cross_modal_scores(
            Z_image, Z_text, labels, metrics=("map",), k=50, time_window=window, time=time,
            time_filter=window if filtered else None, ap_at_k_normaliser=normaliser,
            query_sample=query_sample, random_state=random_state)
        figures[key] = float(scores["map"])
        if query_sample is not None:
            figures[f"{key}_se"] = scores["map_se"]
    return figures


def _per_category_map(Z_image, Z_text, y, rows=None):
    """mAP (mean of I→T and T→I) of each class's queries (``rows``: the sampled ones; all when
    None), from the chunked scan: never an n × n score or relevance matrix.
    """
    rows = slice(None) if rows is None else rows
    ap = 0.5 * (mean_average_precision(Z_image[rows], Z_text, y[rows], y,
                                       return_per_query=True)[1]
                + mean_average_precision(Z_text[rows], Z_image, y[rows], y,
                                         return_per_query=True)[1])
    categories, which = np.unique(y[rows], return_inverse=True)
    counts = np.bincount(which)
    return {"category": categories.tolist(),
            "map_mean": (np.bincount(which, weights=ap) / counts).tolist(),
            "count": counts.tolist()}


@validate_params(
    {
        "estimator": "no_validation",
        "X": "no_validation",
        "y": ["array-like"],
        "time_window": [Interval(Real, 0, None, closed="left"), None],
        "n_bins": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "relevance_time": ["array-like", None],
        "query_sample": [Interval(Integral, 2, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def evaluate_estimator(estimator, X, y, *, time_window, n_bins=10, random_state=0,
                       relevance_time=None, query_sample=QUERY_SAMPLE):
    """Retrieval figures and diachronic protocols of a fitted estimator on ``(X, y)``.

    The split is embedded once at its own times (:func:`embed_split`); coarse alignment,
    counterpart MRR and time-period inference (t-mAP@50) come from that embedding, local alignment
    (mAP@10) and temporally bounded retrieval from their protocol functions.  Test times outside
    the training range do not warn.  Read more in docs/evaluation.md.

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder or Pipeline ending in one
    X : array-like of shape (n_samples, n_features)
        ``[image | text | time]`` as the estimator takes it.
    y : array-like of shape (n_samples,)
        Class labels (relevance: same label).
    time_window : float or None
        Half-width of t-mAP@50's relevant period, in the estimator's ``time_unit``.  ``None``:
        undated data; the diachronic protocols are NaN and the breakdown is per category.
    n_bins : int, default=10
        Time bins of local alignment and temporally bounded retrieval.
    random_state : int, default=0
        Seed of local alignment's queries and of ``query_sample``.
    relevance_time : array-like of shape (n_samples,) or None, default=None
        The times t-mAP@50's relevance reads, on the axis; ``None``: those the rows are embedded at
        (a constant-time control passes the real ones).
    query_sample : int or None, default=QUERY_SAMPLE (5000)
        Above this many test items, that many sampled items (the same for every estimator) query
        in coarse alignment, MRR, t-mAP@50 and the per-category breakdown, each figure then the
        sample's mean with its standard error (``<key>_se``).  ``None``: every item queries.

    Returns
    -------
    figures : dict
        ``map_i2t``, ``map_t2i``, ``map`` (coarse alignment), ``mrr`` (counterpart, both
        directions), ``tmap50`` and ``tmap50_filter`` (AP@50 over min(50, R), without and with
        the date filter), ``tmap50_topk`` and ``tmap50_filter_topk`` (over the relevant items in
        the top 50), ``local_map10`` (mean of ``local_map10_i2t`` and ``local_map10_t2i``),
        ``bounded_map`` (micro) and ``per_bin`` (its table as lists); undated: NaN protocols and
        ``per_category`` (``category``, ``map_mean``, ``count``) instead of ``per_bin``.  Unless
        ``query_sample`` is None: ``n_queries`` and the standard errors ``map_i2t_se``,
        ``map_t2i_se``, ``map_se``, ``mrr_se`` and, dated, ``<key>_se`` of the four t-mAP@50
        figures (0 when every item queried).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TimeRangeWarning)
        split = embed_split(estimator, X, y)  # the one embedding every figure uses
        Z_image, Z_text, time = split.Z_image, split.Z_text, split.time
        labels = check_labels(y, Z_image.shape[0], required=False)
        sample = dict(query_sample=query_sample, random_state=random_state)
        coarse = cross_modal_scores(Z_image, Z_text, labels, metrics=("map",), **sample)
        mrr = cross_modal_scores(Z_image, Z_text, None, metrics=("mrr",), **sample)
        figures = {**{key: float(coarse[key]) for key in ("map_i2t", "map_t2i", "map")},
                   "mrr": float(mrr["mrr"])}
        if query_sample is not None:
            figures.update({key: coarse[key] for key in ("map_i2t_se", "map_t2i_se", "map_se")},
                           mrr_se=mrr["mrr_se"], n_queries=int(coarse["n_queries"]))
        if time_window is None:
            figures.update(dict.fromkeys(TEMPORAL_KEYS, float("nan")))
            figures["per_category"] = _per_category_map(
                Z_image, Z_text, np.asarray(y),
                sample_queries(len(Z_image), query_sample, random_state))
            return figures
        period_time = time if relevance_time is None else np.asarray(relevance_time,
                                                                     dtype=float)
        figures.update(time_window_figures(Z_image, Z_text, labels, period_time, time_window,
                                           **sample))
        bounded, per_bin = temporally_bounded_retrieval(estimator, split, bins=n_bins)
        local = local_alignment(estimator, split, bins=n_bins, random_state=random_state)
    figures.update({
        "local_map10": local["mean"],
        "local_map10_i2t": local["i2t"],
        "local_map10_t2i": local["t2i"],
        "bounded_map": bounded["mean"],
        "per_bin": {key: np.asarray(per_bin[key]).tolist()
                    for key in ("center", "map_i2t", "map_t2i", "map_mean")},
    })
    return figures


@validate_params(
    {
        "estimator": "no_validation",
        "X": "no_validation",
        "period": [Interval(Real, 0, None, closed="neither")],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def evaluate_undated(estimator, X, *, period=10.0, random_state=0):
    """Counterpart retrieval against undated captions (the TICRC protocol).

    Row ``i`` of ``X`` is a dated picture and its gold caption; every picture ranks all captions,
    each projected at the picture's date, and the gold caption's reciprocal rank is scored.  Read
    more in docs/evaluation.md.

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder
    X : array-like of shape (n, n_features)
        ``[image | text | time]``; the time is the picture's date.
    period : float, default=10.0
        Width of the breakdown's date periods, in the estimator's ``time_unit``.
    random_state : int or None, default=0
        Seed of the permutation of the dates for ``date_gain``.

    Returns
    -------
    figures : dict
        ``mrr`` (picture → caption), ``mrr_t2i`` (caption → picture), ``map_i2t`` / ``map_t2i``
        (equal to them: one relevant item), ``map`` (their mean), ``date_gain`` (``mrr`` minus the
        MRR with the query dates permuted; 0 for a model whose projection ignores time) and
        ``per_period`` (``start``, ``mrr``, ``count`` per period of the query date).
    """
    X_image, X_text, t = layout_blocks(estimator, X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TimeRangeWarning)
        rr_i2t, rr_t2i = counterpart_reciprocal_ranks(
            query_time_scores(estimator, X_image, X_text, t))
        if time_role(estimator) == "inference":
            shuffled = np.random.default_rng(random_state).permutation(t)
            wrong = counterpart_reciprocal_ranks(
                query_time_scores(estimator, X_image, X_text, shuffled))[0]
            date_gain = float(rr_i2t.mean() - wrong.mean())
        else:
            date_gain = 0.0
    starts, which = np.unique(np.floor(t / period) * period, return_inverse=True)
    counts = np.bincount(which)
    return {
        "mrr": float(rr_i2t.mean()), "mrr_t2i": float(rr_t2i.mean()),
        "map_i2t": float(rr_i2t.mean()), "map_t2i": float(rr_t2i.mean()),
        "map": float(0.5 * (rr_i2t.mean() + rr_t2i.mean())),
        "date_gain": date_gain,
        "per_period": {"start": starts.tolist(),
                       "mrr": (np.bincount(which, weights=rr_i2t) / counts).tolist(),
                       "count": counts.tolist()},
    }
