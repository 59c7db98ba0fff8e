"""The duration constraints of ``_parameter_constraints`` (:class:`Duration`,
:class:`PositiveDuration`); the rest of the vocabulary is :mod:`temporal_xmodal._constraints`'
(which :mod:`temporal_xmodal.time` imports, so these two, reading durations through
:mod:`~temporal_xmodal.time`, live apart)."""

import datetime

import numpy as np

from ._constraints import _Rule
from .time import to_duration, to_rate


class PositiveDuration(_Rule):
    """A string or timedelta that :func:`~temporal_xmodal.time.to_duration` reads as
    positive (``"6M"``, ``"5%"``, ``pandas.Timedelta("30D")``); numbers are an
    :class:`Interval`'s.

    Examples
    --------
    >>> from temporal_xmodal._validation import PositiveDuration
    >>> PositiveDuration().is_satisfied_by("6M"), PositiveDuration().is_satisfied_by("0D")
    (True, False)
    """

    def __init__(self):
        super().__init__("1Y")

    def is_satisfied_by(self, val):
        if not isinstance(val, (str, datetime.timedelta, np.timedelta64)):
            return False
        try:
            return to_duration(val, "seconds", span=1.0) > 0
        except (TypeError, ValueError):
            return False

    def __str__(self):
        return ("a positive duration (a string such as '6M', '180D' or '1Y', or a "
                "timedelta)")


class Duration(_Rule):
    """An estimator's duration parameter given as a string (``"180D"``, ``"5%"`` of the
    training span) or a timedelta; numbers, in ``time_unit``, are an :class:`Interval`'s.

    The estimator lists the parameter in its ``_durations``; ``fit`` reads it once into
    ``<name>_`` (:meth:`~temporal_xmodal.base.CrossModalEmbedder._resolve_durations`).

    Parameters
    ----------
    kind : {"duration", "rate"}, default="duration"
        ``"rate"``: a rate per unit (``"0.1/M"``) or a half-life
        (:func:`~temporal_xmodal.time.to_rate`).
    window : bool, default=False
        A window, checked against the training times' span.
    """

    def __init__(self, kind="duration", window=False):
        super().__init__("1Y")
        self.kind, self.window = kind, window

    def is_satisfied_by(self, val):
        return isinstance(val, (str, datetime.timedelta, np.timedelta64))

    def read(self, value, unit, name, span):
        """``value`` as a float in ``unit``; a share is of ``span``."""
        read = to_rate if self.kind == "rate" else to_duration
        return read(value, unit, name=name, span=span)

    def __str__(self):
        if self.kind == "rate":
            return ("a rate such as '0.1/M', or a half-life (a duration such as '6M', '180D' "
                    "or '5%' of the training span, or a timedelta)")
        return ("a duration (a string such as '180D', '4M', '1Y' or '5%' of the training "
                "span, or a timedelta)")
