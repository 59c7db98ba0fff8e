"""What one fit did, as one fitted attribute: :class:`FitReport` (``fit_report_``).

scikit-learn publishes a fit's outcome as attributes (``n_iter_``) beside one warning; so
does a trained estimator of this library: the epochs it ran, the epoch whose weights it
kept and why, that epoch's figure, whether the figure was still improving, whether Ctrl-C
stopped it, and the same for the models inside it (a binned model's bins, a sequential
model's stages).  The warnings say it once to a person; callers (the compare job, a binned
model, a search) read the report.
"""

from dataclasses import dataclass, field

__all__ = ["FitReport", "KEPT_WHY"]

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
    kept_why: str = "closed form"
    metric: str = None
    kept_score: float = None
    recent_gain: float = None
    still_improving: bool = False
    interrupted: bool = False
    children: tuple = field(default=())

    @classmethod
    def from_summary(cls, summary, *, epochs, max_epochs, interrupted):
        """The report of a neural fit from its convergence summary (the ``dict`` of
        :func:`~temporal_xmodal.estimators._neural.convergence`)."""
        if summary["metric"] is None:
            why = "no validation"
        elif summary["cannot_rank"]:
            why = "nan" if summary["best_score"] != summary["best_score"] else "ties"
        else:
            why = "best"
        return cls(epochs=epochs, max_epochs=max_epochs, kept_epoch=summary["best_epoch"],
                   kept_why=why, metric=summary["metric"], kept_score=summary["best_score"],
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
