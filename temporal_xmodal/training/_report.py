"""What one fit did, as one fitted attribute: :class:`FitReport` (``fit_report_``), which
callers read instead of the warnings.  Read more in docs/training.md, "What a fit reports"."""

from dataclasses import dataclass, field

import numpy as np

from .._warnings import CheckpointWarning, StillImprovingWarning, warn
from ._callbacks import cannot_rank, kept_epoch

__all__ = ["FitReport", "KEPT_WHY", "ReportsFit", "N_ITER_NO_CHANGE", "TOL", "convergence", "recent_gain",
           "still_improving_message"]

#: Why a fit kept the weights it kept (``FitReport.kept_why``).
KEPT_WHY = {
    "best": "the epoch of the best validation figure",
    "no validation": "the last epoch: no validation rows",
    "ties": "the last epoch: the validation figure was the same at every epoch",
    "nan": "the last epoch: the validation figure was NaN at every epoch",
    "closed form": "no epochs: a closed-form fit",
    "children": "each inner model's own (children)",
}


@dataclass(frozen=True)
class FitReport:
    """The outcome of one fit (an estimator's ``fit_report_``).

    Parameters
    ----------
    epochs : int, default=0
        Epochs this fit ran (a warm start counts its own).
    max_epochs : int or None, default=None
        Epochs it was asked for; ``None``: not a trained model.
    kept_epoch : int or None, default=None
        The epoch whose weights were kept, 1-based over the net's whole history.
    last_epoch : int or None, default=None
        The net's last epoch, 1-based over its whole history.
    kept_why : str, default="closed form"
        A key of :data:`KEPT_WHY`.
    metric : str or None, default=None
        The validation figure that chose the epoch (``selection_metric``).
    kept_score : float or None, default=None
        Its value at the kept epoch.
    recent_gain : float or None, default=None
        How much the figure's best over the most recent epochs beat the earlier best
        (positive: better).
    still_improving : bool, default=False
        The fit ran all its epochs and ``recent_gain`` exceeds the tolerance: it may be
        short of convergence.
    interrupted : bool, default=False
        Ctrl-C stopped this fit; the kept weights are what it had reached.
    children : tuple of (str, FitReport), default=()
        The reports of the models inside it, by name (``"bin 0"``, ``"stage II"``).
    """

    epochs: int = 0
    max_epochs: int = None
    kept_epoch: int = None
    last_epoch: int = None
    kept_why: str = "closed form"
    metric: str = None
    kept_score: float = None
    recent_gain: float = None
    still_improving: bool = False
    interrupted: bool = False
    children: tuple = field(default=())

    @classmethod
    def from_summary(cls, summary, *, epochs, max_epochs, interrupted):
        """The report of a neural fit from its :func:`convergence` summary."""
        if summary["metric"] is None:
            why = "no validation"
        elif summary["cannot_rank"]:
            why = "nan" if summary["best_score"] != summary["best_score"] else "ties"
        else:
            why = "best"
        return cls(epochs=epochs, max_epochs=max_epochs, kept_epoch=summary["best_epoch"],
                   last_epoch=summary["last_epoch"], kept_why=why, metric=summary["metric"], kept_score=summary["best_score"],
                   recent_gain=summary["recent_gain"],
                   still_improving=bool(summary["still_improving"]),
                   interrupted=bool(interrupted))

    @classmethod
    def of_children(cls, children, *, interrupted=False):
        """The report of a model made of inner models (``(name, report)`` pairs)."""
        children = tuple((name, report if report is not None else cls())
                         for name, report in children)
        return cls(epochs=sum(r.epochs for _, r in children), kept_why="children",
                   interrupted=bool(interrupted) or any(r.interrupted for _, r in children),
                   still_improving=any(r.still_improving for _, r in children),
                   children=children)

    def convergence(self):
        """The report as a neural fit's ``convergence_`` dictionary: ``best_epoch``,
        ``last_epoch``, ``metric``, ``best_score``, ``recent_gain``, ``still_improving``,
        ``cannot_rank``."""
        return {"best_epoch": self.kept_epoch, "last_epoch": self.last_epoch,
                "metric": self.metric, "best_score": self.kept_score,
                "recent_gain": self.recent_gain, "still_improving": self.still_improving,
                "cannot_rank": self.cannot_rank}

    @property
    def reason(self):
        """Why these weights were kept, in words (:data:`KEPT_WHY`)."""
        return KEPT_WHY[self.kept_why]

    @property
    def cannot_rank(self):
        """Whether this fit, or a model inside it, could not choose its checkpoint."""
        return self.kept_why in ("ties", "nan") or any(r.cannot_rank for _, r in self.children)

    def summary(self):
        """The report in a line (the kept epoch and why, still improving, interrupted)."""
        if self.kept_why == "children":
            parts = [f"{len(self.children)} inner fits"]
        elif self.kept_why == "closed form":
            parts = [KEPT_WHY["closed form"]]
        else:
            parts = [f"{self.epochs} epoch(s) run, kept epoch {self.kept_epoch} of the net's "
                     f"history: {KEPT_WHY[self.kept_why]}"
                     + (f" ({self.metric} {self.kept_score:.4g})"
                        if self.kept_why == "best" else "")]
        if self.still_improving:
            parts.append("still improving")
        if self.interrupted:
            parts.append("interrupted (Ctrl-C)")
        return "; ".join(parts)


class ReportsFit:
    """Mixin of the trained estimators: ``training_interrupted_`` is a view of ``fit_report_``."""

    @property
    def training_interrupted_(self):
        """Whether Ctrl-C stopped the last fit (``fit_report_.interrupted``)."""
        return self.fit_report_.interrupted


#: A fit is *still improving* when its best validation figure rose by more than ``TOL``
#: (of mAP; of a loss, relative) over its last ``N_ITER_NO_CHANGE`` epochs, as
#: scikit-learn's ``tol`` / ``n_iter_no_change``.
TOL = 0.01
N_ITER_NO_CHANGE = 5


def convergence(history, metric, n_before, *, validating, max_epochs, interrupted, name,
                kept=None):
    """The epoch whose weights a fit kept and how it ended (the estimator's ``convergence_``).

    Epochs are 1-based over the whole history; a warm start selects among its own, after
    ``n_before``.  The kept epoch is ``kept`` (:class:`CheckpointSelection`'s), or
    :func:`kept_epoch`'s.  Warns with a :class:`~temporal_xmodal.StillImprovingWarning` when
    a complete fit's :func:`recent_gain` exceeds :data:`TOL`, with a
    :class:`~temporal_xmodal.CheckpointWarning` when the figure cannot rank the epochs.

    Returns
    -------
    summary : dict
        ``best_epoch``, ``last_epoch``, ``metric``, ``best_score``, ``recent_gain``,
        ``still_improving`` and ``cannot_rank``.
    """
    n = len(history)
    scored = ([(n_before + 1 + i, row[metric]) for i, row in enumerate(history[n_before:])
               if metric in row] if validating else [])
    summary = {"best_epoch": n, "last_epoch": n, "metric": None, "best_score": None,
               "recent_gain": None, "still_improving": False, "cannot_rank": False}
    if not scored:
        return summary
    values = np.asarray([value for _, value in scored], dtype=float)
    if kept is not None:  # the epoch CheckpointSelection kept (the fit's one decision)
        i = next((k for k, (epoch, _) in enumerate(scored) if epoch == kept), len(values) - 1)
    else:  # the same rule, for a history alone
        i = kept_epoch(values, lower_is_better=metric == "valid_loss")
    best = scored[i][0]
    summary["cannot_rank"] = cannot_rank(values)
    if summary["cannot_rank"]:  # a tie or NaN at every epoch: the last weights are kept
        best, i = n, len(values) - 1
    nan = np.isnan(values)
    gain = recent_gain(values[~nan], lower_is_better=metric == "valid_loss")
    complete = n - n_before >= 2 and n == n_before + max_epochs and not interrupted
    tolerance = (TOL * max(float(np.nanmax(np.abs(values))), 1e-12)
                 if metric == "valid_loss" and not nan.all() else TOL)
    summary.update(best_epoch=best, metric=metric, best_score=float(values[i]),
                   recent_gain=gain, still_improving=bool(complete and gain > tolerance))
    if nan.all():
        warn(f"{name}: the validation figure {metric} was NaN at every epoch (validation "
             f"rows without a label?), so it cannot choose the checkpoint: the last epoch's "
             f"weights are kept (best_epoch_ = {best}). Give every validation row a label, "
             f"or use selection_metric='valid_loss'.", CheckpointWarning)
    elif nan.any():
        warn(f"{name}: the validation figure {metric} was NaN at {int(nan.sum())} of "
             f"{len(values)} epochs; the checkpoint was chosen among the others (epoch "
             f"{best}).", CheckpointWarning)
    elif summary["cannot_rank"]:
        warn(f"{name}: the validation figure {metric} was {summary['best_score']:.4g} at "
             f"every epoch, so it cannot choose the checkpoint (too few validation rows, or "
             f"all of one class); the last epoch's weights are kept. Raise "
             f"validation_fraction, or use selection_metric='valid_loss'.", CheckpointWarning)
    if summary["still_improving"]:
        warn(still_improving_message(name), StillImprovingWarning)
    return summary


def recent_gain(values, *, lower_is_better=False):
    """How much the last :data:`N_ITER_NO_CHANGE` figures improved on the best before them
    (positive when better; 0.0 for a single figure; with at most ``N_ITER_NO_CHANGE + 1``
    figures, against the first)."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return 0.0
    cut = max(1, len(values) - N_ITER_NO_CHANGE)
    before, recent = values[:cut], values[cut:]
    if lower_is_better:
        return float(before.min() - recent.min())
    return float(recent.max() - before.max())


def still_improving_message(name):
    """The :class:`~temporal_xmodal.StillImprovingWarning` text of ``name``'s fits."""
    return (f"{name}: the validation figure was still improving: its best over the most "
            f"recent epochs ({N_ITER_NO_CHANGE} of them, or every epoch after the first in a "
            f"fit of {N_ITER_NO_CHANGE + 1} or fewer) beat the earlier best by more than "
            f"{TOL:g}; the model may be short of convergence. "
            "Raise max_epochs (the best epoch's weights are kept, so more epochs mostly cost "
            "time). Each fit's best and last epoch, its figure and recent_gain are in "
            "convergence_ (docs/training.md).")
