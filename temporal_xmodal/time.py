"""Time: the one owner of the time axis, durations, encodings and out-of-range checks.

Every estimator, scorer, protocol and the comparison job reads time through
this module (and the layout module :mod:`temporal_xmodal._layout`, which
finds the time column); nothing else converts or checks it.

The time axis
-------------
Times are numbers on a **time axis** whose unit is ``time_unit`` (default
``"years"``).  A number is taken as it is (fractional years, a day index,
epoch seconds with ``time_unit="seconds"``...).  A date (numpy
``datetime64``, ``pandas.Timestamp``, a ``datetime64`` column, naive or
tz-aware) is mapped onto the axis:

* ``"years"``: ``year + (instant - 1 January) / length of that year``, so
  1900-01-01 → 1900.0 and 1904-07-02 → 1904.5 (the same as
  :func:`temporal_xmodal.datasets.fractional_year`);
* ``"months"``: fractional years × 12;
* ``"weeks"``, ``"days"``, ``"hours"``, ``"minutes"``, ``"seconds"``: time
  since 1970-01-01 in that unit.

Axis values are float64.  Before anything is cast to float32 (the networks),
an estimator subtracts its origin (the midpoint of the training range,
:class:`TimeAxis`), so epoch seconds (≈1.7e9) keep sub-second resolution and
the losses take differences of float64 centred times.

Durations
---------
``window``, ``bandwidth``, bin widths (and ``decay`` as a half-life) are
numbers on the axis, or ``pandas.Timedelta`` / ``numpy.timedelta64`` /
``datetime.timedelta`` / strings such as ``"180D"``, ``"6M"``, ``"1Y"``,
``"12h"`` (:func:`to_duration`; as in numpy, ``"M"`` is months and ``"m"``
minutes).  A year is 365.25 days and a month a twelfth
of it.
"""

import datetime
import math
import numbers
import re
import warnings

import numpy as np

__all__ = [
    "TIME_UNITS",
    "TimeAxis",
    "TimeEncoding",
    "TimeRangeWarning",
    "TimeUnitWarning",
    "TIME_USES",
    "time_use",
    "to_duration",
    "to_time_axis",
]

#: Seconds in one unit of each supported time axis.
_SECONDS = {
    "years": 365.25 * 86400.0,
    "months": 365.25 * 86400.0 / 12.0,
    "weeks": 7 * 86400.0,
    "days": 86400.0,
    "hours": 3600.0,
    "minutes": 60.0,
    "seconds": 1.0,
}
TIME_UNITS = tuple(_SECONDS)

#: The ways an estimator can use time (its public ``time_use`` attribute).
TIME_USES = ("none", "training", "inference")

_UNIT_WORDS = {
    "y": "years", "yr": "years", "year": "years", "years": "years", "a": "years",
    "mo": "months", "month": "months", "months": "months",
    "w": "weeks", "week": "weeks", "weeks": "weeks",
    "d": "days", "day": "days", "days": "days",
    "h": "hours", "hr": "hours", "hour": "hours", "hours": "hours",
    "m": "minutes", "min": "minutes", "t": "minutes", "minute": "minutes", "minutes": "minutes",
    "s": "seconds", "sec": "seconds", "second": "seconds", "seconds": "seconds",
}
_DURATION = re.compile(r"^\s*([+]?\d*\.?\d+(?:[eE][+-]?\d+)?)\s*([A-Za-z]+)\s*$")


class TimeRangeWarning(UserWarning):
    """Warned when a time-aware model projects rows outside its training time range."""


class TimeUnitWarning(UserWarning):
    """Warned when times or durations look inconsistent with ``time_unit``."""


# --------------------------------------------------------------------- units
def _check_unit(unit):
    if unit not in _SECONDS:
        raise ValueError(f"time_unit must be one of {TIME_UNITS}; got {unit!r}.")
    return unit


def _is_date_dtype(dtype):
    return getattr(dtype, "kind", None) == "M" or str(dtype).startswith("datetime64")


def _dates_to_axis(values, unit):
    """datetime64[ns] values (numpy, naive UTC) → float64 numbers on the axis."""
    ns = np.asarray(values, dtype="datetime64[ns]")
    if unit in ("years", "months"):
        year = ns.astype("datetime64[Y]")
        start = year.astype("datetime64[ns]")
        length = ((year + 1).astype("datetime64[ns]") - start).astype(np.float64)
        elapsed = (ns - start).astype(np.float64)
        years = (year.astype(np.int64) + 1970).astype(np.float64) + elapsed / length
        return years * 12.0 if unit == "months" else years
    return ns.astype(np.int64).astype(np.float64) / (_SECONDS[unit] * 1e9)


def _as_datetime64(values, name):
    """Dates of any accepted kind as a naive (UTC) ``datetime64[ns]`` ndarray, or None."""
    dtype = getattr(values, "dtype", None)
    tz = getattr(dtype, "tz", None)
    if tz is not None:  # pandas tz-aware column or index
        import pandas as pd

        return np.asarray(pd.Series(values).dt.tz_convert("UTC").dt.tz_localize(None)
                          .to_numpy(dtype="datetime64[ns]"))
    if dtype is not None and _is_date_dtype(dtype):
        return np.asarray(values, dtype="datetime64[ns]")
    if isinstance(values, (datetime.datetime, datetime.date, np.datetime64)):
        return _as_datetime64(np.asarray([values], dtype=object), name).reshape(())
    arr = np.asarray(values)
    if arr.dtype.kind == "M":
        return arr.astype("datetime64[ns]")
    if arr.dtype.kind != "O" or arr.size == 0:
        return None
    flat = arr.ravel()
    is_date = np.array([isinstance(v, (datetime.datetime, datetime.date, np.datetime64))
                        for v in flat])
    if not is_date.any():
        return None
    if not is_date.all():
        bad = flat[~is_date][0]
        raise TypeError(f"{name} mixes dates with other values (e.g. {bad!r}); give all "
                        "times as dates or all as numbers.")
    out = np.empty(flat.shape, dtype="datetime64[ns]")
    for i, v in enumerate(flat):
        if getattr(v, "tzinfo", None) is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        out[i] = np.datetime64(v, "ns")
    return out.reshape(arr.shape)


def is_datetime_like(values):
    """Whether ``values`` (a column, array or scalar) holds dates.

    Parameters
    ----------
    values : array-like, pandas object or scalar

    Returns
    -------
    bool
    """
    try:
        return _as_datetime64(values, "time") is not None
    except TypeError:
        return True


def to_time_axis(values, unit="years", *, name="time"):
    """Map times (numbers or dates) to float64 numbers on the time axis.

    Parameters
    ----------
    values : scalar or array-like
        Numbers on the axis (taken as they are), or dates: ``datetime64``
        arrays or columns (naive or tz-aware; tz-aware dates are converted to
        UTC), ``pandas.Timestamp``, ``datetime.date``/``datetime`` objects.
    unit : {"years", "months", "weeks", "days", "hours", "minutes", "seconds"}, default="years"
        Unit of the axis; dates are converted into it (see the module
        docstring).
    name : str, default="time"
        Used in error messages.

    Returns
    -------
    time : ndarray of float64
        Same shape as ``values`` (0-d for a scalar).

    Raises
    ------
    TypeError
        For strings, timedeltas, booleans or other non-time values.
    ValueError
        For NaN, infinite or missing (NaT) times; the message counts them.

    Examples
    --------
    >>> import numpy as np
    >>> to_time_axis(np.array(["1900-01-01", "1904-07-02"], dtype="datetime64[D]"))
    array([1900. , 1904.5])
    >>> float(to_time_axis(np.datetime64("1970-01-02"), unit="hours"))
    24.0
    """
    _check_unit(unit)
    dates = _as_datetime64(values, name)
    if dates is not None:
        bad = np.isnat(dates)
        if bad.any():
            raise ValueError(f"{name} has {int(bad.sum())} missing date(s) (NaT); every "
                             "row needs a date.")
        return _dates_to_axis(dates, unit)
    arr = np.asarray(values)
    if arr.dtype.kind == "m":
        raise TypeError(f"{name} holds time differences (dtype {arr.dtype}); times must be "
                        "dates or numbers on the time axis.")
    if arr.dtype.kind == "b":
        raise TypeError(f"{name} holds booleans; times must be dates or numbers.")
    if arr.dtype.kind not in "iuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            example = next((v for v in arr.ravel() if not isinstance(v, numbers.Real)),
                           arr.ravel()[0] if arr.size else None)
            raise TypeError(
                f"{name} must hold numbers on the time axis or dates; got dtype {arr.dtype} "
                f"with values such as {example!r}. Convert date strings with "
                "pandas.to_datetime first.") from None
    arr = np.asarray(arr, dtype=np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{name} has {int(bad.sum())} NaN or infinite value(s) "
                         f"(first at position {int(np.flatnonzero(bad.ravel())[0])}); every "
                         "row needs a finite time.")
    return arr


def _is_plain_number(value):
    """A real number that is not a bool or a numpy timedelta (an integer subclass)."""
    return (isinstance(value, numbers.Real) and not isinstance(value, (bool, np.timedelta64)))


def to_duration(value, unit="years", *, name="duration"):
    """A duration as a non-negative float on the time axis.

    Parameters
    ----------
    value : float, str, pandas.Timedelta, numpy.timedelta64 or datetime.timedelta
        A number is already on the axis (in ``unit``).  A string is a number
        and a unit: ``"180D"``, ``"6M"`` (months), ``"1Y"``, ``"2W"``,
        ``"12h"``, ``"30min"``, ``"90s"`` (words such as ``"3 days"`` work
        too).  A year is 365.25 days and a month 365.25 / 12 days.
    unit : str, default="years"
        Unit of the time axis.
    name : str, default="duration"
        The parameter's name, for messages.

    Returns
    -------
    duration : float

    Examples
    --------
    >>> to_duration("180D")
    0.4928131416837782
    >>> to_duration("1Y", unit="months")
    12.0
    """
    _check_unit(unit)
    if _is_plain_number(value):
        out = float(value)
    elif isinstance(value, str):
        match = _DURATION.match(value)
        word = None
        if match:  # numpy's convention: "M" is months, "m" minutes
            word = "months" if match.group(2) == "M" else _UNIT_WORDS.get(match.group(2).lower())
        if not word:
            raise ValueError(
                f"{name}={value!r} is not a duration: write a number and a unit, e.g. "
                "'180D', '6M', '1Y', '2W', '12h', '30min', '90s'.")
        out = float(match.group(1)) * _SECONDS[word] / _SECONDS[unit]
    elif isinstance(value, np.timedelta64):
        base, _ = np.datetime_data(value.dtype)
        if base in ("Y", "M"):
            count = value.astype(np.int64)
            seconds = float(count) * _SECONDS["years" if base == "Y" else "months"]
        else:
            seconds = value / np.timedelta64(1, "s")
        out = seconds / _SECONDS[unit]
    elif isinstance(value, datetime.timedelta):  # includes pandas.Timedelta
        seconds = value.total_seconds()
        out = seconds / _SECONDS[unit]
    else:
        raise TypeError(f"{name} must be a number on the time axis ({unit}) or a duration "
                        f"(pandas.Timedelta, numpy.timedelta64, '180D'); got {value!r}.")
    if not math.isfinite(out) or out < 0:
        raise ValueError(f"{name} must be a finite non-negative duration; got {value!r}.")
    return out


def to_rate(value, unit="years", *, name="decay"):
    """A decay rate per time unit; a duration is read as a half-life.

    Parameters
    ----------
    value : float or duration
        A number is a rate λ per unit of the axis.  A duration (see
        :func:`to_duration`) is the half-life h, i.e. λ = ln 2 / h, the lag at
        which ρ = 1 − exp(−λ Δt) reaches 0.5.
    unit : str, default="years"
    name : str, default="decay"

    Returns
    -------
    rate : float
    """
    if _is_plain_number(value):
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite non-negative rate; got {value!r}.")
        return float(value)
    half_life = to_duration(value, unit, name=name)
    if half_life == 0:
        raise ValueError(f"{name} as a half-life must be positive; got {value!r}.")
    return math.log(2.0) / half_life


# ----------------------------------------------------------------- the axis
class TimeAxis:
    """The time axis an estimator was fitted on: unit, origin and range.

    Parameters
    ----------
    unit : str, default="years"
        See :func:`to_time_axis`.

    Attributes
    ----------
    origin_ : float
        Midpoint of the training range, subtracted (in float64) before any
        float32 cast.
    range_ : tuple of float
        ``(min, max)`` of the training times on the axis.
    dates_ : bool
        Whether the training times were dates.
    """

    def __init__(self, unit="years"):
        self.unit = unit

    def fit(self, time, *, dates=False):
        """Learn the origin and range from training times already on the axis.

        Parameters
        ----------
        time : ndarray of float64
        dates : bool, default=False
            Whether they came from dates (recorded for messages).

        Returns
        -------
        self : TimeAxis
        """
        lo, hi = float(np.min(time)), float(np.max(time))
        self.range_ = (lo, hi)
        self.origin_ = lo + (hi - lo) / 2.0
        self.dates_ = bool(dates)
        return self

    def centre(self, time):
        """``time - origin_`` in float64 (differences exact to the axis' resolution)."""
        return np.asarray(time, dtype=np.float64) - self.origin_

    def extend(self, time):
        """Widen ``range_`` to cover new training times (warm start); the origin stays."""
        self.range_ = (min(self.range_[0], float(np.min(time))),
                       max(self.range_[1], float(np.max(time))))
        return self

    def warn_outside(self, time, estimator_name, *, what="projecting"):
        """Warn once when rows fall outside the training range, counting them.

        Parameters
        ----------
        time : ndarray of float64
            Axis times of the rows.
        estimator_name : str
        what : str, default="projecting"
            What the estimator is doing with the rows, for the message.
        """
        lo, hi = self.range_
        below, above = time < lo, time > hi
        n_out = int(below.sum() + above.sum())
        if not n_out:
            return
        gap = max(lo - time.min() if below.any() else 0.0,
                  time.max() - hi if above.any() else 0.0)
        warnings.warn(
            f"{estimator_name}: {what} {n_out} of {time.size} row(s) outside the training "
            f"time range [{lo:.6g}, {hi:.6g}] {self.unit} (by up to {gap:.4g} {self.unit}); "
            "the model extrapolates there.", TimeRangeWarning,
            stacklevel=external_stacklevel())

    def check_duration(self, name, value, estimator_name):
        """Warn when a window-like duration spans the whole training range."""
        lo, hi = self.range_
        span = hi - lo
        if span > 0 and value >= span:
            warnings.warn(
                f"{estimator_name}: {name}={value:.4g} {self.unit} is at least the training "
                f"span ({span:.4g} {self.unit}): every pair falls inside it, so the model is "
                f"its own static control. Give {name} in {self.unit} (or as a duration such "
                "as '90D').", TimeUnitWarning, stacklevel=external_stacklevel())


def check_axis_plausible(time, unit, estimator_name, durations=()):
    """Warn about time columns that do not look like ``unit`` (never silent rescaling).

    Two mistakes are caught: dates cast to integers (e.g. epoch microseconds
    with ``time_unit="years"``), and a time column standardised by a scaler
    (mean ≈ 0, std ≈ 1) while durations are given in other units.

    Parameters
    ----------
    time : ndarray of float64
    unit : str
    estimator_name : str
    durations : sequence of (str, float), default=()
        The estimator's duration parameters on the axis.
    """
    if time.size < 2:
        return
    if unit in ("years", "months") and np.abs(time).max() > 1e5:
        warnings.warn(
            f"{estimator_name}: time values reach {np.abs(time).max():.3g}, implausible for "
            f"time_unit={unit!r}. Dates cast to integers (epoch nanoseconds / microseconds) "
            "look like this: pass the datetime64 column itself, or set time_unit to the "
            "unit of your numbers.", TimeUnitWarning, stacklevel=external_stacklevel())
    mean, std = float(time.mean()), float(time.std())
    if durations and abs(mean) < 0.05 and abs(std - 1.0) < 0.05:
        names = ", ".join(f"{n}={v:.4g}" for n, v in durations)
        warnings.warn(
            f"{estimator_name}: the time column looks standardised (mean {mean:.2g}, std "
            f"{std:.3g}), so durations ({names}) are read in standard deviations, not "
            f"{unit}. Do not scale the time column: in a Pipeline use "
            "make_crossmodal_transformer, which passes time through unscaled.",
            TimeUnitWarning, stacklevel=external_stacklevel())


# ------------------------------------------------------------- encodings
class TimeEncoding:
    """Network input features of the time, fitted on the training times.

    Parameters
    ----------
    encoding : {"minmax", "zscore", "raw", "onehot", "sinusoidal"}, default="minmax"
        ``minmax``: (t − t_min) / (t_max − t_min), one feature in [0, 1] on
        the training range; ``zscore``: (t − mean) / std; ``raw``: the centred
        time t − origin in axis units (warned when it exceeds 10 in magnitude,
        where tanh saturates); ``onehot``: one-hot over ``n_bins`` equal-width
        bins of :class:`~temporal_xmodal.binning.TimeBins`; ``sinusoidal``:
        the minmax scalar plus sin / cos of it at ``n_bins`` frequencies
        (periods span / 1 … span / n_bins), for smooth multi-scale
        interactions.
    n_bins : int, default=12
        Bins (``onehot``) or frequencies (``sinusoidal``).

    Attributes
    ----------
    n_features_out_ : int
    """

    ENCODINGS = ("minmax", "zscore", "raw", "onehot", "sinusoidal")

    def __init__(self, encoding="minmax", n_bins=12):
        self.encoding = encoding
        self.n_bins = n_bins

    def fit(self, centred):
        """Learn the statistics from centred training times (float64).

        Parameters
        ----------
        centred : ndarray of float64

        Returns
        -------
        self : TimeEncoding
        """
        from .binning import TimeBins

        self.low_, high = float(np.min(centred)), float(np.max(centred))
        self.span_ = high - self.low_ if high > self.low_ else 1.0
        self.mean_ = float(np.mean(centred))
        std = float(np.std(centred))
        self.std_ = std if std > 0 else 1.0
        if self.encoding == "onehot":
            self.bins_ = TimeBins(bins=self.n_bins).fit(centred)
        if self.encoding == "raw" and max(abs(self.low_), abs(high)) > 10:
            warnings.warn(
                f"time_encoding='raw' feeds centred times up to {max(abs(self.low_), abs(high)):.3g} "
                "into the time layer's tanh, which saturates; use 'minmax' (or express time in a "
                "coarser unit).", TimeUnitWarning, stacklevel=external_stacklevel())
        self.n_features_out_ = {"onehot": self.n_bins, "sinusoidal": 1 + 2 * self.n_bins}.get(
            self.encoding, 1)
        return self

    def transform(self, centred):
        """Encode centred times.

        Parameters
        ----------
        centred : ndarray of float64 of shape (n,)

        Returns
        -------
        features : ndarray of float32 of shape (n, n_features_out_)
        """
        t = np.asarray(centred, dtype=np.float64).reshape(-1, 1)
        if self.encoding == "zscore":
            out = (t - self.mean_) / self.std_
        elif self.encoding == "raw":
            out = t
        elif self.encoding == "onehot":
            out = np.eye(self.n_bins)[self.bins_.transform(t.ravel())]
        else:
            out = (t - self.low_) / self.span_
            if self.encoding == "sinusoidal":
                angle = 2 * np.pi * out * np.arange(1, self.n_bins + 1)
                out = np.hstack([out, np.sin(angle), np.cos(angle)])
        return out.astype(np.float32)


def external_stacklevel():
    """The ``stacklevel`` that makes a warning point at the first caller outside the library.

    Frames of this package and of scikit-learn's output wrappers are skipped,
    so a warning raised deep inside ``transform`` names the user's line.

    Returns
    -------
    stacklevel : int
        For a :func:`warnings.warn` call made by the caller of this function.
    """
    import os
    import sys

    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not (filename.startswith(package) or filename.endswith(
                os.path.join("sklearn", "utils", "_set_output.py"))):
            return level
        frame, level = frame.f_back, level + 1
    return level


# ------------------------------------------------------------------ time use
def time_use(estimator):
    """How an estimator (or a Pipeline ending in one) uses time.

    Parameters
    ----------
    estimator : estimator or Pipeline

    Returns
    -------
    use : {"none", "training", "inference"}
        ``"inference"``: projections depend on the time (items can be
        projected at any instant); ``"training"``: time shapes training only;
        ``"none"``: time is required by the layout and ignored.  Objects that
        do not declare it are ``"none"``.
    """
    steps = getattr(estimator, "steps", None)
    if steps:
        estimator = steps[-1][1]
    use = getattr(estimator, "time_use", "none")
    if use not in TIME_USES:
        raise ValueError(f"{type(estimator).__name__}.time_use must be one of {TIME_USES}; "
                         f"got {use!r}.")
    return use
