"""DCM-Binned: one static model per time bin, aligned by Procrustes.

The estimator (:mod:`._estimator`), the per-bin fitting (:mod:`._fit`) and the
alignment (:mod:`._alignment`); the public name is exported by
:mod:`temporal_xmodal.estimators`.
"""

from ._estimator import BinnedProcrustesEmbedder, default_base_estimator

__all__ = ["BinnedProcrustesEmbedder", "default_base_estimator"]
