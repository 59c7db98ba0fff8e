"""TempXNetEmbedder: triplet loss + temporal soft-smoothing (spec ``tempxnet.md``)."""

import datetime
import warnings
from numbers import Real

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, StrOptions

from ..losses.temporal_correlation import (
    CategoryKDECorrelation,
    RecencyCorrelation,
    TemporalCorrelation,
    WordTopicCorrelation,
)
from ..time import external_stacklevel
from ..losses.tempxnet import TEMPORAL_NORMALISATIONS, TempXNetLoss

#: The ``correlation`` strings and the objects they stand for.
CORRELATIONS = {
    "recency": RecencyCorrelation,
    "category": CategoryKDECorrelation,
    "topic": WordTopicCorrelation,
}
from ._neural import COMMON_CONSTRAINTS, COMMON_PARAMETERS_DOC, NeuralCrossModalEmbedder


class TempXNetEmbedder(NeuralCrossModalEmbedder):
    __doc__ = r"""Temporal cross-modal embedding with soft-smoothing (TempXNet).

    Two independent tanh towers (eq. 4.17) trained with the bidirectional
    triplet loss (fixed margin, eq. 4.4) plus a temporal soft-constraint that
    pulls same-category pairs together when they are temporally correlated
    and pushes them apart when they are not (eqs. 4.6–4.11):

    .. math::

        \mathcal{L} = \frac{1}{b}\Big(L + \lambda \, \kappa \sum_i \frac{1}{|P_i|}
        \sum_{j \in P_i} f_t(i,j)(1 - f_s(i,j)) + (1 - f_t(i,j)) f_s(i,j)\Big)

    **Deviation from the thesis** (``temporal_normalisation``): the thesis'
    eq. 4.18 has κ = 1, so the summed triplet term L is ~100× the averaged
    temporal term and λ = 1 changes nothing measurable.  By default κ is the
    batch's number of active triplets (positive hinge) over the batch size,
    n_active / b, which puts both terms on a per-pair scale (λ weighs one
    temporal pair term against one active triplet);
    ``temporal_normalisation="literal"`` restores κ = 1.

    Time is used in training only: after ``fit`` the towers embed items
    without their timestamp.  Sizes and schedule are the thesis' (spec §4):
    embedding_dim=100, hidden_dim=1024, no dropout, max_epochs=25,
    batch_size=64, lr_decay=1e-6.  **Deviation:** Adam at lr 1e-3 (the thesis: SGD
    momentum 0.9, lr 5e-3, ``paper_settings("TempXNetEmbedder")``), because with pair
    labels on TICRC the thesis' SGD gives every caption the same score (held-out MRR
    0.0024) while Adam trains (lr 1e-4: 0.137, 3e-4: 0.153, 1e-3: 0.183; CCA 0.146;
    Wikipedia 0.246 at 1e-4 and 1e-3, CCA 0.219; seed 0).

    Parameters
    ----------
    correlation : {"recency", "category", "topic"} or TemporalCorrelation, default="recency"
        Temporal correlation f_t: exp(−|Δt|/h) (TempXNet-Rec, eq. 4.12),
        per-category KDE products (TempXNet-Cat, eqs. 4.13–4.14), or per-word
        temporal densities of the anchor's text (TempXNet-Lat, eqs.
        4.15–4.16; estimated by kernel densities instead of Dynamic LDA).
        A string stands for :class:`~temporal_xmodal.losses.RecencyCorrelation`,
        :class:`~temporal_xmodal.losses.CategoryKDECorrelation` or
        :class:`~temporal_xmodal.losses.WordTopicCorrelation` built from
        ``bandwidth``, ``correlation_normalisation`` and ``topic_aggregation``;
        an (unfitted) object is cloned and fitted on the training rows, and
        carries its own parameters (``bandwidth`` must then be None).  The
        fitted object is ``correlation_``.
    bandwidth : float, str, timedelta or None, default=None
        h, a duration: a number in ``time_unit`` or ``"90D"`` /
        ``pandas.Timedelta``; ``None`` uses the thesis' value (0.3 for
        recency, 1 for category and topic, in ``time_unit``).
    temporal_weight : float, default=1.0
        λ; 0 gives the static triplet-loss control.  When every training item
        has the same time (undated data, or a constant-time control) the
        temporal term has no time to model: every same-label pair then has
        correlation 1 and the term only pulls each category to one point
        (Wikipedia at λ = 1: every caption scores alike, mAP 0.197 against 0.246
        at λ = 0), so the fit warns and trains with λ = 0 (``temporal_weight_``).
    temporal_normalisation : {"active_triplets", "triplets", "literal"}, default="active_triplets"
        κ, the scale of the temporal term against the summed triplet term
        (**deviation**, see above): "active_triplets" multiplies the thesis'
        term by the batch's number of (anchor, negative) triplets of both
        directions with a positive hinge over b (it shrinks as the triplets
        are satisfied); "triplets" by the number of all triplets over b (at
        λ = 1 it costs category mAP); "literal" is eq. 4.18 as printed.
    margin : float, default=1.0
        Fixed triplet margin m.
    correlation_normalisation : {"max", "sum", "none"}, default="max"
        Scaling of the density curves of "category" and "topic" (ambiguity 3:
        peak 1 is the best reading).
    topic_aggregation : {"product", "geometric_mean"}, default="product"
        How "topic" combines the words of a text (the thesis' product, or a
        non-thesis geometric mean that does not underflow on long texts).
    similarity_mode : {"clamp", "literal", "shift"}, default="clamp"
        Guard of the harmonic mean f_s against non-positive cosines
        (ambiguity 5; "literal" is the printed formula and can diverge).
    eps : float, default=1e-6
        ε of eq. 4.11.
    exclude_self : bool, default=False
        Drop j = i from the positive set P_i (ambiguity 4).
    negatives : {"different_category", "all_non_matching"}, default="different_category"
    loss_reduction : {"sum_per_anchor", "sum", "mean_active"}, default="sum_per_anchor"
        Both terms are summed and divided by the batch size (eq. 4.18).""" + \
        COMMON_PARAMETERS_DOC.replace("lr : float, default=1e-4", "lr : float, default=1e-3") + """
    Examples
    --------
    >>> from temporal_xmodal import TempXNetEmbedder
    >>> from temporal_xmodal.datasets import make_temporal_crossmodal
    >>> X, y, info = make_temporal_crossmodal(300, return_info=True, random_state=0)
    >>> model = TempXNetEmbedder(max_epochs=2, hidden_dim=32, random_state=0,
    ...                          n_image_features=info.n_image_features).fit(X, y)
    >>> model.transform_image(X[:5, :info.n_image_features]).shape
    (5, 100)
    """

    time_use = "training"
    _parameter_constraints = {
        **COMMON_CONSTRAINTS,
        "correlation": [StrOptions(set(CORRELATIONS)), TemporalCorrelation],
        "bandwidth": [Interval(Real, 0, None, closed="neither"), str, datetime.timedelta,
                      np.timedelta64, None],
        "temporal_weight": [Interval(Real, 0, None, closed="left")],
        "temporal_normalisation": [StrOptions(set(TEMPORAL_NORMALISATIONS))],
        "correlation_normalisation": [StrOptions({"max", "sum", "none"})],
        "topic_aggregation": [StrOptions({"product", "geometric_mean"})],
        "similarity_mode": [StrOptions({"clamp", "literal", "shift"})],
        "eps": [Interval(Real, 0, None, closed="left")],
        "exclude_self": ["boolean"],
    }

    def __init__(self, correlation="recency", bandwidth=None, temporal_weight=1.0, margin=1.0,
                 correlation_normalisation="max", topic_aggregation="product",
                 similarity_mode="clamp", eps=1e-6, exclude_self=False,
                 negatives="different_category", loss_reduction="sum_per_anchor",
                 temporal_normalisation="active_triplets", *,
                 embedding_dim=100, hidden_dim=1024, dropout=0.0, max_epochs=25,
                 batch_size=64, lr=1e-3, optimizer="adam", momentum=0.9, nesterov=False,
                 lr_decay=1e-6, validation_fraction=0.1, patience=None,
                 selection_metric="valid_map", device="auto", random_state=None, verbose=0,
                 callbacks=None, warm_start=False,
                 keep_training_state=False, n_image_features=None,
                 time_unit="years"):
        self.correlation = correlation
        self.bandwidth = bandwidth
        self.temporal_weight = temporal_weight
        self.temporal_normalisation = temporal_normalisation
        self.margin = margin
        self.correlation_normalisation = correlation_normalisation
        self.topic_aggregation = topic_aggregation
        self.similarity_mode = similarity_mode
        self.eps = eps
        self.exclude_self = exclude_self
        self.negatives = negatives
        self.loss_reduction = loss_reduction
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim
        self.dropout = dropout
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.optimizer = optimizer
        self.momentum = momentum
        self.nesterov = nesterov
        self.lr_decay = lr_decay
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.selection_metric = selection_metric
        self.device = device
        self.random_state = random_state
        self.verbose = verbose
        self.callbacks = callbacks
        self.warm_start = warm_start
        self.keep_training_state = keep_training_state
        self.n_image_features = n_image_features
        self.time_unit = time_unit

    def _correlation(self):
        """The unfitted f_t: ``correlation`` cloned, or the object its string stands for."""
        if isinstance(self.correlation, TemporalCorrelation):
            if self.bandwidth is not None:
                raise ValueError("bandwidth applies to a correlation given by name; the "
                                 f"{type(self.correlation).__name__} object has its own "
                                 "bandwidth (leave bandwidth=None)")
            return clone(self.correlation)
        options = {} if self.bandwidth is None else {"bandwidth": self._duration("bandwidth")}
        if self.correlation != "recency":
            options["normalisation"] = self.correlation_normalisation
        if self.correlation == "topic":
            options["aggregation"] = self.topic_aggregation
        return CORRELATIONS[self.correlation](**options)

    def _loss(self, X_image, X_text, time, labels):
        self.correlation_ = self._correlation().fit(time, labels > 0, X_text)
        self.temporal_weight_ = self.temporal_weight
        if self.temporal_weight > 0 and np.ptp(time) == 0:
            warnings.warn(
                "TempXNetEmbedder: every training item has the same time, so the temporal "
                "term has no time to model (it would only pull each category to one point); "
                "training with temporal_weight=0.", UserWarning, stacklevel=external_stacklevel())
            self.temporal_weight_ = 0.0
        return TempXNetLoss, {
            "correlation": self.correlation_,
            "margin": self.margin,
            "temporal_weight": self.temporal_weight_,
            "temporal_normalisation": self.temporal_normalisation,
            "eps": self.eps,
            "similarity_mode": self.similarity_mode,
            "exclude_self": self.exclude_self,
            "negatives": self.negatives,
            "reduction": self.loss_reduction,
        }
