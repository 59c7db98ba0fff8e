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
from functools import partial
from numbers import Integral
from pathlib import Path

import numpy as np
from sklearn.utils._param_validation import StrOptions, validate_params

from .._constraints import Interval
from ..metrics import QUERY_SAMPLE, random_map, random_mrr
from .data import DATASETS, load_comparison_data, with_constant_time
from .job import (RESULTS, check_names, check_output_folder, finished_fits, job_key, unique_names,
                  write_atomic)
from .notes import answer_lines, marked, note_lines
from .plots import figure_title, plot_results
from .registry import estimator_registry, left_out, set_matching_params, training_epochs
from .run import _N_JOBS, CompareInterrupted, compare, undated_references
from .seeds import mean_rows, seed_folder, spread
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
        "data": [dict, None],
        "seeds": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def run_compare(dataset="synthetic", output="compare_output", n_samples=None, random_state=0,
                plots=True, max_epochs=None, data_dir=None, cache_dir=None, estimators=None,
                n_jobs=1, verbose=False, log=print, resume=False, force=False, data=None,
                seeds=1):
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
    data : Bunch or None, default=None
        A user's data, read by
        :func:`~temporal_xmodal.comparison.user_data.load_user_data` (``compare
        --data FILE``); ``dataset`` is then ignored.  The one-line form on a
        DataFrame or a file is
        :func:`~temporal_xmodal.comparison.compare_estimators`.
    seeds : int, default=1
        Runs of the whole job, with seeds ``random_state``, ``random_state + 1``, …, each
        in ``output/seed_<k>/`` (:mod:`~temporal_xmodal.comparison.seeds`); ``output``
        then holds the table of the means, whose answer lines give every figure's spread
        over the seeds.

    Returns
    -------
    rows : list of dict
        NaN where a figure is n/a (``null`` in ``results.json``); over several seeds, the
        means (``seeds``: the runs each estimator finished in).

    Raises
    ------
    CompareInterrupted
        On Ctrl-C, once the finished fits are written (``resume=True`` goes on
        from them).
    ValueError
        ``output`` holds another run's results (and not ``force``).
    """
    if data is not None and n_samples is not None:
        raise ValueError("n_samples applies to the embedded data sets; for your own data pass "
                         "it to load_user_data (compare --data FILE --n-samples N)")
    if estimators is not None:
        check_names(estimators)  # before any folder is made or data read
    options = dict(n_samples=n_samples, plots=plots, max_epochs=max_epochs,
                   data_dir=data_dir, cache_dir=cache_dir, estimators=estimators,
                   n_jobs=n_jobs, verbose=verbose, log=log, resume=resume, force=force,
                   data=data)
    if seeds > 1:
        return _over_seeds(dataset, output, random_state, seeds, **options)
    return _run_one(dataset, output, random_state, **options)


def _run_one(dataset, output, random_state, *, n_samples, plots, max_epochs, data_dir,
             cache_dir, estimators, n_jobs, verbose, log, resume, force, data, context=None):
    """One run of the job (:func:`run_compare` with one seed); ``context`` receives the
    data, the table's columns, the references and the epochs."""
    if estimators is not None:
        estimators, repeated = unique_names(estimators)
        if repeated:
            log(f"--estimators names {', '.join(repeated)} more than once: each runs once")
    if data is not None:
        dataset = "data"
    key = _job_key(dataset, n_samples, random_state, max_epochs, estimators, data)
    problem, previous = check_output_folder(output, key, resume=resume, force=force)
    if problem:
        raise ValueError(problem)
    if data is None:
        data = load_comparison_data(dataset, data_dir=data_dir, n_samples=n_samples,
                                    random_state=random_state, cache_dir=cache_dir)
    log(f"data: {data.description}")
    for note in data.get("notes", ()):
        log(f"  {note}")
    registry = estimator_registry(data.n_image_features, random_state, data.time_window,
                                  dataset=dataset)
    not_applicable = left_out("ticrc" if data.get("pairs") else dataset)
    skipped = {} if estimators is not None else not_applicable
    chosen = {name: entry.estimator for name, entry in registry.items()
              if (name in estimators if estimators is not None else name not in skipped)}
    where = "pairs without labels" if data.get("pairs") else dataset
    for name, reason in skipped.items():
        log(f"{name} is not run on {where}: {reason}. (--estimators {name} runs it anyway.)")
    for est in chosen.values():
        # the data's unit (compare --time-unit): every duration of every estimator is read in
        # it, as the data's times and the evaluation window are (issue 57, 1)
        set_matching_params(est, time_unit=data.get("time_unit", "years"))
        if max_epochs is not None:
            set_matching_params(est, max_epochs=max_epochs)
        if verbose:
            set_matching_params(est, verbose=1)
    undated = data.protocol == "undated"
    columns = UNDATED_COLUMNS if undated else COLUMNS
    references = ((undated_references(data.blocks_train, data.blocks_test) if dataset == "ticrc"
                   else {"random": random_mrr(len(data.X_test))}) if undated
                  else {"chance_map": random_map(data.y_test)})
    epochs = {name: training_epochs(est) for name, est in chosen.items()}
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
        answer = answer_lines(rows, data.protocol)
        text = _report(rows, len(results), n_fits, answer, columns, references, data)
        document = {"meta": {**meta, "complete": len(results) == n_fits,
                             "fits_done": len(results), "fits_total": n_fits},
                    "answer": answer,
                    "rows": rows,
                    "fits": [{"name": name, "control": control, "fit_seconds": seconds,
                              "figures": figures}
                             for (name, control), (seconds, figures) in results.items()]}
        write_atomic(out / TABLE, text + "\n")
        write_atomic(out / RESULTS, json.dumps(_json_ready(document), indent=2,
                                               allow_nan=False))
        return text

    damaged = []
    done = finished_fits(previous, problems=damaged)
    for line in damaged:
        log(f"warning: {line}")
    state = {"results": done}

    def on_fit(results, rows, n_fits):
        state["results"] = results
        write(rows, results, n_fits)

    controls = ((with_constant_time(data.blocks_train), with_constant_time(data.blocks_test))
                if data.dated else None)
    plot = partial(_plot, out=out, columns=columns, dataset=dataset, data=data,
                   random_state=random_state, epochs=epochs, references=references, log=log)
    try:
        rows = compare(chosen, data.X_train, data.y_train, data.X_test, data.y_test,
                       time_window=data.eval_window, protocol=data.protocol,
                       controls=controls, n_jobs=n_jobs, log=log,
                       done=done, on_fit=on_fit, test_time=data.blocks_test[2])
    except CompareInterrupted as stop:
        text = write(stop.rows, stop.results, stop.n_fits)
        log(f"\ninterrupted (Ctrl-C): {len(stop.results)} of {stop.n_fits} fits finished, "
            "the fit in progress dropped; the finished ones:\n")
        log(text)
        log(f"\nwrote {out / TABLE} and {out / RESULTS} (partial)")
        if plots and stop.rows:
            try:
                plot(stop.rows)
            except KeyboardInterrupt:  # a second Ctrl-C: the results are written
                log("figure not drawn (Ctrl-C)")
        raise
    n_fits = sum(1 + ("control" in row) for row in rows)
    results = {key: value for key, value in state["results"].items()
               if any(row["name"] == key[0] for row in rows)}
    try:  # a Ctrl-C from here on finds every fit written: --resume only redraws
        text = write(rows, results, n_fits)
        log("")
        log(text)
        log(f"\nwrote {out / TABLE} and {out / RESULTS}")
        if plots:
            plot(rows)
    except KeyboardInterrupt:
        write(rows, results, n_fits)
        log(f"\ninterrupted (Ctrl-C) after every fit finished: {out / RESULTS} is complete"
            + ("; the figure was not drawn" if plots else ""))
        raise CompareInterrupted(dict(results), rows, n_fits) from None
    if context is not None:
        context.update(data=data, columns=columns, references=references, epochs=epochs)
    return rows


def _job_key(dataset, n_samples, random_state, max_epochs, estimators, data, seeds=1):
    """:func:`~.job.job_key` of a run on ``dataset``, or on a user's ``data`` when given."""
    return job_key("data" if data is not None else dataset, n_samples, random_state,
                   max_epochs, estimators, data=None if data is None else data.key,
                   seeds=seeds)


def _report(rows, n_done, n_fits, answer, columns, references, data):
    """table.txt and the console: the answer, the table (with its marks), the notes."""
    if not rows:
        return "(no fit finished yet)"
    lines = [f"(partial: {n_done} of {n_fits} fits finished)"] if n_done < n_fits else []
    lines += answer
    lines += ["", format_table([{**r, "name": marked(r)} for r in rows], columns), ""]
    if "date_prior" in references:
        lines.append(f"references: random ranking {references['random']:.3f}; date-only "
                     f"ranking {references['date_prior']:.3f} (each caption's date "
                     "inferred from the training captions sharing its words; no held-out "
                     "date)")
    elif "random" in references:
        lines.append(f"reference: random ranking {references['random']:.3f}")
    elif "chance_map" in references:
        lines.append(f"reference: a random ranking's category mAP (chance) "
                     f"{references['chance_map']:.3f}")
    lines += _sample_lines(rows, len(data.X_test))
    lines += note_lines(rows, data)
    lines += [f"data: {note}" for note in data.get("notes", ())]
    return "\n".join(lines)


def _sample_lines(rows, n_test):
    """The line that says the figures are estimates from a query sample, when they are."""
    sampled = sorted({r["n_queries"] for r in rows if r.get("n_queries", n_test) < n_test})
    if not sampled:
        return []
    return [f"evaluation: a random sample of {', '.join(f'{m:,}' for m in sampled)} of the "
            f"{n_test:,} test items queries every test item (above {QUERY_SAMPLE:,} test "
            "items the full rankings' O(n²) cost is not paid; the same items in every fit); "
            "mAP, MRR and t-mAP@50 are the sample's means ± their standard errors. Exact "
            "figures: temporal_xmodal.evaluation.evaluate_estimator(..., query_sample=None)"]


def _over_seeds(dataset, output, random_state, seeds, *, log, resume, force, plots, **options):
    """:func:`run_compare` over ``seeds`` seeds: one run per seed in its sub-folder, then the
    table of the means with the spread in ``output``."""
    key = _job_key(dataset, options["n_samples"], random_state, options["max_epochs"],
                   options["estimators"], options["data"], seeds)
    problem, _ = check_output_folder(output, key, resume=resume, force=force)
    if problem:
        raise ValueError(problem)
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    runs, context, seed_list = [], {}, list(range(random_state, random_state + seeds))
    phase = {"means": "not written", "figure": "not drawn" if plots else None}
    try:
        for k, seed in enumerate(seed_list):
            folder = out / seed_folder(seed)
            log(f"\n=== seed {seed} ({k + 1} of {seeds} seeds), in {folder}")
            runs.append(_run_one(dataset, folder, seed, log=log, resume=resume, force=force,
                                 plots=False, context=context, **options))
        data = context["data"]
        rows = mean_rows(runs)
        answer = answer_lines(rows, data.protocol, runs=runs)
        n_fits = sum(1 + ("control" in row) for row in rows)
        text = _report(rows, n_fits, n_fits, answer, context["columns"],
                       context["references"], data)
        document = {"meta": {"job": key, "seeds": seed_list,
                             "runs": [seed_folder(s) for s in seed_list],
                             "protocol": data.protocol, "complete": True},
                    "answer": answer, "rows": rows,
                    "spread": {row["name"]: {k: spread(runs, row["name"],
                                                       lambda r, k=k: r.get(k))
                                             for k, _, _ in context["columns"]}
                               for row in rows}}
        write_atomic(out / TABLE, text + "\n")
        write_atomic(out / RESULTS, json.dumps(_json_ready(document), indent=2,
                                               allow_nan=False))
        phase["means"] = "written"
        log(f"\nover {seeds} seeds (each figure the mean; the answer lines give the "
            "spread):\n")
        log(text)
        log(f"\nwrote {out / TABLE} and {out / RESULTS}")
        if plots:
            _plot(rows, out=out, columns=context["columns"], dataset=dataset, data=data,
                  random_state=f"the means over seeds {seed_list[0]}-{seed_list[-1]}",
                  epochs=context["epochs"],
                  references=context["references"], log=log)
            phase["figure"] = "drawn"
    except KeyboardInterrupt as stop:  # a seed's fits (CompareInterrupted) or anywhere else
        on_disk = _seeds_on_disk(out, seed_list, len(runs), phase)
        log(f"\ninterrupted (Ctrl-C): {on_disk}")
        if isinstance(stop, CompareInterrupted):
            stop.on_disk = on_disk
            raise
        raise CompareInterrupted({}, [], 0, on_disk=on_disk) from None
    return rows


def _seeds_on_disk(out, seed_list, n_done, phase):
    """What a run over ``seed_list`` has on disk when a Ctrl-C stops it after ``n_done``
    seeds: the finished seeds' folders, the interrupted seed's finished fits, the means and
    the figure, in one line."""
    done = [seed_folder(s) for s in seed_list[:n_done]]
    parts = [f"{n_done} of {len(seed_list)} seeds finished"
             + (f" ({', '.join(f'{out / d}' for d in done)})" if done else "")]
    if n_done < len(seed_list):
        current = out / seed_folder(seed_list[n_done])
        kept = current / RESULTS
        parts.append(f"seed {seed_list[n_done]}'s finished fits are in {kept}"
                     if kept.is_file() else f"seed {seed_list[n_done]} has no finished fit")
    parts.append(f"the means over the seeds ({out / RESULTS}): {phase['means']}")
    if phase["figure"] is not None:
        parts.append(f"their figure: {phase['figure']}")
    return "; ".join(parts)


def _plot(rows, *, out, columns, dataset, data, random_state, epochs, references, log):
    undated = data.protocol == "undated"
    labels = {"random": "random", "date_prior": "date-only"}
    try:
        plot_results(rows, out / "comparison.png", columns=columns,
                     title=figure_title(dataset, data, random_state, epochs),
                     references={labels[k]: v for k, v in references.items()} if undated
                     else None,
                     category_names=data.extra.get("categories"),
                     delta_label="I→T MRR" if undated else "mAP",
                     time_unit=data.get("time_unit", "years"),
                     chance_map=references.get("chance_map"))
        log(f"wrote {out / 'comparison.png'}")
    except ImportError:
        log("matplotlib is not installed: no plots (pip install 'temporal-xmodal[plots]')")
