"""The loaders' file readers, whose errors name the file.

``FileNotFoundError`` for a missing file, ``ValueError`` naming the file (and the 1-based line
where there is one) for anything unreadable in it.
"""

import numpy as np


def read_lines(path, *, dataset):
    """Lines of a UTF-8 text file, split on ``\\n`` only (line ``i`` at index ``i - 1``).

    A leading byte-order mark and each line's trailing ``\\r`` are dropped, and so are trailing
    empty lines; form feeds, ``\\x1c``… and U+2028 inside OCR caption text do not split lines.
    ``dataset`` names the data set in messages.  A missing file raises ``FileNotFoundError``; a
    byte that is not UTF-8 a ``ValueError`` naming the file, line, column and bytes.
    """
    if not path.is_file():
        raise FileNotFoundError(f"{dataset} file missing: {path}")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raw = exc.object  # offsets count from after a byte-order mark
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        lineno = raw.count(b"\n", 0, exc.start) + 1
        bad = raw[exc.start:exc.end]
        raise ValueError(
            f"{path}:{lineno}: byte{'s' if len(bad) > 1 else ''} "
            f"{' '.join(f'0x{b:02x}' for b in bad)} at column {exc.start - line_start + 1} "
            f"is not valid UTF-8 ({exc.reason}); {dataset} text files must be UTF-8 "
            "(re-encode the file, e.g. with iconv -f latin1 -t utf-8).") from None
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def read_mat(path, names, *, dataset):
    """The named 2-D numeric variables of a MATLAB ``.mat`` file (v4–v7.2), as float64 arrays.

    A missing file raises ``FileNotFoundError``; an unreadable file (empty, truncated, another
    format, v7.3/HDF5) or a missing, non-numeric or non-2-D variable a ``ValueError`` naming the
    file and the reader's complaint or the variable and those present.
    """
    from scipy.io import loadmat

    if not path.is_file():
        raise FileNotFoundError(f"{dataset} file missing: {path}")
    try:
        mat = loadmat(path)
    # scipy's reader reports damage as MatReadError, OSError, ValueError,
    # IndexError or TypeError depending on where the file ends; all of them
    # mean the same thing to the caller, so all become one ValueError.
    except Exception as exc:  # noqa: BLE001
        size = path.stat().st_size
        raise ValueError(
            f"{path}: not a readable MATLAB .mat file ({size} bytes; the reader said "
            f"{type(exc).__name__}: {exc}); the file is empty, truncated or of another "
            "format: download it again.") from exc
    present = sorted(k for k in mat if not k.startswith("__"))
    missing = [name for name in names if name not in mat]
    if missing:
        raise ValueError(f"{path}: variable(s) {', '.join(missing)} missing; the file holds "
                         f"{', '.join(present) if present else 'no variables'}.")
    out = {}
    for name in names:
        value = np.asarray(mat[name])
        if value.ndim != 2 or not np.issubdtype(value.dtype, np.number):
            raise ValueError(f"{path}: variable {name} must be a 2-D numeric matrix; got "
                             f"shape {value.shape} of dtype {value.dtype}.")
        out[name] = value.astype(np.float64, copy=False)
    return out
