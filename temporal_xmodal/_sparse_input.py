"""Scipy sparse X at the public boundary: read in place as column windows of one CSR
(:class:`CSRWindow`), refused by name, or made whole where a consumer needs a block.

Read more in docs/scaling.md ("Sparse text").
"""

from functools import cached_property

import numpy as np
from scipy import sparse

_NO_COLUMNS = ("X has 0 feature(s) (shape=({n}, 0)) while a minimum of 2 is required: the "
               "layout is [image | text | time].")

#: Bytes of temporaries a chunked reading of a window holds at once (rows densified, the
#: positions of the rows' stored values, a chunk of the stored values).
CHUNK_BYTES = 32 * 2 ** 20
#: Rows of one step of the rows' bound search (a few int64 arrays of this length).
_SEARCH_ROWS = 2 ** 18


class CSRWindow:
    """Columns ``[lo, hi)`` of some rows of one CSR matrix, read in place (nothing stored
    copied).

    X's column indices being sorted in each row, a row's values in the window are one run
    of X's ``indices`` / ``data`` (:meth:`bounds`, found by a binary search per row on first
    use).  Reading the values (``window[rows]``, :meth:`row_chunks`, :meth:`stored_chunks`,
    :meth:`toarray`, :meth:`tocsr`) copies what it returns only.

    Parameters
    ----------
    X : scipy.sparse CSR matrix or array
        With sorted column indices in each row (:meth:`of` makes sure of it).
    lo, hi : int
        The columns of X the window holds (``hi`` None: to the last).
    rows : ndarray of int or None, default=None
        The rows of X the window holds, in this order (all when None).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from temporal_xmodal._sparse_input import CSRWindow
    >>> X = sp.csr_matrix(np.array([[1.0, 0, 2, 3], [0, 4, 0, 5]]))
    >>> text = CSRWindow.of(X)[:, 1:3]
    >>> text.shape, text.nnz, text.toarray().tolist()
    ((2, 2), 2, [[0.0, 2.0], [4.0, 0.0]])
    """

    ndim = 2
    format = "csr-window"

    def __init__(self, X, lo=0, hi=None, rows=None):
        self.X = X
        self.lo = int(lo)
        self.hi = int(X.shape[1] if hi is None else hi)
        self.rows = None if rows is None else np.asarray(rows, dtype=np.intp)

    @classmethod
    def of(cls, A):
        """A window of every column of the scipy sparse ``A`` (CSR as given; other formats,
        or unsorted indices, in a copy)."""
        A = A.tocsr()
        if not A.has_sorted_indices:
            A = A.sorted_indices()  # a copy: the user's matrix is left as it was
        return cls(A)

    # ------------------------------------------------------------ an array's protocol
    @property
    def shape(self):
        n = self.X.shape[0] if self.rows is None else len(self.rows)
        return (n, self.hi - self.lo)

    @property
    def dtype(self):
        return self.X.dtype

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return (f"<CSRWindow of shape {self.shape}: columns [{self.lo}, {self.hi}) of a "
                f"{self.X.shape[0]} x {self.X.shape[1]} CSR, {self.nnz} stored>")

    def _row_ids(self, index=None):
        """X's rows of the window's rows ``index`` (all when None), as intp."""
        n = self.shape[0]
        if index is None:
            return np.arange(n) if self.rows is None else self.rows
        if isinstance(index, slice):
            index = np.arange(*index.indices(n))
        index = np.asarray(index)
        if index.dtype == bool:
            index = np.flatnonzero(index)
        index = index.astype(np.intp, copy=False)
        index = np.where(index < 0, index + n, index)
        if index.size and (index.min() < 0 or index.max() >= n):
            raise IndexError(f"row index out of range for a window of {n} rows.")
        return index if self.rows is None else self.rows[index]

    # ------------------------------------------------------------ where the values lie
    def _search(self, rows, column):
        """Per row of ``rows`` (X's), the first position in X's arrays whose column is at
        least ``column`` within the row (all rows' binary searches at once)."""
        indptr, indices = self.X.indptr, self.X.indices
        out = np.empty(len(rows), dtype=np.int64)
        for s in range(0, len(rows), _SEARCH_ROWS):
            part = rows[s:s + _SEARCH_ROWS]
            a = indptr[part].astype(np.int64)
            b = indptr[part + 1].astype(np.int64)
            active = np.flatnonzero(a < b)
            while active.size:
                mid = (a[active] + b[active]) >> 1
                right = indices[mid] < column
                a[active[right]] = mid[right] + 1
                b[active[~right]] = mid[~right]
                active = active[a[active] < b[active]]
            out[s:s + _SEARCH_ROWS] = a
        return out

    def bounds(self, index=None):
        """``(start, stop)`` (int64): per window row (of ``index``; all when None), the run
        of its stored values in X's ``indices`` / ``data``."""
        if index is None:
            return self._bounds
        rows = self._row_ids(index)
        return self._bounds_of(rows)

    def _bounds_of(self, rows):
        indptr = self.X.indptr
        start = (indptr[rows].astype(np.int64) if self.lo == 0
                 else self._search(rows, self.lo))
        stop = (indptr[rows + 1].astype(np.int64) if self.hi == self.X.shape[1]
                else self._search(rows, self.hi))
        return start, stop

    @cached_property
    def _bounds(self):
        return self._bounds_of(self._row_ids())

    @property
    def counts(self):
        """Stored values of each row in the window (int64)."""
        start, stop = self._bounds
        return stop - start

    @cached_property
    def nnz(self):
        """Stored values in the window."""
        start, stop = self._bounds
        return int((stop - start).sum())

    @cached_property
    def width(self):
        """The most stored values of a row in the window (0 for an empty window)."""
        return int(self.counts.max(initial=0))

    @property
    def is_dense(self):
        """Whether the window stores at least :data:`DENSE_SHARE` of its entries."""
        n, d = self.shape
        return n * d > 0 and self.nnz >= DENSE_SHARE * n * d

    # ------------------------------------------------------------ reading the values
    def __getitem__(self, key):
        """``window[:, a:b]``: the window of those columns; ``window[rows]`` or
        ``window[rows, :]``: those rows as a CSR matrix (a copy)."""
        if isinstance(key, tuple):
            if len(key) != 2:
                raise IndexError("a CSRWindow takes [rows] or [rows, columns].")
            rows, columns = key
            if not isinstance(columns, slice) or columns.step not in (None, 1):
                raise IndexError("a CSRWindow's columns are taken as a slice with step 1.")
            a, b, _ = columns.indices(self.shape[1])
            if isinstance(rows, slice) and rows == slice(None):
                if (a, b) == (0, self.shape[1]):
                    return self
                return CSRWindow(self.X, self.lo + a, self.lo + max(a, b), self.rows)
            return self[:, a:b][rows]
        if isinstance(key, (int, np.integer)):
            return self._csr(self._row_ids([key]))
        return self._csr(self._row_ids(key))

    def take(self, rows):
        """The window of the rows ``rows`` of this one (no copy of a stored value)."""
        return CSRWindow(self.X, self.lo, self.hi, self._row_ids(rows))

    def _csr(self, rows):
        """X's rows ``rows`` in the window, as a CSR matrix of their own arrays."""
        start, stop = self._bounds_of(rows)
        counts = stop - start
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        total = int(indptr[-1])
        position = np.arange(total, dtype=np.int64)
        position += np.repeat(start - indptr[:-1], counts)
        indices = self.X.indices[position]
        if self.lo:
            indices -= indices.dtype.type(self.lo)
        index_dtype = indices.dtype
        return sparse.csr_matrix(
            (self.X.data[position], indices, indptr.astype(index_dtype, copy=False)),
            shape=(len(rows), self.shape[1]))

    def _chunk_rows(self, bytes_per_row):
        """Rows per chunk of about :data:`CHUNK_BYTES`, at ``bytes_per_row`` plus the
        stored values' temporaries per row."""
        n = max(self.shape[0], 1)
        stored = self.nnz / n  # the mean: a chunk's values are read once, then dropped
        # per stored value: its position (int64, and the repeat that builds it), its column
        # and value copied, and a float64 reading of the values by the consumer
        per_row = bytes_per_row + 40 * stored + 16
        return max(1, int(CHUNK_BYTES // per_row))

    def row_chunks(self, rows=None, dense=False):
        """``(index, block)``: consecutive window rows (of ``rows``, all when None) and
        their values, CSR or ``dense``, about :data:`CHUNK_BYTES` each."""
        ids = self._row_ids(rows)
        step = self._chunk_rows(self.shape[1] * self.dtype.itemsize if dense else 0)
        for s in range(0, len(ids), step):
            block = self._csr(ids[s:s + step])
            yield slice(s, s + step), (block.toarray() if dense else block)

    def stored_chunks(self, step=None):
        """``(values, columns)`` of the window's stored values (columns the window's),
        ``step`` of X's stored values at a time (default: about :data:`CHUNK_BYTES`)."""
        data, indices = self.X.data, self.X.indices
        whole = self.lo == 0 and self.hi == self.X.shape[1]
        if self.rows is None:
            if step is None:
                step = max(1, CHUNK_BYTES // (data.itemsize + 2 * indices.itemsize + 3))
            for s in range(0, data.size, step):
                values, columns = data[s:s + step], indices[s:s + step]
                if not whole:
                    keep = (columns >= self.lo) & (columns < self.hi)
                    values, columns = values[keep], columns[keep] - self.lo
                yield values, columns
            return
        for _, block in self.row_chunks():
            yield block.data, block.indices

    def toarray(self, dtype=None, out=None):
        """The window as a dense array (``dtype``: X's by default), filled by row chunks."""
        if out is None:
            out = np.empty(self.shape, dtype=self.dtype if dtype is None else dtype)
        for index, block in self.row_chunks(dense=True):
            out[index] = block
        return out

    def tocsr(self):
        """The window as a CSR matrix of its own (a copy; X when the window is all of it)."""
        if self.rows is None and self.lo == 0 and self.hi == self.X.shape[1]:
            return sparse.csr_matrix(self.X)
        return self._csr(self._row_ids())

    def astype(self, dtype, copy=True):
        """The window over X in ``dtype`` (a copy of X's ``data`` when it differs)."""
        if np.dtype(dtype) == self.dtype:
            return self
        X = self.X.astype(dtype)
        return CSRWindow(X, self.lo, self.hi, self.rows)


def is_sparse_block(A):
    """Whether ``A`` is a scipy sparse matrix or a :class:`CSRWindow`."""
    return sparse.issparse(A) or isinstance(A, CSRWindow)


def split_sparse(X):
    """``(features, time)`` of a scipy sparse X: its feature columns as a :class:`CSRWindow`
    of X as CSR (:meth:`CSRWindow.of`), its time column dense (an implicit zero is 0)."""
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D ([image | text | time] columns); got shape {X.shape}.")
    if X.shape[1] == 0:
        raise ValueError(_NO_COLUMNS.format(n=X.shape[0]))
    if X.dtype.kind == "c":
        raise ValueError("Complex data not supported: X holds complex numbers; features "
                         "and time must be real.")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"X is a sparse matrix of dtype {X.dtype}; features and time must "
                        "be numbers.")
    window = CSRWindow.of(X)
    d = window.shape[1]
    time = window[:, d - 1:d].toarray().reshape(-1)
    return window[:, :d - 1], time


def refuse_sparse(A, estimator_name, name="X"):
    """Raise a ``TypeError`` for a sparse ``A`` given to an estimator that takes dense input
    only, naming it and the alternatives."""
    if is_sparse_block(A):
        kind = type(A.X if isinstance(A, CSRWindow) else A).__name__
        raise TypeError(
            f"{estimator_name} does not accept sparse input: {name} is a scipy sparse "
            f"matrix ({kind}). Pass dense features: {name}.toarray() when it "
            "fits in memory, or reduce the sparse text block first (e.g. "
            "sklearn.decomposition.TruncatedSVD in make_crossmodal_transformer). "
            "CCACrossModal, SemanticMatchingCrossModal, SAMEmbedder, TempXNetEmbedder and "
            "DiachronicEmbedder take sparse X.")


#: A sparse block holding at least this share of its entries is read densely.
DENSE_SHARE = 0.5


def dense_if_dense(A, dtype=None):
    """A sparse block made whole: dense (in ``dtype``, default its own) when it stores at
    least :data:`DENSE_SHARE` of its entries, else CSR (a sparser :class:`CSRWindow` as a
    CSR copy, a scipy matrix as given); anything else unchanged."""
    if not is_sparse_block(A):
        return A
    window = A if isinstance(A, CSRWindow) else CSRWindow.of(A)
    if window.is_dense:
        return window.toarray(dtype)
    return window.tocsr() if isinstance(A, CSRWindow) else A
