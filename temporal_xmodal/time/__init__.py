"""Time: the one owner of the time axis, durations, bins, encodings and out-of-range checks.

Times are float64 numbers on a time axis in ``time_unit`` (default ``"years"``): dates map onto
it through :func:`to_time_axis`, durations and rates through :func:`to_duration` and
:func:`to_rate` (a year is 365.25 days, a month a twelfth of it), ``bins=`` through
:class:`TimeBins`; estimators centre times on their training range's midpoint in float64 before
any float32 cast (:class:`TimeAxis`).  Nothing else in the library converts dates, centres times
or parses ``bins``.  Read more in docs/time.md.
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
