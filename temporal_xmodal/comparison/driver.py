"""``python -m temporal_xmodal compare`` end to end: data, fits, table, JSON, plots; Ctrl-C and
``--resume``.

:func:`run_compare` loads the data set, runs :func:`~.run.compare` on the
registry's estimators and, **after every finished fit**, rewrites the table
(``table.txt``) and ``results.json`` in the output folder (atomically, with the
finished fits under ``fits``).  Ctrl-C stops the job at the fit in progress:
the finished fits' table is printed and saved, the figure drawn, and
:class:`~.run.CompareInterrupted` raised; ``resume=True`` skips the finished
fits of the same run.  The output folder is refused when it holds another run's
results (:func:`~.job.check_output_folder`).
"""

import json
import os
from numbers import Integral
from pathlib import Path

import numpy as np
from sklearn.utils._param_validation import StrOptions, validate_params

from .._constraints import Interval
from .data import DATASETS, load_comparison_data, with_constant_time
from .job import RESULTS, check_output_folder, finished_fits, job_key, write_atomic
from .plots import figure_title, plot_results
from .registry import NOT_APPLICABLE, estimator_registry, set_matching_params
from .run import _N_JOBS, CompareInterrupted, _epochs, compare, undated_references
from .table import COLUMNS, DELTA_TIME_SCORE, UNDATED_COLUMNS, format_table

__all__ = ["run_compare"]

#: The printed table, saved beside ``results.json``.
TABLE = "table.txt"


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


def _notes(rows, data, dataset):
    """The lines under the table: what Δ-time means, fits still improving, time bins merged."""
    undated = data.protocol == "undated"
    score = {"map": "mAP (mean of I→T and T→I)", "mrr": "I→T MRR"}[DELTA_TIME_SCORE[data.protocol]]
    lines = []
    if undated:
        lines.append("I→T MRR is TICRC's metric (one gold caption per picture: AP = RR). Δ date "
                     "= MRR − MRR with the query dates shuffled. The label protocols (t-mAP, "
                     "local, bin mAP) need dated captions: n/a.")
    elif data.eval_window is None:
        lines.append("undated data set: the temporal protocols (t-mAP@50, local@10, bin mAP) "
                     "are n/a")
    if data.dated:
        lines.append(f"Δ-time = {score} minus the same estimator (same seed) fitted and "
                     "evaluated with a constant time column; n/a for estimators that ignore "
                     "time.")
        if data.eval_window is not None:
            lines.append("+ filter = t-mAP@50 with each query's candidates restricted to the "
                         "time window (a search filtered by date, which any model gets from "
                         "the dates the user holds). Δ>filter = the stronger of a model's "
                         "t-mAP@50 and + filter minus the stronger of its control's: what the "
                         "dates add beyond that filter. Category mAP across time (I→T / T→I "
                         "mAP) is what no filter gives. To choose between a model and its "
                         "control on your data, search use_time with GridSearchCV and "
                         "SCORERS['map'] and SCORERS['tmap@50|filter'] (docs/time.md).")
    else:
        lines.append("Δ-time is n/a: the time column is already constant.")
    short = [row["name"] for row in rows if row["still_improving"]]
    short_controls = [row["name"] for row in rows
                      if row.get("control", {}).get("still_improving")]
    parts = [", ".join(short)] if short else []
    if short_controls:
        parts.append("constant-time controls of " + ", ".join(short_controls))
    if parts:
        lines.append("Still improving at the last epoch (the best validation figure rose by "
                     "more than 0.01 over the most recent epochs, so these figures may be short of "
                     "convergence; --max-epochs raises the epochs; * in the figure): "
                     + "; ".join(parts) + ".")
    for row in rows:
        if "n_bins" in row:  # a binned model: the bins it was given, the bins it fitted
            lines.append(_bins_line(row))
    evaluation = [note for row in rows for note in row.get("time_bin_notes", ())
                  if "Binned" not in note]
    if evaluation:  # the test times' bins of local@10 / bin mAP, the same for every row
        lines.append("Time bins of local@10 and bin mAP on the test times: "
                     + "; ".join(dict.fromkeys(evaluation)))
    return lines


def _bins_line(row):
    """One line on a binned model's bins: asked for, fitted, merged (its TimeBinWarning)."""
    merged = [note for note in row.get("time_bin_notes", ()) if "Binned" in note]
    return (f"{row['name']}: {merged[0]}" if merged
            else f"{row['name']} fitted {row['n_bins']} time bin(s), none merged.")


@validate_params(
    {
        "dataset": [StrOptions(set(DATASETS))],
        "output": [str, os.PathLike],
        "n_samples": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": [Interval(Integral, 0, None, closed="left")],
        "plots": ["boolean"],
        "max_epochs": [Interval(Integral, 1, None, closed="left"), None],
        "data_dir": [str, os.PathLike, None],
        "cache_dir": [str, os.PathLike, None],
        "estimators": ["array-like", None],
        "n_jobs": _N_JOBS,
        "verbose": ["boolean"],
        "log": [callable],
        "resume": ["boolean"],
        "force": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def run_compare(dataset="synthetic", output="compare_output", n_samples=None, random_state=0,
                plots=True, max_epochs=None, data_dir=None, cache_dir=None, estimators=None,
                n_jobs=1, verbose=False, log=print, resume=False, force=False):
    """Run the comparison end to end: data, fits (with controls), table, JSON and plots.

    This is ``python -m temporal_xmodal compare``: it loads the data set,
    runs :func:`~temporal_xmodal.comparison.compare` on the estimators of the
    registry, prints the table and writes ``table.txt``, ``results.json`` and
    ``comparison.png``.  The table and ``results.json`` are rewritten after
    every finished fit, so that Ctrl-C loses only the fit in progress.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    dataset : {"synthetic", "wiki", "ticrc"}, default="synthetic"
        The data set (see :func:`~temporal_xmodal.comparison.load_comparison_data`).
    output : str or Path, default="compare_output"
        Folder for the results (created).  A folder holding another run's
        ``results.json`` (other data set, size, seed, epochs or estimators) is
        refused with a ``ValueError`` unless ``force``.
    n_samples : int or None, default=None
        See :func:`~temporal_xmodal.comparison.load_comparison_data`.
    random_state : int, default=0
        Seed of the data and of the stochastic estimators.
    plots : bool, default=True
        Write the PNG (skipped with a message when matplotlib is missing).
    max_epochs : int or None, default=None
        Override the neural estimators' epochs (``None``: their own defaults).
    data_dir, cache_dir : str, Path or None, default=None
        See :func:`~temporal_xmodal.comparison.data.load_comparison_data`.
    estimators : sequence of str or None, default=None
        Display names of the registry to run (``None``: all).
    n_jobs : int, default=1
        Parallel fits (see :func:`~temporal_xmodal.comparison.compare`).
    verbose : bool, default=False
        Print the neural estimators' epochs.
    log : callable, default=print
        Where the progress, the table and the notes are written.
    resume : bool, default=False
        Keep the finished fits that ``output`` holds for the same run and fit
        only the others.
    force : bool, default=False
        Replace another run's results in ``output``.

    Returns
    -------
    rows : list of dict
        NaN where a figure is n/a (``null`` in ``results.json``).

    Raises
    ------
    CompareInterrupted
        On Ctrl-C, once the finished fits are written (``resume=True`` goes on
        from them).
    ValueError
        ``output`` holds another run's results (and not ``force``).
    """
    key = job_key(dataset, n_samples, random_state, max_epochs,
                  None if estimators is None else list(estimators))
    problem, previous = check_output_folder(output, key, resume=resume, force=force)
    if problem:
        raise ValueError(problem)
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
    undated = data.protocol == "undated"
    columns = UNDATED_COLUMNS if undated else COLUMNS
    references = undated_references(data.blocks_train, data.blocks_test) if undated else {}
    epochs = {name: _epochs(est) for name, est in chosen.items()}
    meta = {"job": key, "dataset": dataset, "n_samples": int(len(data.X_train) + len(data.X_test)),
            "n_train": int(len(data.X_train)), "n_test": int(len(data.X_test)),
            "max_epochs": max_epochs, "epochs": epochs, "time_window": data.eval_window,
            "estimator_time_window": data.time_window, "protocol": data.protocol,
            "random_state": random_state, "columns": [k for k, _, _ in columns],
            "delta_time_score": DELTA_TIME_SCORE[data.protocol],
            "references": references, "not_run": dict(skipped), **data.extra}
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)

    def write(rows, results, n_fits):
        table = format_table(rows, columns) if rows else "(no fit finished yet)"
        document = {"meta": {**meta, "complete": len(results) == n_fits,
                             "fits_done": len(results), "fits_total": n_fits},
                    "rows": rows,
                    "fits": [{"name": name, "control": control, "fit_seconds": seconds,
                              "figures": figures}
                             for (name, control), (seconds, figures) in results.items()]}
        write_atomic(out / TABLE, table + "\n")
        write_atomic(out / RESULTS, json.dumps(_json_ready(document), indent=2,
                                               allow_nan=False))
        return table

    done = finished_fits(previous)
    state = {"results": done}

    def on_fit(results, rows, n_fits):
        state["results"] = results
        write(rows, results, n_fits)

    controls = ((with_constant_time(data.blocks_train), with_constant_time(data.blocks_test))
                if data.dated else None)
    try:
        rows = compare(chosen, data.X_train, data.y_train, data.X_test, data.y_test,
                       time_window=data.eval_window, protocol=data.protocol,
                       controls=controls, n_jobs=n_jobs, log=log,
                       done=done, on_fit=on_fit)
    except CompareInterrupted as stop:
        table = write(stop.rows, stop.results, stop.n_fits)
        log(f"\ninterrupted (Ctrl-C): {len(stop.results)} of {stop.n_fits} fits finished, "
            "the fit in progress dropped; the finished ones:\n")
        log(table)
        log(f"\nwrote {out / TABLE} and {out / RESULTS} (partial)")
        if plots and stop.rows:
            _plot(stop.rows, out, columns, dataset, data, random_state, epochs, references, log)
        raise
    n_fits = sum(1 + ("control" in row) for row in rows)
    results = {key: value for key, value in state["results"].items()
               if any(row["name"] == key[0] for row in rows)}
    log("")
    log(write(rows, results, n_fits))
    if undated:
        log(f"references: random ranking {references['random']:.3f}; date-only ranking "
            f"{references['date_prior']:.3f} (each caption's date inferred from the training "
            "captions sharing its words; no held-out date)")
    for line in _notes(rows, data, dataset):
        log(line)
    log(f"\nwrote {out / TABLE} and {out / RESULTS}")
    if plots:
        _plot(rows, out, columns, dataset, data, random_state, epochs, references, log)
    return rows


def _plot(rows, out, columns, dataset, data, random_state, epochs, references, log):
    undated = data.protocol == "undated"
    try:
        plot_results(rows, out / "comparison.png", columns=columns,
                     title=figure_title(dataset, data, random_state, epochs),
                     references={"random": references["random"],
                                 "date-only": references["date_prior"]} if undated else None,
                     category_names=data.extra.get("categories"),
                     delta_label="I→T MRR" if undated else "mAP")
        log(f"wrote {out / 'comparison.png'}")
    except ImportError:
        log("matplotlib is not installed: no plots (pip install 'temporal-xmodal[plots]')")
