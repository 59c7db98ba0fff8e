"""Durations and rates on the time axis: numbers, strings with a unit, timedeltas, shares."""

import datetime
import math
import numbers
import re
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import validate_params

from .._constraints import Interval
from ._units import _SECONDS, _UNIT

#: Unit spellings of duration and rate strings (matched case-insensitively, except "M").
_UNIT_WORDS = {
    "y": "years", "yr": "years", "yrs": "years", "year": "years", "years": "years",
    "a": "years",
    "mo": "months", "mon": "months", "month": "months", "months": "months",
    "w": "weeks", "wk": "weeks", "week": "weeks", "weeks": "weeks",
    "d": "days", "day": "days", "days": "days",
    "h": "hours", "hr": "hours", "hrs": "hours", "hour": "hours", "hours": "hours",
    "min": "minutes", "mins": "minutes", "t": "minutes", "minute": "minutes",
    "minutes": "minutes",
    "s": "seconds", "sec": "seconds", "secs": "seconds", "second": "seconds",
    "seconds": "seconds",
}
#: A number as a person writes it: ``6``, ``0.5``, ``.5``, ``5.``, ``1e3``, ``+2``, ``-1``.
_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_DURATION = re.compile(rf"^\s*({_NUMBER})\s*([A-Za-z]+)\s*$")
#: ``<rate>/<unit>`` or ``<rate>/<count> <unit>``: ``"0.1/M"``, ``"1/2Y"``, ``"3 / 2 weeks"``.
_RATE = re.compile(rf"^\s*({_NUMBER})\s*/\s*({_NUMBER})?\s*([A-Za-z]+)\s*$")
_DURATION_EXAMPLES = "'180D', '6mo' (or '6M'), '1Y', '2W', '12h', '30min', '90s', '3 days'"
_RATE_EXAMPLES = "'0.1/M' (0.1 per month), '1/2Y' (1 per 2 years), '1.2/Y', '0.01/D'"
#: A share of the time span, ``"5%"`` (a leading ``+`` allowed, as in durations and rates).
_SHARE = re.compile(r"^\s*\+?\s*((?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*%\s*$")
_SHARE_EXAMPLE = "'5%' (5 % of the time span)"


def is_share(value):
    """Whether ``value`` is written as a share of the time span (a string ending in ``%``).

    Examples
    --------
    >>> from temporal_xmodal.time import is_share
    >>> is_share("5%"), is_share("180D"), is_share(0.5)
    (True, False, False)
    """
    return isinstance(value, str) and value.strip().endswith("%")


def _share_of(value, span, name):
    """``value`` (``"<p>%"``, 0 < p <= 100) times ``span``, the time span on the axis."""
    match = _SHARE.match(value)
    mantissa = re.split("[eE]", match.group(1))[0] if match is not None else "0"
    if match is not None and float(match.group(1)) == 0 and float(mantissa) != 0:
        raise ValueError(f"{name}={value!r} is a percentage too small to represent (it reads "
                         "as 0 %): write a larger share such as '0.001%', or a duration such "
                         "as '180D'.")
    if match is None or not 0 < float(match.group(1)) <= 100:
        raise ValueError(f"{name}={value!r} is not a share of the time span: write a "
                         f"percentage in (0, 100] such as {_SHARE_EXAMPLE}, or a duration "
                         "such as '180D'.")
    if span is None:
        raise ValueError(f"{name}={value!r} is a share of the time span, which is only known "
                         "from the times (at fit); give a duration such as '180D' here.")
    return float(match.group(1)) / 100.0 * float(span)


def _is_plain_number(value):
    """A real number that is not a bool or a numpy timedelta (an integer subclass)."""
    return (isinstance(value, numbers.Real) and not isinstance(value, (bool, np.timedelta64)))


def _unit_of(match, group, value, name, what):
    """The unit named by group ``group`` of ``match`` on ``value``, else a ValueError quoting it.

    ``"M"`` is months (numpy's convention); a lone lowercase ``"m"`` is refused as ambiguous, the
    message spelling the value with ``"min"`` and with ``"mo"``.
    """
    token = match.group(group)
    if token == "M":
        return "months"
    if token == "m":
        head, tail = value[:match.start(group)], value[match.end(group):]
        raise ValueError(
            f"{name}={value!r} is ambiguous: 'm' is minutes to numpy and pandas but months "
            f"to many readers. Write {head + 'min' + tail!r} for minutes, or "
            f"{head + 'mo' + tail!r} (also {head + 'M' + tail!r}) for months.")
    word = _UNIT_WORDS.get(token.lower())
    if word is None:
        examples = _RATE_EXAMPLES if what == "rate" else _DURATION_EXAMPLES
        raise ValueError(
            f"{name}={value!r} is not a {what}: unknown unit {token!r}. Units: Y/year, "
            f"mo/M/month, W/week, D/day, h/hour, min/minute, s/second; e.g. {examples}.")
    return word


def _parse_duration(value, unit, name):
    """A duration string (a number and a unit) on the axis, in ``unit``."""
    match = _DURATION.match(value)
    if not match:
        raise ValueError(
            f"{name}={value!r} is not a duration: write a number and a unit, e.g. "
            f"{_DURATION_EXAMPLES}.")
    word = _unit_of(match, 2, value, name, "duration")
    return float(match.group(1)) * _SECONDS[word] / _SECONDS[unit]


def _parse_rate(value, unit, name):
    """A rate string ``"<rate>/[<count>]<unit>"`` per axis unit (``"1/2Y"``: 0.5 a year)."""
    match = _RATE.match(value)
    if not match:
        raise ValueError(
            f"{name}={value!r} is not a rate: write a number per (a number of) units, e.g. "
            f"{_RATE_EXAMPLES}.")
    rate = float(match.group(1))
    count = float(match.group(2)) if match.group(2) is not None else 1.0
    word = _unit_of(match, 3, value, name, "rate")
    if not math.isfinite(rate) or rate < 0:
        raise ValueError(f"{name}={value!r}: a rate must be finite and non-negative.")
    per = count * _SECONDS[word] / _SECONDS[unit]  # the denominator, on the axis
    if not (math.isfinite(per) and per > 0):
        raise ValueError(f"{name}={value!r} is not a rate: it is per "
                         f"{match.group(2)} {word}; the duration after '/' must be finite "
                         "and positive.")
    out = rate / per
    if not math.isfinite(out):
        raise ValueError(f"{name}={value!r} is not a finite rate on an axis in {unit}.")
    return out


@validate_params({"value": "no_validation", "unit": _UNIT, "name": [str],
                  "span": [Interval(Real, 0, None, closed="left"), None]},
                 prefer_skip_nested_validation=True)
def to_duration(value, unit="years", *, name="duration", span=None):
    """A duration as a non-negative float on the time axis, in ``unit``.

    Read more in docs/time.md.

    Parameters
    ----------
    value : float, str, pandas.Timedelta, numpy.timedelta64 or datetime.timedelta
        A number is on the axis already.  A string is a number and a unit: ``"180D"``, ``"6mo"`` or
        ``"6M"`` (months), ``"1Y"``, ``"2W"``, ``"12h"``, ``"30min"``, ``"90s"``, ``"3 days"``
        (case-insensitive except ``"M"``; a lone ``"m"`` is refused as ambiguous).  A year is
        365.25 days, a month a twelfth of it.  ``"<p>%"`` is p % of ``span``.
    unit : str, default="years"
        Unit of the time axis.
    name : str, default="duration"
        The parameter's name, for messages.
    span : float or None, default=None
        The time span (in ``unit``) a share such as ``"5%"`` is of; ``None`` refuses shares.

    Returns
    -------
    duration : float
        In ``unit``.

    Raises
    ------
    ValueError
        A malformed, ambiguous, negative or non-finite duration; the message quotes ``value`` and
        shows well-formed ones.
    TypeError
        A value that is neither a number nor a duration.

    Examples
    --------
    >>> to_duration("180D")
    0.4928131416837782
    >>> to_duration("1Y", unit="months")
    12.0
    >>> to_duration("5%", span=10.0)
    0.5
    """
    if _is_plain_number(value):
        out = float(value)
    elif is_share(value):
        out = _share_of(value, span, name)
    elif isinstance(value, str):
        out = _parse_duration(value, unit, name)
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
        raise ValueError(f"{name}={value!r}: a duration must be finite and non-negative.")
    return out


@validate_params({"value": "no_validation", "unit": _UNIT, "name": [str],
                  "span": [Interval(Real, 0, None, closed="left"), None]},
                 prefer_skip_nested_validation=True)
def to_rate(value, unit="years", *, name="decay", span=None):
    """A decay rate per time unit; a duration is read as a half-life.

    Read more in docs/time.md.

    Parameters
    ----------
    value : float, str or duration
        A number is a rate λ per unit of the axis.  ``"<rate>/<unit>"`` is a rate per the named
        unit, ``"<rate>/<count> <unit>"`` per that many (units as in :func:`to_duration`):
        ``"0.1/M"`` is 0.1 per month, ``"1/2Y"`` 0.5 per year.  A duration (:func:`to_duration`,
        shares of ``span`` included) is the half-life h of ρ = 1 − exp(−λ Δt): λ = ln 2 / h.
    unit : str, default="years"
        Unit of the time axis; the rate is per one ``unit``.
    name : str, default="decay"
        The parameter's name, for messages.
    span : float or None, default=None
        The time span a share is of (as in :func:`to_duration`); a share of a zero span is the rate
        0.

    Returns
    -------
    rate : float
        Per ``unit``.

    Raises
    ------
    ValueError
        A malformed, ambiguous, negative or non-finite rate, or a zero half-life; the message
        quotes ``value``.

    Examples
    --------
    >>> round(to_rate("0.1/M"), 6)  # per month, on an axis in years
    1.2
    >>> to_rate("0.1/M", unit="months")
    0.1
    >>> to_rate("1/2Y")  # one per two years
    0.5
    >>> round(to_rate("5%", span=10.0), 4)  # a half-life of 0.5: ln 2 / 0.5
    1.3863
    """
    if isinstance(value, str) and "/" in value:
        return _parse_rate(value, unit, name)
    if _is_plain_number(value):
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite non-negative rate; got {value!r}.")
        return float(value)
    half_life = to_duration(value, unit, name=name, span=span)
    if half_life == 0 and is_share(value):  # a zero span: every Δt is 0, nothing to decay
        return 0.0
    if half_life == 0:
        raise ValueError(f"{name} as a half-life must be positive; got {value!r}.")
    return math.log(2.0) / half_life
