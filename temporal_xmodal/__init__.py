"""temporal_xmodal: scikit-learn estimators for cross-modal embeddings over time.

``X = [image features | text features | time]``; see :mod:`temporal_xmodal.base`.
"""

from ._layout import stack_modalities
from ._validation import TimeRangeWarning
from .base import CrossModalEmbedder
from .estimators import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    SequentialCrossModal,
    TempXNetEmbedder,
)

__version__ = "0.1.0"

__all__ = [
    "BinnedProcrustesEmbedder",
    "CCACrossModal",
    "CrossModalEmbedder",
    "DiachronicEmbedder",
    "SAMEmbedder",
    "SequentialCrossModal",
    "TempXNetEmbedder",
    "TimeRangeWarning",
    "stack_modalities",
]
