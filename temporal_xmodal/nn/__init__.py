"""torch modules: the projection towers of the neural estimators."""

from .diachronic import DiachronicNet, TimeEncoder
from .towers import ProjectionTower, TwoTowerNet

__all__ = ["DiachronicNet", "ProjectionTower", "TimeEncoder", "TwoTowerNet"]
