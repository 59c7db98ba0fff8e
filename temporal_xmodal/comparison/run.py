"""Fits of the comparison (with the constant-time controls) and the end-to-end driver.

:func:`compare` fits every estimator on the training split and evaluates it on
the test split (:mod:`temporal_xmodal.evaluation.report`).  Every estimator
that uses time (``time_use`` not ``"none"``) is fitted a second time as its
**constant-time control**: the same estimator and seed, fitted and evaluated on
the same rows with the time column replaced by a constant.  Its Δ-time is the
estimator's score minus the control's: what time buys it.  :func:`run_compare`
is ``python -m temporal_xmodal compare``: data, fits, table, JSON and plots.
"""

import json
import os
import time
import warnings
from contextlib import contextmanager
from functools import partial
from numbers import Integral
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from ..base import layout_blocks
from ..time import TimeBinWarning, TimeRangeWarning
from ..evaluation.report import evaluate_estimator, evaluate_undated
from ..estimators import date_prior_scores
from ..metrics import counterpart_reciprocal_ranks, random_mrr
from ..time import time_use
from .._validation import CountInterval, RealInterval
from .data import DATASETS, load_comparison_data, with_constant_time
from .plots import figure_title, plot_results
from .registry import NOT_APPLICABLE, estimator_registry, set_matching_params
from .table import COLUMNS, DELTA_TIME_SCORE, UNDATED_COLUMNS, format_table

__all__ = ["DATE_PRIOR", "compare", "run_compare", "undated_references"]

#: Honest date-only baseline of the undated protocol (see ``date_prior_scores``):
#: neighbours and kernel bandwidth in years.
DATE_PRIOR = {"n_neighbors": 25, "bandwidth": 2.0}
_PROTOCOLS = ("labels", "undated")
#: ``n_jobs`` of joblib: a positive number of workers, or a negative count from the cores.
_N_JOBS = [Interval(Integral, None, -1, closed="right"), CountInterval(1, None), None]


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


@contextmanager
def recording_convergence(passthrough=True):
    """Record the ``ConvergenceWarning``s raised in the block (a fit still improving at its
    last epoch, or a model inside it such as a bin's) instead of showing them.

    Yields a list that holds them once the block has ended.  The other warnings are shown
    after the block (``passthrough=True``) or silenced (``False``).
    """
    short = []
    with warnings.catch_warnings(record=True) as caught:
        if not passthrough:
            warnings.simplefilter("ignore")
        warnings.simplefilter("always", ConvergenceWarning)
        yield short
    for w in caught:
        if issubclass(w.category, ConvergenceWarning):
            short.append(w)
        elif passthrough:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _fit_evaluate(estimator, X_train, y_train, X_test, y_test, evaluate, control):
    """Fit one estimator and evaluate it: ``(fit seconds, figures)``.

    ``figures["still_improving"]``: whether the fit (or a model inside it, e.g. a bin's)
    warned that its validation figure was still improving at the last epoch; that warning
    is summarised under the table instead of shown, the others pass through.
    """
    with recording_convergence() as short:
        if control:  # one constant time: every time bin but one is empty and merged, and
            # TempXNet's temporal term is switched off (both expected: that is the control)
            warnings.simplefilter("ignore", TimeBinWarning)
            warnings.filterwarnings("ignore", message=".*every training item has the same time",
                                    category=UserWarning)
        start = time.perf_counter()
        estimator.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        figures = evaluate(estimator, X_test) if y_test is None else evaluate(estimator, X_test,
                                                                              y_test)
    return seconds, {**figures, "still_improving": bool(short)}


def _evaluate_control(estimator, X_control, y, *, X_real, time_window):
    """A constant-time control's figures on its constant-time test rows, except t-mAP@50,
    whose relevance (same label and ``|Δt| <= time_window``) reads the rows' real times, as
    the estimator's own t-mAP@50 does: the control is embedded without them."""
    with warnings.catch_warnings():  # the real times lie outside the control's one instant
        warnings.simplefilter("ignore", TimeRangeWarning)
        real_time = layout_blocks(estimator, X_real)[2]
    return evaluate_estimator(estimator, X_control, y, time_window=time_window,
                              relevance_time=real_time)


def _keyed_fit_evaluate(key, *args):
    """:func:`_fit_evaluate` tagged with its job key (parallel results arrive unordered)."""
    return key, _fit_evaluate(*args)


@validate_params(
    {
        "estimators": [dict],
        "X_train": ["array-like"],
        "y_train": ["array-like", None],
        "X_test": ["array-like"],
        "y_test": ["array-like", None],
        "time_window": [RealInterval(0, None), None],
        "protocol": [StrOptions(set(_PROTOCOLS))],
        "controls": [tuple, None],
        "n_jobs": _N_JOBS,
        "log": [callable],
    },
    prefer_skip_nested_validation=True,
)
def compare(estimators, X_train, y_train, X_test, y_test, *, time_window, protocol="labels",
            controls=None, n_jobs=1, log=print):
    """Fit each estimator on the training split and evaluate it on the test split.

    Every estimator that uses time is also fitted and evaluated as its
    constant-time control when ``controls`` are given; the difference of the
    two scores is its Δ-time.

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
        ``time_use`` is not ``"none"`` is also fitted and evaluated on them
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

    Returns
    -------
    rows : list of dict
        One row per estimator, in the order of ``estimators``: ``name``,
        ``time_use``, ``fit_seconds``, the figures of the protocol,
        ``delta_time`` and, for time-aware estimators with controls,
        ``control``.
    """
    evaluate = (partial(evaluate_estimator, time_window=time_window) if protocol == "labels"
                else evaluate_undated)
    # a control's t-mAP@50 asks the task's question: relevant = same label within the window
    # of the rows' real times (its own rows all carry one time)
    evaluate_control = (partial(_evaluate_control, X_real=X_test, time_window=time_window)
                        if protocol == "labels" and time_window is not None else evaluate)
    y_eval = y_test if protocol == "labels" else None
    # how each method uses time, read before the fits (a fitted use_time=False control
    # reads "none")
    uses = {name: time_use(est) for name, est in estimators.items()}
    jobs = [(name, False, est, X_train, X_test) for name, est in estimators.items()]
    if controls is not None:
        jobs += [(name, True, clone(est), *controls) for name, est in estimators.items()
                 if uses[name] != "none"]
    label = {False: "", True: " (constant-time control)"}
    results = {}
    if n_jobs == 1:
        for i, (name, control, est, X_tr, X_te) in enumerate(jobs, 1):
            log(f"[{i}/{len(jobs)}] fitting {name}{label[control]} ...")
            results[name, control] = _fit_evaluate(
                est, X_tr, y_train, X_te, y_eval, evaluate_control if control else evaluate,
                control)
            log(f"[{i}/{len(jobs)}] {name}{label[control]} done: "
                f"fit {results[name, control][0]:.1f} s")
    else:
        log(f"fitting {len(jobs)} models on {n_jobs} parallel workers ...")
        done = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
            delayed(_keyed_fit_evaluate)((name, control), est, X_tr, y_train, X_te, y_eval,
                                         evaluate_control if control else evaluate, control)
            for name, control, est, X_tr, X_te in jobs)
        for i, (key, result) in enumerate(done, 1):
            results[key] = result
            log(f"[{i}/{len(jobs)}] {key[0]}{label[key[1]]} done: fit {result[0]:.1f} s")
    score = DELTA_TIME_SCORE[protocol]
    rows = []
    for name, est in estimators.items():
        seconds, figures = results[(name, False)]
        row = {"name": name, "time_use": uses[name], "fit_seconds": seconds, **figures,
               "delta_time": float("nan")}
        if (name, True) in results:
            c_seconds, c_figures = results[(name, True)]
            row["delta_time"] = figures[score] - c_figures[score]
            if "tmap50" in figures:  # the time-aware question, beside the category one
                row["delta_tmap50"] = figures["tmap50"] - c_figures["tmap50"]
            row["control"] = {"score": score, "value": c_figures[score],
                              "fit_seconds": c_seconds,
                              "still_improving": c_figures["still_improving"]}
        rows.append(row)
    return rows


def _json_ready(value):
    """NaN → None (valid JSON ``null``), recursively."""
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return None if np.isnan(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


@validate_params(
    {
        "dataset": [StrOptions(set(DATASETS))],
        "output": [str, os.PathLike],
        "n_samples": [CountInterval(1, None), None],
        "random_state": [CountInterval(0, None)],
        "plots": ["boolean"],
        "max_epochs": [CountInterval(1, None), None],
        "data_dir": [str, os.PathLike, None],
        "cache_dir": [str, os.PathLike, None],
        "estimators": ["array-like", None],
        "n_jobs": _N_JOBS,
        "verbose": ["boolean"],
        "log": [callable],
    },
    prefer_skip_nested_validation=True,
)
def run_compare(dataset="synthetic", output="compare_output", n_samples=None, random_state=0,
                plots=True, max_epochs=None, data_dir=None, cache_dir=None, estimators=None,
                n_jobs=1, verbose=False, log=print):
    """Run the comparison end to end: data, fits (with controls), table, JSON and plots.

    This is ``python -m temporal_xmodal compare``: it loads the data set,
    runs :func:`compare` on the estimators of the registry, prints the table
    and writes ``results.json`` and ``comparison.png``.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    dataset : {"synthetic", "wiki", "ticrc"}, default="synthetic"
        The data set (see :func:`~temporal_xmodal.comparison.load_comparison_data`).
    output : str or Path, default="compare_output"
        Folder for ``results.json`` and ``comparison.png`` (created).
    n_samples : int or None, default=None
        See :func:`~temporal_xmodal.comparison.load_comparison_data`.
    random_state : int, default=0
        Seed of the data and of the stochastic estimators.
    plots : bool, default=True
        Write the PNG (skipped with a message when matplotlib is missing).
    max_epochs : int or None, default=None
        Override the neural estimators' epochs (``None``: their paper defaults).
    data_dir, cache_dir : str, Path or None, default=None
        See :func:`~temporal_xmodal.comparison.data.load_comparison_data`.
    estimators : sequence of str or None, default=None
        Display names of the registry to run (``None``: all).
    n_jobs : int, default=1
        Parallel fits (see :func:`compare`).
    verbose : bool, default=False
        Print the neural estimators' epochs.
    log : callable, default=print
        Where the progress, the table and the notes are written.

    Returns
    -------
    rows : list of dict
        NaN where a figure is n/a (``null`` in ``results.json``).
    """
    data = load_comparison_data(dataset, data_dir=data_dir, n_samples=n_samples,
                                random_state=random_state, cache_dir=cache_dir)
    log(f"data: {data.description}")
    registry = estimator_registry(data.n_image_features, random_state, data.time_window,
                                  dataset=dataset)
    skipped = {} if estimators is not None else NOT_APPLICABLE.get(dataset, {})
    chosen = {name: entry.estimator for name, entry in registry.items()
              if (name in estimators if estimators is not None else name not in skipped)}
    for name, reason in skipped.items():
        log(f"{name} is not run on {dataset}: {reason}. (--estimators {name} runs it anyway.)")
    for est in chosen.values():
        if max_epochs is not None:
            set_matching_params(est, max_epochs=max_epochs)
        if verbose:
            set_matching_params(est, verbose=1)
    controls = ((with_constant_time(data.blocks_train), with_constant_time(data.blocks_test))
                if data.dated else None)
    rows = compare(chosen, data.X_train, data.y_train, data.X_test, data.y_test,
                   time_window=data.eval_window, protocol=data.protocol, controls=controls,
                   n_jobs=n_jobs, log=log)
    undated = data.protocol == "undated"
    columns = UNDATED_COLUMNS if undated else COLUMNS
    score = {"map": "mAP (mean of I→T and T→I)", "mrr": "I→T MRR"}[DELTA_TIME_SCORE[data.protocol]]
    references = undated_references(data.blocks_train, data.blocks_test) if undated else {}
    log("")
    log(format_table(rows, columns))
    if undated:
        log(f"references: random ranking {references['random']:.3f}; date-only ranking "
            f"{references['date_prior']:.3f} (each caption's date inferred from the training "
            "captions sharing its words; no held-out date)")
        log("I→T MRR is TICRC's metric (one gold caption per picture: AP = RR). Δ date = MRR − "
            "MRR with the query dates shuffled. The label protocols (t-mAP, local, bin mAP) "
            "need dated captions: n/a.")
    elif data.eval_window is None:
        log("undated data set: the temporal protocols (t-mAP@50, local@10, bin mAP) are n/a")
    if data.dated:
        log(f"Δ-time = {score} minus the same estimator (same seed) fitted and evaluated with a "
            "constant time column; n/a for estimators that ignore time.")
        if data.eval_window is not None:
            log("Δ t-mAP = time-window mAP@50 minus the same control's: the time-aware "
                "question the temporal terms are for (they may trade category mAP for it). To "
                "choose between a model and its control on your data, search use_time with "
                "GridSearchCV and SCORERS['tmap@50'] (docs/time.md).")
    else:
        log("Δ-time is n/a: the time column is already constant.")
    short = [row["name"] for row in rows if row["still_improving"]]
    short_controls = [row["name"] for row in rows
                      if row.get("control", {}).get("still_improving")]
    parts = [", ".join(short)] if short else []
    if short_controls:
        parts.append("constant-time controls of " + ", ".join(short_controls))
    if parts:
        log("Still improving at the last epoch (the best validation figure rose by more than "
            "0.01 over the last 5 epochs, so these figures may be short of convergence; "
            "--max-epochs raises the epochs): "
            + "; ".join(parts) + ".")
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"dataset": dataset, "n_train": int(len(data.X_train)),
            "n_test": int(len(data.X_test)), "time_window": data.eval_window,
            "estimator_time_window": data.time_window, "protocol": data.protocol,
            "random_state": random_state, "columns": [key for key, _, _ in columns],
            "delta_time_score": DELTA_TIME_SCORE[data.protocol],
            "references": references, "not_run": dict(skipped), **data.extra}
    document = _json_ready({"meta": meta, "rows": rows})
    (out / "results.json").write_text(json.dumps(document, indent=2, allow_nan=False))
    log(f"\nwrote {out / 'results.json'}")
    if plots:
        try:
            plot_results(rows, out / "comparison.png", columns=columns,
                         title=figure_title(dataset, data, random_state, max_epochs),
                         references={"random": references["random"],
                                     "date-only": references["date_prior"]} if undated else None,
                         category_names=data.extra.get("categories"),
                         delta_label="I→T MRR" if undated else "mAP")
            log(f"wrote {out / 'comparison.png'}")
        except ImportError:
            log("matplotlib is not installed: no plots (pip install 'temporal-xmodal[plots]')")
    return rows
