"""Where the time column is, judged from the values when nothing else shows it.

Dates and column names show the layout ``X = [image | text | time]``
(:mod:`temporal_xmodal._layout`); with plain numbers only the values can.  A last column
statistically indistinguishable from the text features (the time column missing), or a first
column far outside the image features' scale while the last looks like a feature (the time
listed first), is warned about with :class:`TimeColumnWarning`, saying what to check.
"""


import numpy as np

from ._layout import _looks_like_time_name, named_blocks
from ._warnings import warn


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
    F = np.asarray(features[rows], dtype=np.float64)
    t = np.asarray(time, dtype=np.float64)[rows]
    text = _reference(F[:, d - n_text:])
    if text is None:
        return
    last = _one(_column_stats(t[:, None]))
    if not _feature_like(last, text):
        return
    image = _reference(F[:, 1:n_image]) if n_image > _MIN_REFERENCE else None
    first = _one(_column_stats(F[:, :1]))
    common = ("The time column must be the last of X = [image | text | time]: check how "
              "X was built (stack_modalities(X_image, X_text, time) builds it; in a "
              "Pipeline, make_crossmodal_transformer puts the time last).")
    if image is not None and _time_like_first(F[:, 0], first, image):
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


