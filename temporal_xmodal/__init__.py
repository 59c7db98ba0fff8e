"""temporal_xmodal: scikit-learn estimators for cross-modal embeddings over time.

``X = [image features | text features | time]``: the layout is
:mod:`temporal_xmodal._layout`'s, time (dates, units, durations, encodings) is
:mod:`temporal_xmodal.time`'s, and :mod:`temporal_xmodal.base` reads X through
both for every estimator.

Read more in the user guide: docs/index.md.
"""

from ._layout import LayoutWarning
from ._stacking import make_crossmodal_transformer, stack_modalities
from ._time_column import TimeColumnWarning
from ._warnings import StillImprovingWarning
from .base import CrossModalEmbedder
from .estimators import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    SequentialCrossModal,
    TempXNetEmbedder,
)
from .estimators._settings import paper_settings
from .time import TimeRangeWarning, TimeUnitWarning

__version__ = "0.1.0"

#: The registered estimators (estimators/_registry.py) are exported by name;
#: tests/test_registry.py checks that this list and the registry agree.
__all__ = [
    "BinnedProcrustesEmbedder",
    "CCACrossModal",
    "CrossModalEmbedder",
    "DiachronicEmbedder",
    "LayoutWarning",
    "SAMEmbedder",
    "SequentialCrossModal",
    "StillImprovingWarning",
    "TempXNetEmbedder",
    "TimeColumnWarning",
    "TimeRangeWarning",
    "TimeUnitWarning",
    "make_crossmodal_transformer",
    "paper_settings",
    "stack_modalities",
]
