"""The fits of the comparison and their constant-time controls: :func:`compare`.

Every estimator that uses time (``time_role`` not ``"none"``) is fitted a second time as its
constant-time control: the same estimator and seed on the same rows, the time column
constant.  Its Δ-time is the estimator's score minus the control's: what time buys it.
Read more in docs/index.md ("Comparing the estimators").
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

from .._constraints import Interval
from .._warnings import CheckpointWarning
from ..base import layout_blocks
from ..estimators import date_prior_scores
from ..evaluation.report import evaluate_estimator, evaluate_undated
from ..metrics import counterpart_reciprocal_ranks, random_mrr
from ..time import TimeBinWarning, TimeRangeWarning, time_role
from ..training import FitReport, fit_child
from .estimate import fit_seconds, fitting_left
from .job import StopFits, seconds_text
from .report import DELTA_TIME_SCORE, checkpoint_note_of, is_na
from .settings import training_epochs

__all__ = ["DATE_PRIOR", "beyond_filter", "compare", "undated_references"]

#: The date-only baseline of the undated protocol (``date_prior_scores``): neighbours, and
#: the kernel bandwidth in years.
DATE_PRIOR = {"n_neighbors": 25, "bandwidth": 2.0}
_PROTOCOLS = ("labels", "undated")
#: ``n_jobs`` of joblib: a positive number of workers, or a negative count from the cores.
_N_JOBS = [Interval(Integral, None, -1, closed="right"),
           Interval(Integral, 1, None, closed="left"), None]
#: What a fit's report says, told to a person: summarised under the table, not shown.
_RECORDED = (ConvergenceWarning, CheckpointWarning, TimeBinWarning)


@validate_params({"blocks_train": [tuple], "blocks_test": [tuple]},
                 prefer_skip_nested_validation=True)
def undated_references(blocks_train, blocks_test):
    """Reference MRRs of the undated protocol from the splits' ``(X_image, X_text, time)``
    blocks: ``{"random": E[MRR] of a random ranking, "date_prior": picture → caption MRR of
    date_prior_scores with DATE_PRIOR}``."""
    _, text_train, t_train = blocks_train
    _, text_test, t_test = blocks_test
    scores = date_prior_scores(text_train, t_train, text_test, t_test, **DATE_PRIOR)
    return {"random": random_mrr(len(t_test)),
            "date_prior": float(counterpart_reciprocal_ranks(scores)[0].mean())}


def _fit_evaluate(estimator, X_train, y_train, X_test, y_test, evaluate, control, name=None):
    """Fit and evaluate one estimator: ``(fit seconds, figures)``; figures None when Ctrl-C
    stopped the fit (its partial model is not evaluated).

    The outcome is read from ``fit_report_``: ``still_improving``, ``checkpoint_notes``;
    plus ``time_bin_notes``, ``epochs`` and a binned model's ``n_bins``.  The warnings that
    say the same are recorded, the others shown.
    """
    with warnings.catch_warnings(record=True) as caught:
        for category in _RECORDED:
            warnings.simplefilter("always", category)
        if control:  # one constant time: the time bins merged, TempXNet's temporal term off
            warnings.simplefilter("ignore", TimeBinWarning)
            warnings.filterwarnings("ignore", message=".*every training item has the same time",
                                    category=UserWarning)
        start = time.perf_counter()
        fit_child(estimator, X_train, y_train)  # a Ctrl-C is the job's to report
        seconds = time.perf_counter() - start
        report = getattr(estimator, "fit_report_", None) or FitReport()
        if not report.interrupted:
            figures = (evaluate(estimator, X_test) if y_test is None
                       else evaluate(estimator, X_test, y_test))
    for w in caught:  # the others are shown
        if not issubclass(w.category, _RECORDED):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if report.interrupted:  # Ctrl-C stopped the fit
        return seconds, None
    notes = list(dict.fromkeys(str(w.message) for w in caught
                               if issubclass(w.category, TimeBinWarning)))
    extra = {"time_bin_notes": notes, "epochs": training_epochs(estimator)}
    if report.cannot_rank:
        extra["checkpoint_notes"] = [checkpoint_note_of(name or type(estimator).__name__,
                                                        report)]
    if hasattr(estimator, "n_bins_"):
        extra["n_bins"] = int(estimator.n_bins_)
    return seconds, {**figures, "still_improving": report.still_improving, **extra}


def _evaluate_control(estimator, X_control, y, *, X_real, time_window, real_time=None):
    """A control's figures on its constant-time rows, t-mAP@50's relevance read at the
    rows' real times (``real_time``, else ``X_real``'s)."""
    if real_time is None:
        with warnings.catch_warnings():  # the real times lie outside the control's instant
            warnings.simplefilter("ignore", TimeRangeWarning)
            real_time = layout_blocks(estimator, X_real)[2]
    return evaluate_estimator(estimator, X_control, y, time_window=time_window,
                              relevance_time=real_time)


def _keyed_fit_evaluate(key, *args):
    """:func:`_fit_evaluate` tagged with its key (parallel results arrive unordered)."""
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

    With ``controls``, every estimator that uses time is also fitted and evaluated as its
    constant-time control.  Ctrl-C stops the comparison at the fit in progress (dropped;
    the finished ones are kept) and raises
    :class:`~temporal_xmodal.comparison.CompareInterrupted`.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    estimators : dict of str -> estimator
        Unfitted estimators by display name (fitted in place when ``n_jobs=1``).
    X_train, y_train, X_test, y_test : array-like
        The splits, X ``[image | text | time]``; y may be None (unused by the undated
        protocol).
    time_window : float or None
        t-mAP@50 window in the estimators' ``time_unit`` (``None``: undated data).
    protocol : {"labels", "undated"}, default="labels"
        :func:`~temporal_xmodal.evaluation.evaluate_estimator` or
        :func:`~temporal_xmodal.evaluation.evaluate_undated` (one gold caption per picture).
    controls : tuple (X_train_constant, X_test_constant) or None, default=None
        The splits with a constant time column.  Given: the row of each time-aware estimator
        gets ``delta_time`` (its score minus its control's, the score of the protocol:
        ``DELTA_TIME_SCORE``) and ``control``; else ``delta_time`` is NaN.
    n_jobs : int, default=1
        Fits in parallel (joblib); ``-1``: every core.
    log : callable, default=print
        Progress: a line as each fit starts and ends.
    done : dict or None, default=None
        Finished fits kept instead of fitted, ``{(name, control): (fit seconds, figures)}``.
    on_fit : callable or None, default=None
        Called as ``on_fit(results, rows, n_fits)`` after every finished fit, with every
        finished fit so far (``done`` included), their rows and the number of fits.
    test_time : array-like of shape (n_test,) or None, default=None
        The test rows' exact times, read by t-mAP@50 instead of ``X_test``'s time column.

    Returns
    -------
    rows : list of dict
        One per estimator, in the order of ``estimators``: ``name``, ``time_role``,
        ``fit_seconds``, the protocol's figures, ``delta_time`` and, with a control,
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
    # a control's t-mAP@50: same label within the window of the rows' real times
    evaluate_control = (partial(_evaluate_control, X_real=X_test, time_window=time_window,
                                real_time=test_time)
                        if protocol == "labels" and time_window is not None else evaluate)
    y_eval = y_test if protocol == "labels" else None
    # read before the fits (a fitted use_time=False control reads "none")
    uses = {name: time_role(est) for name, est in estimators.items()}
    jobs = [(name, False, est, X_train, X_test) for name, est in estimators.items()]
    if controls is not None:
        jobs += [(name, True, clone(est), *controls) for name, est in estimators.items()
                 if uses[name] != "none"]
    label = {False: "", True: " (constant-time control)"}
    n_train, width = np.shape(X_train)
    expected = {(name, control): fit_seconds(name, est, n_train, width - 1)
                for name, control, est, *_ in jobs}
    results = {key: value for key, value in (done or {}).items()
               if key in {(name, control) for name, control, *_ in jobs}}
    todo = [job for job in jobs if (job[0], job[1]) not in results]
    if results:
        log(f"resuming: {len(results)} of {len(jobs)} fits already done, {len(todo)} to go")

    def finished(key, result):
        results[key] = result  # first: a Ctrl-C from here on keeps it
        left = [(n, c) for n, c, *_ in jobs if (n, c) not in results]
        to_go = seconds_text(fitting_left(left, results, expected)) if left else ""
        log(f"[{len(results)}/{len(jobs)}] {key[0]}{label[key[1]]} done: fit {result[0]:.1f} s"
            + (f"; {len(left)} to go, about {to_go} of fitting left" if left else ""))
        for note in result[1].get("checkpoint_notes", ()):
            log(f"  note: {note}")
        if on_fit is not None:
            on_fit(dict(results), _rows(estimators, uses, results, protocol), len(jobs))

    rows = partial(_rows, estimators, uses, results, protocol)
    if n_jobs == 1:
        for name, control, est, X_tr, X_te in todo:
            log(f"[{len(results) + 1}/{len(jobs)}] fitting {name}{label[control]} ...")
            with StopFits(results, rows, len(jobs)) as stop:
                result = _fit_evaluate(est, X_tr, y_train, X_te, y_eval,
                                       evaluate_control if control else evaluate, control,
                                       name=name)
                stop.check(result[1])
                finished((name, control), result)  # the "done" line and the write
    elif todo:
        log(f"fitting {len(todo)} models on {n_jobs} parallel workers ...")
        running = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
            delayed(_keyed_fit_evaluate)((name, control), est, X_tr, y_train, X_te, y_eval,
                                         evaluate_control if control else evaluate, control)
            for name, control, est, X_tr, X_te in todo)
        # a Ctrl-C cancels the fits still queued or running
        with StopFits(results, rows, len(jobs), close=running.close) as stop:
            for key, result in running:
                stop.check(result[1])
                finished(key, result)
    return rows()


def _minus(a, b):
    """``a - b``; NaN when either is n/a (NaN, or None as read back from JSON)."""
    return float("nan") if is_na(a) or is_na(b) else a - b


def beyond_filter(figures, control):
    """What the dates add to time-window mAP@50 beyond a date filter: the stronger of the
    model's two readings (all candidates, date-filtered) minus the stronger of its
    control's."""
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
