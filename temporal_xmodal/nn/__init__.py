"""torch modules: the projection towers of the neural estimators."""

from .diachronic import DiachronicNet
from .layers import Dropout, l2_normalize, reseed
from .sequential import MetaLearner, SequentialNet, UnifiedModel, preprocess_gradients
from .towers import ProjectionTower, TwoTowerNet

__all__ = ["DiachronicNet", "Dropout", "MetaLearner", "ProjectionTower", "SequentialNet",
           "TwoTowerNet", "UnifiedModel", "l2_normalize", "preprocess_gradients", "reseed"]
