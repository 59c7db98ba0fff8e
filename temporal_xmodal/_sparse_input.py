"""Scipy sparse X at the public boundary: read as CSR, refused by name, or densified where
a block is in fact dense.

:func:`split_sparse` is :func:`temporal_xmodal._layout.split_time_column`'s reading of a
sparse X; :func:`refuse_sparse` is the error of the estimators that take dense input only;
:func:`dense_if_dense` stores a dense block held in a sparse X densely.  Which estimators
take sparse X, and what it costs: docs/scaling.md ("Sparse text").
"""

import numpy as np
from scipy import sparse

_NO_COLUMNS = ("X has 0 feature(s) (shape=({n}, 0)) while a minimum of 2 is required: the "
               "layout is [image | text | time].")


def split_sparse(X):
    """:func:`temporal_xmodal._layout.split_time_column` of a scipy sparse X: CSR features and the dense time.

    X becomes CSR once (no copy when it is CSR already); the feature columns are a CSR
    slice (a copy of their stored values), the time column is read densely (one column):
    an implicit zero is the time 0, as a 0 in a dense X, and a NaN stored there is seen by
    the time checks as in a dense X.
    """
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D ([image | text | time] columns); got shape {X.shape}.")
    if X.shape[1] == 0:
        raise ValueError(_NO_COLUMNS.format(n=X.shape[0]))
    X = X.tocsr()
    if X.dtype.kind == "c":
        raise ValueError("Complex data not supported: X holds complex numbers; features "
                         "and time must be real.")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"X is a sparse matrix of dtype {X.dtype}; features and time must "
                        "be numbers.")
    time = np.asarray(X[:, [X.shape[1] - 1]].toarray()).reshape(-1)
    return X[:, :X.shape[1] - 1], time


def refuse_sparse(A, estimator_name, name="X"):
    """Raise a ``TypeError`` for a scipy sparse ``A`` given to an estimator that takes dense
    input only, naming it and the dense alternatives (docs/scaling.md, "Sparse text")."""
    if sparse.issparse(A):
        raise TypeError(
            f"{estimator_name} does not accept sparse input: {name} is a scipy sparse "
            f"matrix ({type(A).__name__}). Pass dense features: {name}.toarray() when it "
            "fits in memory, or reduce the sparse text block first (e.g. "
            "sklearn.decomposition.TruncatedSVD in make_crossmodal_transformer). "
            "CCACrossModal, SemanticMatchingCrossModal, SAMEmbedder, TempXNetEmbedder and "
            "DiachronicEmbedder take sparse X.")


#: A sparse block holding at least this share of its entries is stored densely by
#: :func:`dense_if_dense` (a float32 CSR takes 8 bytes per stored value, dense 4 per entry).
DENSE_SHARE = 0.5
_DENSE_CHUNK_BYTES = 64 * 2 ** 20


def dense_if_dense(A, dtype=None):
    """A sparse block that is in fact dense, as a dense array; anything else unchanged.

    A CSR block storing at least :data:`DENSE_SHARE` of its entries (the image columns of a
    CSR X hstacked from dense image features and sparse text, as a ``ColumnTransformer``
    builds it) is densified row chunk by row chunk into ``dtype`` (default: its own):
    ``n × d × itemsize`` bytes for the result, plus one chunk of about 64 MiB, and no more
    than its CSR form took (≥ 8 bytes per stored float32 value).  Nothing else is densified.

    Parameters
    ----------
    A : ndarray or scipy sparse CSR matrix
    dtype : numpy dtype or None, default=None

    Returns
    -------
    A : ndarray or the CSR matrix as given
    """
    if not sparse.issparse(A):
        return A
    n, d = A.shape
    if n * d == 0 or A.nnz < DENSE_SHARE * n * d:
        return A
    out = np.empty((n, d), dtype=A.dtype if dtype is None else dtype)
    rows = max(1, _DENSE_CHUNK_BYTES // (d * max(out.itemsize, A.dtype.itemsize)))
    for start in range(0, n, rows):
        out[start:start + rows] = A[start:start + rows].toarray()
    return out
