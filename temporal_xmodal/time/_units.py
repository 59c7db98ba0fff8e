"""Units and times: numbers or dates onto the time axis (durations and rates: ``_durations``)."""

import datetime
import numbers

import numpy as np
from sklearn.utils._param_validation import StrOptions, validate_params

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
_UNIT = [StrOptions(set(TIME_UNITS))]


# --------------------------------------------------------------------- units
def _is_date_dtype(dtype):
    return getattr(dtype, "kind", None) == "M" or str(dtype).startswith("datetime64")


#: Dates are read at microsecond resolution (years -290307 to 294246; ``[ns]`` would stop at
#: 1677–2262); dates outside it are refused.
_RESOLUTION = "datetime64[us]"
_YEARS = (-290307, 294246)  # whole years inside datetime64[us]'s range
_RANGE_TEXT = "years -290307 to 294246 (datetime64 at microsecond resolution)"


def _dates_to_axis(values, unit):
    """datetime64[us] values (numpy, naive UTC) → float64 numbers on the axis."""
    us = np.asarray(values, dtype=_RESOLUTION)
    if unit in ("years", "months"):
        year = us.astype("datetime64[Y]")
        start = year.astype(_RESOLUTION)
        # a typed one-year step: NumPy 2.5 deprecates adding a bare integer (a 'generic' unit)
        next_year = (year + np.timedelta64(1, "Y")).astype(_RESOLUTION)
        length = (next_year - start).astype(np.float64)
        elapsed = (us - start).astype(np.float64)
        years = (year.astype(np.int64) + 1970).astype(np.float64) + elapsed / length
        return years * 12.0 if unit == "months" else years
    return us.astype(np.int64).astype(np.float64) / (_SECONDS[unit] * 1e6)


def _at_resolution(arr, name):
    """A datetime64 array of any unit as ``datetime64[us]``: finer units rounded down, coarser ones
    checked against its range first (the cast would wrap round), out-of-range dates refused.
    """
    arr = np.asarray(arr)
    unit, _ = np.datetime_data(arr.dtype)
    if unit in ("us", "ns", "ps", "fs", "as"):
        return arr.astype(_RESOLUTION)
    if unit != "generic":  # generic: only NaT
        seen = arr[~np.isnat(arr)]
        years = seen.astype("datetime64[Y]").astype(np.int64) + 1970  # coarsening is exact
        if years.size and (years.min() < _YEARS[0] or years.max() > _YEARS[1]):
            raise ValueError(f"{name} holds dates from {seen.min()} to {seen.max()}; dates "
                             f"must lie within {_RANGE_TEXT}.")
    return arr.astype(_RESOLUTION)


def _as_datetime64(values, name):
    """Dates of any accepted kind as a naive (UTC) ``datetime64[us]`` ndarray, or None."""
    dtype = getattr(values, "dtype", None)
    tz = getattr(dtype, "tz", None)
    if tz is not None:  # pandas tz-aware column or index: its own unit, never [ns] by force
        import pandas as pd

        naive = pd.Series(values).dt.tz_convert("UTC").dt.tz_localize(None)
        return _at_resolution(naive.to_numpy(), name)
    if dtype is not None and _is_date_dtype(dtype):
        return _at_resolution(np.asarray(values), name)
    if isinstance(values, (datetime.datetime, datetime.date, np.datetime64)):
        return _as_datetime64(np.asarray([values], dtype=object), name).reshape(())
    arr = np.asarray(values)
    if arr.dtype.kind == "M":
        return _at_resolution(arr, name)
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
    out = np.empty(flat.shape, dtype=_RESOLUTION)
    for i, v in enumerate(flat):
        if v != v:  # pandas.NaT (a datetime that numpy cannot convert): a missing date
            out[i] = np.datetime64("NaT", "us")
            continue
        if getattr(v, "tzinfo", None) is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        if isinstance(v, np.datetime64):
            out[i] = _at_resolution(np.asarray([v]), name)[0]
        else:  # Python dates and datetimes (years 1-9999), pandas Timestamps
            out[i] = np.datetime64(v, "us")
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


@validate_params({"values": "no_validation", "unit": _UNIT, "name": [str]},
                 prefer_skip_nested_validation=True)
def to_time_axis(values, unit="years", *, name="time"):
    """Map times (numbers or dates) to float64 numbers on the time axis.

    Read more in docs/time.md.

    Parameters
    ----------
    values : scalar or array-like
        Numbers on the axis (taken as they are), or dates: ``datetime64`` arrays or columns (naive,
        or tz-aware: converted to UTC), ``pandas.Timestamp``, ``datetime.date``/``datetime``.
    unit : {"years", "months", "weeks", "days", "hours", "minutes", "seconds"}, default="years"
        Unit of the axis.  Dates become ``year + (instant - 1 January) / length of that year``
        (:func:`fractional_year`) in years, twelve times that in months, the time since
        1970-01-01 in the other units.
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
        For NaN, infinite or missing (NaT) times (the message counts them), or dates outside
        datetime64[us]'s range.

    Examples
    --------
    >>> import numpy as np
    >>> to_time_axis(np.array(["1900-01-01", "1904-07-02"], dtype="datetime64[D]"))
    array([1900. , 1904.5])
    >>> float(to_time_axis(np.datetime64("1970-01-02"), unit="hours"))
    24.0
    """
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


def instants(time, n, unit="years", *, name="time"):
    """``time`` (one instant, or one per row) as ``n`` float64 times on the axis.

    The ``time=`` of ``transform_image`` / ``transform_text`` and of the search, read by
    :func:`to_time_axis`: a scalar is repeated ``n`` times, ``None`` stays ``None``.

    Parameters
    ----------
    time : scalar, date, array-like of shape (n,) or None
        Numbers on the axis or dates.
    n : int
        Rows the instants are for.
    unit, name
        As in :func:`to_time_axis`.

    Returns
    -------
    time : ndarray of float64 of shape (n,) or None

    Raises
    ------
    ValueError
        When ``time`` is neither a scalar nor of shape ``(n,)``.
    """
    if time is None:
        return None
    t = to_time_axis(time, unit, name=name)
    if t.ndim == 0:
        return np.full(n, float(t))
    if t.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have shape ({n},); got shape "
                         f"{t.shape}.")
    return t


@validate_params({"dates": ["array-like", np.datetime64, datetime.date]},
                 prefer_skip_nested_validation=True)
def fractional_year(dates):
    """Dates as fractional years: ``year + (day_of_year - 1) / days_in_year``.

    Times of day are dropped.  Read more in docs/time.md.

    Parameters
    ----------
    dates : array-like of datetime64 or datetime.date

    Returns
    -------
    time : ndarray of float64

    Examples
    --------
    >>> import numpy as np
    >>> fractional_year(np.array(["1900-01-01", "1904-07-02"], dtype="datetime64[D]"))
    array([1900. , 1904.5])
    """
    return to_time_axis(np.asarray(dates, dtype="datetime64[D]"), "years", name="dates")
