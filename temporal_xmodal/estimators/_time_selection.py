"""``use_time``: a time-aware estimator fitted with its times, or as its constant-time control.

A time-aware estimator's *constant-time control* is the same estimator, seed and rows with
every time set to one instant: the static model of the same method, which is what time has
to beat.  ``use_time=False`` fits the control; ``use_time=True`` fits with the times;
``use_time="auto"`` fits both on the same training and validation rows and keeps time only
where its validation figure beats the control's by at least :data:`TIME_MARGIN`.  The fitted
estimator records the choice (``time_kept_``), both figures (``time_scores_``) and their
difference (``time_gain_``).  An estimator that kept the control projects every item at the
one instant it was trained on, whatever time it is asked for.

The estimator supplies the fit (a function of the blocks).  A neural estimator holds out its
own validation rows and reports their figure (``_time_selection_score()``, read after each
fit), so the two fits are all it takes; for any other (Binned), this module holds out
:data:`HELD_OUT` of the rows, fits both on the rest, scores both on the held-out rows with
the mean of image → text and text → image mAP, and refits the better one on every row.
"""

import copy
import warnings

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions

from ..base import l2_normalize
from ..metrics import cross_modal_scores
from ..time import TimeBinWarning

#: The least validation gain (in the estimator's validation figure, mAP) for which
#: ``use_time="auto"`` keeps time: below it the control is kept.
TIME_MARGIN = 0.01

#: Fraction of the rows held out to choose, for estimators without validation rows of their own.
HELD_OUT = 0.1

#: The scikit-learn constraint of ``use_time``.
USE_TIME_CONSTRAINT = [StrOptions({"auto"}), "boolean"]

#: The ``use_time`` parameter's documentation, shared by the time-aware estimators.
USE_TIME_DOC = f"""    use_time : "auto" or bool, default="auto"
        ``True``: train and project with the times.  ``False``: the
        constant-time control (every time set to one instant; a static model of
        this method).  ``"auto"``: fit both on the same rows, seed and
        validation split and keep time only if its validation mAP beats the
        control's by at least {TIME_MARGIN} (``time_gain_``, ``time_kept_``);
        twice the fit time.  Without validation rows (``validation_fraction=0``,
        too few rows) or with one time for all rows there is no choice to make:
        time is used (``time_scores_`` is ``None``).  A warm start keeps the
        choice of the first fit.
"""

#: The attributes of the choice, documented once.
USE_TIME_ATTRIBUTES_DOC = """    time_kept_ : bool
        Whether the model uses time (``False``: it is its constant-time control
        and projects every item at one instant).
    time_scores_ : dict or None
        ``{"time": ..., "control": ...}``, the validation figures of the two fits
        of ``use_time="auto"``; ``None`` otherwise.
    time_gain_ : float
        ``time_scores_["time"] - time_scores_["control"]``; NaN without
        ``use_time="auto"``.
"""


def control_times(estimator, n):
    """``n`` times at the instant the control is fitted at: the axis origin."""
    return np.full(n, estimator.time_axis_.origin_, dtype=np.float64)


def projection_times(estimator, time, n):
    """The times an estimator projects ``n`` items at: ``time`` (``None`` for a model that
    needs none), or the control's instant."""
    return time if getattr(estimator, "time_kept_", True) else control_times(estimator, n)


def fit_using_time(estimator, fit, X_image, X_text, time, labels):
    """Fit ``estimator`` through ``fit(X_image, X_text, time, labels)`` as ``use_time`` says.

    Parameters
    ----------
    estimator : CrossModalEmbedder
        A time-aware estimator with a ``use_time`` parameter and its layout and time axis
        learnt (``_validate_fit``), and ``_time_plays_a_part()`` (whether its settings
        give time any part in the fit).  A neural one also has ``_holds_out_rows(n)`` (whether a
        fit on ``n`` rows holds out validation rows) and ``_time_selection_score()`` (the
        last fit's validation figure, higher is better).
    fit : callable
        Fits the estimator in place on the given blocks.
    """
    if estimator._continues() and hasattr(estimator, "time_kept_"):
        # a warm start continues the model it has, with or without time
        fit(X_image, X_text, projection_times(estimator, time, len(time)), labels)
        return estimator
    use, n = estimator.use_time, len(time)
    own_rows = hasattr(estimator, "_time_selection_score")
    can_choose = (estimator._holds_out_rows(n) if own_rows else
                  2 <= round(HELD_OUT * n) <= n - 2)
    if (use != "auto" or np.ptp(time) == 0 or not can_choose
            or not estimator._time_plays_a_part()):
        # nothing to choose: constant times make the fit its own control, and a method
        # whose settings give time no part (TempXNet at temporal_weight=0) is its control
        _fit_one(estimator, fit, bool(use), X_image, X_text, time, labels)
        _record(estimator, None)
        return estimator
    random_state = estimator.random_state
    if not isinstance(random_state, (int, np.integer)):
        # one seed for both fits: the same initial weights, shuffling and validation rows
        estimator.random_state = int(check_random_state(random_state).randint(2 ** 31 - 1))
    try:
        if own_rows:
            return _select(estimator, fit, X_image, X_text, time, labels)
        return _select_held_out(estimator, fit, X_image, X_text, time, labels)
    finally:
        estimator.random_state = random_state


def _fit_one(estimator, fit, kept, X_image, X_text, time, labels):
    """One fit, with the times (``kept``) or as the control."""
    estimator.time_kept_ = kept
    if getattr(estimator, "verbose", 0) and estimator.use_time == "auto":
        print(f"{type(estimator).__name__}, use_time='auto': fit "
              f"{'with time' if kept else 'as the constant-time control'}")
    fit(X_image, X_text, time if kept else control_times(estimator, len(time)), labels)


def _fit_both(estimator, fit, X_image, X_text, time, labels, score):
    """The state and ``score()`` of a fit with the times and of one as the control."""
    before, axis = dict(vars(estimator)), estimator.time_axis_
    states, scores = {}, {}
    for kept in (True, False):
        _restore(estimator, before)
        estimator.time_axis_ = copy.deepcopy(axis)  # a fit may bind its time encoding
        _fit_one(estimator, fit, kept, X_image, X_text, time, labels)
        states[kept], scores[kept] = dict(vars(estimator)), score()
        if getattr(estimator, "training_interrupted_", False):
            break  # Ctrl-C: no second fit; the first one's (partial) model is kept
    return states, scores


def _select(estimator, fit, X_image, X_text, time, labels):
    """Both fits on the estimator's own split; the state of the better one is kept."""
    states, scores = _fit_both(estimator, fit, X_image, X_text, time, labels,
                               estimator._time_selection_score)
    complete = len(scores) == 2 and None not in scores.values()
    kept = _decide(estimator, scores) if complete else True in states
    _restore(estimator, states[kept])  # the caller gives the random_state back
    _record(estimator, scores if complete else None)
    return estimator


def _select_held_out(estimator, fit, X_image, X_text, time, labels):
    """Both fits on all but :data:`HELD_OUT` of the rows, scored on those; the better refit."""
    n = len(time)
    order = check_random_state(estimator.random_state).permutation(n)
    valid, train = np.sort(order[:round(HELD_OUT * n)]), np.sort(order[round(HELD_OUT * n):])

    def score():
        if getattr(estimator, "training_interrupted_", False):
            return None
        at = projection_times(estimator, time[valid], len(valid))
        Z_image = l2_normalize(estimator._embed("image", X_image[valid], at))
        Z_text = l2_normalize(estimator._embed("text", X_text[valid], at))
        held = None if labels is None else labels[valid]  # None: the counterparts
        return cross_modal_scores(Z_image, Z_text, held, metrics=("map",))["map"]

    before, axis = dict(vars(estimator)), copy.deepcopy(estimator.time_axis_)
    with warnings.catch_warnings():  # the refit on every row says how its bins were merged
        warnings.simplefilter("ignore", TimeBinWarning)
        states, scores = _fit_both(estimator, fit, X_image[train], X_text[train], time[train],
                                   None if labels is None else labels[train], score)
    if len(scores) < 2 or None in scores.values():  # interrupted: keep what was fitted
        _restore(estimator, states[True])
        _record(estimator, None)
        return estimator
    kept = _decide(estimator, scores)
    _restore(estimator, before)
    estimator.time_axis_ = axis
    _fit_one(estimator, fit, kept, X_image, X_text, time, labels)
    _record(estimator, scores)
    return estimator


def _restore(estimator, state):
    """Make ``state`` (a copy of ``vars(estimator)``) the estimator's whole state."""
    vars(estimator).clear()
    vars(estimator).update(state)


def _decide(estimator, scores):
    """Whether time is kept: its figure beats the control's by at least TIME_MARGIN."""
    gain = scores[True] - scores[False]
    kept = bool(gain >= TIME_MARGIN)
    if getattr(estimator, "verbose", 0):
        print(f"{type(estimator).__name__}, use_time='auto': validation mAP "
              f"{scores[True]:.4f} with time, {scores[False]:.4f} constant (gain {gain:+.4f}); "
              f"kept {'time' if kept else 'the constant-time control'}")
    return kept


def _record(estimator, scores):
    """``time_scores_`` and ``time_gain_`` of a choice (``None``/NaN: none was made); nothing
    on an estimator that a Ctrl-C left unfitted."""
    if not hasattr(estimator, "time_kept_"):
        return
    if scores is None:
        estimator.time_scores_, estimator.time_gain_ = None, float("nan")
        return
    estimator.time_scores_ = {"time": float(scores[True]), "control": float(scores[False])}
    estimator.time_gain_ = float(scores[True] - scores[False])
