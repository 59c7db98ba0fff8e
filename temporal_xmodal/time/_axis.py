"""The fitted time axis: range, origin, centring, out-of-range and unit warnings."""

import warnings

import numpy as np
from sklearn.utils._param_validation import (StrOptions, validate_parameter_constraints,
                                             validate_params)

from ._stack import external_stacklevel
from ._units import TIME_UNITS


class TimeRangeWarning(UserWarning):
    """Warned when a time-aware model projects rows outside its training time range.

    Rows within :data:`OUTSIDE_TOLERANCE` of the range's span outside it do not warn.
    """


#: Fraction of the training range's span that times may lie outside it without a
#: :class:`TimeRangeWarning` (a cross-validation fold's few edge rows): 5 %.
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
    """``time - origin`` in float64: differences stay exact to the axis' resolution.

    Every float32 cast (the networks) and every loss works on centred times,
    so epoch seconds (about 1.7e9) keep sub-second resolution.

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

    Read more in the user guide: docs/time.md.

    Parameters
    ----------
    unit : {"years", "months", "weeks", "days", "hours", "minutes", "seconds"}, \
default="years"
        Unit of the axis (see :func:`to_time_axis`).

    Attributes
    ----------
    origin_ : float
        Midpoint of the training range, subtracted (in float64) before any
        float32 cast.
    range_ : tuple of float
        ``(min, max)`` of the training times on the axis.
    dates_ : bool
        Whether the training times were dates.
    encoding_ : TimeEncoding or None
        The network's time encoding, for a model whose time is a network input
        (:meth:`bind_encoding`); ``None`` otherwise.
    encoding_range_ : tuple of float or None
        ``(min, max)`` of the training times when the encoding was fitted (the
        first fit's ``range_``).  It stays when a warm start widens ``range_``:
        times outside it are extrapolated by the encoding, and
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
            Whether they came from dates (recorded for messages).

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

    def centre(self, time):
        """``time - origin_`` in float64 (:func:`centre_times`)."""
        return centre_times(time, self.origin_)

    def extend(self, time):
        """Widen ``range_`` to cover new training times (warm start).

        The origin stays, and so does ``encoding_range_``: a bound encoding keeps
        the statistics the network was trained on, so times outside it stay
        extrapolated (and warned) however far ``range_`` widens.
        """
        self.range_ = (min(self.range_[0], float(np.min(time))),
                       max(self.range_[1], float(np.max(time))))
        return self

    def bind_encoding(self, encoding):
        """Record the network's time encoding, fitted for the current ``range_``.

        From then on :meth:`warn_outside` warns against ``encoding_range_`` (the
        range the encoding was fitted for) and says what the encoding makes of
        the times outside it.

        Parameters
        ----------
        encoding : TimeEncoding
            Fitted on the (centred) training times.

        Returns
        -------
        self : TimeAxis
        """
        self.encoding_ = encoding
        self.encoding_range_ = self.range_
        return self

    def warn_outside(self, time, estimator_name, *, what="projecting"):
        """Warn once when rows fall outside the training range, counting them.

        With a bound encoding (:meth:`bind_encoding`) the range is the one the
        encoding was fitted for, which a warm start does not widen.  Rows at most
        :data:`OUTSIDE_TOLERANCE` (5 %) of the range's span outside it do not warn
        (a cross-validation fold's few edge rows); when one lies farther, the
        warning counts every row outside.

        Parameters
        ----------
        time : ndarray of float64
            Axis times of the rows.
        estimator_name : str
        what : str, default="projecting"
            What the estimator is doing with the rows, for the message.
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
        warnings.warn(message, TimeRangeWarning, stacklevel=external_stacklevel())

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


@validate_params({"time": [np.ndarray], "unit": [StrOptions(set(TIME_UNITS))],
                  "estimator_name": [str], "durations": ["array-like"]},
                 prefer_skip_nested_validation=True)
def check_axis_plausible(time, unit, estimator_name, durations=()):
    """Warn about time columns that do not look like ``unit`` (never silent rescaling).

    Read more in the user guide: docs/time.md.

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
