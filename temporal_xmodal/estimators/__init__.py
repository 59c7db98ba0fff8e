"""The estimators: one module per method."""

from ._cca import CCACrossModal
from ._sam import SAMEmbedder

__all__ = ["CCACrossModal", "SAMEmbedder"]
