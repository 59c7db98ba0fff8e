"""The base class every estimator of the library inherits, and reading rows through it.

:class:`CrossModalEmbedder` owns, once for all estimators, reading
``X = [image | text | time]`` (through :mod:`temporal_xmodal._layout` and
:mod:`temporal_xmodal.time`), input validation, ``transform`` /
``transform_image`` / ``transform_text``, ``score``, ``get_feature_names_out``
and ``set_output``.  A subclass declares its
:attr:`~CrossModalEmbedder.time_role` and implements two hooks:

* ``_fit(X_image, X_text, time, labels)``: learn; set fitted attributes
  (``time`` is float64 on the time axis);
* ``_embed(modality, X, time)``: map one modality to the common space
  (un-normalised; the base L2-normalises); ``time`` is float64 on the axis,
  or None when a static model is asked without one.

:func:`embed_with_time` and :func:`layout_blocks` read rows through a fitted
estimator (or a Pipeline ending in one) for the scorers and the evaluation
protocols.
"""

from ._embedder import (
    LAYOUT_CONSTRAINTS,
    LAYOUT_PARAMETERS_DOC,
    CrossModalEmbedder,
    l2_normalize,
)
from ._rows import embed_with_time, layout_blocks, through_pipeline

__all__ = ["LAYOUT_CONSTRAINTS", "LAYOUT_PARAMETERS_DOC", "CrossModalEmbedder",
           "embed_with_time", "l2_normalize", "layout_blocks", "through_pipeline"]
