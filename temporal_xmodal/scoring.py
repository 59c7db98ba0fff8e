"""Scorers for ``GridSearchCV(scoring=...)`` and ``cross_validate``.

This module sits above :mod:`temporal_xmodal.base` (a scorer embeds ``X``
through :func:`~temporal_xmodal.base.embed_with_time`), above
:mod:`temporal_xmodal.metrics` (it evaluates with their functions) and above
:mod:`temporal_xmodal.estimators` (the date-aware MRR projects captions at each
picture's date with :func:`~temporal_xmodal.estimators.query_time_scores`).

A scorer is a callable ``scorer(estimator, X, y)`` returning one float
(greater is better).  It embeds ``X`` (each row at its own time; through a
Pipeline's preprocessing when the estimator is one), and evaluates
cross-modal retrieval among the rows of ``X``.
"""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import StrOptions, validate_parameter_constraints

from ._validation import Interval
from .base import embed_with_time, layout_blocks, through_pipeline
from .estimators import query_time_scores
from .metrics import counterpart_reciprocal_ranks, cross_modal_scores
from .time import is_share, to_duration


_METRICS = ("map", "mrr", "ndcg", "recall")
_DIRECTIONS = ("mean", "i2t", "t2i")


class RetrievalScorer:
    """Cross-modal retrieval scorer usable as ``scoring=`` in scikit-learn.

    A callable ``scorer(estimator, X, y)``: it embeds ``X`` with the fitted
    estimator (each row at its own time) and scores retrieval among the rows
    of ``X``.  Its parameters are checked when it is built.

    Read more in the user guide: docs/metrics.md.

    Parameters
    ----------
    metric : {"map", "mrr", "ndcg", "recall"}, default="map"
        The retrieval metric.
    direction : {"mean", "i2t", "t2i"}, default="mean"
        Image→text, text→image, or their mean.
    k : int or None, default=None
        Cut-off (mAP@k, nDCG@k, recall@k).
    time_window : float, str, timedelta or None, default=None
        Time-window relevance: relevant = shares a label and
        ``|Δt| <= time_window``; a number in the estimator's ``time_unit``, a
        duration such as ``"180D"``, or a share of the scored rows' time span
        such as ``"5%"`` (the same question on any time axis; rows all at one
        time get a zero window).  Times are read through the fitted layout
        (also through a Pipeline's preprocessing).
    time_filter : float, str, timedelta or None, default=None
        The date filter: each query's candidates are only the rows within
        this duration of its time (a search restricted to the window, what a
        user holding the dates does with any model); the same units and
        shares as ``time_window``.  ``time_filter=time_window`` reads a
        time-window figure as that search would (``SCORERS["tmap@50|filter"]``).
    **metric_params
        Passed to :func:`cross_modal_scores` (e.g. ``ap_at_k_normaliser``).  With a
        ``time_window`` mAP@k divides by min(k, relevant items) unless
        ``ap_at_k_normaliser`` says otherwise (its ``"auto"`` default): the
        time-window figure a date filter can never lower (docs/metrics.md).

    Examples
    --------
    >>> from temporal_xmodal.scoring import RetrievalScorer
    >>> scorer = RetrievalScorer("map", k=50, time_window=1.0)
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
        """Score a fitted embedder (or a Pipeline ending in one) on ``X`` and ``y``.

        Parameters
        ----------
        estimator : CrossModalEmbedder or Pipeline
            Fitted; a Pipeline must end in a cross-modal embedder of this library.
        X : array-like or DataFrame
            Input as the estimator takes it.
        y : array-like or None, default=None
            Labels (``None``: each item's own counterpart is its only relevant one).

        Returns
        -------
        score : float
            The metric (greater is better).

        Raises
        ------
        TypeError
            When the estimator (or the Pipeline's final step) is not a cross-modal
            embedder, e.g. a classifier; the message names its class.
        """
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
    """``duration`` in ``time_unit``: a duration, or a share (``"5%"``) of ``time``'s span."""
    span = float(np.ptp(time)) if is_share(duration) else None
    return to_duration(duration, time_unit, name=name, span=span)


class DateAwareMRRScorer:
    """Mean reciprocal rank of each picture's own caption, captions read at the picture's date.

    ``scorer(estimator, X, y=None)``: every image of ``X`` ranks every text of ``X``, the texts
    projected at the query image's date (its row's time), as undated captions are searched
    by a dated picture (:func:`~temporal_xmodal.estimators.query_time_scores`, calibrated);
    the relevant text is the image's own (``y`` is not used).  The question of the TICRC
    newspaper benchmark: does the picture's date help find its caption?  An estimator that
    ignores time at inference is projected once.

    Read more in the user guide: docs/metrics.md.

    Examples
    --------
    >>> from temporal_xmodal.scoring import SCORERS
    >>> SCORERS["date_mrr"]
    DateAwareMRRScorer()
    """

    def __call__(self, estimator, X, y=None):
        """Score a fitted embedder (or a Pipeline ending in one) on the pairs of ``X``.

        Parameters
        ----------
        estimator : CrossModalEmbedder or Pipeline
            Fitted.
        X : array-like or DataFrame
            Input as the estimator takes it; row ``i``'s image and text are a pair.
        y : ignored

        Returns
        -------
        score : float
            Image → text MRR of the counterpart (greater is better).
        """
        final, X = through_pipeline(estimator, X)
        X_image, X_text, time = layout_blocks(final, X)
        return float(counterpart_reciprocal_ranks(
            query_time_scores(final, X_image, X_text, time))[0].mean())

    def __repr__(self):
        return "DateAwareMRRScorer()"


def make_retrieval_scorer(metric="map", *, direction="mean", k=None, time_window=None,
                          time_filter=None, **metric_params):
    """Build a :class:`RetrievalScorer` (the ``make_scorer`` of this library).

    The parameters are checked by :class:`RetrievalScorer`.

    Read more in the user guide: docs/metrics.md.

    Parameters
    ----------
    metric : {"map", "mrr", "ndcg", "recall"}, default="map"
        The retrieval metric.
    direction, k, time_window, time_filter, **metric_params
        As in :class:`RetrievalScorer` (``time_window`` and ``time_filter`` a
        number in the estimator's ``time_unit``, a duration such as
        ``"180D"`` or a share such as ``"5%"``).

    Returns
    -------
    scorer : RetrievalScorer
        The scorer, for ``scoring=``.
    """
    return RetrievalScorer(metric, direction, k, time_window, time_filter, **metric_params)


#: Ready-made scorers: ``GridSearchCV(est, grid, scoring=SCORERS)`` with ``refit="map"``.
#: The time-aware questions: ``"tmap@50"`` (time-window mAP@50: same category within 5 % of
#: the scored rows' time span, each item at its own time), ``"tmap@50|filter"`` (the same
#: figure with each query's candidates restricted to that window, as a user holding the
#: dates would search: the rival a time-aware model must beat), ``"period@50"`` (time-period
#: inference with the paper's one-month period, Semedo & Magalhães, ACM MM 2019) and
#: ``"date_mrr"`` (:class:`DateAwareMRRScorer`).  The three time-window figures divide AP@50
#: by min(50, relevant items) (``ap_at_k_normaliser="min_k_total"``): the filter can never
#: lower them, and finding only each query's own counterpart does not score 1.
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
