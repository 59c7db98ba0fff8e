"""TempXNetEmbedder: triplet loss plus a temporal soft constraint."""

from numbers import Real

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import StrOptions

from ..._constraints import USE_TIME_CONSTRAINT
from ..._docs import fill_doc
from ..._sparse_input import is_sparse_block
from ..._constraints import Interval
from ..._validation import Duration
from ..._warnings import warn
from ...nn import TwoTowerNet
from ...time import to_duration
from .._neural import NetConfig, NeuralCrossModalEmbedder
from .._neural_params import COMMON_CONSTRAINTS
from ._correlation import (
    CategoryKDECorrelation,
    RecencyCorrelation,
    TemporalCorrelation,
    WordTopicCorrelation,
)
from ._loss import SIMILARITY_MODES, TEMPORAL_NORMALISATIONS, TempXNetLoss

#: The ``correlation`` strings and the classes they stand for.
CORRELATIONS = {
    "recency": RecencyCorrelation,
    "category": CategoryKDECorrelation,
    "topic": WordTopicCorrelation,
}


#: ``bandwidth=None``: h of the correlation given by name, a duration in any time unit.
DEFAULT_BANDWIDTHS = {"recency": "1Y", "category": "1Y", "topic": "1Y"}


@fill_doc
class TempXNetEmbedder(NeuralCrossModalEmbedder):
    """Temporal cross-modal embedding with soft-smoothing (TempXNet).

    Two towers, one per modality, trained with a fixed-margin bidirectional
    triplet loss plus a temporal soft constraint that pulls same-category pairs
    together when they are temporally correlated and pushes them apart when they
    are not (Semedo & Magalhães, "Temporal Cross-Media Retrieval with
    Soft-Smoothing", ACM MM 2018).  Time is used in training only; labels are
    required.

    Read more in the user guide: docs/estimators/tempxnet.md.

    Parameters
    ----------
    correlation : {"recency", "category", "topic"} or TemporalCorrelation, default="recency"
        The temporal correlation f_t: recency (TempXNet-Rec), category densities
        (TempXNet-Cat) or word densities (TempXNet-Lat), a
        :class:`~temporal_xmodal.estimators.tempxnet.TemporalCorrelation` built from
        ``bandwidth``, ``correlation_normalisation`` and ``topic_aggregation``; an unfitted
        object is cloned and fitted on the training rows (``bandwidth`` must then be None).
    bandwidth : float, str, timedelta or None, default=None
        h, a duration (:func:`~temporal_xmodal.time.to_duration`; ``"<p>%"``: of the
        training span); ``None``: 1 year, whatever ``time_unit``.
    temporal_weight : float, default=0.1
        λ, the weight of the temporal term; 0: the static triplet-loss control.  When
        every training item has the same time, the fit warns and trains with 0.
    margin : float, default=1.0
        Fixed triplet margin m.
    correlation_normalisation : {"max", "sum", "none"}, default="max"
        Scaling of the density curves of "category" and "topic": peak 1, sum 1, or raw.
    topic_aggregation : {"product", "geometric_mean"}, default="product"
        How "topic" combines the words of a text.
    similarity_mode : {"clamp", "literal", "shift"}, default="clamp"
        Guard of the harmonic mean f_s against non-positive cosines
        (:func:`~temporal_xmodal.estimators.tempxnet.cross_modality_similarity`).
    eps : float, default=1e-6
        ε of the harmonic mean f_s.
    exclude_self : bool, default=False
        Drop j = i from the positive set P_i of anchor i.
    {triplet_parameters}
    temporal_normalisation : {"active_triplets", "triplets", "literal"}, default="active_triplets"
        κ, the scale of the temporal term
        (:class:`~temporal_xmodal.estimators.tempxnet.TempXNetLoss`); "literal": the paper's 1.
    {use_time}
    {training_parameters}

    Attributes
    ----------
    correlation_ : TemporalCorrelation
        The temporal correlation, fitted on the training rows.
    temporal_weight_ : float
        The weight of the temporal term used in training.
    bandwidth_ : float or None
        h in ``time_unit``; ``None`` when ``correlation`` is an object.
    {uses_time_}
    {neural_attributes}

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

    time_role = "training"
    _durations = ("bandwidth",)
    _embedding_dim_source = ("D = 100: Semedo & Magalhães, ACM MM 2018; Semedo, thesis, "
                             "eq. 4.17")
    _parameter_constraints = {
        **COMMON_CONSTRAINTS,
        "correlation": [StrOptions(set(CORRELATIONS)), TemporalCorrelation],
        "bandwidth": [Interval(Real, 0, None, closed="neither"), Duration(), None],
        "temporal_weight": [Interval(Real, 0, None, closed="left")],
        "use_time": USE_TIME_CONSTRAINT,
        "temporal_normalisation": [StrOptions(set(TEMPORAL_NORMALISATIONS))],
        "correlation_normalisation": [StrOptions({"max", "sum", "none"})],
        "topic_aggregation": [StrOptions({"product", "geometric_mean"})],
        "similarity_mode": [StrOptions(set(SIMILARITY_MODES))],
        "eps": [Interval(Real, 0, None, closed="left")],
        "exclude_self": ["boolean"],
    }

    def __init__(self, correlation="recency", bandwidth=None, temporal_weight=0.1, margin=1.0,
                 correlation_normalisation="max", topic_aggregation="product",
                 similarity_mode="clamp", eps=1e-6, exclude_self=False,
                 negatives="different_category", loss_reduction="sum_per_anchor",
                 temporal_normalisation="active_triplets", *,
                 use_time=True,
                 embedding_dim=100, hidden_dim=1024, dropout=0.0, standardize=True,
                 max_epochs=25,
                 batch_size=64, lr=1e-3, optimizer="adam", momentum=0.9, nesterov=False,
                 lr_decay=1e-6, validation_fraction=0.1, patience=None,
                 selection_metric="valid_map", device="auto", random_state=None, verbose=0,
                 callbacks=None, warm_start=False,
                 keep_training_state=False, compile_step="auto", n_image_features=None,
                 time_unit="years"):
        self.correlation = correlation
        self.bandwidth = bandwidth
        self.temporal_weight = temporal_weight
        self.margin = margin
        self.correlation_normalisation = correlation_normalisation
        self.topic_aggregation = topic_aggregation
        self.similarity_mode = similarity_mode
        self.eps = eps
        self.exclude_self = exclude_self
        self.negatives = negatives
        self.loss_reduction = loss_reduction
        self.temporal_normalisation = temporal_normalisation
        self.use_time = use_time
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim
        self.dropout = dropout
        self.standardize = standardize
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
        self.compile_step = compile_step
        self.n_image_features = n_image_features
        self.time_unit = time_unit

    def _net_config(self, rows):
        correlation = self._correlation()
        if isinstance(correlation, WordTopicCorrelation) and is_sparse_block(rows.text):
            raise TypeError(
                "TempXNetEmbedder(correlation='topic') reads every text's words from dense "
                "text features; sparse X is not supported with it. Pass X.toarray() (or "
                "TfidfTextFeatures(sparse_output=False)), or use correlation='recency' or "
                "'category', which take sparse X.")
        correlation = correlation.fit(rows.time, rows.labels > 0, rows.text)
        # the control (use_time=False) sees one time: no temporal term
        weight = self.temporal_weight if self.uses_time_ else 0.0
        if weight > 0 and np.ptp(rows.time) == 0:
            warn(
                "TempXNetEmbedder: every training item has the same time, so the temporal "
                "term has no time to model (it would only pull each category to one point); "
                "training with temporal_weight=0.", UserWarning)
            weight = 0.0
        fitted = {"correlation_": correlation, "temporal_weight_": weight}
        if self.bandwidth is None and not isinstance(self.correlation, TemporalCorrelation):
            fitted["bandwidth_"] = correlation.bandwidth  # the default, read in time_unit
        return NetConfig(
            module=TwoTowerNet, module_params=self._towers(rows),
            criterion=TempXNetLoss,
            criterion_params={
                "correlation": correlation, "margin": self.margin,
                "temporal_weight": weight,
                "temporal_normalisation": self.temporal_normalisation, "eps": self.eps,
                "similarity_mode": self.similarity_mode, "exclude_self": self.exclude_self,
                "negatives": self.negatives, "reduction": self.loss_reduction},
            fitted=fitted)

    def _correlation(self):
        """The unfitted f_t: ``correlation`` cloned, or the object its string stands for."""
        if isinstance(self.correlation, TemporalCorrelation):
            if self.bandwidth is not None:
                raise ValueError("bandwidth applies to a correlation given by name; the "
                                 f"{type(self.correlation).__name__} object has its own "
                                 "bandwidth (leave bandwidth=None)")
            return clone(self.correlation)
        bandwidth = (self.bandwidth_ if self.bandwidth is not None else  # the defaults are
                     to_duration(DEFAULT_BANDWIDTHS[self.correlation], self.time_unit,
                                 name="bandwidth"))  # in years whatever time_unit
        options = {"bandwidth": bandwidth}
        if self.correlation != "recency":
            options["normalisation"] = self.correlation_normalisation
        if self.correlation == "topic":
            options["aggregation"] = self.topic_aggregation
        return CORRELATIONS[self.correlation](**options)
