"""DiachronicEmbedder (DCM-Continuous): its estimator, net and loss.

Read more in docs/estimators/diachronic.md.
"""

from ._estimator import DiachronicEmbedder
from ._loss import DiachronicRankingLoss, diachronic_weights
from ._net import DiachronicNet

__all__ = ["DiachronicEmbedder", "DiachronicNet", "DiachronicRankingLoss", "diachronic_weights"]
