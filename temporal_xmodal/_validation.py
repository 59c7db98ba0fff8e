"""Input validation shared by every estimator (written once, used by all six).

The checks follow ``DESIGN.md`` ("Bad input"): NaN/inf, non-numeric time,
wrong column counts, ``n_image_features`` out of range, empty X, single class
where labels are needed.  Errors are ``ValueError``/``TypeError`` whose message
names the offending input.
"""

import numbers
import warnings

import numpy as np
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import type_of_target


class TimeRangeWarning(UserWarning):
    """Warned when a time-aware model is asked to project outside its training time range."""


def check_time_column(X):
    """Reject a non-numeric last (time) column before generic validation.

    Parameters
    ----------
    X : array-like or pandas.DataFrame
        Candidate input in the ``[image | text | time]`` layout.

    Raises
    ------
    TypeError
        If the last column cannot be read as numbers (strings, datetimes,
        timedeltas, ...).  Dates must be converted to numbers on the user's
        own scale (e.g. fractional years) first.
    """
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and hasattr(X, "columns"):  # pandas DataFrame
        if len(X.columns) == 0:
            return
        dtype = dtypes.iloc[-1]
        kind = getattr(dtype, "kind", "O")
        if kind in "mMSU":
            raise TypeError(_time_type_message(dtype))
        if kind == "O":
            _try_float(X.iloc[:, -1].to_numpy(), dtype)
        return
    if isinstance(X, np.ndarray):
        if X.dtype.kind in "mMSU":
            raise TypeError(_time_type_message(X.dtype))
        if X.dtype.kind == "O" and X.ndim == 2 and X.shape[1] > 0:
            _try_float(X[:, -1], X.dtype)


def _try_float(column, dtype):
    try:
        np.asarray(column, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(_time_type_message(dtype)) from None


def _time_type_message(dtype):
    return (
        "The last column of X is the time and must be numeric (a number on your own "
        f"scale: fractional years, day index, ...); got dtype {dtype}. Convert dates "
        "to numbers first, e.g. year + day_of_year / 365.25."
    )


def resolve_n_image_features(n_image_features, n_features):
    """Number of leading image columns, given the total column count of X.

    Parameters
    ----------
    n_image_features : int or None
        The constructor parameter.  ``None`` splits the non-time columns in
        half (the image block gets the larger half when their count is odd).
    n_features : int
        Total number of columns of X, time included.

    Returns
    -------
    n_image : int
        Validated number of image columns; ``n_features - 1 - n_image`` text
        columns follow.  An X with a single feature column (and
        ``n_image_features=None``) uses that column as both blocks, with a
        warning, so that default construction works on any X.
    """
    n_content = n_features - 1
    if n_content < 1:
        raise ValueError(
            f"X has {n_features} feature(s); the layout [image | text | time] needs "
            "feature columns before the time column."
        )
    if n_content == 1 and n_image_features is None:
        warnings.warn(
            "X has a single feature column besides time; it is used as both the image "
            "and the text block (a degenerate cross-modal problem).",
            UserWarning,
            stacklevel=3,
        )
        return 1
    if n_image_features is None:
        return (n_content + 1) // 2
    if not isinstance(n_image_features, numbers.Integral) or isinstance(
        n_image_features, bool
    ):
        raise TypeError(
            f"n_image_features must be an int or None; got {n_image_features!r}."
        )
    if not 1 <= n_image_features <= n_content - 1:
        raise ValueError(
            f"n_image_features={n_image_features} is out of range: X has {n_features} "
            f"columns ({n_content} feature columns + time), so it must lie in "
            f"[1, {n_content - 1}] to leave at least one text column."
        )
    return int(n_image_features)


def check_time_argument(time, n_samples):
    """Validate the ``time`` argument of ``transform_image``/``transform_text``.

    Parameters
    ----------
    time : None, scalar or array-like of shape (n_samples,)
        Instant(s) at which to project.
    n_samples : int
        Number of rows being projected.

    Returns
    -------
    time : None or ndarray of shape (n_samples,)
    """
    if time is None:
        return None
    if isinstance(time, numbers.Real) and not isinstance(time, bool):
        t = np.full(n_samples, float(time))
    else:
        t = np.asarray(time)
        if t.ndim == 0:
            t = np.full(n_samples, t.item())
        if t.dtype.kind not in "biuf":
            raise TypeError(_time_type_message(t.dtype))
        t = np.asarray(t, dtype=np.float64)
        if t.shape != (n_samples,):
            raise ValueError(
                f"time must be a scalar or have shape ({n_samples},); got shape {t.shape}."
            )
    if not np.all(np.isfinite(t)):
        raise ValueError("time contains NaN or infinity.")
    return t


def warn_if_outside(time, time_range, estimator_name):
    """Warn (once per call site) when ``time`` leaves the training range.

    Parameters
    ----------
    time : ndarray
        Instants at which items are projected.
    time_range : tuple of float
        ``(min, max)`` of the training timestamps.
    estimator_name : str
        Used in the message.
    """
    lo, hi = time_range
    if time.size and (time.min() < lo or time.max() > hi):
        warnings.warn(
            f"{estimator_name}: projecting at time(s) in [{time.min():g}, {time.max():g}], "
            f"outside the training range [{lo:g}, {hi:g}]; the model extrapolates.",
            TimeRangeWarning,
            stacklevel=3,
        )


def check_labels(y, n_samples, *, required=True, estimator_name="estimator"):
    """Validate labels and encode them for relevance computations.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, n_labels), or None
        Class labels (int or str) or a multilabel 0/1 indicator matrix.  Two
        items are relevant to each other when they share at least one label.
    n_samples : int
        Number of rows of X.
    required : bool, default=True
        Whether ``y=None`` is an error (methods that need labels) or allowed.
    estimator_name : str
        Used in messages.

    Returns
    -------
    labels : None, ndarray of shape (n_samples,) of int, or ndarray of shape (n_samples, n_labels) of bool
        Integer codes for single-label data, boolean indicator for multilabel data.
    """
    if y is None:
        if required:
            raise ValueError(
                f"{estimator_name} requires y to be passed, but the target y is None "
                "(give class labels or a multilabel indicator)."
            )
        return None
    y = np.asarray(y)
    if y.shape[0] != n_samples:
        raise ValueError(
            f"y has {y.shape[0]} rows but X has {n_samples}; they must match."
        )
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim == 2:
        if type_of_target(y) != "multilabel-indicator":
            raise ValueError(
                "A 2-D y must be a multilabel indicator matrix of 0/1 values; got "
                f"target type {type_of_target(y)!r}."
            )
        Y = y.astype(bool)
        if required and Y.any(axis=0).sum() < 2:
            raise ValueError(f"{estimator_name} needs at least 2 distinct labels in y.")
        return Y
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D labels or a 2-D indicator; got shape {y.shape}.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity.")
    codes = LabelEncoder().fit_transform(y)
    if required and codes.max(initial=0) < 1:
        raise ValueError(
            f"{estimator_name} needs at least 2 classes in y to define relevance; "
            f"got 1 class: {y[0]!r}."
        )
    return codes
