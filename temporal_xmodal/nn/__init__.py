"""torch modules shared by the neural estimators: towers, seeded dropout, l2_normalize.

A method's own module lives in its folder (e.g.
:class:`~temporal_xmodal.estimators.diachronic.DiachronicNet`).
"""

from .layers import Dropout, l2_normalize, reseed
from .towers import ProjectionTower, TwoTowerNet

__all__ = ["Dropout", "ProjectionTower", "TwoTowerNet", "l2_normalize", "reseed"]
