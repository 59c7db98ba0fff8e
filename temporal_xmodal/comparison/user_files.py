"""A user's data file read into a DataFrame (``compare --data FILE``), its list columns
expanded, and the one error of a user's data (:class:`UserDataError`).

A list column ``img`` (an array per cell, as embedding pipelines write to Parquet or
Feather) that ``--image`` / ``--text`` name becomes the columns ``img_0`` ... ``img_<d-1>``
in its values' dtype, without a loop over the rows.  Parquet and Feather are read through
the system allocator, column by column, so that reading holds about the data once.  Read
more in docs/index.md ("Your own data").
"""

from pathlib import Path

import numpy as np

__all__ = ["DATA_FORMATS", "UserDataError", "expand_list_columns", "is_list_column",
           "read_table"]

#: File suffixes read by :func:`read_table`.
DATA_FORMATS = (".parquet", ".pq", ".csv", ".feather", ".npz")


class UserDataError(ValueError):
    """A user's data file or frame cannot be compared: the problem in one line."""


def read_table(path):
    """Read a user's data file into a DataFrame.

    Parquet (``.parquet``, ``.pq``) and Feather need pyarrow; their list columns are read
    as ``pandas.ArrowDtype`` columns.  In a ``.npz`` file a 1-D array is a column of its
    name, a 2-D array ``name`` of shape (n, k) the columns ``name_0`` ... ``name_<k-1>``.
    A missing, unknown or unreadable file raises :class:`UserDataError`.
    """
    import pandas as pd

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in DATA_FORMATS:
        raise UserDataError(f"--data {path}: unknown format {suffix or '(no suffix)'!r}; give a "
                            f"file ending in {', '.join(DATA_FORMATS)}")
    if not path.is_file():
        raise UserDataError(f"--data {path}: no such file")
    try:
        if suffix in (".parquet", ".pq", ".feather"):
            return _read_arrow(path, suffix)
        if suffix == ".csv":
            return pd.read_csv(path)
        with np.load(path, allow_pickle=False) as arrays:
            columns = {}
            for name in arrays.files:
                values = arrays[name]
                if values.ndim == 1:
                    columns[name] = values
                elif values.ndim == 2:
                    expanded = {f"{name}_{j}": values[:, j] for j in range(values.shape[1])}
                    clash = sorted(set(expanded) & (set(columns) | set(arrays.files)))
                    if clash:
                        raise UserDataError(
                            f"--data {path}: the 2-D array {name!r} gives the columns "
                            f"{name}_0 ... {name}_{values.shape[1] - 1}, and {clash[0]!r} is "
                            "also an array of the file; rename one of them")
                    columns.update(expanded)
                else:
                    raise UserDataError(f"--data {path}: array {name!r} has {values.ndim} "
                                        "dimensions; give 1-D columns or 2-D blocks")
            lengths = {name: len(v) for name, v in columns.items()}
            if len(set(lengths.values())) > 1:
                raise UserDataError(f"--data {path}: the arrays have different numbers of "
                                    f"rows ({lengths})")
            return pd.DataFrame(columns)
    except ImportError as exc:
        raise UserDataError(f"--data {path}: reading {suffix} needs pyarrow (pip install "
                            f"pyarrow): {exc}") from None
    except UserDataError:
        raise
    except Exception as exc:  # noqa: BLE001 - any reader's failure, in one line
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise UserDataError(f"--data {path}: cannot read it as {suffix} "
                            f"({type(exc).__name__}: {first})") from None


def _read_arrow(path, suffix):
    """A Parquet or Feather file as a DataFrame, read through the system allocator (whose
    freed buffers return to the operating system) and converted column by column."""
    import pyarrow as pa

    default = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        if suffix == ".feather":
            from pyarrow import feather
            table = feather.read_table(path, memory_map=False)
        else:
            import pyarrow.parquet as pq
            table = pq.read_table(path, memory_map=False, pre_buffer=False)
        # a list column (an embedding per cell) stays one Arrow array, not an object per
        # row: load_user_data expands the ones a block names (expand_list_columns)
        return table.to_pandas(split_blocks=True, self_destruct=True,
                               types_mapper=_arrow_lists)
    finally:
        pa.set_memory_pool(default)


#: What a block's column of neither numbers nor arrays of numbers should be.
_FIX = ("store each feature as a numeric column, or as a list column of equal-length "
        "arrays of numbers (Parquet or Feather)")


def is_list_column(series):
    """Whether ``series`` holds an array per cell: an Arrow list type, or objects whose first
    value is a list, tuple or NumPy array."""
    import pandas as pd

    dtype = series.dtype
    if isinstance(dtype, pd.ArrowDtype):
        return is_list_type(dtype.pyarrow_dtype)
    if dtype != object:
        return False
    present = series.dropna()
    return len(present) > 0 and isinstance(present.iloc[0], (list, tuple, np.ndarray))


def _touched(column, spec):
    """Whether the block ``spec`` (a prefix or a list of names) names the list ``column`` or
    a column it expands to (``img_3``)."""
    stem = f"{column}_"

    def expanded(name):
        return name.startswith(stem) and name[len(stem):].isdigit()

    if isinstance(spec, str):
        return (column.startswith(spec) or stem.startswith(spec)
                or (spec.startswith(stem) and spec[len(stem):].isdigit()))
    return any(name == column or expanded(str(name)) for name in spec)


def _as_arrow(series, column):
    """The column as one pyarrow array (a list type)."""
    import pandas as pd
    import pyarrow as pa

    if isinstance(series.dtype, pd.ArrowDtype):
        values = series.array.__arrow_array__()
    else:  # objects: NaN inside an array stays NaN (a missing feature: the row is dropped)
        try:
            values = pa.array(series.to_numpy(), from_pandas=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise UserDataError(f"column {column!r} holds arrays in some cells and other "
                                f"values in others ({str(exc).splitlines()[0]}); {_FIX}"
                                ) from None
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    return values


def _block(series, column, option):
    """The list column as an ``(n, d)`` array of its values' dtype, or a UserDataError
    naming the column and the first row at fault."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = _as_arrow(series, column)
    where = f"{option}: the list column {column!r}"
    kind = values.type.value_type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)
            or pa.types.is_boolean(kind)):
        raise UserDataError(f"{where} holds arrays of {kind}, not numbers; {_FIX}")
    if values.null_count:
        row = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
        raise UserDataError(f"{where} has no array in row {series.index[row]!r} (null); "
                            "every row needs an array of the same length")
    lengths = pc.list_value_length(values).to_numpy(zero_copy_only=False)
    d = int(lengths[0])
    ragged = np.flatnonzero(lengths != d)
    if len(ragged):
        row = int(ragged[0])
        raise UserDataError(f"{where} holds arrays of {d} values (row {series.index[0]!r}) "
                            f"and of {int(lengths[row])} (row {series.index[row]!r}); every "
                            "row needs an array of the same length")
    if d == 0:
        raise UserDataError(f"{where} holds empty arrays; {_FIX}")
    flat = values.flatten()
    if flat.null_count:
        position = int(np.flatnonzero(flat.is_null().to_numpy(zero_copy_only=False))[0])
        raise UserDataError(f"{where} has a null value inside the array of row "
                            f"{series.index[position // d]!r} (element {position % d}); "
                            "write a missing feature as NaN, or drop the row")
    return flat.to_numpy(zero_copy_only=False).reshape(len(values), d)


def expand_list_columns(frame, blocks, *, source=None, skip=()):
    """Expand the list columns that the ``blocks`` name into numeric columns.

    ``blocks``: each block's ``(spec, option)``, its columns as given (a prefix or a list of
    names) and the option named in the errors; ``source``: the file named in the errors;
    ``skip``: columns left as they are (the time and the label).  Returns ``(frame, blocks)``:
    ``frame`` itself when no list column is named, else with each named list column ``img``
    replaced in place by ``img_0`` ... ``img_<d-1>``; and the specs with a named list column
    replaced by its columns.  A ragged or null list column, one of non-numbers, or a
    generated name that is already a column raises :class:`UserDataError`.
    """
    import pandas as pd

    names = {str(c) for c in frame.columns}
    expanded = {}
    for column in frame.columns:
        option = next((option for spec, option in blocks if _touched(str(column), spec)), None)
        if option is None or column in skip or not is_list_column(frame[column]):
            continue
        block = _block(frame[column], str(column), option)
        generated = [f"{column}_{j}" for j in range(block.shape[1])]
        clash = sorted(set(generated) & (names | {n for _, g in expanded.values() for n in g}))
        if clash:
            raise UserDataError(
                f"{source or 'the data'}: the list column {str(column)!r} gives the columns "
                f"{generated[0]} ... {generated[-1]}, and {clash[0]!r} is also a column; "
                "rename one of them")
        expanded[column] = (block, generated)
    if not expanded:
        return frame, blocks
    parts, run = [], []
    for column in frame.columns:
        if column in expanded:
            if run:
                parts.append(frame[run])
                run = []
            block, generated = expanded[column]
            parts.append(pd.DataFrame(block, columns=generated, index=frame.index, copy=False))
        else:
            run.append(column)
    if run:
        parts.append(frame[run])
    listed = {str(c): generated for c, (_, generated) in expanded.items()}
    blocks = [(spec if isinstance(spec, str)
               else [n for name in spec for n in listed.get(str(name), [name])], option)
              for spec, option in blocks]
    return pd.concat(parts, axis=1), blocks


def _arrow_lists(kind):
    """``types_mapper`` of :func:`_read_arrow`: list types as ``pandas.ArrowDtype``."""
    import pandas as pd

    return pd.ArrowDtype(kind) if is_list_type(kind) else None


def is_list_type(kind):
    """Whether the pyarrow type ``kind`` is a list (variable, large or fixed size)."""
    import pyarrow as pa

    return (pa.types.is_list(kind) or pa.types.is_large_list(kind)
            or pa.types.is_fixed_size_list(kind))


def _return_freed_memory():
    """Hand freed heap memory back to the operating system (``malloc_trim``; a no-op without
    it), so that the file's DataFrame is not kept as the job's resident memory."""
    import ctypes
    import ctypes.util
    import gc

    gc.collect()
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _preview(names, n=4):
    names = [str(c) for c in names]
    return ", ".join(names[:n]) + (f", ... ({len(names)} in all)" if len(names) > n else "")
