"""The training loop shared by every neural estimator: a skorch net behind hooks."""

from ._callbacks import InverseTimeDecay, RetrievalScoring, ScheduledMargin
from ._data import BatchIterator, make_dataset
from ._net import CrossModalNet, embed_batches

__all__ = ["BatchIterator", "CrossModalNet", "InverseTimeDecay", "RetrievalScoring",
           "ScheduledMargin", "embed_batches", "make_dataset"]
