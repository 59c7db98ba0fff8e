"""Data sets: the synthetic temporal cross-modal generator and benchmark loaders."""

from ._synthetic import make_temporal_crossmodal
from ._ticrc import fractional_year, load_ticrc, ticrc_training_pairs
from ._wiki import load_wiki

__all__ = ["fractional_year", "load_ticrc", "load_wiki", "make_temporal_crossmodal",
           "ticrc_training_pairs"]
