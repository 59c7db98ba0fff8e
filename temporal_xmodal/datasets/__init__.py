"""Data sets: the synthetic temporal cross-modal generator and benchmark loaders."""

from ._synthetic import make_temporal_crossmodal
from ._wiki import load_wiki

__all__ = ["load_wiki", "make_temporal_crossmodal"]
