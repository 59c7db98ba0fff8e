"""Data sets: the synthetic temporal cross-modal generator and benchmark loaders.

Read more in the user guide: docs/datasets.md.
"""

from ..time import fractional_year
from ._synthetic import make_temporal_crossmodal
from ._ticrc import load_ticrc, ticrc_training_pairs
from ._wiki import load_wiki

__all__ = ["fractional_year", "load_ticrc", "load_wiki", "make_temporal_crossmodal",
           "ticrc_training_pairs"]
