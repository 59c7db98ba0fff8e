"""Which epoch's weights a neural fit keeps, and what a Ctrl-C left.

Plain functions of the net's history (:class:`skorch.history.History`), called by
:class:`~temporal_xmodal.estimators._neural.NeuralCrossModalEmbedder` once a fit ends.
Epochs are 1-based over the whole history; a fit that continues another (a warm start, a
bin continuing from a global model) selects among its own epochs, those after the first
``n_before``.  An epoch is *scored* when it recorded the selection figure: one interrupted
(Ctrl-C) before its validation has none.
"""

import sys

import numpy as np

from .._warnings import StillImprovingWarning, warn
from ..training import TrainingInterruptedWarning, cannot_rank

#: How the messages name each selection figure.
_FIGURE = {"valid_map": "mAP", "valid_tmap": "time-window mAP@50", "valid_loss": "loss"}

#: A fit is *still improving* when its best validation figure rose by more than ``TOL``
#: over its last ``N_ITER_NO_CHANGE`` epochs (as scikit-learn's ``tol`` / ``n_iter_no_change``
#: judge an MLP): an absolute 0.01 of mAP (a point of mAP, about the spread of the figure
#: between seeds), or 1 % of a loss.
TOL = 0.01
N_ITER_NO_CHANGE = 5


def scored_epochs(history, metric, n_before):
    """``(epoch, figure)`` of the epochs after the first ``n_before`` that recorded ``metric``."""
    return [(n_before + 1 + i, row[metric])
            for i, row in enumerate(history[n_before:]) if metric in row]


def convergence(history, metric, n_before, *, validating, max_epochs, interrupted):
    """How the last fit ended: its kept epoch, last epoch and whether it was still improving.

    The kept (best) epoch is the first best of ``metric`` (lowest ``valid_loss``, highest
    ``valid_map``) among this fit's scored epochs, except when the figure is the same at
    every one of at least two epochs (``cannot_rank``): it cannot choose, and the last epoch,
    whose weights :class:`~temporal_xmodal.training.CheckpointSelection` keeps, is kept.  Without any (no validation, or a Ctrl-C
    before this fit's first figure) it is the last epoch of the history, whose (possibly
    partial) weights the model holds.  The fit was *still improving* when it ran all its
    ``max_epochs`` (at least 2) epochs, was not interrupted, and its best figure over its
    last :data:`N_ITER_NO_CHANGE` epochs beats the best before them by more than
    :data:`TOL` (``recent_gain``; a fit of at most that many epochs compares with its first
    epoch's figure).  A figure that has reached a plateau, noisy or not, is converged.

    Returns
    -------
    summary : dict
        ``best_epoch`` and ``last_epoch`` (1-based, over the whole history), ``metric``
        (the selection figure, ``None`` without validation), ``best_score`` (its value at
        ``best_epoch``, ``None`` without validation), ``recent_gain`` (how much the last
        epochs improved the best figure, in its own units, positive when better; ``None``
        without validation), ``still_improving`` (bool) and ``cannot_rank`` (bool: the
        figure was the same at every epoch, so the last is kept).
    """
    n = len(history)
    scored = scored_epochs(history, metric, n_before) if validating else []
    summary = {"best_epoch": n, "last_epoch": n, "metric": None, "best_score": None,
               "recent_gain": None, "still_improving": False, "cannot_rank": False}
    if not scored:
        return summary
    values = np.asarray([value for _, value in scored], dtype=float)
    i = int(np.argmin(values) if metric == "valid_loss" else np.argmax(values))
    best = scored[i][0]
    summary["cannot_rank"] = cannot_rank(values)
    if summary["cannot_rank"]:  # a tie at every epoch: the last weights are kept
        best, i = n, len(values) - 1
    gain = recent_gain(values, lower_is_better=metric == "valid_loss")
    complete = n - n_before >= 2 and n == n_before + max_epochs and not interrupted
    summary.update(best_epoch=best, metric=metric, best_score=float(values[i]),
                   recent_gain=gain,
                   still_improving=bool(complete and gain > _tolerance(values, metric)))
    return summary


def recent_gain(values, *, lower_is_better=False):
    """How much the last :data:`N_ITER_NO_CHANGE` figures improved on the best before them.

    Positive when better (a lower loss, a higher mAP); 0.0 for a single figure.  With at
    most ``N_ITER_NO_CHANGE + 1`` figures the reference is the first one.
    """
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return 0.0
    cut = max(1, len(values) - N_ITER_NO_CHANGE)
    before, recent = values[:cut], values[cut:]
    if lower_is_better:
        return float(before.min() - recent.min())
    return float(recent.max() - before.max())


def _tolerance(values, metric):
    """:data:`TOL` in the figure's units: absolute for mAP, relative for a loss."""
    if metric == "valid_loss":
        return TOL * max(float(np.abs(values).max()), 1e-12)
    return TOL


def still_improving_message(name):
    """The :class:`~temporal_xmodal.StillImprovingWarning` text of ``name``'s fits.

    The same for every fit of a class (Python's default filter shows it once per calling
    line); each fit's epochs, figure and recent gain are in its ``convergence_``.
    """
    return (f"{name}: the validation figure was still improving: its best over the most "
            f"recent epochs ({N_ITER_NO_CHANGE} of them, or every epoch after the first in a "
            f"fit of {N_ITER_NO_CHANGE + 1} or fewer) beat the earlier best by more than "
            f"{TOL:g}; the model may be short of convergence. "
            "Raise max_epochs (the best epoch's weights are kept, so more epochs mostly cost "
            "time). Each fit's best and last epoch, its figure and recent_gain are in "
            "convergence_ (docs/training.md).")


def best_epoch(history, metric, n_before, *, validating, max_epochs, interrupted, name):
    """The epoch whose weights are kept and the fit's :func:`convergence` summary.

    When the fit was still improving, a :class:`~temporal_xmodal.StillImprovingWarning`
    (a :class:`~sklearn.exceptions.ConvergenceWarning`) names ``name`` and says to raise
    ``max_epochs``, at the user's line (:func:`temporal_xmodal._warnings.warn`); its text
    is the same for every fit of ``name`` (:func:`still_improving_message`).

    Returns
    -------
    best : int
    summary : dict
        :func:`convergence`'s.
    """
    summary = convergence(history, metric, n_before, validating=validating,
                          max_epochs=max_epochs, interrupted=interrupted)
    if summary["cannot_rank"]:
        warn(f"{name}: the validation figure {metric} was {summary['best_score']:.4g} at "
             f"every epoch, so it cannot choose the checkpoint (too few validation rows, or "
             f"all of one class); the last epoch's weights are kept. Raise "
             f"validation_fraction, or use selection_metric='valid_loss'.")
    if summary["still_improving"]:
        warn(still_improving_message(name), StillImprovingWarning)
    return summary["best_epoch"], summary


def interrupt_message(history, metric, n_before, *, validating, best, name):
    """What a Ctrl-C left: where training stopped and which weights the model holds.

    An epoch is finished when its figure is recorded (``metric`` when validating, else the
    training loss); a Ctrl-C before that leaves it unfinished.  ``best`` is
    :func:`best_epoch`'s answer.
    """
    n = len(history)
    fit = "this warm-start fit" if n_before else "the fit"
    if n <= n_before:
        return (f"{name}: training was interrupted (Ctrl-C) before the first epoch of {fit} "
                f"began; the model is usable but unchanged by {fit}: it holds the weights the "
                "fit started from" + ("." if n_before else " (the initialisation)."))
    finished = (metric if validating else "train_loss") in history[-1]
    where = f"after {n} epoch(s)" if finished else f"during epoch {n}"
    if validating and not scored_epochs(history, metric, n_before):
        where = f"during the first epoch of {fit} (epoch {n}), before its validation"
        state = ("there is no validation figure to choose a checkpoint by, so it holds the "
                 f"partial weights of that unfinished first epoch (best_epoch_ = {n})")
    elif validating:
        state = (f"it holds the weights of epoch {best} (best_epoch_), the best validation "
                 f"{_FIGURE[metric]} so far")
    elif finished:
        state = f"it holds the weights of the last epoch ({n})"
    else:
        state = f"it holds the partial weights of the unfinished epoch {n}"
    return (f"{name}: training was interrupted (Ctrl-C) {where}; the model is usable but "
            f"partial: {state}. Fit again with warm_start=True to continue training.")


def report_interrupt(message):
    """Warn that Ctrl-C stopped a fit, and stop a model selection around it.

    Called directly, ``fit`` returns the usable (partial) model with a
    :class:`~temporal_xmodal.training.TrainingInterruptedWarning`.  Inside scikit-learn's model
    selection (``GridSearchCV``, ``cross_validate``, … on any joblib backend: their fitting
    function is on this thread's stack) the Ctrl-C was meant for the search, which would
    otherwise go on to its next fit: it is raised again, after the warning.
    """
    warn(message, TrainingInterruptedWarning)
    if _inside_model_selection():
        raise KeyboardInterrupt(message)


def _inside_model_selection():
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("sklearn.model_selection"):
            return True
        frame = frame.f_back
    return False
