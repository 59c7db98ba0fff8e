"""THE PARAMETER VOCABULARY: the constraint classes of ``_parameter_constraints``.

Layer 0, so that :mod:`temporal_xmodal.time` validates with them as every estimator does
(``TimeBins(min_bin_size=True)`` is refused as ``SAMEmbedder(max_epochs=True)`` is).
:class:`Interval` is the library's one interval constraint; the rules (:class:`SequenceOf`,
:class:`Arrangement`) are scikit-learn ``Options`` checked by a rule.  The constraint that
reads durations (``PositiveDuration``) is :mod:`temporal_xmodal._validation`'s, which
re-exports these.
"""

import numpy as np
from sklearn.utils._param_validation import Interval as _SklearnInterval
from sklearn.utils._param_validation import Options as _Options

__all__ = ["Arrangement", "Interval", "SequenceOf", "USE_TIME_CONSTRAINT"]


class Interval(_SklearnInterval):
    """scikit-learn's ``Interval`` constraint, refusing booleans: ``True`` is not a number here.

    The library's one interval constraint, for counts and reals alike, in
    ``_parameter_constraints`` and ``@validate_params``.  ``bool`` is a subclass of ``int``
    in Python, so scikit-learn's ``Interval`` takes ``True`` as 1 (``max_epochs=True``
    trained one epoch, ``embedding_dim=True`` died in torch); this one refuses ``True``,
    ``False`` and NumPy's booleans, and says so in scikit-learn's parameter message
    ("an int (not a bool) in the range [1, inf)").  A parameter that takes a bool as well
    lists ``"boolean"`` beside the interval.

    Parameters
    ----------
    type : {numbers.Integral, numbers.Real, RealNotInt}
        The numbers of the interval.
    left, right : float, int or None
        Bounds (None: unbounded).
    closed : {"left", "right", "both", "neither"}
        Which bounds belong to the interval.

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
    """A constraint checked by a rule rather than a list of values.

    scikit-learn's parameter validation takes only its own constraint classes; a rule is
    an ``Options`` whose one option is a valid example (what its common checks build a
    valid value from) and whose :meth:`is_satisfied_by` is the rule.
    """

    def __init__(self, example):
        super().__init__(object, {example})


class SequenceOf(_Rule):
    """A non-empty 1-D sequence of numbers, each satisfying an :class:`Interval`.

    For parameters that list candidates (``DatePriorRetrieval(weights=...)``): the check
    that a ``fit`` body did is a constraint, refused when the parameter is validated.

    Parameters
    ----------
    interval : Interval
        What each element must be (booleans are refused, NaN and infinity fail the bounds).
    """

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
    """A tuple or list holding each of some names exactly once, in any order.

    Parameters
    ----------
    names : tuple of str
        The names (``("image", "text")`` for ``modality_order``).
    """

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


#: The recipe that replaces the removed ``use_time="auto"``, quoted in its error.
RECIPE = ('GridSearchCV(estimator, {"use_time": [True, False]}, '
          'scoring=temporal_xmodal.scoring.SCORERS["tmap@50"])')


class _UseTime(_Options):
    """``use_time`` is a bool; the error for anything else (the removed ``"auto"`` included)
    gives the model-selection recipe."""

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
