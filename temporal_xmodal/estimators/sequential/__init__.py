"""Sequential Cross-Modal Learning (SCML): the estimator, its stages and its inference."""

from ._estimator import SequentialCrossModal
from ._loss import ClassificationLoss, classification_loss
from ._net import MetaLearner, SequentialNet, UnifiedModel, preprocess_gradients
from ._training import LearnedOptimizerNet, ModalityPoolIterator, ModalityPools, StageNet

__all__ = ["ClassificationLoss", "LearnedOptimizerNet", "MetaLearner", "ModalityPoolIterator",
           "ModalityPools", "SequentialCrossModal", "SequentialNet", "StageNet", "UnifiedModel",
           "classification_loss", "preprocess_gradients"]
