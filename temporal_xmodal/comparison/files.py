"""A user's data file read into a DataFrame (``compare --data FILE``), and the one error
every problem of a user's data raises (:class:`UserDataError`).

Parquet and Feather are read through the system allocator, column by column, and the
freed buffers handed back (:func:`_return_freed_memory`), so that reading holds about the
data once; :mod:`.user_data` builds the job's X from the frame.
"""

from pathlib import Path

import numpy as np

__all__ = ["DATA_FORMATS", "UserDataError", "read_table"]

#: File suffixes read by :func:`read_table`.
DATA_FORMATS = (".parquet", ".pq", ".csv", ".feather", ".npz")


class UserDataError(ValueError):
    """A user's data file or frame cannot be compared: the problem in one line."""


def read_table(path):
    """Read a user's data file into a DataFrame.

    Parquet (``.parquet``, ``.pq``) and Feather (``.feather``) need pyarrow.
    A ``.npz`` file holds one array per column: a 1-D array is a column of
    its name, a 2-D array ``name`` of shape (n, k) the columns ``name_0`` ...
    ``name_<k-1>`` (so ``image=`` / ``text=`` can name it by the prefix
    ``"name_"``).

    Read more in the user guide: docs/index.md ("Your own data").

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    frame : pandas.DataFrame

    Raises
    ------
    UserDataError
        The file is missing, of another format, or unreadable.
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
        raise UserDataError(f"--data {path}: cannot read it as {suffix} "
                            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
                            ) from None


def _read_arrow(path, suffix):
    """A Parquet or Feather file as a DataFrame, each column its own array: read through the
    system allocator (its freed buffers return to the operating system; pyarrow's default
    pool keeps them) and converted column by column, releasing the Arrow table as it goes,
    so that reading holds about 3x the data at its peak instead of 4x, and the DataFrame 1x.
    """
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
        return table.to_pandas(split_blocks=True, self_destruct=True)
    finally:
        pa.set_memory_pool(default)


def _return_freed_memory():
    """Hand the memory of the freed file buffers back to the operating system (glibc keeps
    freed heap memory for reuse; ``malloc_trim``, as Dask's workers do): the file's
    DataFrame, once X is built, is not held as the job's resident memory.  A no-op where
    the C library has no ``malloc_trim``."""
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
