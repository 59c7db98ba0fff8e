"""Where X's columns are: the time column (the last), the image and text blocks, and what
X's column names (a DataFrame's) say of them.  Read more in docs/pipelines.md."""

import re

import numpy as np
from scipy import sparse

from ..time import TIME_UNITS, is_datetime_like
from .._sparse_input import _NO_COLUMNS, split_sparse
from .._warnings import warn
from ._checks import _is_number

_UNIT_SUFFIX = re.compile(r"\[(\w+)\]$")


class LayoutWarning(UserWarning):
    """X's block layout is a guess: ``n_image_features=None`` and no column names showing two
    blocks, so the feature columns were split in half.

    Read more in the user guide: docs/pipelines.md.
    """


# ------------------------------------------------------------------ split
def write_time_column(X, time):
    """Write ``time`` into the last column of a stacked X, in place; returns X."""
    X[:, -1] = time
    return X


def split_time_column(X):
    """``(features, time)``: X's feature columns (an array, DataFrame or CSRWindow) and its
    last column's raw values (numbers or dates).

    Raises a ``TypeError`` naming a date column that is not last or a column of strings,
    a ``ValueError`` for X not 2-D or without columns.
    """
    if sparse.issparse(X):
        return split_sparse(X)
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
    """Raise for a feature column holding dates or strings, naming it; ``last`` (a
    DataFrame's) returns ``(name, column, n_columns)`` of X's last column, to name a label
    column left in X."""
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


# ------------------------------------------------------------------ blocks
def resolve_blocks(n_image_features, n_columns, feature_names=None, time_unit=None):
    """``(n_image, n_text)``: X's blocks from the estimator's ``n_image_features`` and
    X's ``n_columns`` (time included), checked against its ``feature_names`` (None without)
    and the ``[unit]`` of its time column's name against ``time_unit``."""
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


def split_blocks(features, n_image, n_text):
    """``(X_image, X_text)``: the first ``n_image`` feature columns and the last ``n_text``
    (views, or windows of a sparse X's CSR); both are the one column when X has one."""
    return features[:, :n_image], features[:, features.shape[1] - n_text:]


# ------------------------------------------------------------------ the names
#: Column names that say "labels".
_LABEL_WORDS = {"label", "labels", "y", "target", "targets", "class", "classes", "category",
                "categories", "tag", "tags", "topic", "topics"}
#: Words that mark a column name as a date or a time.
_TIME_WORDS = {"date", "dates", "time", "times", "timestamp", "datetime", "year", "years",
               "month", "months", "day", "days", "week", "weeks", "epoch", "period"}


def _label_like(name, column, *, second_to_last):
    """Whether X's last column (after a date column) looks like labels: strings, a
    label-like name, at most 50 distinct integers, or the date just before it."""
    words = {w for w in re.split(r"[^a-z]+", str(name).lower()) if w}
    if second_to_last or words & _LABEL_WORDS:
        return True
    values = np.asarray(column)
    if values.dtype.kind in "OUSb":
        return True
    return values.dtype.kind in "iu" and len(np.unique(values)) <= 50


def _prefix(name):
    name = str(name)
    if "__" in name:
        return name.split("__", 1)[0]
    return re.sub(r"[\d_.\-\s]+$", "", name)


def named_blocks(feature_names):
    """``[(prefix, count), (prefix, count)]``: the two runs of equal name prefix (``img_0``
    → ``img``; ``image__*``) among X's names before the last, or None."""
    runs = _runs(feature_names[:-1])
    if len(runs) != 2 or not all(p for p, _, _ in runs):
        return None
    return [(p, count) for p, count, _ in runs]


def _check_time_name(feature_names, blocks, time_unit):
    """Raise for a ``[unit]`` time column before the last, a last column that continues a
    block, or a last column's unit other than ``time_unit``."""
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


def _looks_like_time_name(name):
    """Whether a column name says date or time (its words, or a ``[unit]`` suffix)."""
    name = str(name)
    match = _UNIT_SUFFIX.search(name)
    if match and match.group(1) in TIME_UNITS:
        return True
    words = [w for w in re.split(r"[^a-z]+", name.lower()) if w]
    return any(w in _TIME_WORDS or w.startswith(("date", "time")) for w in words)


def _blocks_seen(feature_names):
    """Text for the 'auto' error: the name blocks found, and a date/time column among them."""
    runs = _runs(feature_names[:-1])
    shown = ", ".join(f"{p or '(no prefix)'!r} ×{c}" for p, c, _ in runs[:4])
    text = f" (prefixes {shown}{', …' if len(runs) > 4 else ''})"
    suspects = [(i, str(n)) for i, n in enumerate(feature_names[:-1])
                if _looks_like_time_name(n)]
    if suspects:
        position, name = suspects[0]
        text += (f"; X's column {name!r} (position {position}) looks like a date or time, "
                 "but only the last column of X = [image | text | time] is the time: move "
                 "it last (make_crossmodal_transformer does it by name)")
    return text


def _check_misplaced_single_column(feature_names):
    """Raise when one column sits between two named blocks (or first, named like a time)
    and the last column continues the second block: ``[img_0 …, date, txt_0 … txt_47]``."""
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


def _warn_half_split(n_content, n_image, feature_names):
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
