"""The estimators: one module or folder per method, and the caption → date prior any of them can be
fused with (undated captions, dated queries).

Every estimator exported here is registered once in ``_registry.py``
(:func:`all_estimators`); ``tests/test_registry.py`` checks that the two lists agree.
"""

from ._caption_prior import CaptionDatePrior, date_prior_scores
from ._cca import CCACrossModal
from ._date_prior import DatePriorRetrieval, query_time_scores
from ._registry import all_estimators
from ._semantic_matching import SemanticMatchingCrossModal
from .binned import BinnedProcrustesEmbedder
from .diachronic import DiachronicEmbedder
from .sam import SAMEmbedder
from .sequential import SequentialCrossModal
from .tempxnet import TempXNetEmbedder

__all__ = [
    "BinnedProcrustesEmbedder",
    "CCACrossModal",
    "CaptionDatePrior",
    "DatePriorRetrieval",
    "DiachronicEmbedder",
    "SAMEmbedder",
    "SemanticMatchingCrossModal",
    "SequentialCrossModal",
    "TempXNetEmbedder",
    "all_estimators",
    "date_prior_scores",
    "query_time_scores",
]
