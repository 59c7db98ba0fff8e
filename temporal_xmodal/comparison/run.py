"""Fits of the comparison (with the constant-time controls) and the end-to-end driver.

:func:`compare` fits every estimator on the training split and evaluates it on
the test split (:mod:`temporal_xmodal.evaluation.report`).  Every estimator
that uses time (``time_role`` not ``"none"``) is fitted a second time as its
**constant-time control**: the same estimator and seed, fitted and evaluated on
the same rows with the time column replaced by a constant.  Its Δ-time is the
estimator's score minus the control's: what time buys it.  Ctrl-C stops the
comparison at the fit in progress and raises :class:`CompareInterrupted` with
the finished fits; the end-to-end driver of ``python -m temporal_xmodal
compare`` is :func:`temporal_xmodal.comparison.driver.run_compare`.
"""

import time
import warnings
from functools import partial
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import StrOptions, validate_params

from ..base import layout_blocks
from ..time import TimeBinWarning, TimeRangeWarning
from ..evaluation.report import evaluate_estimator, evaluate_undated
from ..estimators import date_prior_scores
from ..metrics import counterpart_reciprocal_ranks, random_mrr
from ..time import time_role
from ..training import FitReport, TrainingInterruptedWarning
from .._constraints import Interval
from .._warnings import CheckpointWarning
from .estimate import fit_seconds, fitting_left
from .job import seconds_text
from .notes import checkpoint_note_of
from .registry import training_epochs
from .table import DELTA_TIME_SCORE, is_na

__all__ = ["CompareInterrupted", "DATE_PRIOR", "compare", "undated_references"]

#: Honest date-only baseline of the undated protocol (see ``date_prior_scores``):
#: neighbours and kernel bandwidth in years.
DATE_PRIOR = {"n_neighbors": 25, "bandwidth": 2.0}
_PROTOCOLS = ("labels", "undated")
#: ``n_jobs`` of joblib: a positive number of workers, or a negative count from the cores.
_N_JOBS = [Interval(Integral, None, -1, closed="right"),
           Interval(Integral, 1, None, closed="left"), None]


@validate_params({"blocks_train": [tuple], "blocks_test": [tuple]},
                 prefer_skip_nested_validation=True)
def undated_references(blocks_train, blocks_test):
    """Reference MRRs of the undated protocol: random and honest date-only rankings.

    Read more in the user guide: docs/evaluation.md.

    Parameters
    ----------
    blocks_train, blocks_test : tuple (X_image, X_text, time)
        Blocks of the training pairs (the caption date prior) and of the test
        rows (the queries and candidates).

    Returns
    -------
    references : dict
        ``random`` (E[MRR] of a random ranking) and ``date_prior`` (picture →
        caption MRR of :func:`~temporal_xmodal.estimators.date_prior_scores`
        with :data:`DATE_PRIOR`).
    """
    _, text_train, t_train = blocks_train
    _, text_test, t_test = blocks_test
    scores = date_prior_scores(text_train, t_train, text_test, t_test, **DATE_PRIOR)
    return {"random": random_mrr(len(t_test)),
            "date_prior": float(counterpart_reciprocal_ranks(scores)[0].mean())}


class CompareInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`compare` (or :func:`run_compare`) between or during fits.

    A ``KeyboardInterrupt``, so that code which does not catch it stops as on any Ctrl-C.
    :func:`run_compare` has written the finished fits' table and ``results.json`` before it
    is raised; ``run_compare(..., resume=True)`` (``compare --resume``) skips them.

    Read more in the user guide: docs/index.md.

    Attributes
    ----------
    results : dict
        The finished fits, ``{(name, control): (fit seconds, figures)}``.
    rows : list of dict
        The table's rows of the finished fits (see :func:`compare`).
    n_fits : int
        Fits the comparison has in all.
    on_disk : str or None
        What a run over several seeds has on disk (finished seeds, the means, the
        figure), when the Ctrl-C came outside one run's fits or must be read across seeds;
        None: ``results`` and ``rows`` say it.
    """

    def __init__(self, results, rows, n_fits, on_disk=None):
        super().__init__(f"interrupted (Ctrl-C) after {len(results)} of {n_fits} fits")
        self.results, self.rows, self.n_fits = results, rows, n_fits
        self.on_disk = on_disk


def _fit_evaluate(estimator, X_train, y_train, X_test, y_test, evaluate, control, name=None):
    """Fit one estimator and evaluate it: ``(fit seconds, figures)``, or ``(seconds, None)``
    when Ctrl-C interrupted the fit (its partial model is not evaluated).

    The fit's outcome is read from its ``fit_report_``
    (:class:`~temporal_xmodal.training.FitReport`; a closed-form estimator has none):
    ``figures["still_improving"]``, whether the fit or a model inside it (a bin's, a stage's)
    was still improving at its last epoch, and ``figures["checkpoint_notes"]``, when one could
    not choose its checkpoint.  ``figures["time_bin_notes"]``: the fit's and the evaluation's
    time-bin warnings (bins merged); ``figures["n_bins"]``: the bins a binned model fitted.
    The warnings that say the same to a person are summarised once under the table instead
    of shown; the others pass through.
    """
    # what the report says, told to a person: summarised under the table instead
    recorded = (ConvergenceWarning, TrainingInterruptedWarning, CheckpointWarning,
                TimeBinWarning)
    with warnings.catch_warnings(record=True) as caught:
        for category in recorded:
            warnings.simplefilter("always", category)
        if control:  # one constant time: every time bin but one is empty and merged, and
            # TempXNet's temporal term is switched off (both expected: that is the control)
            warnings.simplefilter("ignore", TimeBinWarning)
            warnings.filterwarnings("ignore", message=".*every training item has the same time",
                                    category=UserWarning)
        start = time.perf_counter()
        estimator.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        report = getattr(estimator, "fit_report_", None) or FitReport()
        if not report.interrupted:
            figures = (evaluate(estimator, X_test) if y_test is None
                       else evaluate(estimator, X_test, y_test))
    for w in caught:  # the others are shown
        if not issubclass(w.category, recorded):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if report.interrupted:
        return seconds, None
    notes = list(dict.fromkeys(str(w.message) for w in caught
                               if issubclass(w.category, TimeBinWarning)))
    extra = {"time_bin_notes": notes, "epochs": training_epochs(estimator)}
    if report.cannot_rank:  # a note of the job, in its words (issue 56, 6)
        extra["checkpoint_notes"] = [checkpoint_note_of(name or type(estimator).__name__,
                                                        report)]
    if hasattr(estimator, "n_bins_"):
        extra["n_bins"] = int(estimator.n_bins_)
    return seconds, {**figures, "still_improving": report.still_improving, **extra}


def _evaluate_control(estimator, X_control, y, *, X_real, time_window, real_time=None):
    """A constant-time control's figures on its constant-time test rows, except t-mAP@50,
    whose relevance (same label and ``|Δt| <= time_window``) reads the rows' real times
    (``real_time``, else ``X_real``'s), as the estimator's own t-mAP@50 does: the control is
    embedded without them."""
    if real_time is None:
        with warnings.catch_warnings():  # the real times lie outside the control's instant
            warnings.simplefilter("ignore", TimeRangeWarning)
            real_time = layout_blocks(estimator, X_real)[2]
    return evaluate_estimator(estimator, X_control, y, time_window=time_window,
                              relevance_time=real_time)


def _keyed_fit_evaluate(key, *args):
    """:func:`_fit_evaluate` tagged with its job key (parallel results arrive unordered)."""
    return key, _fit_evaluate(*args, name=key[0])


@validate_params(
    {
        "estimators": [dict],
        "X_train": ["array-like"],
        "y_train": ["array-like", None],
        "X_test": ["array-like"],
        "y_test": ["array-like", None],
        "time_window": [Interval(Real, 0, None, closed="left"), None],
        "protocol": [StrOptions(set(_PROTOCOLS))],
        "controls": [tuple, None],
        "n_jobs": _N_JOBS,
        "log": [callable],
        "done": [dict, None],
        "on_fit": [callable, None],
        "test_time": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def compare(estimators, X_train, y_train, X_test, y_test, *, time_window, protocol="labels",
            controls=None, n_jobs=1, log=print, done=None, on_fit=None, test_time=None):
    """Fit each estimator on the training split and evaluate it on the test split.

    Every estimator that uses time is also fitted and evaluated as its
    constant-time control when ``controls`` are given; the difference of the
    two scores is its Δ-time.  Ctrl-C stops the comparison at the fit in
    progress (that fit is dropped, the finished ones are kept) and raises
    :class:`CompareInterrupted`.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    estimators : dict of str -> estimator
        Unfitted estimators by display name (fitted in place when
        ``n_jobs=1``).
    X_train : array-like of shape (n_train, n_features)
        Training data in the ``[image | text | time]`` layout.
    y_train : array-like of shape (n_train,) or None
        Training labels (``None`` for estimators that need none).
    X_test : array-like of shape (n_test, n_features)
        Test data in the same layout.
    y_test : array-like of shape (n_test,) or None
        Test labels (unused by the undated protocol).
    time_window : float or None
        t-mAP@50 window, a number in the estimators' ``time_unit``
        (``None``: undated data), see
        :func:`~temporal_xmodal.evaluation.evaluate_estimator`.
    protocol : {"labels", "undated"}, default="labels"
        :func:`~temporal_xmodal.evaluation.evaluate_estimator` (labelled
        relevance) or :func:`~temporal_xmodal.evaluation.evaluate_undated`
        (one gold caption per picture, captions undated; ``y_test`` unused).
    controls : tuple (X_train_constant, X_test_constant) or None, default=None
        The splits with a constant time column.  Given: every estimator whose
        ``time_role`` is not ``"none"`` is also fitted and evaluated on them
        (a clone: same parameters and seed) and its row gets ``delta_time``
        (score minus the control's score; the score is
        :data:`~temporal_xmodal.comparison.table.DELTA_TIME_SCORE` of the
        protocol) and ``control`` (the control's score and fit seconds).
        ``delta_time`` is NaN (n/a) for static estimators and without controls.
    n_jobs : int, default=1
        Fits run in parallel (joblib); ``-1``: every core.
    log : callable, default=print
        Progress: a line when each fit starts (``n_jobs=1``) and finishes,
        with its fit time.
    done : dict or None, default=None
        Finished fits to keep instead of fitting them again,
        ``{(name, control): (fit seconds, figures)}`` (what ``--resume`` reads
        from ``results.json``).
    on_fit : callable or None, default=None
        Called as ``on_fit(results, rows, n_fits)`` after every finished fit,
        with every finished fit so far (``done`` included:
        ``{(name, control): (fit seconds, figures)}``), their rows and the
        number of fits in all: :func:`run_compare` writes the table and
        ``results.json`` there.
    test_time : array-like of shape (n_test,) or None, default=None
        The test rows' exact times on the estimators' time axis, read by t-mAP@50's
        relevance and date filter instead of ``X_test``'s time column (which a float32
        ``X_test`` rounds); ``None``: ``X_test``'s.

    Returns
    -------
    rows : list of dict
        One row per estimator, in the order of ``estimators``: ``name``,
        ``time_role``, ``fit_seconds``, the figures of the protocol,
        ``delta_time`` and, for time-aware estimators with controls,
        ``control``.

    Raises
    ------
    CompareInterrupted
        On Ctrl-C, with the finished fits and their rows.
    """
    if test_time is not None and time_window is not None:
        test_time = np.asarray(test_time, dtype=np.float64)
    else:
        test_time = None
    evaluate = (partial(evaluate_estimator, time_window=time_window, relevance_time=test_time)
                if protocol == "labels" else evaluate_undated)
    # a control's t-mAP@50 asks the task's question: relevant = same label within the window
    # of the rows' real times (its own rows all carry one time)
    evaluate_control = (partial(_evaluate_control, X_real=X_test, time_window=time_window,
                                real_time=test_time)
                        if protocol == "labels" and time_window is not None else evaluate)
    y_eval = y_test if protocol == "labels" else None
    # how each method uses time, read before the fits (a fitted use_time=False control
    # reads "none")
    uses = {name: time_role(est) for name, est in estimators.items()}
    jobs = [(name, False, est, X_train, X_test) for name, est in estimators.items()]
    if controls is not None:
        jobs += [(name, True, clone(est), *controls) for name, est in estimators.items()
                 if uses[name] != "none"]
    label = {False: "", True: " (constant-time control)"}
    n_train, width = np.shape(X_train)
    expected = {(name, control): fit_seconds(name, est, n_train, width - 1)
                for name, control, est, *_ in jobs}  # each fit's estimate (issue 56, 4)
    results = {key: value for key, value in (done or {}).items()
               if key in {(name, control) for name, control, *_ in jobs}}
    todo = [job for job in jobs if (job[0], job[1]) not in results]
    if results:
        log(f"resuming: {len(results)} of {len(jobs)} fits already done, {len(todo)} to go")

    def finished(key, result):
        # kept first: a Ctrl-C during the "done" line or the write below finds it in results
        results[key] = result
        left = [(n, c) for n, c, *_ in jobs if (n, c) not in results]
        to_go = seconds_text(fitting_left(left, results, expected)) if left else ""
        log(f"[{len(results)}/{len(jobs)}] {key[0]}{label[key[1]]} done: fit {result[0]:.1f} s"
            + (f"; {len(left)} to go, about {to_go} of fitting left" if left else ""))
        for note in result[1].get("checkpoint_notes", ()):
            log(f"  note: {note}")
        if on_fit is not None:
            on_fit(dict(results), _rows(estimators, uses, results, protocol), len(jobs))

    def interrupted():
        rows = _rows(estimators, uses, results, protocol)
        return CompareInterrupted(dict(results), rows, len(jobs))

    if n_jobs == 1:
        for name, control, est, X_tr, X_te in todo:
            log(f"[{len(results) + 1}/{len(jobs)}] fitting {name}{label[control]} ...")
            try:
                result = _fit_evaluate(est, X_tr, y_train, X_te, y_eval,
                                       evaluate_control if control else evaluate, control,
                                       name=name)
                if result[1] is not None:  # else the fit recorded the Ctrl-C, stopped early
                    finished((name, control), result)  # the "done" line and the write
            except CompareInterrupted:
                raise
            except KeyboardInterrupt:
                raise interrupted() from None
            if result[1] is None:
                raise interrupted()
    elif todo:
        log(f"fitting {len(todo)} models on {n_jobs} parallel workers ...")
        running = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
            delayed(_keyed_fit_evaluate)((name, control), est, X_tr, y_train, X_te, y_eval,
                                         evaluate_control if control else evaluate, control)
            for name, control, est, X_tr, X_te in todo)
        try:
            for key, result in running:
                if result[1] is None:  # a worker's fit stopped by the Ctrl-C
                    raise KeyboardInterrupt
                finished(key, result)
        except KeyboardInterrupt:
            running.close()  # joblib cancels the fits still queued or running
            raise interrupted() from None
    return _rows(estimators, uses, results, protocol)


def _minus(a, b):
    """``a - b``; NaN when either is n/a (NaN, or None as read back from JSON)."""
    return float("nan") if is_na(a) or is_na(b) else a - b


def beyond_filter(figures, control):
    """What the dates add to time-window mAP@50 beyond a date filter: the stronger of the
    model's two readings (all candidates, date-filtered) minus the stronger of its control's.

    The user holds the dates, so the constant-time control searched within the window is a
    rival the model has to beat, as much as the control itself."""
    best = [None if is_na(f.get("tmap50")) or is_na(f.get("tmap50_filter"))
            else max(f["tmap50"], f["tmap50_filter"]) for f in (figures, control)]
    return _minus(*best)


def _rows(estimators, uses, results, protocol):
    """The table's rows of the finished fits: one per estimator whose own fit is done,
    with Δ-time where its control is done too."""
    score = DELTA_TIME_SCORE[protocol]
    rows = []
    for name in estimators:
        if (name, False) not in results:
            continue
        seconds, figures = results[(name, False)]
        row = {"name": name, "time_role": uses[name], "fit_seconds": seconds, **figures,
               "delta_time": float("nan")}
        if (name, True) in results:
            c_seconds, c_figures = results[(name, True)]
            row["delta_time"] = _minus(figures[score], c_figures[score])
            if "tmap50" in figures:  # the time-aware question, beside the category one
                row["delta_tmap50"] = _minus(figures["tmap50"], c_figures.get("tmap50"))
                row["delta_beyond_filter"] = beyond_filter(figures, c_figures)
            row["control"] = {"score": score, "value": c_figures[score],
                              "fit_seconds": c_seconds,
                              "still_improving": c_figures["still_improving"],
                              "checkpoint_notes": c_figures.get("checkpoint_notes", [])}
        rows.append(row)
    return rows
