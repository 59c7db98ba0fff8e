"""One fit of a trained estimator, entered once: :class:`TrainingRun`, Ctrl-C's one owner
(the fit's generator, device, threads and Ctrl-C: caught once, warned once at the end,
raised again inside scikit-learn's model selection).  Read more in docs/training.md, "One
fit, one run"."""

import sys
import threading
from contextlib import ExitStack, contextmanager
from functools import cached_property

import numpy as np
from sklearn.utils import check_random_state

from .._device import resolve_device, training_threads
from .._warnings import warn
from ._report import FitReport, convergence

__all__ = ["TrainingInterruptedWarning", "TrainingRun", "fit_child"]

#: How the messages name each selection figure.
_FIGURE = {"valid_map": "mAP", "valid_tmap": "time-window mAP@50", "valid_loss": "loss"}


class TrainingInterruptedWarning(UserWarning):
    """Warned when training was interrupted (Ctrl-C) and the model is partial."""


class _Stop(Exception):
    """Unwinds a fit from the part Ctrl-C stopped to its run (:meth:`TrainingRun.stop_after`)."""


_local = threading.local()  # the runs and child fits open on this thread


def _depth():
    return getattr(_local, "depth", 0)


@contextmanager
def _inside():
    _local.depth = _depth() + 1
    try:
        yield
    finally:
        _local.depth -= 1


def fit_child(estimator, X, y=None):
    """Fit ``estimator`` as a part of another fit (in a joblib worker too): its Ctrl-C is left
    to the outer fit to report, its own :class:`TrainingRun` stays silent.

    Parameters
    ----------
    estimator : estimator
    X, y : the arguments of its ``fit``

    Returns
    -------
    estimator : the fitted ``estimator``
    """
    with _inside():
        return estimator.fit(X, y)


class TrainingRun:
    """The lifecycle of one fit of ``estimator``: use as ``with TrainingRun(self) as run:``.

    Parameters
    ----------
    estimator : estimator
        The estimator being fitted; its ``random_state`` and ``device`` (if any) are read.
    threads : bool, default=True
        Train on :func:`~temporal_xmodal._device.training_threads`; False for a fit made of
        inner fits, each of which sets its own.

    Attributes
    ----------
    rng : numpy.random.RandomState
        The fit's generator, from ``random_state``.
    stopped : bool
        Whether Ctrl-C stopped the fit or a part of it.
    """

    def __init__(self, estimator, *, threads=True):
        self.estimator, self._threaded = estimator, threads
        self.name = type(estimator).__name__
        self.rng = check_random_state(getattr(estimator, "random_state", None))
        self.stopped = False
        self._message = None

    def __enter__(self):
        self._nested = _depth() > 0
        self._entered = ExitStack()
        if self._threaded:
            self._entered.enter_context(training_threads(self.name))
        self._entered.enter_context(_inside())  # the fits inside this one are its parts
        return self

    def __exit__(self, kind, exc, tb):
        self._entered.__exit__(kind, exc, tb)
        if kind is not None and not issubclass(kind, _Stop):
            return False
        if self.stopped and not self._nested:
            message = self._message or f"{self.name}: training was interrupted (Ctrl-C)."
            warn(message, TrainingInterruptedWarning)
            if _inside_model_selection():
                raise KeyboardInterrupt(message)
        return True

    # ------------------------------------------------------------ what the run owns
    def draw_seed(self):
        """A seed for the fit's generators (one draw of :attr:`rng`)."""
        return int(self.rng.randint(np.iinfo(np.int32).max))

    @cached_property
    def device(self):
        """The fit's device, resolved once from the estimator's ``device``."""
        return resolve_device(self.estimator.device)

    # ------------------------------------------------------------------- Ctrl-C
    @contextmanager
    def stoppable(self):
        """A part of the fit that Ctrl-C may stop: the ``KeyboardInterrupt`` ends the part and sets
        :attr:`stopped`."""
        try:
            yield
        except KeyboardInterrupt:
            self.stopped = True

    def fit_part(self, estimator, X, y=None):
        """Fit ``estimator`` as a part of this fit; a Ctrl-C during it sets :attr:`stopped`."""
        with self.stoppable():
            fit_child(estimator, X, y)
        self.check_part(estimator)
        return estimator

    def check_part(self, estimator):
        """Whether Ctrl-C stopped ``estimator``'s fit (its ``fit_report_``); sets
        :attr:`stopped`."""
        report = getattr(estimator, "fit_report_", None)
        self.stopped = self.stopped or bool(report is not None and report.interrupted)
        return self.stopped

    def stop_after(self, net, where, state):
        """End the fit here when Ctrl-C stopped ``net``; the warning says ``where`` and the
        partial model's ``state``."""
        if getattr(net, "interrupted_", False):
            self.partial(where, state)
            raise _Stop

    def partial(self, where, state):
        """Record that the fit was stopped ``where``, leaving the model in ``state`` (the warning's
        words)."""
        self.stopped = True
        self._message = f"{self.name}: training was interrupted (Ctrl-C) {where}; {state}."
        if hasattr(self.estimator, "fit_report_"):  # a partial model, not an unfitted one
            self._message += " Its fit_report_ says which parts finished."

    def stage_report(self, net):
        """The :class:`FitReport` of a net trained without validation (the last weights kept)."""
        epochs = len(net.history)
        return FitReport(epochs=epochs, max_epochs=net.max_epochs, kept_epoch=epochs,
                         last_epoch=epochs, kept_why="no validation",
                         interrupted=bool(getattr(net, "interrupted_", False)))

    def report(self, children):
        """The :class:`FitReport` of a fit made of inner fits (``(name, report)`` pairs)."""
        return FitReport.of_children(children, interrupted=self.stopped)

    def net_report(self, net, n_before, *, metric, validating, max_epochs):
        """The :class:`FitReport` of a neural fit of ``net`` (its epochs after the first
        ``n_before``); on Ctrl-C, also the warning's message."""
        interrupted = bool(getattr(net, "interrupted_", False))
        selection = dict(net.callbacks_).get("selection")
        summary = convergence(net.history, metric, n_before, validating=validating,
                              max_epochs=max_epochs, interrupted=interrupted, name=self.name,
                              kept=getattr(selection, "kept_epoch_", None))
        if interrupted:
            self.stopped = True
            self._message = _net_message(net.history, metric, n_before, validating=validating,
                                         best=summary["best_epoch"], name=self.name)
        return FitReport.from_summary(summary, epochs=len(net.history) - n_before,
                                      max_epochs=max_epochs, interrupted=interrupted)


def _net_message(history, metric, n_before, *, validating, best, name):
    """What a Ctrl-C left of a net's training: where it stopped and which weights it holds."""
    n = len(history)
    fit = "this warm-start fit" if n_before else "the fit"
    if n <= n_before:
        return (f"{name}: training was interrupted (Ctrl-C) before the first epoch of {fit} "
                f"began; the model is usable but unchanged by {fit}: it holds the weights the "
                "fit started from" + ("." if n_before else " (the initialisation)."))
    finished = (metric if validating else "train_loss") in history[-1]
    where = f"after {n} epoch(s)" if finished else f"during epoch {n}"
    if validating and not any(metric in row for row in history[n_before:]):
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


def _inside_model_selection():
    """Whether scikit-learn's model selection is on this thread's stack."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("sklearn.model_selection"):
            return True
        frame = frame.f_back
    return False
