"""Which epoch's weights a neural fit keeps, and what a Ctrl-C left.

Plain functions of the net's history (:class:`skorch.history.History`), called by
:class:`~temporal_xmodal.estimators._neural.NeuralCrossModalEmbedder` once a fit ends.
Epochs are 1-based over the whole history; a fit that continues another (a warm start, a
bin continuing from a global model) selects among its own epochs, those after the first
``n_before``.  An epoch is *scored* when it recorded the selection figure: one interrupted
(Ctrl-C) before its validation has none.
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..time import external_stacklevel

#: How the messages name each selection figure.
_FIGURE = {"valid_map": "mAP", "valid_loss": "loss"}


def scored_epochs(history, metric, n_before):
    """``(epoch, figure)`` of the epochs after the first ``n_before`` that recorded ``metric``."""
    return [(n_before + 1 + i, row[metric])
            for i, row in enumerate(history[n_before:]) if metric in row]


def best_epoch(history, metric, n_before, *, validating, max_epochs, interrupted, name):
    """The epoch whose weights are kept; warns when ``metric`` was still improving at the end.

    The best is the first best of ``metric`` (lowest ``valid_loss``, highest ``valid_map``)
    among this fit's scored epochs.  Without any (no validation, or a Ctrl-C before this
    fit's first figure) it is the last epoch of the history, whose (possibly partial) weights
    the model holds.  When the best is the last of this fit's ``max_epochs`` (at least 2)
    epochs and training was not interrupted, a :class:`~sklearn.exceptions.ConvergenceWarning`
    names ``name`` and says to raise ``max_epochs``.
    """
    n = len(history)
    scored = scored_epochs(history, metric, n_before) if validating else []
    if not scored:
        return n
    values = np.asarray([value for _, value in scored], dtype=float)
    best = scored[int(np.argmin(values) if metric == "valid_loss"
                      else np.argmax(values))][0]
    if best == n and n - n_before >= 2 and n == n_before + max_epochs and not interrupted:
        warnings.warn(
            f"{name}: the validation {_FIGURE[metric]} was still improving at the last epoch "
            f"({n}); the model may be short of convergence. Raise max_epochs: the best "
            "epoch's weights are kept, so more epochs mostly cost time.",
            ConvergenceWarning, stacklevel=external_stacklevel())
    return best


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
