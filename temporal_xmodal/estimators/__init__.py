"""The estimators: one module per method, and the caption → date prior any of them can be
fused with (undated captions, dated queries)."""

from .binned import BinnedProcrustesEmbedder
from ._caption_prior import CaptionDatePrior, date_prior_scores
from ._cca import CCACrossModal
from ._date_prior import DatePriorRetrieval, query_time_scores
from ._diachronic import DiachronicEmbedder
from ._sam import SAMEmbedder
from .sequential import SequentialCrossModal
from ._tempxnet import TempXNetEmbedder

__all__ = ["BinnedProcrustesEmbedder", "CCACrossModal", "CaptionDatePrior", "DatePriorRetrieval",
           "DiachronicEmbedder", "SAMEmbedder", "SequentialCrossModal", "TempXNetEmbedder",
           "date_prior_scores", "query_time_scores"]
