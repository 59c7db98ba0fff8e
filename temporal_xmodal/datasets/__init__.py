"""Data sets: the synthetic generator, its named and CLIP-like worlds, the benchmark loaders.

Read more in docs/datasets.md.
"""

from ..time import fractional_year
from ._clip_like import make_clip_like
from ._synthetic import make_temporal_crossmodal
from ._ticrc import load_ticrc, ticrc_training_pairs
from ._wiki import load_wiki
from ._worlds import TEMPORAL_WORLDS

__all__ = ["TEMPORAL_WORLDS", "fractional_year", "load_ticrc", "load_wiki", "make_clip_like",
           "make_temporal_crossmodal", "ticrc_training_pairs"]
