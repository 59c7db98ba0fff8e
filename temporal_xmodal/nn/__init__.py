"""torch modules: the projection towers of the neural estimators."""

from .towers import ProjectionTower, TwoTowerNet

__all__ = ["ProjectionTower", "TwoTowerNet"]
