"""Data sets: the synthetic temporal cross-modal generator and benchmark loaders."""

from ._synthetic import make_temporal_crossmodal

__all__ = ["make_temporal_crossmodal"]
