"""Losses of the neural estimators, one concept per module.

The estimators build these losses from their validated parameters; each loss
validates its options once when built, and the public functions validate
theirs on every call.

* :mod:`.triplet` — bidirectional triplet hinge over in-batch negatives (masks);
* :mod:`.sam` — SAM's scheduled adaptive margins;
* :mod:`.tempxnet` — TempXNet's temporal soft-constraint term;
* :mod:`.temporal_correlation` — the temporal correlation functions f_t;
* :mod:`.diachronic` — DCM's joint diachronic ranking loss;
* :mod:`.classification` — SCML's semantic classification loss (Song & Tan, Eq. 10).
"""

from .classification import ClassificationLoss, classification_loss
from .diachronic import DiachronicRankingLoss, diachronic_weights
from .sam import SAMLoss, SemanticDistance, category_distance_matrix, margin_schedule
from .temporal_correlation import (
    CategoryKDECorrelation,
    RecencyCorrelation,
    TemporalCorrelation,
    WordTopicCorrelation,
)
from .tempxnet import TempXNetLoss, cross_modality_similarity, temporal_soft_constraint
from .triplet import bidirectional_triplet_loss, negative_mask, shared_label_mask

__all__ = [
    "CategoryKDECorrelation", "ClassificationLoss", "DiachronicRankingLoss",
    "RecencyCorrelation", "SAMLoss", "SemanticDistance", "TempXNetLoss", "TemporalCorrelation",
    "WordTopicCorrelation", "bidirectional_triplet_loss", "category_distance_matrix",
    "classification_loss", "cross_modality_similarity", "diachronic_weights",
    "margin_schedule", "negative_mask", "shared_label_mask", "temporal_soft_constraint",
]
