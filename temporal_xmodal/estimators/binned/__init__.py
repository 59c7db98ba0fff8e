"""DCM-Binned: one static model per time bin, aligned by Procrustes."""

from ._estimator import BinnedProcrustesEmbedder, default_base_estimator

__all__ = ["BinnedProcrustesEmbedder", "default_base_estimator"]
