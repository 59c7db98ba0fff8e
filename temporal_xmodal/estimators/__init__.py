"""The estimators: one module per method."""

from ._cca import CCACrossModal
from ._sam import SAMEmbedder
from ._tempxnet import TempXNetEmbedder

__all__ = ["CCACrossModal", "SAMEmbedder", "TempXNetEmbedder"]
