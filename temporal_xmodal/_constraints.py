"""THE PARAMETER VOCABULARY: the constraint classes of ``_parameter_constraints``.

Layer 0, so that :mod:`temporal_xmodal.time` validates with them too.  The duration
constraints are :mod:`temporal_xmodal._validation`'s, which re-exports these.
"""

import numpy as np
from sklearn.utils._param_validation import Interval as _SklearnInterval
from sklearn.utils._param_validation import Options as _Options

__all__ = ["Arrangement", "Interval", "SequenceOf", "USE_TIME_CONSTRAINT"]


class Interval(_SklearnInterval):
    """scikit-learn's ``Interval`` constraint, refusing booleans (Python and NumPy's), which
    scikit-learn's takes as 0 and 1: the library's one interval constraint.

    Parameters are scikit-learn's (``type``, ``left``, ``right``, ``closed``).

    Examples
    --------
    >>> from numbers import Integral
    >>> from temporal_xmodal._constraints import Interval
    >>> epochs = Interval(Integral, 1, None, closed="left")
    >>> epochs.is_satisfied_by(3), epochs.is_satisfied_by(True)
    (True, False)
    >>> str(epochs)
    'an int (not a bool) in the range [1, inf)'
    """

    def is_satisfied_by(self, val):
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)

    def __str__(self):
        return super().__str__().replace(" in the range", " (not a bool) in the range", 1)


class _Rule(_Options):
    """A constraint checked by a rule: an ``Options`` whose one option is a valid example
    (for scikit-learn's common checks) and whose :meth:`is_satisfied_by` is the rule."""

    def __init__(self, example):
        super().__init__(object, {example})


class SequenceOf(_Rule):
    """A non-empty 1-D sequence of numbers, each satisfying ``interval`` (an
    :class:`Interval`)."""

    def __init__(self, interval):
        super().__init__((interval.right if interval.left is None else interval.left,))
        self.interval = interval

    def is_satisfied_by(self, val):
        if isinstance(val, (str, bytes, dict)) or np.ndim(val) != 1 or len(val) == 0:
            return False
        return all(self.interval.is_satisfied_by(v.item() if isinstance(v, np.generic) else v)
                   for v in val)

    def __str__(self):
        return f"a non-empty sequence of numbers, each {self.interval}"


class Arrangement(_Rule):
    """A tuple or list holding each of ``names`` (e.g. ``("image", "text")``) exactly once,
    in any order."""

    def __init__(self, names):
        super().__init__(tuple(names))
        self.names = tuple(names)

    def is_satisfied_by(self, val):
        return (isinstance(val, (tuple, list)) and len(val) == len(self.names)
                and all(isinstance(v, str) for v in val)
                and sorted(val) == sorted(self.names))

    def __str__(self):
        names = " and ".join(repr(n) for n in self.names)
        return f"a tuple or list holding {names} once each"


#: The model-selection recipe of ``use_time``, quoted in its error.
RECIPE = ('GridSearchCV(estimator, {"use_time": [True, False]}, '
          'scoring=temporal_xmodal.scoring.SCORERS["tmap@50"])')


class _UseTime(_Options):
    """``use_time`` is a bool; the error for anything else gives the model-selection
    recipe."""

    def __init__(self):
        super().__init__(object, {True, False})

    def is_satisfied_by(self, val):
        return isinstance(val, (bool, np.bool_))

    def __str__(self):
        return ("a bool (True: the method with its times; False: its constant-time control). "
                "To choose between them on held-out data (what the removed use_time='auto' "
                f"did inside fit), search it: {RECIPE}")


#: The scikit-learn constraint of ``use_time``.
USE_TIME_CONSTRAINT = [_UseTime()]
