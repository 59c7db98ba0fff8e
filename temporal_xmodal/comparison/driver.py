"""``python -m temporal_xmodal compare`` end to end (:func:`run_compare`) and on a user's
data in one call (:func:`compare_estimators`).  Read more in docs/index.md ("Comparing the
estimators", "Your own data").
"""

import json
import os
from functools import partial
from numbers import Integral
from pathlib import Path

import numpy as np
from sklearn.utils._param_validation import StrOptions, validate_params

from .._constraints import Interval
from .._device import thread_limits
from ..metrics import random_map, random_mrr
from .estimate import SYNTHETIC_TRAIN_SHARE, estimate_lines
from .fits import _N_JOBS, compare, undated_references
from .job import (DATASETS, RESULTS, TABLE, check_names, check_output_folder,
                  every_fit_written, finished_fits, job_key, keep_finished_fits, seed_folder,
                  seeds_stop_together, unique_names, write_atomic)
from .plots import draw_figure
from .report import (COLUMNS, DELTA_TIME_SCORE, UNDATED_COLUMNS, answer_lines, json_ready,
                     mean_rows, report_text, spread)
from .settings import (estimator_registry, left_out, load_comparison_data,
                       set_matching_params, training_epochs, with_constant_time)
from .user_data import load_user_data
from .user_files import UserDataError, read_table

__all__ = ["compare_estimators", "results_frame", "run_compare"]


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
    """Run the comparison end to end: data, fits with controls, table, JSON and figure.

    What ``python -m temporal_xmodal compare`` runs: it writes ``table.txt``,
    ``results.json`` (both after every finished fit) and ``comparison.png`` to ``output``.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    dataset, n_samples, data_dir, cache_dir
        As :func:`~temporal_xmodal.comparison.load_comparison_data`.
    output : str or Path, default="compare_output"
        Folder of the results (created); one holding another run's results is refused
        unless ``force``.
    random_state : int, default=0
        Seed of the data and of the stochastic estimators.
    plots : bool, default=True
        Draw the figure (skipped, said, without matplotlib).
    max_epochs : int or None, default=None
        Epochs of the neural estimators (``None``: their own).
    estimators : sequence of str or None, default=None
        Display names to run (``None``: the data set's default list).
    n_jobs, log
        As :func:`~temporal_xmodal.comparison.compare` (``log`` also gets the table).
    verbose : bool, default=False
        Print the training epochs.
    resume : bool, default=False
        Keep the finished fits that ``output`` holds for the same run; fit the others.
    force : bool, default=False
        Replace another run's results in ``output``.
    data : Bunch or None, default=None
        A user's data from :func:`~temporal_xmodal.comparison.load_user_data` (``dataset``
        is then ignored).
    seeds : int, default=1
        Runs of the job with seeds ``random_state``, ``random_state + 1``, …, each in
        ``output/seed_<k>/``; ``output`` then holds the table of the means and each
        figure's spread.

    Returns
    -------
    rows : list of dict
        NaN where a figure is n/a; over several seeds, the means (``seeds``: the runs each
        estimator finished in).

    Raises
    ------
    CompareInterrupted
        On Ctrl-C, once the finished fits are written (``resume=True`` goes on).
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
    """One run of the job; ``context`` receives the data, the columns, the references and
    the epochs."""
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
        # every duration of every estimator is read in the data's unit (compare --time-unit)
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
        text = report_text(rows, len(results), n_fits, answer, columns, references, data)
        document = {"meta": {**meta, "complete": len(results) == n_fits,
                             "fits_done": len(results), "fits_total": n_fits},
                    "answer": answer,
                    "rows": rows,
                    "fits": [{"name": name, "control": control, "fit_seconds": seconds,
                              "figures": figures}
                             for (name, control), (seconds, figures) in results.items()]}
        write_atomic(out / TABLE, text + "\n")
        write_atomic(out / RESULTS, json.dumps(json_ready(document), indent=2,
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
    plot = partial(draw_figure, out=out, columns=columns, dataset=dataset, data=data,
                   random_state=random_state, epochs=epochs, references=references, log=log)
    with keep_finished_fits(out, write, plot if plots else None, log):
        rows = compare(chosen, data.X_train, data.y_train, data.X_test, data.y_test,
                       time_window=data.eval_window, protocol=data.protocol,
                       controls=controls, n_jobs=n_jobs, log=log,
                       done=done, on_fit=on_fit, test_time=data.blocks_test[2])
    n_fits = sum(1 + ("control" in row) for row in rows)
    results = {key: value for key, value in state["results"].items()
               if any(row["name"] == key[0] for row in rows)}
    with every_fit_written(out, rows, results, n_fits, write, log, plots):
        text = write(rows, results, n_fits)  # from here on --resume only redraws
        log("")
        log(text)
        log(f"\nwrote {out / TABLE} and {out / RESULTS}")
        if plots:
            plot(rows)
    if context is not None:
        context.update(data=data, columns=columns, references=references, epochs=epochs)
    return rows


def _job_key(dataset, n_samples, random_state, max_epochs, estimators, data, seeds=1):
    """:func:`~.job.job_key` of a run on ``dataset``, or on a user's ``data`` when given."""
    return job_key("data" if data is not None else dataset, n_samples, random_state,
                   max_epochs, estimators, data=None if data is None else data.key,
                   seeds=seeds)


def _over_seeds(dataset, output, random_state, seeds, *, log, resume, force, plots, **options):
    """One run per seed in its sub-folder, then the table of the means in ``output``."""
    key = _job_key(dataset, options["n_samples"], random_state, options["max_epochs"],
                   options["estimators"], options["data"], seeds)
    problem, _ = check_output_folder(output, key, resume=resume, force=force)
    if problem:
        raise ValueError(problem)
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    runs, context, seed_list = [], {}, list(range(random_state, random_state + seeds))
    phase = {"means": "not written", "figure": "not drawn" if plots else None}
    with seeds_stop_together(out, seed_list, runs, phase, log):
        for k, seed in enumerate(seed_list):
            folder = out / seed_folder(seed)
            log(f"\n=== seed {seed} ({k + 1} of {seeds} seeds), in {folder}")
            runs.append(_run_one(dataset, folder, seed, log=log, resume=resume, force=force,
                                 plots=False, context=context, **options))
        data = context["data"]
        rows = mean_rows(runs)
        answer = answer_lines(rows, data.protocol, runs=runs)
        n_fits = sum(1 + ("control" in row) for row in rows)
        text = report_text(rows, n_fits, n_fits, answer, context["columns"],
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
        write_atomic(out / RESULTS, json.dumps(json_ready(document), indent=2,
                                               allow_nan=False))
        phase["means"] = "written"
        log(f"\nover {seeds} seeds (each figure the mean; the answer lines give the "
            "spread):\n")
        log(text)
        log(f"\nwrote {out / TABLE} and {out / RESULTS}")
        if plots:
            draw_figure(rows, out=out, columns=context["columns"], dataset=dataset, data=data,
                        random_state=f"the means over seeds {seed_list[0]}-{seed_list[-1]}",
                        epochs=context["epochs"], references=context["references"], log=log)
            phase["figure"] = "drawn"
    return rows


# --------------------------------------------------------------------- a user's data
def results_frame(rows, columns, answer=()):
    """The table as a DataFrame indexed by ``estimator``: ``time use`` and the table's
    ``columns`` under their printed headers, NaN where n/a; ``answer`` in
    ``frame.attrs["answer"]``."""
    import pandas as pd

    records = [{"time use": r.get("time_role"),
                **{header: (np.nan if r.get(key) is None else r.get(key))
                   for key, header, _ in columns}} for r in rows]
    frame = pd.DataFrame(records, index=pd.Index([r["name"] for r in rows], name="estimator"))
    frame.attrs["answer"] = list(answer)
    return frame


def compare_estimators(X, y=None, *, image=None, text=None, time=None, label=None,
                       n_image_features=None, label_sep=None, time_unit="years",
                       split="random", window="5%", output="compare_output", estimators=None,
                       max_epochs=None, n_samples=None, random_state=0, plots=True, n_jobs=1,
                       n_threads=1, seeds=1, resume=False, force=False, verbose=False,
                       log=print):
    """Compare every estimator on your own data in one call (``compare --data FILE``): the
    time estimate, then :func:`run_compare`; the table as a DataFrame.

    Read more in the user guide: docs/index.md ("Your own data").

    Parameters
    ----------
    X : DataFrame, str, Path or ndarray
        The rows: a DataFrame or a Parquet, CSV, Feather or ``.npz`` file; or an array
        ``[image | text | time]`` with ``n_image_features`` (time in ``time_unit``).
    y : array-like of shape (n_samples,) or None, default=None
        Labels, instead of a ``label`` column.  Neither: each row is an image–text pair.
    image, text, time, label, label_sep, time_unit, split, window, n_samples
        As :func:`~temporal_xmodal.comparison.load_user_data` (``image``, ``text``: ignored
        for an array X).
    n_image_features : int or None, default=None
        Leading image columns of an array X.
    output, estimators, max_epochs, random_state, plots, n_jobs, seeds, resume, force, verbose
        As :func:`run_compare`.
    n_threads : int, default=1
        torch, BLAS and OpenMP threads per fit, restored after.
    log : callable, default=print
        Receives the time estimate first, then what :func:`run_compare` logs.

    Returns
    -------
    table : pandas.DataFrame
        One row per estimator (:func:`results_frame`); the answer lines in
        ``table.attrs["answer"]``.

    Raises
    ------
    UserDataError
        The data cannot be compared (a ``ValueError``, one line).

    Examples
    --------
    >>> from temporal_xmodal.comparison import compare_estimators
    >>> table = compare_estimators(df, image="img_", text="txt_", time="date",
    ...                            label="label")  # doctest: +SKIP
    """
    import pandas as pd
    import torch
    from joblib import parallel_config

    if not isinstance(n_threads, Integral) or n_threads < 1:
        raise ValueError(f"n_threads must be a positive integer; got {n_threads!r}")
    if estimators is not None:
        check_names(estimators)  # before the data are read and the estimate printed
    if not isinstance(X, (pd.DataFrame, str, os.PathLike)):
        X = np.asarray(X)
        if X.ndim != 2 or not isinstance(n_image_features, Integral) or not (
                0 < n_image_features < X.shape[1] - 1):
            raise UserDataError("an array X is [image | text | time]: give n_image_features, "
                                "the count of its leading image columns (at least 1, leaving "
                                f"a text column and the time); got {n_image_features!r} for "
                                f"shape {X.shape}")
        n_text = X.shape[1] - 1 - n_image_features
        names = ([f"img_{i}" for i in range(n_image_features)]
                 + [f"txt_{i}" for i in range(n_text)] + ["time"])
        X, image, text, time = pd.DataFrame(X, columns=names), "img_", "txt_", "time"
    if y is not None:
        if label is not None:
            raise UserDataError("give the labels as y or as the label column, not both")
        if isinstance(X, (str, os.PathLike)):
            X = read_table(X)
        if len(y) != len(X):
            raise UserDataError(f"y has {len(y)} labels for {len(X)} rows")
        label = "label" if "label" not in X.columns else "__label__"
        y = np.asarray(y)
        if y.ndim == 2:  # a multilabel indicator: each row's labels (column numbers)
            y = pd.Series([[int(j) for j in np.flatnonzero(row)] for row in y], index=X.index)
        X = X.assign(**{label: y if isinstance(y, pd.Series) else y.tolist()})
    if image is None or text is None:
        raise UserDataError("name the image and text columns: image='img_' and text='txt_' "
                            "(name prefixes) or lists of column names")
    data = load_user_data(X, image=image, text=text, time=time, label=label,
                          label_sep=label_sep, time_unit=time_unit, split=split,
                          window=window, random_state=random_state, n_samples=n_samples)
    # the estimate the command line prints first, through the same lines
    for line in estimate_lines(len(data.X_train) / SYNTHETIC_TRAIN_SHARE, max_epochs,
                               None if estimators is None else unique_names(estimators)[0],
                               data.X_train.shape[1] - 1, seeds=seeds, n_threads=n_threads,
                               pairs=data.pairs):
        log(line)
    threads = torch.get_num_threads()
    torch.set_num_threads(n_threads)
    try:  # BLAS and OpenMP too, as the command line's --n-threads
        with thread_limits(n_threads), parallel_config(backend="loky",
                                                       inner_max_num_threads=n_threads):
            rows = run_compare(output=output, random_state=random_state, plots=plots,
                               max_epochs=max_epochs, estimators=estimators, n_jobs=n_jobs,
                               verbose=verbose, log=log, resume=resume, force=force, data=data,
                               seeds=seeds)
    finally:
        torch.set_num_threads(threads)
    columns = UNDATED_COLUMNS if data.protocol == "undated" else COLUMNS
    # the answer the job wrote (over several seeds, with their spread)
    answer = json.loads((Path(output) / RESULTS).read_text(encoding="utf-8"))["answer"]
    return results_frame(rows, columns, answer)
