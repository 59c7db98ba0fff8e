"""Batches for skorch without per-item collation.

Our data is a handful of aligned tensors (image, text, time, labels); a
``torch.utils.data.DataLoader`` would index and re-collate every item.  The
:class:`BatchIterator` slices the tensors by shuffled index batches instead,
which keeps the wrapper overhead small (see ``benchmarks/bench_training.py``).
"""

import numpy as np
import torch
from skorch.dataset import Dataset


def make_dataset(X_image, X_text, time, labels):
    """A skorch ``Dataset`` of the batch dictionary used by every module and loss.

    Parameters
    ----------
    X_image, X_text : ndarray of shape (n, d_*)
    time : ndarray of shape (n,)
    labels : ndarray of shape (n, C)
        Label indicator (float).

    Returns
    -------
    dataset : skorch.dataset.Dataset
        ``X`` is ``{"image", "text", "time"}`` (float32 tensors), ``y`` the
        float32 label indicator.
    """
    X = {
        "image": torch.as_tensor(np.asarray(X_image, dtype=np.float32)),
        "text": torch.as_tensor(np.asarray(X_text, dtype=np.float32)),
        "time": torch.as_tensor(np.asarray(time, dtype=np.float32)),
    }
    return Dataset(X, torch.as_tensor(np.asarray(labels, dtype=np.float32)))


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
