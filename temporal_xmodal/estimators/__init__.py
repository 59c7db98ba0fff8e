"""The estimators: one module per method."""

from ._binned import BinnedProcrustesEmbedder
from ._cca import CCACrossModal
from ._diachronic import DiachronicEmbedder
from ._sam import SAMEmbedder
from ._sequential import SequentialCrossModal
from ._settings import PAPER_SETTINGS, paper_settings
from ._tempxnet import TempXNetEmbedder

__all__ = ["BinnedProcrustesEmbedder", "CCACrossModal", "DiachronicEmbedder", "SAMEmbedder",
           "SequentialCrossModal", "TempXNetEmbedder"]
