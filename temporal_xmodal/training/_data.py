"""Batches for skorch without per-item collation and without copying the training data.

Our data is a handful of aligned tensors (image, text, time, labels); a
``torch.utils.data.DataLoader`` would index and re-collate every item.  A
:class:`CrossModalDataset` keeps the full-length tensors (shared with the
user's float32 arrays when possible) plus the indices of its rows, so the
training/validation split costs two index vectors instead of a copy of the
data; the :class:`BatchIterator` gathers each batch from them (see
``benchmarks/bench_training.py`` and ``benchmarks/bench_scale_fit.py``).
"""

import numpy as np
import torch


class CrossModalDataset(torch.utils.data.Dataset):
    """Some rows of aligned full-length tensors (no copy of the rows).

    Parameters
    ----------
    X : dict of str -> torch.Tensor
        Aligned tensors of n rows: ``image``, ``text`` (float32), the time
        entries (``time``: float64 centred times; ``time_features``: float32).
    y : torch.Tensor of shape (n, C)
        Label indicator (bool or float); batches are float32.
    rows : torch.Tensor of int64 or None, default=None
        The dataset's rows (all when None).
    """

    def __init__(self, X, y, rows=None):
        self.X = X
        self.y = y
        self.rows = rows

    def __len__(self):
        return len(self.y) if self.rows is None else len(self.rows)

    def __getitem__(self, i):
        return self.batch(self.indices()[i:i + 1] if isinstance(i, int) else self.indices()[i])

    def indices(self):
        """Row indices into the full tensors (int64 tensor)."""
        return torch.arange(len(self.y)) if self.rows is None else self.rows

    def batch(self, index):
        """``(X_batch, y_batch)`` of the given row indices into the full tensors."""
        return ({key: value[index] for key, value in self.X.items()},
                self.y[index].to(torch.float32))

    def labels(self):
        """The label indicator of the dataset's rows (bool, a copy of n × C bytes)."""
        y = self.y if self.rows is None else self.y[self.rows]
        return y > 0


def make_dataset(X_image, X_text, labels, time_inputs=None, rows=None):
    """A :class:`CrossModalDataset` of the batch dictionary used by every module and loss.

    Parameters
    ----------
    X_image, X_text : ndarray of shape (n, d_*)
        All rows; float32 arrays are shared (no copy), others are cast to
        float32 chunk by chunk (:func:`as_tensor`).
    labels : ndarray of shape (n, C)
        Label indicator (bool or float), all rows.
    time_inputs : dict of str -> ndarray, default=None
        Time entries of the batch for all rows, kept in their dtype: ``"time"``
        (float64 centred times, for the losses) and, for time-conditioned
        modules, ``"time_features"`` (float32 encodings, for the network).
    rows : ndarray of int or None, default=None
        The dataset's rows (all when None); nothing is copied.

    Returns
    -------
    dataset : CrossModalDataset
        Batches are ``({"image", "text", **time_inputs}, y)`` with ``y`` the
        float32 label indicator.
    """
    X = {"image": as_tensor(X_image), "text": as_tensor(X_text)}
    X.update({key: torch.as_tensor(value) for key, value in (time_inputs or {}).items()})
    return shared_dataset(X, torch.as_tensor(labels), rows)


def shared_dataset(X, y, rows=None):
    """A :class:`CrossModalDataset` over tensors already built (e.g. for the validation rows)."""
    return CrossModalDataset(X, y, None if rows is None else torch.as_tensor(
        np.asarray(rows, dtype=np.int64)))


def as_tensor(A, rows=None, chunk_rows=65536):
    """float32 tensor of ``A`` (or of its ``rows``), never holding a float64 copy.

    Shares memory with ``A`` when it is float32 already and no rows are
    selected (strided views included); otherwise the float32 copy is filled
    chunk by chunk, so the peak memory is the float32 result plus one chunk.
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
    """Iterate over ``(X_batch, y_batch)`` gathered from a :class:`CrossModalDataset`.

    Drop-in for skorch's ``iterator_train`` / ``iterator_valid``.

    Parameters
    ----------
    dataset : CrossModalDataset
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
        self.dataset = dataset
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
        rows = self.dataset.rows
        if rows is not None:
            order = rows[order]
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            yield self.dataset.batch(order[start:start + self.batch_size])
