"""Reading the column-block layout ``X = [image features | text features | time]``.

The only module that knows where the columns of X are: it splits X into its
feature blocks and its time column (the last), infers the blocks from feature
names and rejects columns that cannot be features (named).  Building X is
:mod:`temporal_xmodal._stacking`'s; what the time column *means* (dates,
units, the axis) is :mod:`temporal_xmodal.time`'s.
"""

import re

import numpy as np
from scipy import sparse

from .time import TIME_UNITS, is_datetime_like
from ._warnings import warn

class LayoutWarning(UserWarning):
    """X's block layout is a guess: nothing shows where the image block ends.

    Warned at fit when ``n_image_features=None`` and X has no column names
    showing two blocks (NumPy input, or names without two prefixes): the
    feature columns are split in half, which is right only when both
    modalities have the same width.  Pass ``n_image_features``.

    Read more in the user guide: docs/pipelines.md.
    """


_NO_COLUMNS = ("X has 0 feature(s) (shape=({n}, 0)) while a minimum of 2 is required: the "
               "layout is [image | text | time].")

_UNIT_SUFFIX = re.compile(r"\[(\w+)\]$")


# ------------------------------------------------------------------ split
def split_time_column(X):
    """Separate X's feature columns from its time column (the last), checking column types.

    Parameters
    ----------
    X : array-like or pandas.DataFrame of shape (n_samples, n_columns)

    Returns
    -------
    features : ndarray or DataFrame of shape (n_samples, n_columns - 1)
    time : ndarray or Series of shape (n_samples,)
        Raw time values (numbers or dates), to be mapped by
        :func:`temporal_xmodal.time.to_time_axis`.

    Raises
    ------
    TypeError
        A date column that is not the last, or a column of strings (named).
    ValueError
        X is not 2-D or has no column.
    """
    if sparse.issparse(X):
        raise TypeError("X is a sparse matrix; sparse input is not supported: the "
                        "networks take dense features (convert with X.toarray()).")
    if hasattr(X, "iloc") and hasattr(X, "columns"):  # pandas DataFrame
        if X.shape[1] == 0:
            raise ValueError(_NO_COLUMNS.format(n=X.shape[0]))
        for position, (name, dtype) in enumerate(zip(X.columns[:-1], X.dtypes.iloc[:-1])):
            _check_feature_dtype(dtype, lambda p=position: X.iloc[:, p], name, position,
                                 last=lambda: (X.columns[-1], X.iloc[:, -1], X.shape[1]))
        return X.iloc[:, :-1], X.iloc[:, -1]
    if not hasattr(X, "shape") or not hasattr(X, "dtype"):
        X = np.asarray(X, dtype=object if _has_objects(X) else None)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D ([image | text | time] columns); got {X.ndim}-D "
                         f"input of shape {X.shape}. Reshape your data: a single row "
                         "with X.reshape(1, -1).")
    if X.shape[1] == 0:
        raise ValueError(_NO_COLUMNS.format(n=X.shape[0]))
    if X.dtype.kind == "c":
        raise ValueError("Complex data not supported: X holds complex numbers; features "
                         "and time must be real.")
    if X.dtype.kind == "M" and X.shape[1] > 1:
        raise TypeError("X holds dates in every column; only the last column (time) may be "
                        "a date.")
    if X.dtype.kind == "O":
        for position in range(X.shape[1] - 1):
            column = X[:, position]
            _check_feature_dtype(np.asarray(column.tolist()).dtype
                                 if _objects_not_numbers(column) else np.dtype(float),
                                 lambda c=column: c, None, position)
    elif X.dtype.kind in "USV":
        raise TypeError(f"X holds strings (dtype {X.dtype}); features must be numbers and "
                        "only the last column may hold dates.")
    return X[:, :-1], X[:, -1]


def _has_objects(X):
    try:
        np.asarray(X, dtype=np.float64)
        return False
    except (TypeError, ValueError):
        return True


def _objects_not_numbers(column):
    try:
        column.astype(np.float64)
        return False
    except (TypeError, ValueError):
        return True


def _check_feature_dtype(dtype, get_column, name, position, last=None):
    """Raise for a feature column holding dates or strings, naming it.

    ``last`` (a DataFrame's) returns ``(name, column, n_columns)`` of X's last column: a
    date column followed by a label-like last column (strings, a label-like name, few
    distinct integers, or the date second to last) is met with "a label column left in X?".
    """
    label = f"column {name!r} (position {position})" if name is not None else \
        f"column {position}"
    kind = getattr(dtype, "kind", "O")
    if kind in "biuf":
        return
    column = get_column()
    if kind in "Mm" or getattr(dtype, "tz", None) is not None or is_datetime_like(column):
        move = ("move the date column last (make_crossmodal_transformer does it by name).")
        if last is not None:
            last_name, last_column, n_columns = last()
            if not is_datetime_like(last_column) and _label_like(
                    last_name, last_column, second_to_last=position == n_columns - 2):
                raise TypeError(
                    f"X's {label} holds dates, but X's last column {last_name!r} would be "
                    "read as the time (only the last column of X = [image | text | time] is "
                    f"the time). A label column left in X? pass labels as y: "
                    f"fit(X.drop(columns={last_name!r}), X[{last_name!r}]); then the date "
                    f"column is last. Otherwise {move}")
        raise TypeError(
            f"X's {label} holds dates, but only the last column of X = [image | text | time] "
            f"is the time: {move}")
    values = np.asarray(column, dtype=object)
    example = next((v for v in values if not _is_number(v)), None)
    if example is None and kind != "O":
        example = values[0] if len(values) else None
    if example is not None or kind not in "O":
        raise TypeError(
            f"X's {label} holds non-numeric values such as {example!r} (float() "
            "argument must be a string or a number); every column "
            "before the time must be an image or text feature (a label column left in X? "
            "pass labels as y).")


#: Column names that say "labels" (``label``, ``y``, ``category``...).
_LABEL_WORDS = {"label", "labels", "y", "target", "targets", "class", "classes", "category",
                "categories", "tag", "tags", "topic", "topics"}


def _label_like(name, column, *, second_to_last):
    """Whether X's last column (after a date column) looks like labels left in X: strings,
    a label-like name, at most 50 distinct integers, or the date just before it."""
    words = {w for w in re.split(r"[^a-z]+", str(name).lower()) if w}
    if second_to_last or words & _LABEL_WORDS:
        return True
    values = np.asarray(column)
    if values.dtype.kind in "OUSb":
        return True
    return values.dtype.kind in "iu" and len(np.unique(values)) <= 50


def _is_number(v):
    try:
        float(v)
        return not isinstance(v, (str, bytes))
    except (TypeError, ValueError):
        return False


# ------------------------------------------------------------------ blocks
def _prefix(name):
    name = str(name)
    if "__" in name:
        return name.split("__", 1)[0]
    return re.sub(r"[\d_.\-\s]+$", "", name)


def named_blocks(feature_names):
    """Blocks visible in the feature names (time column excluded), or None.

    Parameters
    ----------
    feature_names : array-like of str
        Names of all columns of X (time last).

    Returns
    -------
    blocks : list of (prefix, count) or None
        The runs of equal name prefix (``img_0, img_1`` → ``img``; the
        ``image__`` / ``text__`` prefixes of :func:`make_crossmodal_transformer`)
        among the feature columns; None when the names show no two blocks.
    """
    prefixes = [_prefix(n) for n in feature_names[:-1]]
    runs = []
    for p in prefixes:
        if runs and runs[-1][0] == p:
            runs[-1][1] += 1
        else:
            runs.append([p, 1])
    if len(runs) != 2 or not all(p for p, _ in runs):
        return None
    return [tuple(r) for r in runs]


def resolve_blocks(n_image_features, n_columns, feature_names=None, time_unit=None):
    """Number of image and text columns of X, checked against its feature names.

    Parameters
    ----------
    n_image_features : int, "auto" or None
        The estimator's parameter.  ``"auto"`` reads the blocks from the
        feature names; ``None`` does the same when the names show two blocks
        (``img_0…`` / ``txt_0…``) and otherwise splits the feature columns in
        half, with a :class:`LayoutWarning` (the split is a guess); an int is
        checked against the names.
    n_columns : int
        Columns of X, time included.
    feature_names : ndarray of str or None
        X's column names, when it had string names.
    time_unit : str or None
        The estimator's time unit, checked against a ``[unit]`` suffix that
        :func:`make_crossmodal_transformer` writes on the time column.

    Returns
    -------
    n_image, n_text : int
    """
    if isinstance(n_image_features, (bool, np.bool_)):
        raise TypeError(
            f"n_image_features={n_image_features!r} is a bool, not a count: pass the number "
            "of leading image columns of X (an int >= 1), 'auto' or None.")
    n_content = n_columns - 1
    if n_content < 1:
        raise ValueError(f"X has {n_columns} feature(s) (n_features = {n_columns}, only a "
                         "time column?); the layout [image | text | time] needs feature "
                         "columns before the time column.")
    blocks = named_blocks(feature_names) if feature_names is not None else None
    if feature_names is not None:
        _check_time_name(feature_names, blocks, time_unit)
    if n_image_features == "auto" or (n_image_features is None and blocks is not None):
        if blocks is None:
            raise ValueError(
                "n_image_features='auto' reads the image and text blocks from X's column "
                "names (e.g. 'image__*' / 'text__*' from make_crossmodal_transformer, or "
                "two prefixes such as 'img_0…' / 'txt_0…'); "
                + ("X has no column names." if feature_names is None else
                   "its names show no two blocks" + _blocks_seen(feature_names) + ".")
                + " Pass n_image_features=<int>.")
        return blocks[0][1], blocks[1][1]
    if n_content == 1 and n_image_features is None:
        warn("X has a single feature column besides time; it is used as both the "
             "image and the text block (a degenerate cross-modal problem).",
             UserWarning)
        return 1, 1
    n_image = (n_content + 1) // 2 if n_image_features is None else int(n_image_features)
    if n_image_features is None:
        _warn_half_split(n_content, n_image, feature_names)
    if not 1 <= n_image <= n_content - 1:
        raise ValueError(
            f"n_image_features={n_image_features} is out of range: X has {n_columns} columns "
            f"({n_content} feature columns + time), so it must lie in [1, {n_content - 1}] to "
            "leave at least one text column.")
    if blocks is not None and blocks[0][1] != n_image:
        (p1, c1), (p2, c2) = blocks
        raise ValueError(
            f"X's column names show an image block of {c1} columns ({p1!r}…) and a text "
            f"block of {c2} ({p2!r}…), but n_image_features={n_image_features} "
            f"({n_image} image columns). Pass n_image_features={c1}, 'auto' or None (both "
            "read the blocks from the names).")
    return n_image, n_content - n_image


def _warn_half_split(n_content, n_image, feature_names):
    """Warn that ``n_image_features=None`` split X's feature columns in half, a guess."""
    seen = ("X has no column names (NumPy input)" if feature_names is None else
            "X's column names show no two blocks" + _blocks_seen(feature_names))
    warn(
        f"n_image_features=None split X's {n_content} feature columns in half, "
        f"{n_image} image + {n_content - n_image} text, as a guess: {seen}, so nothing "
        "shows where the image block ends. Pass n_image_features=<number of image "
        "columns> (X_image.shape[1] when stack_modalities(X_image, X_text, time) built X), "
        "or name the columns by block ('img_0…', 'txt_0…' or make_crossmodal_transformer's "
        "'image__*', 'text__*') and pass n_image_features='auto'.",
        LayoutWarning)


def _check_time_name(feature_names, blocks, time_unit):
    for position, name in enumerate(feature_names[:-1]):
        match = _UNIT_SUFFIX.search(str(name))
        if match and match.group(1) in TIME_UNITS:
            raise ValueError(
                f"X's column {str(name)!r} (position {position}) is a time column, but only "
                "the last column of X = [image | text | time] is the time: put it last "
                "(make_crossmodal_transformer does).")
    last = str(feature_names[-1])
    _check_misplaced_single_column(feature_names)
    if blocks is not None and _prefix(last) == blocks[-1][0]:
        raise ValueError(
            f"X's last column {last!r} looks like a {blocks[-1][0]!r} feature (the time "
            "column is missing?): X must end with the time column, [image | text | time].")
    match = _UNIT_SUFFIX.search(last)
    if time_unit is not None and match and match.group(1) in TIME_UNITS \
            and match.group(1) != time_unit:
        raise ValueError(
            f"X's time column {last!r} is in {match.group(1)} but the estimator's "
            f"time_unit={time_unit!r}: set the same unit on both.")


def _runs(names):
    """Runs of equal name prefix: a list of ``[prefix, count, first position]``."""
    runs = []
    for position, name in enumerate(names):
        p = _prefix(name)
        if runs and runs[-1][0] == p:
            runs[-1][1] += 1
        else:
            runs.append([p, 1, position])
    return runs


#: Words that mark a column name as a date or a time (``issue_date``, ``timestamp``...).
_TIME_WORDS = {"date", "dates", "time", "times", "timestamp", "datetime", "year", "years",
               "month", "months", "day", "days", "week", "weeks", "epoch", "period"}


def _looks_like_time_name(name):
    """Whether a column name says it holds a date or a time (words or a ``[unit]`` suffix)."""
    name = str(name)
    match = _UNIT_SUFFIX.search(name)
    if match and match.group(1) in TIME_UNITS:
        return True
    words = [w for w in re.split(r"[^a-z]+", name.lower()) if w]
    return any(w in _TIME_WORDS or w.startswith(("date", "time")) for w in words)


def _time_like_columns(feature_names):
    """``(position, name)`` of the columns before the last whose names say date or time."""
    return [(i, str(n)) for i, n in enumerate(feature_names[:-1]) if _looks_like_time_name(n)]


def _blocks_seen(feature_names):
    """Text for the 'auto' error: the name blocks found, and a date/time column among them."""
    runs = _runs(feature_names[:-1])
    shown = ", ".join(f"{p or '(no prefix)'!r} ×{c}" for p, c, _ in runs[:4])
    text = f" (prefixes {shown}{', …' if len(runs) > 4 else ''})"
    suspects = _time_like_columns(feature_names)
    if suspects:
        position, name = suspects[0]
        text += (f"; X's column {name!r} (position {position}) looks like a date or time, "
                 "but only the last column of X = [image | text | time] is the time: move "
                 "it last (make_crossmodal_transformer does it by name)")
    return text


def _check_misplaced_single_column(feature_names):
    """Raise when one column sits before or between two named blocks and the last column
    continues the second block (the time column moved away from the end).

    ``[img_0 … img_63, date, txt_0 … txt_47]``: ``date`` splits the blocks and the
    last column ``txt_47`` is a text feature, so ``date`` is the time, misplaced.
    A first column counts only when its name says date or time.
    """
    runs = _runs(feature_names)
    if len(runs) != 3 or runs[2][1] < 2 or not (runs[0][0] and runs[2][0]):
        return
    (p1, c1, _), (p2, c2, s2), (p3, _, _) = runs
    if c2 == 1 and p2 != p3:
        position = s2
    elif c1 == 1 and c2 >= 2 and _looks_like_time_name(feature_names[0]):
        position = 0
    else:
        return
    name, last = str(feature_names[position]), str(feature_names[-1])
    what = ("looks like a date or time" if _looks_like_time_name(name) else
            "sits alone between the feature blocks")
    raise ValueError(
        f"X's column {name!r} (position {position}) {what}, and the last column {last!r} "
        f"looks like a {p3!r} feature: the time column must be the last of X = "
        f"[image | text | time]. Move {name!r} last (make_crossmodal_transformer does it "
        "by name), or drop it if it is not the time.")


def split_blocks(features, n_image, n_text):
    """``(X_image, X_text)``: the first ``n_image`` feature columns and the last ``n_text``.

    They overlap only in the degenerate single-column case (both blocks are
    that column).
    """
    return features[:, :n_image], features[:, features.shape[1] - n_text:]
