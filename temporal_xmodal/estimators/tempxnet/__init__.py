"""TempXNetEmbedder: its estimator, loss and temporal correlations.

Read more in docs/estimators/tempxnet.md.
"""

from ._correlation import (
    CategoryKDECorrelation,
    RecencyCorrelation,
    TemporalCorrelation,
    WordTopicCorrelation,
)
from ._estimator import TempXNetEmbedder
from ._loss import TempXNetLoss, cross_modality_similarity, temporal_soft_constraint

__all__ = ["CategoryKDECorrelation", "RecencyCorrelation", "TempXNetEmbedder", "TempXNetLoss",
           "TemporalCorrelation", "WordTopicCorrelation", "cross_modality_similarity",
           "temporal_soft_constraint"]
