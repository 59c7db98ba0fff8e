"""A sparse feature block on the host (or a device) as CSR tensors, gathered per batch.

A bag-of-words or TF-IDF text block (20,000 terms, ~23 per caption) is kept as its CSR
arrays, never densified: :class:`SparseRows` holds ``indptr``, ``indices`` and ``data`` as
torch tensors, and a batch of rows is gathered vectorised (no Python loop over rows) into
two ``(B, K)`` tensors, each row's stored columns and values padded to ``K``, the block's
most stored values in a row: static shapes, as a compiled step or a CUDA graph needs.
The batch is the dict ``{"index": int64, "value": float32}`` that the towers' first layer
reads (:func:`temporal_xmodal.nn.towers.input_linear`: an ``embedding_bag``, ``x Wᵀ``
without the ``B × d`` dense batch).  Padding points at one extra stored entry, column 0
with value 0, which adds nothing to the product nor to its gradient.
"""

import numpy as np
import torch
from scipy import sparse

__all__ = ["SparseRows", "input_block"]


class SparseRows:
    """A CSR block of n rows as tensors; :meth:`gather_rows` gives a padded batch.

    Read more in the user guide: docs/scaling.md ("Sparse text").

    Parameters
    ----------
    indptr : torch.Tensor of int64 of shape (n + 1,)
    indices : torch.Tensor of int32 or int64 of shape (nnz + 1,)
        Columns of the stored values, then the padding entry (column 0).
    data : torch.Tensor of float32 of shape (nnz + 1,)
        The stored values, then the padding entry (0).
    n_features : int
        Columns of the block.
    width : int
        K, the most stored values of a row (at least 1): the batches' padded width.

    Examples
    --------
    >>> import scipy.sparse as sp, torch
    >>> from temporal_xmodal.training import SparseRows
    >>> rows = SparseRows.from_scipy(sp.csr_matrix([[0, 2.0, 0], [1.0, 0, 3.0]]))
    >>> batch = rows.gather_rows(torch.tensor([1, 0]))
    >>> batch["index"].tolist(), batch["value"].tolist()
    ([[0, 2], [1, 0]], [[1.0, 3.0], [2.0, 0.0]])
    """

    def __init__(self, indptr, indices, data, n_features, width):
        self.indptr, self.indices, self.data = indptr, indices, data
        self.n_features, self.width = int(n_features), int(width)

    @classmethod
    def from_scipy(cls, A, rows=None):
        """The rows ``rows`` (all when None) of a scipy sparse block: the CSR arrays are
        shared where their dtypes allow (int32/int64 columns, float32 values), otherwise
        cast once (float64 values become float32: a copy of the stored values only)."""
        A = sparse.csr_matrix(A) if rows is None else sparse.csr_matrix(A)[np.asarray(rows)]
        if not A.has_canonical_format:
            A = A.copy()
            A.sum_duplicates()  # each column once per row: the padded width is exact
        indptr = A.indptr.astype(np.int64, copy=False)
        counts = np.diff(indptr)
        width = max(1, int(counts.max(initial=0)))
        index_dtype = A.indices.dtype if A.indices.dtype in (np.int32, np.int64) else np.int64
        indices = np.concatenate([A.indices.astype(index_dtype, copy=False),
                                  np.zeros(1, dtype=index_dtype)])
        data = np.concatenate([A.data.astype(np.float32, copy=False),
                               np.zeros(1, dtype=np.float32)])
        return cls(torch.from_numpy(indptr), torch.from_numpy(indices),
                   torch.from_numpy(data), A.shape[1], width)

    # ------------------------------------------------------------ a tensor's protocol
    def __len__(self):
        return self.indptr.shape[0] - 1

    @property
    def shape(self):
        return (len(self), self.n_features)

    @property
    def device(self):
        return self.indptr.device

    def map_tensors(self, fn):
        """The same block with ``fn`` applied to its three tensors (a device copy)."""
        return SparseRows(fn(self.indptr), fn(self.indices), fn(self.data), self.n_features,
                          self.width)

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
        """The padded batch of ``rows`` (int64, on the block's device).

        Vectorised: each row's first stored position and count from ``indptr``, the
        ``(B, K)`` positions ``start + k`` where ``k < count`` and the padding entry
        elsewhere, then one gather of the columns and one of the values.

        Returns
        -------
        batch : dict
            ``{"index": (B, K) int64, "value": (B, K) float32}`` (in pinned memory when
            ``pin``).
        """
        rows = rows.to(self.device)
        start = self.indptr.index_select(0, rows)
        count = self.indptr.index_select(0, rows + 1) - start
        offset = torch.arange(self.width, device=self.device)
        padding = self.data.shape[0] - 1
        position = torch.where(offset < count[:, None], start[:, None] + offset, padding)
        index = self.indices[position].to(torch.int64)
        value = self.data[position]
        if pin:
            index, value = index.pin_memory(), value.pin_memory()
        return {"index": index, "value": value}

    def __getstate__(self):
        return {**self.__dict__, "indptr": self.indptr.cpu().numpy(),
                "indices": self.indices.cpu().numpy(), "data": self.data.cpu().numpy()}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for key in ("indptr", "indices", "data"):
            setattr(self, key, torch.from_numpy(state[key]))


def input_block(A, as_tensor):
    """A modality block as the datasets and the towers take it: :class:`SparseRows` of a
    scipy sparse block, else ``as_tensor(A)`` (float32 tensor)."""
    return SparseRows.from_scipy(A) if sparse.issparse(A) else as_tensor(A)
