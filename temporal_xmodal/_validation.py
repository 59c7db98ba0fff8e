"""Checks of feature blocks, embeddings and labels, done once at the public boundary.

Errors are ``ValueError``/``TypeError`` in the library's own words, naming
the input, the columns and the counts; lower layers trust what passes here.
Feature blocks (:func:`check_features`) and embedding matrices
(:func:`check_embeddings`) are scanned for NaN and infinity in chunks of
rows sized in bytes (:data:`_CHUNK_BYTES` of temporaries, whatever the width), so no
full-size mask is ever allocated; a scipy sparse block is checked on its stored values.  Time checks are
:mod:`temporal_xmodal.time`'s, column-layout checks
:mod:`temporal_xmodal._layout`'s.  The parameter constraints are
:mod:`temporal_xmodal._constraints`' (re-exported here: :class:`Interval`,
:class:`SequenceOf`, :class:`Arrangement`), beside the two that read durations:
:class:`Duration` (an estimator's duration parameter, resolved once per fit) and
:class:`PositiveDuration`.
"""

import datetime

import numpy as np
import torch
from scipy import sparse
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_array

from ._constraints import Arrangement, Interval, SequenceOf, _Rule  # noqa: F401 (re-exported)
from ._sparse_input import CSRWindow, is_sparse_block
from .time import is_datetime_like, to_duration, to_rate

_F32 = np.finfo(np.float32)
#: Bytes of temporaries a chunked scan of a dense block holds at once (the chunk's rows are
#: as many as fit, whatever the width; at least one).
_CHUNK_BYTES = 32 * 2 ** 20


def check_features(A, *, name="X", float32=False, ensure_min_samples=1,
                   column_offset=0):
    """Validate a block of feature columns: numeric, 2-D, finite, representable.

    Parameters
    ----------
    A : array-like, scipy sparse matrix or CSRWindow of shape (n_samples, n_columns)
        A sparse block (any scipy format) becomes CSR; its stored values are checked
        (explicit zeros included), the implicit zeros need no check.  A
        :class:`~temporal_xmodal._sparse_input.CSRWindow` (the blocks of a sparse X) is
        checked in place, its stored values read once in chunks, and returned as it is
        (X's values converted to float64 once when they are neither float32 nor float64).
    name : str, default="X"
        Used in messages.
    float32 : bool, default=False
        The block feeds a float32 network: values beyond float32's range
        (overflow to inf) or below its smallest normal number (denormal or
        zero after the cast) are rejected.
    ensure_min_samples : int, default=1
    column_offset : int, default=0
        Added to column positions in messages (positions within X).

    Returns
    -------
    A : ndarray, scipy.sparse CSR matrix/array or CSRWindow of float64 or float32
        float32 input stays float32 (no copy); anything else becomes float64.
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


#: What a modality block passed alone holds (the names of :meth:`transform_image` /
#: :meth:`transform_text`'s first argument).
_BLOCKS = {"X_image": ("image", "text"), "X_text": ("text", "image")}


def _check_numeric_columns(A, name, column_offset=0):
    """Raise for a column of dates or of non-numeric values, naming it (before check_array,
    whose dtype promotion error lists every column's dtype and names none)."""
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
    """Per column: count of non-finite values, max |x|, min non-zero |x| (chunked rows:
    about ``2 · itemsize + 3`` bytes of temporaries per element of a chunk)."""
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
    """:func:`_scan_columns` of a CSR block or a CSRWindow, read from its stored values (in
    chunks of about :data:`_CHUNK_BYTES`): the implicit zeros are finite and count for
    neither extreme."""
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
    ``bytes_per_element`` per element of a chunk (default: the element size plus one byte
    of mask)."""
    width = int(np.prod(A.shape[1:], dtype=np.int64)) or 1
    if bytes_per_element is None:
        itemsize = A.element_size() if isinstance(A, torch.Tensor) else A.dtype.itemsize
        bytes_per_element = itemsize + 2
    rows = max(1, _CHUNK_BYTES // (width * bytes_per_element))
    return (A[start:start + rows] for start in range(0, A.shape[0], rows))


def nonfinite_rows(A, *, sync=True):
    """Number of rows of a 2-D array or tensor holding NaN or infinity.

    Counted chunk by chunk (no full-size mask).  For a tensor the count stays
    on its device until the end: ``sync=True`` returns it as an int (one host
    synchronisation for the whole count), ``sync=False`` as a 0-d int64
    tensor (none, for a caller that reports it together with its result).
    """
    if isinstance(A, torch.Tensor):
        count = sum(((~torch.isfinite(chunk)).any(dim=1).sum() for chunk in _row_chunks(A)),
                    torch.zeros((), dtype=torch.int64, device=A.device))
        return int(count) if sync else count
    return sum(int((~np.isfinite(chunk)).any(axis=1).sum()) for chunk in _row_chunks(A))


def check_embedding(A, name, *, kind="numpy", dtype=np.float64, device=None, finite=True):
    """Validate one embedding matrix: 2-D, at least one row, finite.

    Parameters
    ----------
    A : array-like or torch.Tensor of shape (n_items, dim)
    name : str
        Used in messages.
    kind : {"numpy", "torch"}, default="numpy"
        Return an ndarray, or a (detached) tensor.
    dtype : dtype or tuple of dtypes, default=np.float64
        NumPy dtypes for ``kind="numpy"``, torch dtypes for ``"torch"``.  An
        input of one of them is kept as it is; anything else is converted to
        the first (as :func:`sklearn.utils.check_array` does).
    device : torch.device, str or None, default=None
        Tensors only: the device to move the embeddings to.
    finite : bool, default=True
        Count the rows holding NaN or infinity (:func:`nonfinite_rows`) and
        raise when there are any.  ``False`` leaves that to the caller (a
        device scan that reports it after its one host synchronisation).

    Returns
    -------
    A : ndarray or torch.Tensor of shape (n_items, dim)
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
    """Validate a query and a gallery embedding matrix: :func:`check_embedding`, same width.

    Parameters
    ----------
    query : array-like or torch.Tensor of shape (n_queries, dim)
    gallery : array-like or torch.Tensor of shape (n_gallery, dim)
    **kwargs
        ``kind``, ``dtype``, ``device``, ``finite``: see :func:`check_embedding`.

    Returns
    -------
    query, gallery : ndarray or torch.Tensor
    """
    Q = check_embedding(query, "query", **kwargs)
    G = check_embedding(gallery, "gallery", **kwargs)
    if Q.shape[1] != G.shape[1]:
        raise ValueError(f"query and gallery embeddings differ in dimension: {Q.shape[1]} vs "
                         f"{G.shape[1]}.")
    return Q, G


def check_labels(y, n_samples, *, required=True, estimator_name="estimator"):
    """Validate labels and encode them for relevance computations.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, n_labels), or None
        Class labels (int or str) or a multilabel 0/1 indicator matrix.  Two
        items are relevant to each other when they share at least one label.
    n_samples : int
        Number of rows of X.
    required : bool, default=True
        Whether ``y=None`` is an error (methods that need labels) or allowed.
    estimator_name : str
        Used in messages.

    Returns
    -------
    labels : None, ndarray of shape (n_samples,) of int, or ndarray of shape (n_samples, n_labels) of bool
        Integer codes for single-label data, boolean indicator for multilabel data.
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


class PositiveDuration(_Rule):
    """A duration given as a string or a timedelta that :func:`~temporal_xmodal.time.to_duration`
    reads as positive (``"6M"``, ``"180D"``, ``pandas.Timedelta("30D")``).

    Numbers are an :class:`Interval`'s (``Interval(Real, 0, None, closed="neither")``
    beside this constraint); a share of the span (``"5%"``) is positive when its
    percentage is.

    Examples
    --------
    >>> from temporal_xmodal._validation import PositiveDuration
    >>> PositiveDuration().is_satisfied_by("6M"), PositiveDuration().is_satisfied_by("0D")
    (True, False)
    """

    def __init__(self):
        super().__init__("1Y")

    def is_satisfied_by(self, val):
        if not isinstance(val, (str, datetime.timedelta, np.timedelta64)):
            return False
        try:
            return to_duration(val, "seconds", span=1.0) > 0
        except (TypeError, ValueError):
            return False

    def __str__(self):
        return ("a positive duration (a string such as '6M', '180D' or '1Y', or a "
                "timedelta)")


class Duration(_Rule):
    """An estimator's duration parameter, read once per fit into the fitted attribute
    ``<name>_`` (a float on the time axis) by
    :class:`~temporal_xmodal.base.CrossModalEmbedder`.

    Numbers are an :class:`Interval`'s, beside this constraint, in ``time_unit``; this one
    takes a string (``"180D"``, ``"4M"``, ``"5%"``: a share of the training times' span) or
    a timedelta, read by :func:`~temporal_xmodal.time.to_duration`.

    Parameters
    ----------
    kind : {"duration", "rate"}, default="duration"
        ``"rate"``: a rate per unit (``"0.1/M"``) or a half-life, read by
        :func:`~temporal_xmodal.time.to_rate`.
    window : bool, default=False
        A window: checked against the training times (a window at least their span
        warns; :meth:`temporal_xmodal.time.TimeAxis.check_duration`).
    """

    def __init__(self, kind="duration", window=False):
        super().__init__("1Y")
        self.kind, self.window = kind, window

    def is_satisfied_by(self, val):
        return isinstance(val, (str, datetime.timedelta, np.timedelta64))

    def read(self, value, unit, name, span):
        """``value`` as a float in ``unit``; a share is of ``span``."""
        read = to_rate if self.kind == "rate" else to_duration
        return read(value, unit, name=name, span=span)

    def __str__(self):
        if self.kind == "rate":
            return ("a rate such as '0.1/M', or a half-life (a duration such as '6M', '180D' "
                    "or '5%' of the training span, or a timedelta)")
        return ("a duration (a string such as '180D', '4M', '1Y' or '5%' of the training "
                "span, or a timedelta)")
