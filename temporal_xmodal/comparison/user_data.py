"""Data of ``compare --data FILE``: a user's table of image features, text features and
dates, checked once and split into the job's train / test data.

:func:`load_user_data` picks the blocks as :func:`~temporal_xmodal.make_crossmodal_transformer`
does, maps the time column to the time axis, reads the labels (or none: pairs ranked by
MRR) and splits the rows at random or in time.  Every problem is a :class:`UserDataError`
naming the column or option.  Nothing here imports torch.  Read more in docs/index.md
("Your own data").
"""

import hashlib
import os

import numpy as np
from sklearn.utils import Bunch

from .._input import write_time_column
from ..time import to_duration, to_time_axis
from .user_files import (_FIX, DATA_FORMATS, UserDataError, _preview, _return_freed_memory,
                    expand_list_columns, is_list_column, read_table)
from .job import MIN_SAMPLES

__all__ = ["DATA_FORMATS", "SPLITS", "UserDataError", "load_user_data", "read_table"]

#: ``split`` of :func:`load_user_data`: rows at random, or the latest rows held out.
SPLITS = ("random", "time")
#: Share of the rows held out for the test split (the synthetic data set's too).
TEST_FRACTION = 0.3


def _select(frame, spec, option):
    """The columns a block names: a prefix (str) or a list of names."""
    columns = [str(c) for c in frame.columns]
    if isinstance(spec, str):
        chosen = [c for c in frame.columns if str(c).startswith(spec)]
        if not chosen:
            raise UserDataError(f"{option} {spec!r}: no column starts with it (columns: "
                                f"{_preview(columns)})")
        return chosen
    spec = list(spec)
    missing = [name for name in spec if name not in frame.columns]
    if missing:
        raise UserDataError(f"{option}: no column named {', '.join(map(repr, missing))} "
                            f"(columns: {_preview(columns)})")
    if not spec:
        raise UserDataError(f"{option}: no column given")
    return spec


def _numeric_block(frame, names, option):
    """Check that a block's columns hold numbers; return their dtypes."""
    non_numeric = [c for c in names if getattr(frame[c].dtype, "kind", "O") not in "biuf"]
    if non_numeric:
        kinds = sorted({str(frame[c].dtype) for c in non_numeric})
        first = frame[non_numeric[0]].dropna()
        text = (len(first) and isinstance(first.iloc[0], str)
                and first.iloc[0].lstrip().startswith("["))
        hint = ("; the values look like arrays written as text (a CSV's): write the file as "
                "Parquet or Feather, where an array per cell is a list column" if text else "")
        raise UserDataError(f"{option}: column(s) {_preview(non_numeric)} are not numeric "
                            f"(dtype {', '.join(kinds)}); {_FIX}{hint}")
    return [frame[c].dtype for c in names]


#: Dtypes whose every value float32 holds exactly: the features stay float32.
_FLOAT32_EXACT = {np.dtype(t) for t in ("float32", "float16", "int8", "int16", "uint8",
                                        "uint16", "bool")}
#: Bytes of each chunk of rows the features are read in (no full-size float64 temporary).
_CHUNK_BYTES = 64 * 2**20


def _row_chunks(n_rows, n_columns, itemsize):
    """Row ranges of at most ``_CHUNK_BYTES`` of ``n_columns`` values each."""
    step = max(1, _CHUNK_BYTES // max(1, n_columns * itemsize))
    return [(start, min(start + step, n_rows)) for start in range(0, n_rows, step)]


def _feature_rows_missing(frame, columns, options, dtype):
    """Per row: whether a feature is NaN; an infinite feature is refused.  Read in row
    chunks."""
    missing = np.zeros(len(frame), dtype=bool)
    for start, stop in _row_chunks(len(frame), len(columns), np.dtype(dtype).itemsize):
        block = frame.iloc[start:stop][columns].to_numpy(dtype=dtype)
        infinite = np.isinf(block)
        if infinite.any():
            row, col = np.argwhere(infinite)[0]
            raise UserDataError(f"{options[col]}: column {columns[col]!r} holds an infinite "
                                f"value (row {frame.index[start + row]!r}); features must be "
                                "finite")
        missing[start:stop] = np.isnan(block).any(axis=1)
    return missing


def _stacked(frame, columns, rows, t, dtype):
    """``[features | time]`` of the frame's ``rows`` (positions) in one ``dtype`` array,
    filled in row chunks: the job's only full-size copy of the features."""
    X = np.empty((len(rows), len(columns) + 1), dtype=dtype)
    for start, stop in _row_chunks(len(rows), len(columns), X.itemsize):
        X[start:stop, :-1] = frame.iloc[rows[start:stop]][columns].to_numpy(dtype=dtype)
    return write_time_column(X, t)


def _read_time(values, column, unit):
    """(times on the axis as float64 with NaN where missing, "dates" or "numbers")."""
    import pandas as pd

    series = pd.Series(values).reset_index(drop=True)
    missing = series.isna().to_numpy()
    kept = series[~missing]
    out = np.full(len(series), np.nan)
    if series.dtype.kind in "biuf" and series.dtype.kind != "b":
        out[~missing] = kept.to_numpy(dtype=np.float64)
        if np.isinf(out).any():
            raise UserDataError(f"--time {column!r}: infinite times; every row needs a "
                                "finite time")
        return out, "numbers"
    if series.dtype.kind == "b" or series.dtype.kind == "m":
        raise UserDataError(f"--time {column!r}: dtype {series.dtype} is neither dates nor "
                            "numbers")
    if series.dtype.kind != "M" and not _is_date_dtype(series.dtype):
        texts = kept.astype(str).to_numpy()
        try:  # ISO dates of any year first (numpy's own parser: 1500-06-01 included)
            dates = np.array(texts, dtype="datetime64[us]")
        except (ValueError, TypeError, OverflowError):
            parsed = pd.to_datetime(pd.Series(texts), errors="coerce", format="mixed")
            bad = parsed.isna().to_numpy()
            if bad.any():
                raise UserDataError(
                    f"--time {column!r}: {int(bad.sum())} value(s) are neither dates nor "
                    f"numbers (e.g. {texts[bad][0]!r}); write dates as 1890-06-01 or give "
                    "numbers with --time-unit") from None
            dates = parsed.to_numpy()
        kept = dates
    try:
        out[~missing] = to_time_axis(np.asarray(kept), unit, name=f"--time {column!r}")
    except (TypeError, ValueError) as exc:
        raise UserDataError(str(exc).splitlines()[0]) from None
    return out, "dates"


def _is_date_dtype(dtype):
    return getattr(dtype, "kind", None) == "M" or str(dtype).startswith("datetime64")


def _read_labels(values, column, sep):
    """(y, kind, class names): 1-based int codes, or a 0/1 indicator matrix (multilabel)."""
    import pandas as pd

    series = pd.Series(values).reset_index(drop=True)
    first = series.dropna().iloc[0] if series.notna().any() else None
    listed = isinstance(first, (list, tuple, set, np.ndarray))
    if sep is not None or listed:
        if not listed:
            series = series.map(lambda v: v if v is None or v != v else
                                [part.strip() for part in str(v).split(sep) if part.strip()])
        sets = [list(v) for v in series]
        names = sorted({str(c) for labels in sets for c in labels})
        index = {name: j for j, name in enumerate(names)}
        y = np.zeros((len(sets), len(names)), dtype=np.int64)
        for i, labels in enumerate(sets):
            y[i, [index[str(c)] for c in labels]] = 1
        return y, "multilabel", names
    names, codes = np.unique(series.astype(str).to_numpy(), return_inverse=True)
    return codes.astype(np.int64) + 1, "labels", [str(n) for n in names]


def _fingerprint(frame):
    """A short digest of the frame's contents (the job key of a user's data)."""
    import pandas as pd

    digest = hashlib.sha256()
    digest.update(repr([str(c) for c in frame.columns]).encode())
    if not any(is_list_column(frame[c]) for c in frame.columns):
        try:
            digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
            return digest.hexdigest()[:16]
        except TypeError:  # unhashable cells
            pass
    for column in frame.columns:  # a list column (multilabel, or unused) as JSON, alone
        series = frame[column]
        if getattr(series.dtype, "kind", "O") in "biuf":  # the numbers' bytes: fast
            digest.update(np.ascontiguousarray(series.to_numpy()).view(np.uint8))
            continue
        try:
            digest.update(pd.util.hash_pandas_object(series, index=False).to_numpy())
        except TypeError:
            digest.update(series.to_json(date_format="iso").encode())
    return digest.hexdigest()[:16]


def load_user_data(data, *, image, text, time=None, label=None, label_sep=None,
                   time_unit="years", split="random", window="5%", random_state=0,
                   n_samples=None):
    """A user's table as the comparison's train / test data.

    Read more in the user guide: docs/index.md ("Your own data").

    Parameters
    ----------
    data : DataFrame, str or Path
        The rows, or a file that :func:`read_table` reads.
    image, text : str or list of str
        Each block's columns: a name prefix (``"img_"``) or a list of names.
    time : str or None, default=None
        The time column: numbers in ``time_unit``, dates, or date strings.  ``None``:
        undated (the temporal figures and Δ-time are n/a).
    label : str or None, default=None
        Class labels, or a multilabel column (lists, or strings split at ``label_sep``).
        ``None``: each row is an image–text pair, ranked by MRR.
    label_sep : str or None, default=None
        Separator of a multilabel string column (``"|"``).
    time_unit : str, default="years"
        Unit of numeric times and of the axis dates are mapped to.
    split : {"random", "time"}, default="random"
        Hold out 30 % of the rows at random, or the latest 30 %.
    window : str or float, default="5%"
        t-mAP@50's window: a share of the time span, a duration (``"180D"``) or a number
        in ``time_unit``.
    random_state : int, default=0
        Seed of the random split and of the subset.
    n_samples : int or None, default=None
        A random subset of this many usable rows (``None``: all).

    Returns
    -------
    data : sklearn.utils.Bunch
        As :func:`~temporal_xmodal.comparison.load_comparison_data`, with ``key`` (these
        data in the job key), ``notes`` (rows dropped, columns unused) and ``time_unit``.

    Raises
    ------
    UserDataError
        A missing column, a non-numeric block, too few rows, unreadable dates, an unknown
        option: one line naming it.
    """
    import pandas as pd

    if split not in SPLITS:
        raise UserDataError(f"--split must be one of {', '.join(SPLITS)}; got {split!r}")
    source = None
    if isinstance(data, (str, os.PathLike)):
        source, data = str(data), read_table(data)
    if not isinstance(data, pd.DataFrame):
        raise UserDataError(f"data must be a DataFrame or a file path; got {type(data).__name__}")
    if len(data) == 0:  # a header-only file
        raise UserDataError(f"{source or 'the data'} hold(s) no rows (columns: "
                            f"{_preview(data.columns)}); the comparison needs at least "
                            f"{MIN_SAMPLES} rows")
    if isinstance(window, str):  # "0.5": a number
        try:
            window = float(window)
        except ValueError:
            pass
    frame = data
    # an embedding per cell (a list column img) read as the columns img_0 ...
    frame, ((image_spec, _), (text_spec, _)) = expand_list_columns(
        frame, [(image, "--image"), (text, "--text")], source=source, skip={time, label})
    image_cols = _select(frame, image_spec, "--image")
    text_cols = _select(frame, text_spec, "--text")
    used = {"--time": [time] if time is not None else [], "--label": [label] if label else []}
    for option, names in used.items():
        if names and names[0] not in frame.columns:
            raise UserDataError(f"{option}: no column named {names[0]!r} (columns: "
                                f"{_preview(frame.columns)})")
    overlap = set(image_cols) & set(text_cols)
    clash = (set(image_cols) | set(text_cols)) & {time, label}
    if overlap or clash:
        raise UserDataError(f"column(s) {_preview(sorted(map(str, overlap | clash)))} are named "
                            "by two of --image, --text, --time, --label; each column belongs "
                            "to one")
    notes = []
    unused = [c for c in frame.columns
              if c not in set(image_cols) | set(text_cols) | {time, label}]
    if unused:
        notes.append(f"columns not used: {_preview(unused)}")
    dtypes = (_numeric_block(frame, image_cols, "--image")
              + _numeric_block(frame, text_cols, "--text"))
    # float32 features stay float32 (what the networks train on); others are read as float64
    dtype = np.float32 if set(dtypes) <= _FLOAT32_EXACT else np.float64
    columns = list(image_cols) + list(text_cols)
    options = ["--image"] * len(image_cols) + ["--text"] * len(text_cols)
    if time is not None:
        t, kind = _read_time(frame[time].to_numpy(), time, time_unit)
    else:
        t, kind = np.zeros(len(frame)), "none"
    missing = _feature_rows_missing(frame, columns, options, dtype) | np.isnan(t)
    if label:
        missing |= frame[label].isna().to_numpy()
    if missing.any():
        first = frame.index[np.flatnonzero(missing)[0]]
        notes.append(f"dropped {int(missing.sum())} of {len(frame)} rows with a missing value "
                     f"(the first: row {first!r})")
    keep = ~missing
    n = int(keep.sum())
    if n < MIN_SAMPLES:
        raise UserDataError(f"the data hold {n} usable row(s); the comparison needs at least "
                            f"{MIN_SAMPLES} (train + test)" + (f" ({notes[-1]})" if missing.any()
                                                              else ""))
    rng = np.random.default_rng(random_state)
    if n_samples is not None:
        if n_samples < MIN_SAMPLES:
            raise UserDataError(f"--n-samples must be at least {MIN_SAMPLES}; got {n_samples}")
        if n_samples < n:
            subset = np.zeros(n, dtype=bool)
            subset[rng.choice(n, n_samples, replace=False)] = True
            keep[np.flatnonzero(keep)[~subset]] = False
            n = n_samples
    positions, t = np.flatnonzero(keep), t[keep]
    if label:
        y, label_kind, categories = _read_labels(frame[label][keep], label, label_sep)
        if len(categories) < 2 or (label_kind == "multilabel" and y.all()):
            what = (f"holds a single class ({categories[0]!r}) for every row"
                    if len(categories) < 2 else
                    f"gives every row every label ({', '.join(categories)})")
            raise UserDataError(
                f"--label {label!r} {what}: every item is relevant to every other, so any "
                "ranking scores category mAP 1 and the estimators that learn from labels "
                "cannot train; give at least 2 classes, or leave --label out to rank each "
                "row's pair by MRR")
    else:
        y, label_kind, categories = None, "pairs", None
    span = float(np.ptp(t))
    dated = span > 0
    if time is not None and not dated:
        notes.append(f"--time {time!r} holds one instant for every row: undated (the temporal "
                     "figures and Δ-time are n/a)")
    eval_window = None
    if dated:
        try:
            eval_window = to_duration(window, time_unit, name="--window", span=span)
        except (TypeError, ValueError) as exc:
            raise UserDataError(str(exc).splitlines()[0]) from None
        if not 0 < eval_window:
            raise UserDataError(f"--window must be positive; got {window!r}")
    if split == "random":
        test = rng.random(n) < TEST_FRACTION
    else:
        order = np.argsort(t, kind="stable")
        test = np.zeros(n, dtype=bool)
        test[order[n - int(round(TEST_FRACTION * n)):]] = True
    if test.sum() < 2 or (~test).sum() < 2:
        raise UserDataError(f"the split leaves {int((~test).sum())} training and "
                            f"{int(test.sum())} test rows; each needs at least 2")
    d = len(image_cols)
    X_tr, X_te = (_stacked(frame, columns, positions[m], t[m], dtype) for m in (~test, test))
    # views of X (no copy); the times in float64, exact, whatever X's dtype
    blocks = [(X[:, :d], X[:, d:-1], t[m]) for X, m in ((X_tr, ~test), (X_te, test))]
    if dtype == np.float32 and dated:
        rounding = float(np.max(np.abs(t - t.astype(np.float32))))
        if rounding > 0:
            notes.append(f"features held in float32 as given; the time column of X rounded "
                         f"to float32 for the estimators (by up to {rounding:.2g} {time_unit})"
                         "; t-mAP@50 and its date filter read the exact times")
    pairs = y is None
    y_tr, y_te = ((np.arange(len(X_tr)), np.arange(len(X_te))) if pairs
                  else (y[~test], y[test]))
    cut = ""
    if split == "time" and dated:
        cut = (f"; trained on times up to {blocks[0][2].max():g}, tested on "
               f"{blocks[1][2].min():g} to {blocks[1][2].max():g} ({time_unit})")
    n_classes = len(categories or ())
    what = {"labels": f"{n_classes} classes", "multilabel": f"{n_classes} labels (multilabel)",
            "pairs": "no labels: each row a pair, ranked by MRR (each picture finds its own "
                     "text)"}[label_kind]
    window_text = (f"t-mAP@50 window = {eval_window:.3g} {time_unit} ({window})" if dated
                   else "undated: the temporal figures are n/a")
    description = (f"{source or 'DataFrame'}, {len(X_tr)} train / {len(X_te)} test rows "
                   f"({split} split{cut}), {d} image + {len(text_cols)} text features, "
                   f"{what}; {window_text}")
    key = {"source": source, "fingerprint": _fingerprint(frame), "image": image,
           "text": text, "time": time, "label": label, "label_sep": label_sep,
           "time_unit": time_unit, "split": split, "window": window, "n_samples": n_samples}
    del frame, data
    _return_freed_memory()
    return Bunch(X_train=X_tr, y_train=y_tr, X_test=X_te, y_test=y_te, blocks_train=blocks[0],
                 blocks_test=blocks[1], n_image_features=d, time_window=None,
                 eval_window=eval_window, protocol="undated" if pairs else "labels",
                 dated=dated, pairs=pairs, time_unit=time_unit, key=key, notes=notes,
                 description=description,
                 extra={"data": {k: v for k, v in key.items() if k != "fingerprint"},
                        "label_kind": label_kind, "time_kind": kind, "notes": notes,
                        **({"categories": categories} if label_kind == "labels" else {})})
