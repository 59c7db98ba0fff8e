"""The estimators: one module per method."""

from ._cca import CCACrossModal

__all__ = ["CCACrossModal"]
