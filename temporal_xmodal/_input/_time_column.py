"""What X's values say of a misplaced time column, when nothing else does
(:class:`TimeColumnWarning`).  Read more in docs/pipelines.md."""

import numpy as np
from scipy import sparse

from .._warnings import warn
from ._columns import _looks_like_time_name, named_blocks


class TimeColumnWarning(UserWarning):
    """X's values suggest its time column is missing or not the last column.

    Read more in the user guide: docs/pipelines.md.
    """


#: The value check reads at most this many rows (evenly spaced) and reference columns.
_SAMPLE_ROWS = 2000
_SAMPLE_COLUMNS = 256
#: Fewer rows (or varying reference columns) than these and the values say too little.
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
    """Up to ``_SAMPLE_COLUMNS`` evenly spaced positions among ``k`` columns."""
    return np.unique(np.linspace(0, k - 1, min(k, _SAMPLE_COLUMNS)).astype(np.intp))


def _columns(F, columns):
    """Columns of the sampled rows ``F`` (an array or CSR) as a dense float64 array."""
    part = F[:, np.asarray(columns, dtype=np.intp)]
    return (part.toarray() if sparse.issparse(part) else np.asarray(part)).astype(np.float64)


def _one(stats):
    return {k: float(v[0]) for k, v in stats.items()}


def _feature_like(column, ref):
    """Whether a column's statistics all fall among the reference columns' (widened)."""
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
    """Whether most of a first column's values lie outside every reference column's
    mean ± 4 standard deviations."""
    low = float((ref["mean"] - 4 * ref["std"]).min())
    high = float((ref["mean"] + 4 * ref["std"]).max())
    return column["std"] > 0 and np.mean((values < low) | (values > high)) >= 0.5


def _looks_standardised(mean, std):
    """The test of :func:`temporal_xmodal.time.check_axis_plausible` (mean ≈ 0, std ≈ 1)."""
    return np.all(np.abs(mean) < 0.05) and np.all(np.abs(std - 1.0) < 0.05)


def _standardised_time(time, text):
    """Whether the last column is a scaler's output, or standardised among standardised
    text columns: then it cannot be told from a feature."""
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
    """Warn (:class:`TimeColumnWarning`) when X's values say its time column is missing or
    not the last column.

    On up to ``_SAMPLE_ROWS`` evenly spaced rows, two patterns warn: the last column's
    statistics lie among the text columns' (:func:`_feature_like`) with many distinct
    negative values, unless standardised; or the first column looks like a time
    (:func:`_time_like_first`) while the last lies among the text columns.  Too few rows or
    varying text columns, and names that show the layout, are not judged.

    ``features`` are X's validated feature columns, ``time`` the last column on the axis,
    ``n_image`` / ``n_text`` the blocks; ``estimator_name`` is for messages.
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
