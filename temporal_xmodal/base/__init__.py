"""The base class every estimator of the library inherits, and reading rows through it.

:class:`CrossModalEmbedder` reads and validates ``X = [image | text | time]`` (through
:mod:`temporal_xmodal._input`) for all estimators.  A subclass declares its
:attr:`~CrossModalEmbedder.time_role` and implements two hooks:

* ``_fit(X_image, X_text, time, labels)``: learn (``time``: float64 on the time axis);
* ``_embed(modality, X, time)``: one modality in the common space, un-normalised
  (``time``: float64 on the axis, or None).

Read more in docs/adding_an_estimator.md.
"""

from ._embedder import (
    LAYOUT_CONSTRAINTS,
    CrossModalEmbedder,
    l2_normalize,
)
from ._rows import embed_with_time, layout_blocks, through_pipeline

__all__ = ["LAYOUT_CONSTRAINTS", "CrossModalEmbedder",
           "embed_with_time", "l2_normalize", "layout_blocks", "through_pipeline"]
