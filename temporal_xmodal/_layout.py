"""Reading the column-block layout ``X = [image features | text features | time]``.

The only module that knows where the columns of X are: it splits X into its
feature blocks and its time column (the last), reads the block widths (from the feature
names through :mod:`temporal_xmodal._names`, which NumPy input never reaches) and rejects
columns that cannot be features (named).  With plain numbers only the values show where the
time column is: a last column statistically indistinguishable from the text features (the
time column missing), or a first column far outside the image features' scale while the
last looks like a feature (the time listed first), is warned about with
:class:`TimeColumnWarning` (:func:`check_time_column_values`).  Building X is
:mod:`temporal_xmodal._stacking`'s; what the time column *means* (dates, units, the axis) is
:mod:`temporal_xmodal.time`'s.
"""

import numpy as np
from scipy import sparse

from .time import is_datetime_like
from ._names import LayoutWarning  # noqa: F401 - raised here, exported from here
from ._sparse_input import split_sparse
from ._names import (_blocks_seen, _check_time_name, _label_like, _looks_like_time_name,
                     _warn_half_split, named_blocks)
from ._validation import _is_number
from ._warnings import warn

_NO_COLUMNS = ("X has 0 feature(s) (shape=({n}, 0)) while a minimum of 2 is required: the "
               "layout is [image | text | time].")



# ------------------------------------------------------------------ split
def write_time_column(X, time):
    """Write ``time`` into the last column of a stacked ``X = [image | text | time]`` (in
    place): the layout's one writer of the time column, as :func:`split_time_column` is its
    reader.  Returns X."""
    X[:, -1] = time
    return X


def split_time_column(X):
    """Separate X's feature columns from its time column (the last), checking column types.

    Parameters
    ----------
    X : array-like, pandas.DataFrame or scipy sparse matrix of shape (n_samples, n_columns)
        A sparse X (any scipy format) is read as CSR
        (:func:`temporal_xmodal._sparse_input.split_sparse`): its features are a column
        window of it (:class:`~temporal_xmodal._sparse_input.CSRWindow`, nothing copied).

    Returns
    -------
    features : ndarray, DataFrame or CSRWindow of shape (n_samples, n_columns - 1)
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



# ------------------------------------------------------------------ the time column's values
class TimeColumnWarning(UserWarning):
    """X's values suggest its time column is missing or not the last column.

    Raised by :func:`check_time_column_values` when nothing else (dates,
    column names) shows where the time column is.

    Read more in the user guide: docs/pipelines.md.
    """


#: The value check reads at most this many rows (evenly spaced) and reference columns.
_SAMPLE_ROWS = 2000
_SAMPLE_COLUMNS = 256
#: Fewer rows (or reference columns) than these and the values say too little.
_MIN_ROWS = 50
_MIN_REFERENCE = 3


def _column_stats(A):
    """Per column of ``A`` (float64): mean, std, share of negatives, distinct share, excess
    kurtosis, min, max."""
    S = np.sort(A, axis=0)
    distinct = 1 + (np.diff(S, axis=0) != 0).sum(axis=0)
    mean, std = A.mean(axis=0), A.std(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        kurtosis = (((A - mean) / np.where(std > 0, std, 1.0)) ** 4).mean(axis=0) - 3.0
    return {"mean": mean, "std": std, "neg": (A < 0).mean(axis=0),
            "distinct": distinct / A.shape[0], "kurtosis": kurtosis, "min": S[0],
            "max": S[-1]}


def _reference(A):
    """Stats of up to ``_SAMPLE_COLUMNS`` non-constant columns of A (None if too few)."""
    if A.shape[1] > _SAMPLE_COLUMNS:
        A = A[:, np.unique(np.linspace(0, A.shape[1] - 1, _SAMPLE_COLUMNS).astype(np.intp))]
    stats = _column_stats(A)
    varying = stats["std"] > 0
    if varying.sum() < _MIN_REFERENCE:
        return None
    return {k: v[varying] for k, v in stats.items()}


def _spread(k):
    """Up to ``_SAMPLE_COLUMNS`` evenly spaced positions among ``k`` columns (all when
    fewer): those :func:`_reference` keeps."""
    return np.unique(np.linspace(0, k - 1, min(k, _SAMPLE_COLUMNS)).astype(np.intp))


def _columns(F, columns):
    """Columns of the sampled rows ``F`` (an array or CSR) as a dense float64 array."""
    part = F[:, np.asarray(columns, dtype=np.intp)]
    return (part.toarray() if sparse.issparse(part) else np.asarray(part)).astype(np.float64)


def _one(stats):
    return {k: float(v[0]) for k, v in stats.items()}


def _feature_like(column, ref):
    """Whether a column's mean, spread, share of negatives and distinct share all fall
    among the reference feature columns' (widened by a margin)."""
    spread = float(np.median(ref["std"]))
    return (column["std"] > 0
            and ref["mean"].min() - 0.25 * spread <= column["mean"]
            <= ref["mean"].max() + 0.25 * spread
            and ref["std"].min() / 1.25 <= column["std"] <= 1.25 * ref["std"].max()
            and ref["neg"].min() - 0.05 <= column["neg"] <= ref["neg"].max() + 0.05
            and column["distinct"] >= 0.8 * ref["distinct"].min()
            and ref["kurtosis"].min() - 0.5 <= column["kurtosis"]
            <= ref["kurtosis"].max() + 0.5)


def _time_like_first(values, column, ref):
    """Whether a first column lies far from the other image columns' scale (a time?):
    most of its values outside every one of them's mean ± 4 standard deviations."""
    low = float((ref["mean"] - 4 * ref["std"]).min())
    high = float((ref["mean"] + 4 * ref["std"]).max())
    return column["std"] > 0 and np.mean((values < low) | (values > high)) >= 0.5


def _looks_standardised(mean, std):
    """The test of :func:`temporal_xmodal.time.check_axis_plausible` (mean ≈ 0, std ≈ 1)."""
    return np.all(np.abs(mean) < 0.05) and np.all(np.abs(std - 1.0) < 0.05)


def _standardised_time(time, text):
    """Whether the last column is a standardised time that values cannot judge.

    A scaler's output (mean 0, std 1 to float precision, with or without
    Bessel's correction), or a column near mean 0 and std 1 among text
    columns that all are too (X scaled as a whole): a standardised time is
    then indistinguishable from a standardised feature.
    """
    time = np.asarray(time, dtype=np.float64)
    mean, std = float(time.mean()), float(time.std())
    if not _looks_standardised(mean, std):
        return False
    exact = abs(mean) < 1e-6 and abs(std - 1.0) <= 1.0 / len(time) + 1e-6
    return exact or _looks_standardised(text["mean"], text["std"])


def _g(value, fmt=".3g"):
    """A statistic for a message (float noise around zero shown as 0)."""
    value = float(value)
    return f"{0.0 if abs(value) < 1e-9 else value:{fmt}}"


def _range(values, fmt=".3g"):
    return f"{_g(values.min(), fmt)} … {_g(values.max(), fmt)}"


def check_time_column_values(features, time, n_image, n_text, *, estimator_name,
                             feature_names=None):
    """Warn when X's values say its time column is missing or not the last column.

    With NumPy input nothing but the values shows where the time is, and a
    last column that is a feature would silently be read as the time.  Two
    patterns warn (:class:`TimeColumnWarning`), on up to 2,000 evenly spaced
    rows:

    * the last column is **indistinguishable from the text columns**: its
      mean, standard deviation, share of negative values, share of distinct
      values and excess kurtosis all lie among theirs (their range, widened
      by a quarter of their median standard deviation for the mean, by 25%
      for the standard deviation, by 5 points for the share of negatives,
      by 0.5 for the kurtosis; at least 0.8 times their smallest distinct
      share), and it holds many distinct negative values (at least 10% of
      the rows, and at least 10 distinct; times on a calendar or an index
      rarely do).  A standardised last
      column (a scaler's output, or mean ≈ 0 and std ≈ 1 next to text
      columns that are standardised too) is not judged: a standardised time
      cannot be told from a standardised feature (estimators with durations
      warn about a standardised time already);
    * the **first column looks like a time** (at least half of its values
      lie outside every other image column's mean ± 4 standard deviations,
      e.g. years next to scaled features) while the last column lies among
      the text columns (as above, without the conditions on negative
      values and on standardised columns).

    Fewer than 50 rows, or fewer than 3 varying text columns, say too little
    and are not judged.

    Columns whose names show the layout (two name blocks, or a last column
    named like a time) are judged by :func:`resolve_blocks` and skipped here.

    Parameters
    ----------
    features : ndarray of shape (n_samples, n_image + n_text)
        X without its last column, validated.
    time : ndarray of shape (n_samples,)
        The last column on the time axis (numbers, not dates).
    n_image, n_text : int
        The resolved blocks.
    estimator_name : str
        Used in messages.
    feature_names : ndarray of str or None, default=None
        X's column names, when it had string names.
    """
    if feature_names is not None and (named_blocks(feature_names) is not None
                                      or _looks_like_time_name(feature_names[-1])):
        return
    n, d = features.shape
    if n < _MIN_ROWS or n_text < _MIN_REFERENCE:
        return
    rows = np.unique(np.linspace(0, n - 1, min(n, _SAMPLE_ROWS)).astype(np.intp))
    F = features[rows]  # the sampled rows; the sampled columns are read densely below
    t = np.asarray(time, dtype=np.float64)[rows]
    text = _reference(_columns(F, d - n_text + _spread(n_text)))
    if text is None:
        return
    last = _one(_column_stats(t[:, None]))
    if not _feature_like(last, text):
        return
    image = (_reference(_columns(F, 1 + _spread(n_image - 1))) if n_image > _MIN_REFERENCE
             else None)
    F_first = _columns(F, [0])
    first = _one(_column_stats(F_first))
    common = ("The time column must be the last of X = [image | text | time]: check how "
              "X was built (stack_modalities(X_image, X_text, time) builds it; in a "
              "Pipeline, make_crossmodal_transformer puts the time last).")
    if image is not None and _time_like_first(F_first[:, 0], first, image):
        warn(
            f"{estimator_name}: X's first column looks like a time (values "
            f"{first['min']:.6g} … {first['max']:.6g}, mostly outside the other image "
            f"columns' mean ± 4 std), while the last column, read as the time, "
            f"looks like a text feature (mean {_g(last['mean'])}, std {_g(last['std'])}, "
            f"among the text columns' means {_range(text['mean'])} and stds "
            f"{_range(text['std'])}). {common} A ColumnTransformer stacks its outputs in "
            "the order its transformers are listed: list the time last.",
            TimeColumnWarning)
        return
    n_negative = len(np.unique(t[t < 0]))
    if last["neg"] < 0.1 or n_negative < 10 or _standardised_time(time, text):
        return
    warn(
        f"{estimator_name}: X's last column, read as the time, looks like one more text "
        f"feature: its values (mean {_g(last['mean'])}, std {_g(last['std'])}, "
        f"{last['neg']:.0%} negative, {n_negative} distinct negative values) lie among "
        f"the text columns' (means {_range(text['mean'])}, stds {_range(text['std'])}, "
        f"{_range(100 * text['neg'], '.0f')}% negative). Is the time column missing, or "
        f"in another position? {common}",
        TimeColumnWarning)


def split_blocks(features, n_image, n_text):
    """``(X_image, X_text)``: the first ``n_image`` feature columns and the last ``n_text``
    (views of an array; windows of a sparse X's CSR, nothing copied).

    They overlap only in the degenerate single-column case (both blocks are
    that column).
    """
    return features[:, :n_image], features[:, features.shape[1] - n_text:]
