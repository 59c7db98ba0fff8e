"""Batches for skorch without per-item collation and without copying the training data.

Our data is a handful of aligned tensors (image, text, time, labels); a
``torch.utils.data.DataLoader`` would index and re-collate every item.  A
:class:`CrossModalDataset` keeps the full-length tensors (shared with the
user's float32 arrays when possible) plus the indices of its rows, so the
training/validation split costs two index vectors instead of a copy of the
data; the :class:`BatchIterator` gathers each batch from them (see
``benchmarks/bench_training.py`` and ``benchmarks/bench_scale_fit.py``).

Where the batches are gathered (``placement``)
----------------------------------------------
On the CPU, from the host tensors.  On an accelerator, a training step is a few kernels, so
a host-side gather and copy per batch would cost more than the step.  With
``placement="auto"`` the tensors of a dataset (and of the datasets sharing them, e.g. the
validation split) move to the device once, at the first batch, when the device stays at most
half full with them, every process's memory counted (:mod:`._placement`), and every batch is
gathered there; otherwise, and always with ``placement="staged"``, each batch is *staged*:
gathered on the host into pinned memory and copied asynchronously, one batch ahead.
``"staged"`` stages on the CPU too (into pinned memory where the platform has it), so that a
CPU test runs the path a GPU fit takes when its data does not fit.  Either way the batch
order comes from the same CPU generator, so the batches (and the fit) do not depend on where
the data sits.  The device copy is dropped when the fit ends (:meth:`CrossModalDataset.release`)
and never pickled.
"""

import numpy as np
import torch
from sklearn.utils._param_validation import StrOptions, validate_parameter_constraints

from .._device import map_nest, move, pinned_staging, resolve_device
from ._placement import DeviceCopies
from ._sparse import SparseRows, input_block

PLACEMENTS = ("auto", "device", "staged")


class CrossModalDataset(torch.utils.data.Dataset):
    """Some rows of aligned full-length tensors (no copy of the rows).

    Built by :func:`make_dataset`; the training and validation datasets of a fit
    share their tensors and differ by their row indices.

    Read more in the user guide: docs/training.md ("Memory").

    Parameters
    ----------
    X : dict of str -> torch.Tensor or SparseRows
        Aligned tensors of n rows: ``image``, ``text`` (float32, or a sparse block's
        :class:`~temporal_xmodal.training.SparseRows`: its batches are padded sparse
        rows), the time entries (``time``: float64 centred times; ``time_features``:
        float32).
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
        """Row indices into the full tensors (int64 tensor)."""
        return torch.arange(len(self.y)) if self.rows is None else self.rows

    def batch(self, index):
        """``(X_batch, y_batch)`` of the given row indices into the full tensors."""
        X, y = gather((self.X, self.y), torch.as_tensor(index))
        return X, y.to(torch.float32)

    def labels(self, device=None):
        """The label indicator of the dataset's rows (bool, a copy of n × C bytes).

        On ``device`` when given (gathered there when the data was placed there).
        """
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
        """The row indices on ``device`` (None when the dataset has all rows)."""
        return None if self.rows is None else self.rows.to(device)

    def release(self):
        """Drop the device copies (shared with :meth:`subset` datasets)."""
        self._copies.clear()


def prefetch_one(batches):
    """Yield the items of ``batches`` one step late, so that the next batch's asynchronous
    copy is issued before the step that uses the current one."""
    ahead = None
    for batch in batches:
        if ahead is not None:
            yield ahead
        ahead = batch
    if ahead is not None:
        yield ahead


def gather(tensors, rows, pin=False):
    """The rows ``rows`` of every tensor of a nest, gathered where the tensors are: the one
    gather under every iterator of the package (host, device copy and staged batches alike).

    Parameters
    ----------
    tensors : dict, tuple, list or torch.Tensor
        A nest of tensors of aligned rows (:func:`temporal_xmodal._device.map_nest`).
    rows : torch.Tensor of int64 or dict
        The rows of every tensor of the nest, on the tensors' device; a dict gives each
        entry of ``tensors`` its own rows (``rows[key]`` of ``tensors[key]``: SCML's pools).
    pin : bool, default=False
        Gather host tensors straight into pinned memory (torch's caching host allocator
        reuses the block once its copy to the device has run).

    Returns
    -------
    batch
        The nest of ``tensors`` (the keys of ``rows`` when it is a dict), of the rows.
    """
    if isinstance(rows, dict):
        return {key: map_nest(_rows_of(index, pin), tensors[key], (SparseRows,))
                for key, index in rows.items()}
    return map_nest(_rows_of(rows, pin), tensors, (SparseRows,))


def _rows_of(rows, pin):
    """The function that gathers ``rows`` of a tensor (into pinned memory when ``pin``); a
    sparse block's rows come padded (:meth:`SparseRows.gather_rows`)."""
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
        All rows; float32 arrays are shared (no copy), others are cast to
        float32 chunk by chunk (:func:`as_tensor`); a sparse block (the window of a
        sparse X, :class:`~temporal_xmodal._sparse_input.CSRWindow`) stays where it is
        (:class:`~temporal_xmodal.training.SparseRows` over X's CSR arrays, shared by both
        blocks; float32 values), its batches gathered from it.
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


class DeviceBatches:
    """Base of this package's skorch iterators: batches delivered on ``device``.

    :class:`~temporal_xmodal.training.CrossModalNet` sets ``device`` to its own.  An epoch's
    batches are drawn on the CPU (:meth:`_steps`, the same generator whatever the device),
    then gathered by the one :func:`gather`: on the host (``device`` None or the CPU), from
    the dataset's copy on the device when it is there or fits (:meth:`_gathered_on`; the
    dataset's ``place``), or on the host into pinned memory and copied one batch ahead
    (:meth:`_staged`).  A subclass says what its steps are (:meth:`_steps`) and how the
    gathered rows make a skorch batch (:meth:`_batch`); its dataset has ``tensors(device)``
    and ``place(device, placement)``.

    Parameters
    ----------
    device : str, torch.device or None
        Where the batches are delivered; ``None`` leaves them on the host, ``"auto"`` is
        CUDA when torch finds a GPU.  A CUDA device on a machine without a GPU is refused
        when the batches are drawn (:func:`temporal_xmodal._device.resolve_device`).
    placement : {"auto", "device", "staged"}
        Where they are gathered (module docstring); ``"staged"`` stages them on any
        device, the CPU included.
    """

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
        """Batches gathered from the host tensors."""
        tensors = self.dataset.tensors()
        return (self._batch(gather(tensors, rows)) for rows in steps)

    def _gathered_on(self, device, steps):
        """Batches gathered from the dataset's copy on ``device`` (the epoch's rows are
        uploaded in one copy)."""
        tensors = self.dataset.tensors(device)
        return (self._batch(gather(tensors, rows)) for rows in upload_indices(steps, device))

    def _staged(self, device, steps):
        """Batches gathered on the host (into pinned memory: :func:`~temporal_xmodal._device.pinned_staging`)
        and copied without blocking, one batch ahead of the step that uses them."""
        tensors, pin = self.dataset.tensors(), pinned_staging(device)
        return prefetch_one(self._batch(move(gather(tensors, rows, pin), device, non_blocking=pin))
                         for rows in steps)


class BatchIterator(DeviceBatches):
    """Iterate over ``(X_batch, y_batch)`` gathered from a :class:`CrossModalDataset`.

    Drop-in for skorch's ``iterator_train`` / ``iterator_valid``: each batch is
    gathered from the dataset's tensors by row index, with no per-item
    collation.

    Read more in the user guide: docs/training.md.

    Parameters
    ----------
    dataset : CrossModalDataset
        Built by :func:`make_dataset`.
    batch_size : int
    shuffle : bool, default=False
        New random order every epoch (drawn from ``generator``, on the CPU).
    generator : torch.Generator or None
        Source of the shuffling, for reproducible training.
    drop_last : bool, default=False
        Drop an incomplete final batch.
    device : str, torch.device or None, default=None
        Where the batches are delivered (:class:`~temporal_xmodal.training.CrossModalNet`
        sets its own); ``None`` leaves them on the host.  A CUDA device on a machine
        without a GPU raises a ``ValueError`` when the batches are drawn.
    placement : {"auto", "device", "staged"}, default="auto"
        Where they are gathered (module docstring).

    Any other keyword (a misspelled ``iterator_train__<option>`` of a net) raises a
    ``TypeError`` naming it.

    Examples
    --------
    >>> import numpy as np
    >>> from temporal_xmodal.training import BatchIterator, make_dataset
    >>> dataset = make_dataset(np.zeros((5, 3)), np.zeros((5, 2)), np.eye(2)[[0, 1, 0, 1, 0]])
    >>> [len(y) for X, y in BatchIterator(dataset, batch_size=2)]
    [2, 2, 1]
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
        """Each batch's row indices into the full tensors (views of the epoch's order)."""
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
    """The index tensors of every step (tensors, or dicts of them) on ``device``, uploaded
    in one copy (non-blocking, from pinned memory, to a CUDA device)."""
    if not steps:
        return []
    flat = []
    map_nest(flat.append, steps)
    pin = device.type == "cuda"
    joined = torch.cat(flat)
    joined = (joined.pin_memory() if pin else joined).to(device, non_blocking=pin)
    parts = iter(joined.split([len(index) for index in flat]))
    return map_nest(lambda index: next(parts), steps)
