"""Losses shared by the neural estimators.

* :mod:`.triplet` — bidirectional triplet hinge over in-batch negatives (masks).

A method's own loss lives in its folder (e.g.
:class:`~temporal_xmodal.estimators.sam.SAMLoss`).
"""

from .triplet import bidirectional_triplet_loss, negative_mask, shared_label_mask

__all__ = ["bidirectional_triplet_loss", "negative_mask", "shared_label_mask"]
