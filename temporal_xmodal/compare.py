"""Former home of the main job; kept so that ``temporal_xmodal.compare`` imports keep working.

The comparison now lives in :mod:`temporal_xmodal.comparison` and the
evaluation of one estimator in :mod:`temporal_xmodal.evaluation.report`.
"""

from .comparison import *  # noqa: F401,F403
from .comparison import __all__  # noqa: F401
