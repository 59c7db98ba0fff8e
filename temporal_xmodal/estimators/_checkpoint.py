"""Which epoch's weights a neural fit keeps, and what a Ctrl-C left.

Plain functions of the net's history (:class:`skorch.history.History`), called by
:class:`~temporal_xmodal.estimators._neural.NeuralCrossModalEmbedder` once a fit ends.
Epochs are 1-based over the whole history; a fit that continues another (a warm start, a
bin continuing from a global model) selects among its own epochs, those after the first
``n_before``.  An epoch is *scored* when it recorded the selection figure: one interrupted
(Ctrl-C) before its validation has none.
"""

import sys
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..time import external_stacklevel

#: How the messages name each selection figure.
_FIGURE = {"valid_map": "mAP", "valid_loss": "loss"}

#: ``(text, file, line)`` of the still-improving warnings shown under the "default" action.
#: Python's default filter shows a warning once per text and calling line, but
#: scikit-learn's searches reset the filters around every fit (``sklearn.utils.parallel``),
#: which empties Python's own record: without this one a search warned once per fit.
_SHOWN = set()


def scored_epochs(history, metric, n_before):
    """``(epoch, figure)`` of the epochs after the first ``n_before`` that recorded ``metric``."""
    return [(n_before + 1 + i, row[metric])
            for i, row in enumerate(history[n_before:]) if metric in row]


def convergence(history, metric, n_before, *, validating, max_epochs, interrupted):
    """How the last fit ended: its kept epoch, last epoch and whether it was still improving.

    The kept (best) epoch is the first best of ``metric`` (lowest ``valid_loss``, highest
    ``valid_map``) among this fit's scored epochs.  Without any (no validation, or a Ctrl-C
    before this fit's first figure) it is the last epoch of the history, whose (possibly
    partial) weights the model holds.  The fit was *still improving* when the best is the
    last of this fit's ``max_epochs`` (at least 2) epochs and training was not interrupted.

    Returns
    -------
    summary : dict
        ``best_epoch`` and ``last_epoch`` (1-based, over the whole history), ``metric``
        (the selection figure, ``None`` without validation), ``best_score`` (its value at
        ``best_epoch``, ``None`` without validation) and ``still_improving`` (bool).
    """
    n = len(history)
    scored = scored_epochs(history, metric, n_before) if validating else []
    summary = {"best_epoch": n, "last_epoch": n, "metric": None, "best_score": None,
               "still_improving": False}
    if not scored:
        return summary
    values = np.asarray([value for _, value in scored], dtype=float)
    i = int(np.argmin(values) if metric == "valid_loss" else np.argmax(values))
    best = scored[i][0]
    summary.update(best_epoch=best, metric=metric, best_score=float(values[i]),
                   still_improving=bool(best == n and n - n_before >= 2
                                        and n == n_before + max_epochs and not interrupted))
    return summary


def still_improving_message(name):
    """The :class:`~sklearn.exceptions.ConvergenceWarning` text of ``name``'s fits.

    The same for every fit of a class, so that Python's default warning filter shows it
    once per calling line (a grid search's many fits: once); each fit's epochs and figure
    are in its ``convergence_``.
    """
    return (f"{name}: the validation figure was still improving at the last epoch; the "
            "model may be short of convergence. Raise max_epochs (the best epoch's weights "
            "are kept, so more epochs mostly cost time). Each fit's best and last epoch and "
            "its figure are in convergence_ (docs/training.md).")


def best_epoch(history, metric, n_before, *, validating, max_epochs, interrupted, name):
    """The epoch whose weights are kept and the fit's :func:`convergence` summary.

    When the fit was still improving, a :class:`~sklearn.exceptions.ConvergenceWarning`
    names ``name`` and says to raise ``max_epochs``; its text is the same for every fit
    of ``name`` (:func:`still_improving_message`).

    Returns
    -------
    best : int
    summary : dict
        :func:`convergence`'s.
    """
    summary = convergence(history, metric, n_before, validating=validating,
                          max_epochs=max_epochs, interrupted=interrupted)
    if summary["still_improving"]:
        _warn_once_per_line(still_improving_message(name), ConvergenceWarning,
                            external_stacklevel() + 1)
    return summary["best_epoch"], summary


def _warn_once_per_line(text, category, stacklevel):
    """``warnings.warn``, keeping the "default" action's promise across filter resets.

    Under the filters' "default" action a text is shown once per calling line, even when
    the filters were reset in between (:data:`_SHOWN`); any other action ("always",
    "error", "ignore", a ``catch_warnings(record=True)`` that records every fit) is left
    to :func:`warnings.warn` unchanged.
    """
    frame = sys._getframe(stacklevel - 1)
    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    module = frame.f_globals.get("__name__", "<string>")
    if _action(text, category, module, lineno) == "default":
        key = (text, filename, lineno)
        if key in _SHOWN:
            return
        _SHOWN.add(key)
    warnings.warn(text, category, stacklevel=stacklevel)


def _action(text, category, module, lineno):
    """The action the warning filters take on a warning (as :func:`warnings.warn_explicit`
    chooses it: the first matching filter, else ``warnings.defaultaction``)."""
    for action, message, cat, mod, line in warnings.filters:
        if ((message is None or message.match(text)) and issubclass(category, cat)
                and (mod is None or mod.match(module)) and (line == 0 or lineno == line)):
            return action
    return warnings.defaultaction


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
