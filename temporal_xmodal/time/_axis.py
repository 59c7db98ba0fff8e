"""The fitted time axis: range, origin, centring, out-of-range and unit warnings."""

import inspect
import numbers

import numpy as np
from sklearn.utils._param_validation import (StrOptions, validate_parameter_constraints,
                                             validate_params)

from ._units import _SECONDS, TIME_UNITS
from .._warnings import warn


class TimeRangeWarning(UserWarning):
    """Warned when a time-aware model projects rows outside its training time range.

    Rows at most :data:`OUTSIDE_TOLERANCE` of the range's span outside it do not warn.
    """


#: Share of the training range's span that times may lie outside it without a
#: :class:`TimeRangeWarning`.
OUTSIDE_TOLERANCE = 0.05


class TimeUnitWarning(UserWarning):
    """Warned when times or durations look inconsistent with ``time_unit``."""


# ---------------------------------------------------------------- centring
def time_origin(time):
    """The origin times are centred on: the midpoint of their range.

    Parameters
    ----------
    time : ndarray of float64
        Times on the axis.

    Returns
    -------
    origin : float
    """
    lo, hi = float(np.min(time)), float(np.max(time))
    return lo + (hi - lo) / 2.0


def centre_times(time, origin):
    """``time - origin`` in float64, so that differences stay exact to the axis' resolution.

    Parameters
    ----------
    time : array-like or torch.Tensor
        Times on the axis; a tensor stays a tensor on its device.
    origin : float
        From :func:`time_origin`.

    Returns
    -------
    centred : ndarray of float64 or torch.Tensor of float64
    """
    if hasattr(time, "double") and not isinstance(time, np.ndarray):  # a torch tensor
        return time.double() - origin
    return np.asarray(time, dtype=np.float64) - origin


# ----------------------------------------------------------------- the axis
class TimeAxis:
    """The time axis an estimator was fitted on: unit, origin and range.

    Read more in docs/time.md.

    Parameters
    ----------
    unit : {"years", "months", "weeks", "days", "hours", "minutes", "seconds"}, \
default="years"
        Unit of the axis (see :func:`to_time_axis`).

    Attributes
    ----------
    origin_ : float
        Midpoint of the training range, subtracted (in float64) before any float32 cast.
    range_ : tuple of float
        ``(min, max)`` of the training times on the axis.
    dates_ : bool
        Whether the training times were dates.
    encoding_ : TimeEncoding or None
        The network's time encoding, for a model whose time is a network input
        (:meth:`bind_encoding`); ``None`` otherwise.
    encoding_range_ : tuple of float or None
        ``range_`` when the encoding was bound; a warm start's wider ``range_`` leaves it, and
        :meth:`warn_outside` warns against it.
    """

    encoding_ = None
    encoding_range_ = None
    _parameter_constraints = {"unit": [StrOptions(set(TIME_UNITS))]}

    def __init__(self, unit="years"):
        self.unit = unit

    def fit(self, time, *, dates=False):
        """Learn the origin and range from training times already on the axis.

        Parameters
        ----------
        time : ndarray of float64
        dates : bool, default=False
            Whether they came from dates (for messages).

        Returns
        -------
        self : TimeAxis
        """
        validate_parameter_constraints(self._parameter_constraints, {"unit": self.unit},
                                       caller_name=type(self).__name__)
        self.range_ = (float(np.min(time)), float(np.max(time)))
        self.origin_ = time_origin(time)
        self.dates_ = bool(dates)
        return self

    @property
    def span_(self):
        """``max − min`` of the training times on the axis (float)."""
        low, high = self.range_
        return high - low

    def constant(self, n):
        """``n`` float64 times at the origin: where a constant-time control trains and projects."""
        return np.full(n, self.origin_, dtype=np.float64)

    def centre(self, time):
        """``time - origin_`` in float64 (:func:`centre_times`)."""
        return centre_times(time, self.origin_)

    def extend(self, time):
        """Widen ``range_`` to cover new training times (warm start).

        The origin and ``encoding_range_`` stay.
        """
        self.range_ = (min(self.range_[0], float(np.min(time))),
                       max(self.range_[1], float(np.max(time))))
        return self

    def bind_encoding(self, encoding):
        """Record the network's time ``encoding``, fitted for the current ``range_``.

        :meth:`warn_outside` then warns against ``encoding_range_`` and says how the encoding
        extrapolates.  Returns ``self``.
        """
        self.encoding_ = encoding
        self.encoding_range_ = self.range_
        return self

    def warn_outside(self, time, estimator_name, *, what="projecting"):
        """Warn once, counting them, when rows fall outside the training range.

        A :class:`TimeRangeWarning`; the range is ``encoding_range_`` when an encoding is bound. No
        warning when every row lies within :data:`OUTSIDE_TOLERANCE` of the span.

        Parameters
        ----------
        time : ndarray of float64
            Axis times of the rows.
        estimator_name : str
        what : str, default="projecting"
            What the estimator does with the rows, for the message.
        """
        encoded = self.encoding_range_ is not None
        lo, hi = self.encoding_range_ if encoded else self.range_
        below, above = time < lo, time > hi
        outside = below | above
        n_out = int(outside.sum())
        if not n_out:
            return
        gap = max(lo - time.min() if below.any() else 0.0,
                  time.max() - hi if above.any() else 0.0)
        if gap <= OUTSIDE_TOLERANCE * (hi - lo):
            return
        if not encoded or (self.range_ == self.encoding_range_ and what == "projecting"):
            message = (f"{estimator_name}: {what} {n_out} of {time.size} row(s) outside the "
                       f"training time range [{lo:.6g}, {hi:.6g}] {self.unit} (by up to "
                       f"{gap:.4g} {self.unit}); the model extrapolates there.")
        else:
            # a warm start (now or before) on times the encoding was not fitted for
            effect = self.encoding_.describe_extrapolation(
                self.centre(time[outside]), (self.centre(lo), self.centre(hi)))
            widened = ("" if self.range_ == self.encoding_range_ else
                       f"a warm start trained the model on [{self.range_[0]:.6g}, "
                       f"{self.range_[1]:.6g}] {self.unit}, but ")
            message = (
                f"{estimator_name}: {what} {n_out} of {time.size} row(s) outside the time "
                f"range its time encoding was fitted for, [{lo:.6g}, {hi:.6g}] {self.unit}, "
                f"by up to {gap:.4g} {self.unit}; {widened}the encoding keeps the first fit's "
                "statistics (the trained weights depend on them; a warm start does not refit "
                f"it), so these times are extrapolated: {effect}.")
            if what != "projecting":
                message += (f" Projections at times outside [{lo:.6g}, {hi:.6g}] "
                            f"{self.unit} keep warning; to model the new period in its own "
                            "right, fit without warm_start.")
        warn(message, TimeRangeWarning)

    def check_duration(self, name, value, estimator_name, *, estimator=None):
        """Warn (:class:`TimeUnitWarning`) when a window-like duration spans the training range.

        No pair of training items is then farther apart, so the loss's time-dependent term never
        applies. ``value`` is on the axis, in ``unit``; ``estimator``, when given, lets the message
        quote the parameter as given and tell its default from the user's value.
        """
        lo, hi = self.range_
        span = hi - lo
        if not (span > 0 and value >= span):
            return
        given, default = value, inspect.Parameter.empty
        if estimator is not None:
            given = getattr(estimator, name, value)
            parameter = inspect.signature(type(estimator).__init__).parameters.get(name)
            default = parameter.default if parameter is not None else default
        is_default = default is not inspect.Parameter.empty and _same(given, default)
        quoted = f"{name}={given!r}" + ("" if _plain_number(given) else
                                         f" ({value:.4g} {self.unit})")
        who = f"the default {quoted}" if is_default else quoted
        hint = ""
        if _plain_number(given) and not is_default:
            hint = (f" (A number is read in time_unit={self.unit!r}; give another unit as a "
                    "duration, e.g. '90D'.)")
        warn(
            f"{estimator_name}: {who} is at least the training span ({span:.4g} "
            f"{self.unit}): no two training items are more than {name} apart, so no pair "
            f"gets the loss's time-dependent term and the model learns from the category "
            f"triplets only (its time layer stays). For a {name} that separates items in "
            f"time, pass one shorter than the span, e.g. {name}="
            f"{readable_duration(span / 10, self.unit)!r} (a tenth of it).{hint}",
            TimeUnitWarning)


def _plain_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.timedelta64))


def _same(a, b):
    try:
        return bool(a == b) and type(a) is type(b)
    except (TypeError, ValueError):
        return False


def readable_duration(value, unit):
    """A duration (``value`` in ``unit``) as a short string :func:`to_duration` reads: ``'2.5Y'``,
    ``'3mo'``, ``'73D'``, ``'6h'``, ``'30min'`` or ``'12s'``.
    """
    seconds = value * _SECONDS[unit]
    for word, spelling, least in (("years", "Y", 2), ("months", "mo", 2), ("days", "D", 1),
                                  ("hours", "h", 1), ("minutes", "min", 1)):
        count = seconds / _SECONDS[word]
        if count >= least:
            return f"{count:.2g}{spelling}" if count < 10 else f"{round(count)}{spelling}"
    return f"{seconds:.2g}s"


#: Years from the axis' zero (year 0, or 1970 for units other than years and months) and spans
#: (in years) implausible for the declared unit.
_PLAUSIBLE_YEARS = 10_000
_PLAUSIBLE_SPAN = 2_000
#: Readings of numbers that make them calendar dates (label, seconds per value).
_READINGS = (("day numbers since 1970", _SECONDS["days"]), ("epoch seconds", 1.0),
             ("epoch milliseconds", 1e-3), ("epoch microseconds", 1e-6),
             ("epoch nanoseconds", 1e-9))


def _in_years(time, unit):
    """``(largest distance from the axis' zero, span)`` of the times, in years."""
    scale = {"years": 1.0, "months": 1 / 12}.get(unit, _SECONDS[unit] / _SECONDS["years"])
    return float(np.abs(time).max()) * scale, float(np.ptp(time)) * scale


def _reading(time):
    """The first of :data:`_READINGS` under which every time is a date in 1000…2200, or None."""
    lo, hi = float(np.min(time)), float(np.max(time))
    for label, seconds in _READINGS:
        years = np.array([lo, hi]) * seconds / _SECONDS["years"] + 1970
        if 1000 <= years[0] and years[1] <= 2200:
            return label, years
    return None


@validate_params({"time": [np.ndarray], "unit": [StrOptions(set(TIME_UNITS))],
                  "estimator_name": [str], "durations": ["array-like"]},
                 prefer_skip_nested_validation=True)
def check_axis_plausible(time, unit, estimator_name, durations=()):
    """Warn (:class:`TimeUnitWarning`) about time columns that do not look like ``unit``.

    Times are never rescaled.  Two mistakes warn: times more than 10,000 years from the axis' zero
    (year 0 for ``"years"``/``"months"``, 1970 otherwise) or spanning more than 2,000 years (the
    message names the reading that makes them dates); a time column that looks standardised (mean ≈
    0, std ≈ 1) while durations are given. Read more in docs/time.md.

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
    reach, span = _in_years(time, unit)
    if reach > _PLAUSIBLE_YEARS or span > _PLAUSIBLE_SPAN:
        origin = "year 0" if unit in ("years", "months") else "1970"
        what = (f"they lie up to {reach:.3g} years from {origin}" if reach > _PLAUSIBLE_YEARS
                else f"they span {span:.3g} years")
        reading = _reading(time)
        guess = ""
        if reading is not None:
            label, (first, last) = reading
            guess = (f" As {label} they would run from about {first:.0f} to {last:.0f}"
                     + (": set time_unit='days'." if label.startswith("day") else
                        ": pass the dates (datetime64) instead of their integers."))
        warn(
            f"{estimator_name}: time values {float(np.min(time)):.6g} … "
            f"{float(np.max(time)):.6g} are implausible for time_unit={unit!r}: read in "
            f"{unit}, {what}. Day numbers, epoch seconds or dates cast to integers look like "
            "this: pass the datetime64 column itself, or set time_unit to the unit of your "
            f"numbers.{guess}", TimeUnitWarning)
    mean, std = float(time.mean()), float(time.std())
    if durations and abs(mean) < 0.05 and abs(std - 1.0) < 0.05:
        names = ", ".join(f"{n}={v:.4g}" for n, v in durations)
        warn(
            f"{estimator_name}: the time column looks standardised (mean {mean:.2g}, std "
            f"{std:.3g}), so durations ({names}) are read in standard deviations, not "
            f"{unit}. Do not scale the time column: in a Pipeline use "
            "make_crossmodal_transformer, which passes time through unscaled.",
            TimeUnitWarning)
