"""SAMEmbedder: its estimator and its scheduled-adaptive-margin loss.

Read more in docs/estimators/sam.md.
"""

from ._estimator import SAMEmbedder
from ._loss import SAMLoss, SemanticDistance, category_distance_matrix, margin_schedule

__all__ = ["SAMEmbedder", "SAMLoss", "SemanticDistance", "category_distance_matrix",
           "margin_schedule"]
