"""Batches for skorch without per-item collation.

Our data is a handful of aligned tensors (image, text, time, labels); a
``torch.utils.data.DataLoader`` would index and re-collate every item.  The
:class:`BatchIterator` slices the tensors by shuffled index batches instead,
which keeps the wrapper overhead small (see ``benchmarks/bench_training.py``).
"""

import numpy as np
import torch
from skorch.dataset import Dataset


def make_dataset(X_image, X_text, labels, time_inputs=None, rows=None):
    """A skorch ``Dataset`` of the batch dictionary used by every module and loss.

    Parameters
    ----------
    X_image, X_text : ndarray of shape (n, d_*)
        Cast to float32 (no copy when they already are).
    labels : ndarray of shape (n, C)
        Label indicator (float).
    time_inputs : dict of str -> ndarray, default=None
        Time entries of the batch, kept in their dtype: ``"time"`` (float64
        centred times, for the losses) and, for time-conditioned modules,
        ``"time_features"`` (float32 encodings, for the network); all
        entries already restricted to ``rows``.
    rows : ndarray of int or None, default=None
        Rows of ``X_image`` / ``X_text`` / ``labels`` to keep (all when None).

    Returns
    -------
    dataset : skorch.dataset.Dataset
        ``X`` is ``{"image", "text", **time_inputs}`` (tensors), ``y`` the
        float32 label indicator.
    """
    X = {"image": as_tensor(X_image, rows), "text": as_tensor(X_text, rows)}
    X.update({key: torch.as_tensor(value) for key, value in (time_inputs or {}).items()})
    return Dataset(X, as_tensor(labels, rows))


def as_tensor(A, rows=None, chunk_rows=65536):
    """float32 tensor of ``A`` (or of its ``rows``), never holding a float64 copy.

    Shares memory with ``A`` when it is float32 already and no rows are
    selected; otherwise the float32 copy is filled chunk by chunk, so the
    peak memory is the float32 result plus one chunk.
    """
    A = np.asarray(A)
    if A.dtype == np.float32 and rows is None:
        return torch.from_numpy(A) if A.flags.writeable else torch.as_tensor(A.copy())
    rows = np.arange(len(A)) if rows is None else np.asarray(rows)
    out = np.empty((len(rows),) + A.shape[1:], dtype=np.float32)
    for start in range(0, len(rows), chunk_rows):
        out[start:start + chunk_rows] = A[rows[start:start + chunk_rows]]
    return torch.from_numpy(out)


class BatchIterator:
    """Iterate over ``(X_batch, y_batch)`` slices of a tensor :func:`make_dataset`.

    Drop-in for skorch's ``iterator_train`` / ``iterator_valid``.

    Parameters
    ----------
    dataset : skorch.dataset.Dataset
        Built by :func:`make_dataset`.
    batch_size : int
    shuffle : bool, default=False
        New random order every epoch (drawn from ``generator``).
    generator : torch.Generator or None
        Source of the shuffling, for reproducible training.
    drop_last : bool, default=False
        Drop an incomplete final batch.
    """

    def __init__(self, dataset, batch_size=128, shuffle=False, generator=None,
                 drop_last=False, **unused):
        self.X, self.y = dataset.X, dataset.y
        self.n = len(dataset)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.generator = generator
        self.drop_last = drop_last

    def __len__(self):
        full, rest = divmod(self.n, self.batch_size)
        return full + (rest > 0 and not self.drop_last)

    def __iter__(self):
        order = (torch.randperm(self.n, generator=self.generator) if self.shuffle
                 else torch.arange(self.n))
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            rows = order[start:start + self.batch_size]
            yield {key: value[rows] for key, value in self.X.items()}, self.y[rows]
