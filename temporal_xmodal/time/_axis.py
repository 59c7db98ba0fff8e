"""The fitted time axis of an estimator: range, origin, out-of-range and unit warnings."""

import warnings

import numpy as np

from ._stack import external_stacklevel


class TimeRangeWarning(UserWarning):
    """Warned when a time-aware model projects rows outside its training time range."""


class TimeUnitWarning(UserWarning):
    """Warned when times or durations look inconsistent with ``time_unit``."""


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
