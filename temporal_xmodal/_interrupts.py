"""Ctrl-C: the one owner of what an interrupted fit means, says and does.

The policy, for every estimator and job of the library:

* **A fit stopped by Ctrl-C returns a usable, partial model** and says which weights it
  holds (:func:`interrupt_message`) with a :class:`TrainingInterruptedWarning`
  (:func:`report_interrupt`); ``training_interrupted_`` is True.  skorch swallows the
  ``KeyboardInterrupt``: the nets record it where it does
  (:class:`temporal_xmodal.training.CrossModalNet.partial_fit`, the mechanism), and the
  estimator reports it through this module.
* **Inside a model selection** (``GridSearchCV``, ``cross_validate``, … on any joblib
  backend) the Ctrl-C was meant for the search: after the warning it is raised again, so
  that the search stops instead of going on to its next fit.
* **Meta-estimators stop as a whole**: Binned keeps the bins fitted before the interrupt
  (:mod:`temporal_xmodal.estimators.binned._fit`), SequentialCrossModal the stages.
* **The compare job keeps every finished fit** and says how to resume
  (:class:`temporal_xmodal.comparison.run.CompareInterrupted`, :mod:`temporal_xmodal.cli`).

It imports nothing of the package but its warnings (layer 0).
"""

import sys

from ._warnings import warn

#: How the messages name each selection figure.
_FIGURE = {"valid_map": "mAP", "valid_tmap": "time-window mAP@50", "valid_loss": "loss"}


class TrainingInterruptedWarning(UserWarning):
    """Warned when training was interrupted (Ctrl-C) and the model is partial."""


def _scored(history, metric, n_before):
    return any(metric in row for row in history[n_before:])


def interrupt_message(history, metric, n_before, *, validating, best, name):
    """What a Ctrl-C left: where training stopped and which weights the model holds.

    An epoch is finished when its figure is recorded (``metric`` when validating, else the
    training loss); a Ctrl-C before that leaves it unfinished.  ``best`` is
    the kept epoch (``convergence_['best_epoch']``).
    """
    n = len(history)
    fit = "this warm-start fit" if n_before else "the fit"
    if n <= n_before:
        return (f"{name}: training was interrupted (Ctrl-C) before the first epoch of {fit} "
                f"began; the model is usable but unchanged by {fit}: it holds the weights the "
                "fit started from" + ("." if n_before else " (the initialisation)."))
    finished = (metric if validating else "train_loss") in history[-1]
    where = f"after {n} epoch(s)" if finished else f"during epoch {n}"
    if validating and not _scored(history, metric, n_before):
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
    :class:`TrainingInterruptedWarning`.  Inside scikit-learn's model
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
