"""Time: the one owner of the time axis, durations, bins, encodings and out-of-range checks.

Every estimator, scorer, protocol, loss, loader and the comparison job reads
time through this module (and the layout module :mod:`temporal_xmodal._layout`,
which finds the time column); nothing else converts dates, centres times on
an origin or parses ``bins``.

Read more in the user guide: docs/time.md.

The time axis
-------------
Times are numbers on a **time axis** whose unit is ``time_unit`` (default
``"years"``).  A number is taken as it is (fractional years, a day index,
epoch seconds with ``time_unit="seconds"``...).  A date (numpy
``datetime64``, ``pandas.Timestamp``, a ``datetime64`` column, naive or
tz-aware) is mapped onto the axis:

* ``"years"``: ``year + (instant - 1 January) / length of that year``, so
  1900-01-01 → 1900.0 and 1904-07-02 → 1904.5 (:func:`fractional_year`);
* ``"months"``: fractional years × 12;
* ``"weeks"``, ``"days"``, ``"hours"``, ``"minutes"``, ``"seconds"``: time
  since 1970-01-01 in that unit.

Axis values are float64.  Before anything is cast to float32 (the networks),
an estimator subtracts its origin (the midpoint of the training range,
:func:`time_origin`, :class:`TimeAxis`), so epoch seconds (≈1.7e9) keep
sub-second resolution and the losses take differences of float64 centred
times (:func:`centre_times`).

Durations
---------
``window``, ``bandwidth``, bin widths (and ``decay`` as a half-life) are
numbers on the axis, or ``pandas.Timedelta`` / ``numpy.timedelta64`` /
``datetime.timedelta`` / strings such as ``"180D"``, ``"6mo"``, ``"6M"``,
``"1Y"``, ``"12h"``, ``"30min"`` (:func:`to_duration`; as in numpy, ``"M"`` is
months; a lone ``"m"``, minutes or months, is refused as ambiguous).  Rates
(``decay``) are ``"<rate>/<unit>"`` or ``"<rate>/<count><unit>"``
(:func:`to_rate`: ``"1/2Y"`` is 0.5 per year).  A year is 365.25 days and a
month a twelfth of it.  Times far beyond any calendar in ``time_unit`` warn
(:func:`check_axis_plausible`).

Bins
----
:class:`TimeBins` is the one reader of ``bins=`` (a count, a width as a
number or a duration, edges as numbers or dates) for the binned estimator,
the binned evaluation protocols and the ``"onehot"`` encoding.
"""

from ._axis import (TimeAxis, TimeRangeWarning, TimeUnitWarning, centre_times,
                    check_axis_plausible, time_origin)
from ._bins import TimeBins, TimeBinWarning
from ._encoding import TimeEncoding
from ._durations import is_share, to_duration, to_rate
from ._units import TIME_UNITS, fractional_year, instants, is_datetime_like, to_time_axis
from ._role import TIME_ROLES, time_role

__all__ = [
    "TIME_UNITS",
    "TIME_ROLES",
    "TimeAxis",
    "TimeBinWarning",
    "TimeBins",
    "TimeEncoding",
    "TimeRangeWarning",
    "TimeUnitWarning",
    "centre_times",
    "check_axis_plausible",
    "fractional_year",
    "instants",
    "is_datetime_like",
    "is_share",
    "time_origin",
    "time_role",
    "to_duration",
    "to_rate",
    "to_time_axis",
]
