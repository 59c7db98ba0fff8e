"""Sequential Cross-Modal Learning (SCML): the estimator, its stages and its inference."""

from ._estimator import SequentialCrossModal

__all__ = ["SequentialCrossModal"]
