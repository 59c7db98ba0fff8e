"""A sparse feature block as tensors over X's own CSR arrays, gathered per batch into
``(B, K)`` padded rows (a dense window's into a dense batch).  Read more in
docs/scaling.md, "Sparse text"."""

import warnings
import weakref

import numpy as np
import torch
from scipy import sparse

from .._sparse_input import CSRWindow

__all__ = ["SparseRows", "input_block"]


class SparseRows:
    """A column window of a CSR X of n rows as tensors over X's arrays (shared, not copied);
    :meth:`gather_rows` gives a batch.

    Parameters
    ----------
    start, count : torch.Tensor of int64 of shape (n,)
        Each row's first position in ``indices`` / ``data`` within the window, and its
        number of stored values there.
    indices : torch.Tensor of int32 or int64 of shape (nnz,)
        X's column indices.
    data : torch.Tensor of float32 of shape (nnz,)
        X's stored values.
    n_features : int
        Columns of the window.
    width : int
        K, the most stored values of a row in the window: the batches' padded width.
    lo : int, default=0
        X's column of the window's first column.
    dense : bool, default=False
        Batches as dense ``(B, n_features)`` tensors rather than padded sparse rows.

    Examples
    --------
    >>> import scipy.sparse as sp, torch
    >>> from temporal_xmodal.training import SparseRows
    >>> rows = SparseRows.from_scipy(sp.csr_matrix([[0, 2.0, 0], [1.0, 0, 3.0]]))
    >>> batch = rows.gather_rows(torch.tensor([1, 0]))
    >>> batch["index"].tolist(), batch["value"].tolist()
    ([[0, 2], [1, 0]], [[1.0, 3.0], [2.0, 0.0]])
    """

    def __init__(self, start, count, indices, data, n_features, width, lo=0, dense=False,
                 arrays=None):
        self.start, self.count, self.indices, self.data = start, count, indices, data
        self.n_features, self.width = int(n_features), int(width)
        self.lo, self.dense = int(lo), bool(dense)
        # X's host arrays behind ``indices`` / ``data``: one pickled copy for every block
        # of one X (pickle keeps each object once)
        self._arrays = arrays

    @classmethod
    def from_window(cls, window, dense=None, memo=None):
        """The rows of a :class:`~temporal_xmodal._sparse_input.CSRWindow`, over X's arrays (cast
        to float32 once per X, shared by its blocks through ``memo``).  ``dense`` (default:
        whether the window stores at least half its entries) makes its batches dense tensors."""
        start, stop = window.bounds()
        (indices, data), tensors = _shared_arrays(window.X, memo)
        count = stop - start
        return cls(torch.from_numpy(start), torch.from_numpy(count), *tensors,
                   window.shape[1],
                   max(1, window.width), lo=window.lo,
                   dense=window.is_dense if dense is None else dense,
                   arrays=(indices, data))

    @classmethod
    def from_scipy(cls, A, rows=None, dense=False):
        """The rows ``rows`` (all when None) of a scipy sparse block, over its arrays."""
        window = CSRWindow.of(A)
        return cls.from_window(window if rows is None else window.take(rows), dense=dense)

    # ------------------------------------------------------------ a tensor's protocol
    def __len__(self):
        return self.start.shape[0]

    @property
    def shape(self):
        return (len(self), self.n_features)

    @property
    def device(self):
        return self.start.device

    def map_tensors(self, fn):
        """The same block with ``fn`` applied to its four tensors (a device copy)."""
        return SparseRows(fn(self.start), fn(self.count), fn(self.indices), fn(self.data),
                          self.n_features, self.width, self.lo, self.dense)

    def to(self, device, non_blocking=False):
        return self.map_tensors(lambda t: t.to(device, non_blocking=non_blocking))

    def index_select(self, dim, rows):
        """:meth:`gather_rows` (rows only: ``dim`` must be 0)."""
        if dim != 0:
            raise ValueError("SparseRows gathers rows only (dim=0).")
        return self.gather_rows(rows)

    def __getitem__(self, index):
        """Rows of a slice or an index tensor, as :meth:`gather_rows` gives them."""
        if isinstance(index, slice):
            index = torch.arange(len(self), device=self.device)[index]
        return self.gather_rows(torch.as_tensor(index, device=self.device))

    def gather_rows(self, rows, pin=False):
        """The batch of ``rows`` (int64, on the block's device): ``{"index": (B, K) int64,
        "value": (B, K) float32}`` (positions past a row's count masked to 0), or a dense
        window's ``(B, n_features)`` float32 tensor (pinned with ``pin``)."""
        rows = rows.to(self.device)
        start = self.start.index_select(0, rows)
        count = self.count.index_select(0, rows)
        offset = torch.arange(self.width, device=self.device)
        inside = offset < count[:, None]
        # past a row's count: another row's entry (or X's last), read and masked below
        position = (start[:, None] + offset).clamp_(max=self.data.shape[0] - 1)
        index = self.indices[position].to(torch.int64)
        if self.lo:
            index.sub_(self.lo)
        index.clamp_(0, self.n_features - 1)  # masked entries: a column of the window
        value = torch.where(inside, self.data[position], 0.0)
        if self.dense:
            out = torch.zeros((len(rows), self.n_features), dtype=value.dtype,
                              device=self.device, pin_memory=pin)
            return out.scatter_add_(1, index, value)
        if pin:
            index, value = index.pin_memory(), value.pin_memory()
        return {"index": index, "value": value}

    def __getstate__(self):
        state = {**self.__dict__, "start": self.start.cpu().numpy(),
                 "count": self.count.cpu().numpy()}
        if self._arrays is not None and self.indices.device.type == "cpu":
            state["indices"], state["data"] = self._arrays  # X's: pickled once per X
        else:
            state["indices"] = self.indices.cpu().numpy()
            state["data"] = self.data.cpu().numpy()
        state["_arrays"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._arrays = (state["indices"], state["data"])
        for key in ("start", "count"):
            setattr(self, key, torch.from_numpy(state[key]))
        self.indices, self.data = (_unpickled_tensor(a) for a in self._arrays)


def _shared_arrays(X, memo=None):
    """X's ``indices`` and float32 ``data`` and the tensors over them, the same for every block
    of one X and ``memo``."""
    key = id(X)
    if memo is not None and key in memo and memo[key][0] is X:
        return memo[key][1]
    indices = X.indices
    if indices.dtype not in (np.int32, np.int64):
        indices = indices.astype(np.int64)
    data = X.data.astype(np.float32, copy=False)
    if data.size == 0:  # an empty X: one position to read, masked
        indices, data = np.zeros(1, dtype=indices.dtype), np.zeros(1, dtype=np.float32)
    result = (indices, data), (_tensor(indices), _tensor(data))
    if memo is not None:
        memo[key] = (X, result)
    return result


#: The tensors over unpickled arrays, by the array's identity, while a block holds them.
_UNPICKLED = weakref.WeakValueDictionary()


def _unpickled_tensor(array):
    """The one tensor over an unpickled array of X (the blocks of one X share it)."""
    tensor = _UNPICKLED.get(id(array))
    if tensor is None:  # a tensor holds its array: an id is not reused while it lives
        tensor = _UNPICKLED[id(array)] = _tensor(array)
    return tensor


def _tensor(array):
    """``torch.from_numpy`` of X's array, read-only ones included (never written)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not writable.*", category=UserWarning)
        return torch.from_numpy(array)


def input_block(A, as_tensor, memo=None):
    """A modality block as the datasets and the towers take it: :class:`SparseRows` of a sparse
    block (a :class:`~temporal_xmodal._sparse_input.CSRWindow` or a scipy sparse matrix), else
    ``as_tensor(A)``; ``memo`` is shared by the blocks of one X."""
    if isinstance(A, CSRWindow):
        return SparseRows.from_window(A, memo=memo)
    if sparse.issparse(A):
        return SparseRows.from_window(CSRWindow.of(A), memo=memo)
    return as_tensor(A)
