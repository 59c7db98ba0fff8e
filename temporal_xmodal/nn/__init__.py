"""torch modules: the projection towers of the neural estimators."""

from .diachronic import DiachronicNet
from .dropout import Dropout, reseed
from .sequential import MetaLearner, SequentialNet, UnifiedModel, preprocess_gradients
from .towers import ProjectionTower, TwoTowerNet

__all__ = ["DiachronicNet", "Dropout", "MetaLearner", "ProjectionTower", "SequentialNet",
           "TwoTowerNet", "UnifiedModel", "preprocess_gradients", "reseed"]
