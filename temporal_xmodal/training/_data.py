"""Batches for skorch without per-item collation and without copying the training data: a
:class:`CrossModalDataset` is full-length tensors and the indices of its rows, and the
iterators gather each batch from them, on the host, from a copy on the device
(:mod:`._placement`) or staged through pinned memory.  Read more in docs/training.md,
"Memory" and "Device"."""

import numpy as np
import torch
from sklearn.utils._param_validation import StrOptions, validate_parameter_constraints

from .._device import map_nest, move, pinned_staging, resolve_device
from ._placement import DeviceCopies
from ._sparse import SparseRows, input_block

PLACEMENTS = ("auto", "device", "staged")


class CrossModalDataset(torch.utils.data.Dataset):
    """Some rows of aligned full-length tensors (no copy of the rows), built by
    :func:`make_dataset`; a fit's training and validation datasets share their tensors.

    Parameters
    ----------
    X : dict of str -> torch.Tensor or SparseRows
        Aligned tensors of n rows: ``image``, ``text`` (float32 or
        :class:`~temporal_xmodal.training.SparseRows`), ``time`` (float64, centred) and
        ``time_features`` (float32).
    y : torch.Tensor of shape (n, C)
        Label indicator (bool or float); batches are float32.
    rows : torch.Tensor of int64 or None, default=None
        The dataset's rows (all when None).
    """

    def __init__(self, X, y, rows=None):
        self.X = X
        self.y = y
        self.rows = rows
        self._copies = DeviceCopies()  # (X, y) on devices, shared with :meth:`subset`s

    def __len__(self):
        return len(self.y) if self.rows is None else len(self.rows)

    def __getitem__(self, i):
        return self.batch(self.indices()[i:i + 1] if isinstance(i, int) else self.indices()[i])

    def __getstate__(self):
        # host arrays (DeviceCopies pickles none of its copies): loads on any machine
        return {**self.__dict__, "X": {k: v.numpy() if torch.is_tensor(v) else v
                                       for k, v in self.X.items()},
                "y": self.y.numpy(), "rows": None if self.rows is None else self.rows.numpy()}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.X = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v
                  for k, v in self.X.items()}
        self.y = torch.from_numpy(self.y)
        self.rows = None if self.rows is None else torch.from_numpy(self.rows)

    def subset(self, rows):
        """A dataset of other ``rows`` of the same tensors (and the same device copies)."""
        other = shared_dataset(self.X, self.y, rows)
        other._copies = self._copies
        return other

    def indices(self):
        return torch.arange(len(self.y)) if self.rows is None else self.rows

    def batch(self, index):
        """``(X_batch, y_batch)`` of the given row indices into the full tensors."""
        X, y = gather((self.X, self.y), torch.as_tensor(index))
        return X, y.to(torch.float32)

    def labels(self, device=None):
        """The label indicator of the dataset's rows (bool), on ``device`` when given."""
        _, y = self.tensors(device)
        rows = self.rows_on(y.device)
        y = (y if rows is None else y.index_select(0, rows)) > 0
        return y if device is None else y.to(device)

    # ------------------------------------------------------------ placement
    def place(self, device, placement="auto"):
        """Copy the full tensors to ``device`` once (:meth:`._placement.DeviceCopies.place`)."""
        return self._copies.place((self.X, self.y), device, placement)

    def tensors(self, device=None):
        """``(X, y)``: the full tensors on ``device`` if placed there, else the host's."""
        return (self.X, self.y) if device is None else self._copies.get(device, (self.X, self.y))

    def rows_on(self, device):
        return None if self.rows is None else self.rows.to(device)

    def release(self):
        """Drop the device copies (shared with :meth:`subset` datasets)."""
        self._copies.clear()


def prefetch_one(batches):
    """Yield the items of ``batches`` one step late (the next batch's copy is issued before the
    current step)."""
    ahead = None
    for batch in batches:
        if ahead is not None:
            yield ahead
        ahead = batch
    if ahead is not None:
        yield ahead


def gather(tensors, rows, pin=False):
    """The rows ``rows`` of every tensor of the nest ``tensors``, gathered where the tensors
    are (into pinned memory with ``pin``); a dict ``rows`` gives each entry its own rows."""
    if isinstance(rows, dict):
        return {key: map_nest(_rows_of(index, pin), tensors[key], (SparseRows,))
                for key, index in rows.items()}
    return map_nest(_rows_of(rows, pin), tensors, (SparseRows,))


def _rows_of(rows, pin):
    if not pin:
        return lambda tensor: tensor.index_select(0, rows)

    def into_pinned(tensor):
        if isinstance(tensor, SparseRows):
            return tensor.gather_rows(rows, pin=True)
        out = torch.empty((len(rows),) + tuple(tensor.shape[1:]), dtype=tensor.dtype,
                          pin_memory=True)
        return torch.index_select(tensor, 0, rows, out=out)
    return into_pinned


def make_dataset(X_image, X_text, labels, time_inputs=None, rows=None):
    """A :class:`CrossModalDataset` of the batch dictionary used by every module and loss.

    Parameters
    ----------
    X_image, X_text : ndarray, scipy sparse matrix or CSRWindow of shape (n, d_*)
        All rows; float32 arrays are shared, others cast to float32 chunk by chunk, a sparse
        block read over X's CSR arrays.
    labels : ndarray of shape (n, C)
        Label indicator (bool or float), all rows.
    time_inputs : dict of str -> ndarray, default=None
        ``"time"`` (float64 centred times) and, for time-conditioned modules,
        ``"time_features"`` (float32), all rows.
    rows : ndarray of int or None, default=None
        The dataset's rows (all when None).

    Returns
    -------
    dataset : CrossModalDataset
    """
    memo = {}  # the image and text windows of one sparse X share its arrays
    X = {"image": input_block(X_image, as_tensor, memo),
         "text": input_block(X_text, as_tensor, memo)}
    X.update({key: torch.as_tensor(value) for key, value in (time_inputs or {}).items()})
    return shared_dataset(X, torch.as_tensor(labels), rows)


def shared_dataset(X, y, rows=None):
    """A :class:`CrossModalDataset` over tensors already built (e.g. for the validation rows)."""
    return CrossModalDataset(X, y, None if rows is None else torch.as_tensor(
        np.asarray(rows, dtype=np.int64)))


def as_tensor(A, rows=None, chunk_rows=65536):
    """float32 tensor of ``A`` (or of its ``rows``): shares ``A``'s memory when it is float32
    and no rows are selected, else filled chunk by chunk (no float64 copy)."""
    A = np.asarray(A)
    if A.dtype == np.float32 and rows is None:
        return torch.from_numpy(A) if A.flags.writeable else torch.as_tensor(A.copy())
    rows = np.arange(len(A)) if rows is None else np.asarray(rows)
    out = np.empty((len(rows),) + A.shape[1:], dtype=np.float32)
    for start in range(0, len(rows), chunk_rows):
        out[start:start + chunk_rows] = A[rows[start:start + chunk_rows]]
    return torch.from_numpy(out)


class DeviceBatches:
    """Base of this package's skorch iterators: batches drawn on the CPU (:meth:`_steps`) and
    delivered on ``device`` (``None``: the host), gathered as ``placement`` says ("auto",
    "device", "staged"; the module's docstring)."""

    _parameter_constraints = {"placement": [StrOptions(set(PLACEMENTS))]}

    def __init__(self, device=None, placement="auto"):
        validate_parameter_constraints(self._parameter_constraints, {"placement": placement},
                                       caller_name=type(self).__name__)
        self.device = device
        self.placement = placement

    def __iter__(self):
        device = resolve_device(self.device)  # the net may have set it after __init__
        steps = self._steps()
        device = None if device is None else torch.device(device)
        if device is None:
            return self._on_host(steps)
        if self.placement == "staged":  # on every device, the CPU included
            return self._staged(device, steps)
        if device.type == "cpu":
            return self._on_host(steps)
        if self.dataset.place(device, self.placement):
            return self._gathered_on(device, steps)
        return self._staged(device, steps)

    def _steps(self):  # pragma: no cover - abstract
        """The epoch's batches as row indices (CPU int64; :func:`gather`'s ``rows``)."""
        raise NotImplementedError

    def _batch(self, rows):  # pragma: no cover - abstract
        """The skorch batch of the gathered rows (a nest of ``dataset.tensors()``'s shape)."""
        raise NotImplementedError

    def _on_host(self, steps):
        tensors = self.dataset.tensors()
        return (self._batch(gather(tensors, rows)) for rows in steps)

    def _gathered_on(self, device, steps):
        """Batches gathered from the dataset's copy on ``device`` (the epoch's rows uploaded in one
        copy)."""
        tensors = self.dataset.tensors(device)
        return (self._batch(gather(tensors, rows)) for rows in upload_indices(steps, device))

    def _staged(self, device, steps):
        """Batches gathered on the host into pinned memory, copied without blocking one batch ahead."""
        tensors, pin = self.dataset.tensors(), pinned_staging(device)
        return prefetch_one(self._batch(move(gather(tensors, rows, pin), device, non_blocking=pin))
                         for rows in steps)


class BatchIterator(DeviceBatches):
    """Iterate over ``(X_batch, y_batch)`` gathered from a :class:`CrossModalDataset`: a
    drop-in for skorch's ``iterator_train`` / ``iterator_valid``.

    Parameters
    ----------
    dataset : CrossModalDataset
    batch_size : int
    shuffle : bool, default=False
        New random order every epoch, drawn from ``generator``.
    generator : torch.Generator or None
    drop_last : bool, default=False
        Drop an incomplete final batch.
    device : str, torch.device or None, default=None
        Where the batches are delivered; ``None`` leaves them on the host.
    placement : {"auto", "device", "staged"}, default="auto"
        Where they are gathered (the module's docstring).
    """

    def __init__(self, dataset, batch_size=128, shuffle=False, generator=None,
                 drop_last=False, device=None, placement="auto"):
        super().__init__(device, placement)
        self.dataset = dataset
        self.n = len(dataset)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.generator = generator
        self.drop_last = drop_last

    def __len__(self):
        full, rest = divmod(self.n, self.batch_size)
        return full + (rest > 0 and not self.drop_last)

    def _steps(self):
        order = (torch.randperm(self.n, generator=self.generator) if self.shuffle
                 else torch.arange(self.n))
        rows = self.dataset.rows
        order = order if rows is None else rows[order]
        return [order[start:start + self.batch_size]
                for start in range(0, len(self) * self.batch_size, self.batch_size)]

    def _batch(self, rows):
        X, y = rows
        return X, y.to(torch.float32)


def upload_indices(steps, device):
    """The index tensors of every step on ``device``, uploaded in one copy."""
    if not steps:
        return []
    flat = []
    map_nest(flat.append, steps)
    pin = device.type == "cuda"
    joined = torch.cat(flat)
    joined = (joined.pin_memory() if pin else joined).to(device, non_blocking=pin)
    parts = iter(joined.split([len(index) for index in flat]))
    return map_nest(lambda index: next(parts), steps)
