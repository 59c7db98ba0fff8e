"""Checks of feature blocks, embeddings and labels, once at the public boundary; NaN and
infinity counted in chunks of about :data:`_CHUNK_BYTES` (docs/scaling.md)."""

import numpy as np
import torch
from scipy import sparse
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_array

from .._sparse_input import CSRWindow, is_sparse_block
from ..time import is_datetime_like

_F32 = np.finfo(np.float32)
#: Bytes of temporaries a chunked scan of a dense block holds at once.
_CHUNK_BYTES = 32 * 2 ** 20


def check_features(A, *, name="X", float32=False, ensure_min_samples=1,
                   column_offset=0):
    """Validate a block of feature columns: numeric, 2-D, finite, representable.

    ``A`` (array-like, scipy sparse, or a CSRWindow checked in place) is returned as
    float32 (no copy) or float64; ``name`` and ``column_offset`` (positions within X) are
    for messages.  ``float32``: values beyond float32's range or below its smallest normal
    number are rejected too.
    """
    if np.ndim(A) == 1:
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features); got a 1-D array of shape "
            f"{np.shape(A)}. Reshape a single item with A.reshape(1, -1).")
    if isinstance(A, CSRWindow):
        A = _check_window(A, ensure_min_samples)
    else:
        if not sparse.issparse(A):
            _check_numeric_columns(A, name, column_offset)
        A = check_array(A, accept_sparse="csr", dtype=(np.float64, np.float32),
                        ensure_all_finite=False, ensure_min_samples=ensure_min_samples,
                        input_name=name)
    n_bad, absmax, absmin = (_scan_stored(A) if is_sparse_block(A) else _scan_columns(A))
    if n_bad.any():
        cols = np.flatnonzero(n_bad) + column_offset
        raise ValueError(
            f"{name} contains NaN or infinity: {int(n_bad.sum())} value(s) in "
            f"{len(cols)} column(s) (first: column {cols[0]}). Impute or drop them first.")
    if float32:
        over = np.flatnonzero(absmax > _F32.max)
        if over.size:
            raise ValueError(
                f"{name} has values up to {absmax.max():.3g} in {over.size} column(s) (first: "
                f"column {over[0] + column_offset}), beyond float32's range "
                f"({_F32.max:.3g}) used by the networks: scale the features (e.g. "
                "StandardScaler) before fitting.")
        under = np.flatnonzero(absmin < _F32.tiny)
        if under.size:
            raise ValueError(
                f"{name} has non-zero values as small as {absmin.min():.3g} in {under.size} "
                f"column(s) (first: column {under[0] + column_offset}), below float32's "
                f"smallest normal number ({_F32.tiny:.3g}): they would become zero or "
                "denormal in the networks. Scale the features (e.g. StandardScaler).")
    return A


#: What a modality block passed alone holds.
_BLOCKS = {"X_image": ("image", "text"), "X_text": ("text", "image")}


def _check_numeric_columns(A, name, column_offset=0):
    """Raise for a column of dates or of non-numeric values, naming it (before check_array,
    whose error names no column)."""
    if hasattr(A, "dtypes") and hasattr(A, "columns"):  # a DataFrame
        columns = [(f"column {col!r} (position {i + column_offset})", dtype,
                    lambda i=i: A.iloc[:, i])
                   for i, (col, dtype) in enumerate(zip(A.columns, A.dtypes))]
    else:
        arr = A if hasattr(A, "dtype") and hasattr(A, "ndim") else None
        if arr is None or arr.ndim != 2 or arr.dtype.kind not in "MmO":
            return
        if arr.dtype.kind == "O":
            try:
                arr.astype(np.float64)
                return  # numbers held as objects
            except (TypeError, ValueError):
                pass
        columns = [(f"column {i + column_offset}", arr.dtype, lambda i=i: arr[:, i])
                   for i in range(arr.shape[1])]
    for label, dtype, get in columns:
        kind = getattr(dtype, "kind", "O")
        if kind in "biuf":
            continue
        column = get()
        if kind in "Mm" or getattr(dtype, "tz", None) is not None or is_datetime_like(column):
            problem = "holds dates"
        else:
            values = np.asarray(column, dtype=object)
            example = next((v for v in values if not _is_number(v)), None)
            if example is None:
                continue
            problem = f"holds non-numeric values such as {example!r}"
        if name in _BLOCKS:
            modality, other = _BLOCKS[name]
            fix = (f"{name} takes the {modality} feature columns only (the {modality} block "
                   f"of X, without the {other} columns or the time column): pass "
                   f"X[<{modality} columns>] and the time as time= (a date, a number or one "
                   "per row).")
        else:
            fix = f"every column of {name} must be a numeric feature."
        raise TypeError(f"{name}'s {label} {problem}: {fix}")


def _is_number(value):
    try:
        float(value)
        return not isinstance(value, (str, bytes))
    except (TypeError, ValueError):
        return False


def _scan_columns(A):
    """Per column: count of non-finite values, max |x|, min non-zero |x| (in row chunks)."""
    d = A.shape[1]
    n_bad = np.zeros(d, dtype=np.int64)
    absmax = np.zeros(d)
    absmin = np.full(d, np.inf)
    for chunk in _row_chunks(A, 2 * A.dtype.itemsize + 3):
        chunk = np.abs(chunk)
        finite = np.isfinite(chunk)
        n_bad += (~finite).sum(axis=0)
        if n_bad.any():
            continue
        absmax = np.maximum(absmax, chunk.max(axis=0, initial=0.0))
        absmin = np.minimum(absmin, np.where(chunk > 0, chunk, np.inf).min(axis=0,
                                                                            initial=np.inf))
    return n_bad, absmax, absmin


def _check_window(A, ensure_min_samples):
    """:func:`sklearn.utils.check_array`'s checks of a CSRWindow (float dtype, rows)."""
    if A.dtype not in (np.float32, np.float64):
        A = A.astype(np.float64)
    if A.shape[0] < ensure_min_samples:
        raise ValueError(f"Found array with {A.shape[0]} sample(s) (shape={A.shape}) while a "
                         f"minimum of {ensure_min_samples} is required.")
    if A.shape[1] < 1:
        raise ValueError(f"Found array with 0 feature(s) (shape={A.shape}) while a minimum "
                         "of 1 is required.")
    return A


def _stored_chunks(A, step):
    """``(values, columns)`` chunks of the stored values of a CSR block or a window."""
    if isinstance(A, CSRWindow):
        yield from A.stored_chunks(step)
        return
    for start in range(0, A.data.size, step):
        yield A.data[start:start + step], A.indices[start:start + step]


def _scan_stored(A):
    """:func:`_scan_columns` of a CSR block or a CSRWindow, from its stored values (the
    implicit zeros count for neither extreme)."""
    d = A.shape[1]
    n_bad = np.zeros(d, dtype=np.int64)
    absmax = np.zeros(d)
    absmin = np.full(d, np.inf)
    # per stored value: |x|, the float32 range's masks, the positives, and a window's mask
    # with its selected values and columns
    itemsize, index_size = A.dtype.itemsize, np.dtype(A.X.indices.dtype if isinstance(
        A, CSRWindow) else A.indices.dtype).itemsize
    step = max(1, _CHUNK_BYTES // (3 * itemsize + 2 * index_size + 9))
    for values, columns in _stored_chunks(A, step):
        values = np.abs(values)
        bad = ~np.isfinite(values)
        if bad.any():
            n_bad += np.bincount(columns[bad], minlength=d)
        if n_bad.any():
            continue
        # only the columns of the extreme values matter: those beyond float32's range or
        # below its smallest normal number, and each chunk's largest and smallest
        over, under = values > _F32.max, (values > 0) & (values < _F32.tiny)
        np.maximum.at(absmax, columns[over], values[over])
        np.minimum.at(absmin, columns[under], values[under])
        if values.size:
            top = int(np.argmax(values))
            absmax[columns[top]] = max(absmax[columns[top]], values[top])
            positive = np.where(values > 0, values, np.inf)
            low = int(np.argmin(positive))
            absmin[columns[low]] = min(absmin[columns[low]], positive[low])
    return n_bad, absmax, absmin


def _row_chunks(A, bytes_per_element=None):
    """``A``'s rows in chunks (views) of about :data:`_CHUNK_BYTES` of temporaries, at
    ``bytes_per_element`` per element (default: the element size plus two)."""
    width = int(np.prod(A.shape[1:], dtype=np.int64)) or 1
    if bytes_per_element is None:
        itemsize = A.element_size() if isinstance(A, torch.Tensor) else A.dtype.itemsize
        bytes_per_element = itemsize + 2
    rows = max(1, _CHUNK_BYTES // (width * bytes_per_element))
    return (A[start:start + rows] for start in range(0, A.shape[0], rows))


def nonfinite_rows(A, *, sync=True):
    """Number of rows of a 2-D array or tensor holding NaN or infinity (in row chunks); for
    a tensor with ``sync=False``, a 0-d int64 tensor on its device (no synchronisation)."""
    if isinstance(A, torch.Tensor):
        count = sum(((~torch.isfinite(chunk)).any(dim=1).sum() for chunk in _row_chunks(A)),
                    torch.zeros((), dtype=torch.int64, device=A.device))
        return int(count) if sync else count
    return sum(int((~np.isfinite(chunk)).any(axis=1).sum()) for chunk in _row_chunks(A))


def check_embedding(A, name, *, kind="numpy", dtype=np.float64, device=None, finite=True):
    """Validate one embedding matrix ``A`` (n_items, dim): 2-D, at least one row, finite
    (unless ``finite=False``), named ``name`` in messages.

    Returns an ndarray (``kind="numpy"``) or a detached tensor (``"torch"``, moved to
    ``device``), in ``dtype`` (or one of a tuple of them; else the first).
    """
    if kind == "torch":
        A = torch.as_tensor(A).detach()
    else:
        A = np.asarray(A)
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_items, dim); got shape {tuple(A.shape)}.")
    if A.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 rows).")
    dtypes = dtype if isinstance(dtype, tuple) else (dtype,)
    if A.dtype not in dtypes:
        A = A.to(dtypes[0]) if kind == "torch" else A.astype(dtypes[0])
    if device is not None:
        A = A.to(device)
    if finite:
        n_bad = nonfinite_rows(A)
        if n_bad:
            raise ValueError(f"{name} contains NaN or infinity in {n_bad} of its "
                             f"{A.shape[0]} rows.")
    return A


def check_embeddings(query, gallery, **kwargs):
    """``(query, gallery)`` validated by :func:`check_embedding` (``kwargs``), of the same
    width."""
    Q = check_embedding(query, "query", **kwargs)
    G = check_embedding(gallery, "gallery", **kwargs)
    if Q.shape[1] != G.shape[1]:
        raise ValueError(f"query and gallery embeddings differ in dimension: {Q.shape[1]} vs "
                         f"{G.shape[1]}.")
    return Q, G


def check_labels(y, n_samples, *, required=True, estimator_name="estimator"):
    """Validate labels and encode them for relevance computations.

    ``y`` (n_samples,) of class labels, or (n_samples, n_labels) of 0/1, becomes integer
    codes or a boolean indicator; None stays None.  ``required``: ``y=None`` or a single
    class is an error.
    """
    if y is None:
        if required:
            raise ValueError(
                f"{estimator_name} requires y to be passed, but the target y is None "
                "(give class labels or a multilabel indicator).")
        return None
    y = np.asarray(y)
    if y.shape[0] != n_samples:
        raise ValueError(f"y has {y.shape[0]} rows but X has {n_samples}; they must match.")
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim == 2:
        if type_of_target(y) != "multilabel-indicator":
            raise ValueError(
                "A 2-D y must be a multilabel indicator matrix of 0/1 values; got "
                f"target type {type_of_target(y)!r}.")
        Y = y.astype(bool)
        if required and Y.any(axis=0).sum() < 2:
            raise ValueError(f"{estimator_name} needs at least 2 distinct labels in y.")
        return Y
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D labels or a 2-D indicator; got shape {y.shape}.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"y contains {int((~np.isfinite(y)).sum())} NaN or infinite "
                         "label(s); every item needs a label.")
    if y.dtype.kind == "f" and not np.all(y == np.round(y)):
        first = _plain(y[np.flatnonzero(y != np.round(y))[0]])
        raise ValueError(
            f"y holds non-integer numbers such as {first!r} (a continuous target); give "
            "class labels (ints, strings or whole-number floats) or a multilabel indicator.")
    if y.dtype.kind == "O":
        missing = np.array([v is None or (isinstance(v, float) and v != v) for v in y])
        if missing.any():
            raise ValueError(f"y contains {int(missing.sum())} missing label(s) (None/NaN, "
                             f"first at row {int(np.flatnonzero(missing)[0])}); every item "
                             "needs a label.")
        kinds = {type(v).__name__ for v in y}
        if len(kinds) > 1:
            raise TypeError(f"y mixes label types {sorted(kinds)}; use one type (e.g. all "
                            "str).")
    codes = LabelEncoder().fit_transform(y)
    if required and codes.max(initial=0) < 1:
        raise ValueError(
            f"{estimator_name} needs at least 2 classes in y to define relevance; "
            f"got 1 class: {_plain(y[0])!r}.")
    return codes


def _plain(value):
    """A numpy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value
