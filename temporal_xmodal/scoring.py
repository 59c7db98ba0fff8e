"""Scorers ``scorer(estimator, X, y)`` for ``GridSearchCV(scoring=...)`` (docs/metrics.md)."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import StrOptions, validate_parameter_constraints

from ._constraints import Interval
from .base import embed_with_time, layout_blocks, through_pipeline
from .estimators import query_time_scores
from .metrics import counterpart_reciprocal_ranks, cross_modal_scores
from .time import is_share, to_duration


_METRICS = ("map", "mrr", "ndcg", "recall")
_DIRECTIONS = ("mean", "i2t", "t2i")


class RetrievalScorer:
    """Cross-modal retrieval among the rows of ``X``, as a scikit-learn ``scoring=`` callable.

    ``scorer(estimator, X, y)`` embeds ``X`` with a fitted embedder or a Pipeline ending in one
    (else a TypeError), each row at its own time, and returns the metric (greater is better);
    ``y=None``: counterpart relevance.  Read more in docs/metrics.md.

    Parameters
    ----------
    metric : {"map", "mrr", "ndcg", "recall"}, default="map"
    direction : {"mean", "i2t", "t2i"}, default="mean"
        Image→text, text→image, or their mean.
    k : int or None, default=None
        Cut-off of mAP@k, nDCG@k and recall@k.
    time_window, time_filter : float, str, timedelta or None, default=None
        Relevant requires ``|Δt| <= time_window``; a query's candidates are the rows within
        ``time_filter`` of its time.  A number in the estimator's ``time_unit``, a duration
        (``"180D"``) or a share of the scored rows' time span (``"5%"``).
    **metric_params
        Passed to :func:`~temporal_xmodal.metrics.cross_modal_scores`.
    """

    _parameter_constraints = {
        "metric": [StrOptions(set(_METRICS))],
        "direction": [StrOptions(set(_DIRECTIONS))],
        "k": [Interval(Integral, 1, None, closed="left"), None],
        "time_window": "no_validation",
        "time_filter": "no_validation",
    }

    def __init__(self, metric="map", direction="mean", k=None, time_window=None,
                 time_filter=None, **metric_params):
        validate_parameter_constraints(
            self._parameter_constraints,
            {"metric": metric, "direction": direction, "k": k, "time_window": time_window,
             "time_filter": time_filter},
            caller_name=type(self).__name__)
        for name, value in (("time_window", time_window), ("time_filter", time_filter)):
            if is_share(value):  # a malformed share fails here, not at the first score
                to_duration(value, name=name, span=1.0)
        self.metric, self.direction, self.k = metric, direction, k
        self.time_window, self.time_filter = time_window, time_filter
        self.metric_params = metric_params

    def __call__(self, estimator, X, y=None):
        Z_image, Z_text, time, final = embed_with_time(estimator, X)
        window, within = (None if value is None else
                          _window(value, final.time_unit, time, name)
                          for name, value in (("time_window", self.time_window),
                                              ("time_filter", self.time_filter)))
        timed = window is not None or within is not None
        out = cross_modal_scores(
            Z_image, Z_text, y, metrics=(self.metric,), k=self.k,
            time=time if timed else None, time_window=window, time_filter=within,
            **self.metric_params,
        )
        key = self.metric if self.direction == "mean" else f"{self.metric}_{self.direction}"
        return out[key]

    def __repr__(self):
        params = ", ".join(
            f"{n}={v!r}" for n, v in [("metric", self.metric), ("direction", self.direction),
                                       ("k", self.k), ("time_window", self.time_window)]
            + ([("time_filter", self.time_filter)] if self.time_filter is not None else [])
            + sorted(self.metric_params.items())
        )
        return f"RetrievalScorer({params})"


def _window(duration, time_unit, time, name="time_window"):
    span = float(np.ptp(time)) if is_share(duration) else None
    return to_duration(duration, time_unit, name=name, span=span)


class DateAwareMRRScorer:
    """Image→text MRR of each picture's own caption, the texts projected at the picture's date.

    Texts scored by :func:`~temporal_xmodal.estimators.query_time_scores`; ``y`` is unused.
    """

    def __call__(self, estimator, X, y=None):
        final, X = through_pipeline(estimator, X)
        X_image, X_text, time = layout_blocks(final, X)
        return float(counterpart_reciprocal_ranks(
            query_time_scores(final, X_image, X_text, time))[0].mean())

    def __repr__(self):
        return "DateAwareMRRScorer()"


def make_retrieval_scorer(metric="map", *, direction="mean", k=None, time_window=None,
                          time_filter=None, **metric_params):
    """Build a :class:`RetrievalScorer` (the ``make_scorer`` of this library).

    Parameters
    ----------
    metric, direction, k, time_window, time_filter, **metric_params
        As in :class:`RetrievalScorer`, which checks them.

    Returns
    -------
    scorer : RetrievalScorer
    """
    return RetrievalScorer(metric, direction, k, time_window, time_filter, **metric_params)


#: Ready-made scorers: ``GridSearchCV(est, grid, scoring=SCORERS, refit="map")``; the table of
#: docs/metrics.md says what each key measures.  The time-window ones (``"tmap@50"``,
#: ``"tmap@50|filter"``, ``"period@50"``: Semedo & Magalhães, ACM MM 2019, one-month period)
#: divide AP@50 by min(50, relevant items).
SCORERS = {
    "map": RetrievalScorer("map"),
    "tmap@50": RetrievalScorer("map", k=50, time_window="5%", ap_at_k_normaliser="min_k_total"),
    "tmap@50|filter": RetrievalScorer("map", k=50, time_window="5%", time_filter="5%",
                                      ap_at_k_normaliser="min_k_total"),
    "period@50": RetrievalScorer("map", k=50, time_window="1M",
                                 ap_at_k_normaliser="min_k_total"),
    "date_mrr": DateAwareMRRScorer(),
    "map_i2t": RetrievalScorer("map", "i2t"),
    "map_t2i": RetrievalScorer("map", "t2i"),
    "map@50": RetrievalScorer("map", k=50),
    "ndcg@50": RetrievalScorer("ndcg", k=50),
    "mrr": RetrievalScorer("mrr"),
    "recall@10": RetrievalScorer("recall", k=10),
}


__all__ = ["SCORERS", "DateAwareMRRScorer", "RetrievalScorer", "make_retrieval_scorer"]
