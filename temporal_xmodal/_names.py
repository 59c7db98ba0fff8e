"""What the column names of X say: its blocks, a time column out of place, a unit.

Read only when X has string column names (a DataFrame): :func:`named_blocks` finds the image
and text blocks from two name prefixes (``img_0…`` / ``txt_0…``, or
:func:`~temporal_xmodal.make_crossmodal_transformer`'s ``image__`` / ``text__``), and the
checks name a date or time column that is not last, a last column that continues a feature
block, and a ``[unit]`` suffix that contradicts the estimator's ``time_unit``.
:mod:`temporal_xmodal._layout` asks this module; NumPy input never reaches it.
"""

import re

import numpy as np

from .time import TIME_UNITS
from ._warnings import warn

_UNIT_SUFFIX = re.compile(r"\[(\w+)\]$")


class LayoutWarning(UserWarning):
    """X's block layout is a guess: nothing shows where the image block ends.

    Warned at fit when ``n_image_features=None`` and X has no column names
    showing two blocks (NumPy input, or names without two prefixes): the
    feature columns are split in half, which is right only when both
    modalities have the same width.  Pass ``n_image_features``.

    Read more in the user guide: docs/pipelines.md.
    """


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
    runs = _runs(feature_names[:-1])
    if len(runs) != 2 or not all(p for p, _, _ in runs):
        return None
    return [(p, count) for p, count, _ in runs]


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
