"""The training loop shared by every neural estimator: a skorch net, its callbacks, its data."""

from ._callbacks import (CheckpointSelection, InverseTimeDecay, LearningRateDecay,
                         ProgressLog, RetrievalScoring, ScheduledMargin, cannot_rank,
                         kept_epoch)
from ._compiled import CompiledStep
from ._data import BatchIterator, CrossModalDataset, as_tensor, make_dataset, shared_dataset
from ._report import FitReport
from ._net import CrossModalNet, TrainingDivergedError, embed_batches, seeded
from ._run import TrainingInterruptedWarning, TrainingRun, fit_child
from ._sparse import SparseRows, input_block

__all__ = ["BatchIterator", "CheckpointSelection", "CompiledStep", "CrossModalDataset",
           "CrossModalNet", "FitReport", "InverseTimeDecay", "LearningRateDecay", "ProgressLog",
           "RetrievalScoring", "ScheduledMargin", "SparseRows", "TrainingDivergedError",
           "TrainingInterruptedWarning", "TrainingRun", "as_tensor", "cannot_rank",
           "embed_batches", "fit_child", "input_block", "kept_epoch", "make_dataset", "seeded",
           "shared_dataset"]
