"""One run of the main job: its key, its output folder and files, and Ctrl-C.

``results.json`` records the run's :func:`job_key` and every finished fit, rewritten
atomically after each, so that Ctrl-C loses at most the fit in progress and ``--resume``
skips the finished ones (:func:`finished_fits`).  Every piece of the job's Ctrl-C handling
is here: :class:`CompareInterrupted` and the handlers that the fits, the driver and the
command line enter.  Nothing here imports anything heavy: the command line checks its
arguments and the output folder, and answers a Ctrl-C, before torch is imported.

Read more in docs/index.md ("Ctrl-C and ``--resume``").
"""

import contextlib
import json
import math
import os
import secrets
import shlex
import sys
from pathlib import Path

__all__ = ["COMPARED_NAMES", "DATASETS", "MIN_SAMPLES", "RESULTS", "TABLE", "CompareInterrupted",
           "check_names", "check_output_folder", "data_folder", "default_data_dir",
           "describe_job", "finished_fits", "job_key", "seconds_text", "unique_names",
           "write_atomic"]

#: The data sets of ``compare --dataset``.
DATASETS = ("synthetic", "wiki", "ticrc")
#: Display names of the compared estimators in the table's order, written out so that
#: ``--help`` imports no estimator (``tests/test_cli.py`` checks them against the settings).
COMPARED_NAMES = ("CCA", "SM", "SAM", "TempXNet-Rec", "Diachronic", "Binned+Procrustes", "SCML")
#: Fewest items (train + test) a comparison accepts.
MIN_SAMPLES = 100
#: The results file and the printed table in the output folder.
RESULTS, TABLE = "results.json", "table.txt"
#: Exit status after Ctrl-C (128 + SIGINT, as a shell reports it).
INTERRUPTED = 130


def default_data_dir():
    """Folder of the real data sets: ``$TEMPORAL_XMODAL_DATA``, else ``../shared/data``
    relative to the current directory."""
    return Path(os.environ.get("TEMPORAL_XMODAL_DATA", Path.cwd() / ".." / "shared" / "data"))


def data_folder(data_dir, name):
    """The folder of data set ``name`` under ``data_dir`` (``None``: :func:`default_data_dir`);
    a FileNotFoundError saying how to set it when absent."""
    folder = Path(default_data_dir() if data_dir is None else data_dir) / name
    if not folder.is_dir():
        raise FileNotFoundError(
            f"data folder not found: {folder.resolve()} (the {name!r} data set). Pass "
            f"--data-dir (the folder holding {name}/) or set TEMPORAL_XMODAL_DATA.")
    return folder


def check_names(names):
    """The estimator names as a list; a ValueError naming the known ones and the closest
    for an unknown name or none."""
    import difflib

    names = list(names)
    unknown = [name for name in names if name not in COMPARED_NAMES]
    if not unknown and names:
        return names
    hints = []
    for name in unknown:
        close = difflib.get_close_matches(str(name), COMPARED_NAMES, n=1, cutoff=0.5) or [
            known for known in COMPARED_NAMES if known.lower().startswith(str(name).lower())]
        if close:
            hints.append(f"{name!r}: did you mean {close[0]!r}?")
    raise ValueError(
        f"estimators: unknown name(s) {', '.join(map(str, unknown)) or '(none given)'}; "
        f"choose among {', '.join(COMPARED_NAMES)}" + (f" ({'; '.join(hints)})" if hints
                                                       else "") + ".")


def unique_names(names):
    """``(names once each in the table's order, names given more than once)``."""
    names = list(names)
    repeated = sorted({name for name in names if names.count(name) > 1})
    order = {name: i for i, name in enumerate(COMPARED_NAMES)}
    once = sorted(dict.fromkeys(names), key=lambda name: order.get(name, len(order)))
    return once, repeated


def job_key(dataset, n_samples, random_state, max_epochs, estimators, data=None, seeds=1):
    """What makes two runs the same, JSON-ready: the options as given (``None``: the
    defaults), the ``estimators`` once each in the table's order, a user's ``data`` (the
    ``key`` of ``load_user_data``) and ``seeds`` when more than one.  Workers, threads,
    plots and verbosity are not part of it."""
    key = {"dataset": dataset, "n_samples": n_samples, "seed": random_state,
           "max_epochs": max_epochs,
           "estimators": None if estimators is None else unique_names(estimators)[0]}
    if data is not None:
        key["data"] = dict(data)
    if seeds > 1:  # a one-seed run's key is what it always was
        key["seeds"] = seeds
    return key


def describe_job(key):
    """The job key in a few words: ``synthetic, 3000 items, seed 0, epochs ..., CCA``."""
    if not isinstance(key, dict):
        return "a run of an earlier version (no job key)"
    size = "default size" if key.get("n_samples") is None else f"{key['n_samples']} items"
    epochs = ("the estimators' epochs" if key.get("max_epochs") is None
              else f"max_epochs={key['max_epochs']}")
    names = ("every estimator" if key.get("estimators") is None
             else ",".join(key["estimators"]))
    dataset = key.get("dataset")
    if isinstance(key.get("data"), dict):
        data = key["data"]
        dataset = f"{data.get('source') or 'a DataFrame'} ({data.get('split')} split)"
    seeds = (f"seeds {key['seed']}-{key['seed'] + key['seeds'] - 1}"
             if isinstance(key.get("seeds"), int) and isinstance(key.get("seed"), int)
             else f"seed {key.get('seed')}")
    return f"{dataset}, {size}, {seeds}, {epochs}, {names}"


def _read(path):
    """The JSON document at ``path``; None when absent; a ValueError when unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{path} is not readable JSON ({exc})") from None


def check_output_folder(output, key, *, resume=False, force=False):
    """May this run write to ``output``?  ``(problem or None, document to resume or None)``.

    A folder without ``results.json``, or holding this run's (same ``key``), is free; one
    holding another run's is refused unless ``force``, in one line naming ``--output`` and
    ``--force``.  The document is returned when ``resume`` and the run is the same.
    """
    path = Path(output) / RESULTS
    try:
        document = _read(path)
    except (ValueError, OSError) as exc:
        if force:
            return None, None
        return (f"--output {output}: {exc}; pass --force to replace it or --output DIR to "
                "write elsewhere"), None
    if document is None:
        return None, None
    meta = document.get("meta") if isinstance(document, dict) else None
    held = meta.get("job") if isinstance(meta, dict) else None
    if held != key:
        if force:
            return None, None
        return (f"--output {output} holds the results of another run ({describe_job(held)}); "
                f"this run ({describe_job(key)}) would replace them: pass --output DIR to "
                "write elsewhere, or --force to replace them"), None
    return None, (document if resume else None)


def _fit_problem(fit, score):
    """What is wrong with one ``fits`` entry of results.json, or None."""
    if not isinstance(fit, dict):
        return f"not an object but {type(fit).__name__}"
    missing = [k for k in ("name", "control", "fit_seconds", "figures") if k not in fit]
    if missing:
        return f"no {', '.join(map(repr, missing))}"
    if not isinstance(fit["name"], str) or not isinstance(fit["control"], bool):
        return "'name' is not a string or 'control' not true/false"
    seconds = fit["fit_seconds"]
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds >= 0:
        return f"'fit_seconds' is {seconds!r}, not a number of seconds"
    figures = fit["figures"]
    if not isinstance(figures, dict):
        return f"'figures' is {type(figures).__name__}, not an object"
    for k in ("still_improving", score):
        if k not in figures:
            return f"'figures' has no {k!r}"
    if not any(k in figures for k in ("per_bin", "per_category", "per_period")):
        return "'figures' has no breakdown ('per_bin', 'per_category' or 'per_period')"
    value = figures[score]
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return f"'figures'[{score!r}] is {value!r}, not a number"
    return None


def finished_fits(document, *, problems=None):
    """The finished fits of a results document: ``{(name, control): (seconds, figures)}``.

    A damaged entry is left out (its fit runs again) and said in a line appended to
    ``problems``; ``document=None``: nothing finished.
    """
    if not document:
        return {}
    problems = [] if problems is None else problems
    meta = document.get("meta") if isinstance(document, dict) else None
    score = meta.get("delta_time_score", "map") if isinstance(meta, dict) else "map"
    entries = document.get("fits", []) if isinstance(document, dict) else None
    if not isinstance(entries, list):
        problems.append(f"{RESULTS}: 'fits' is not a list; every fit runs again")
        return {}
    fits = {}
    for i, fit in enumerate(entries):
        problem = _fit_problem(fit, score)
        if problem is not None:
            name = fit.get("name") if isinstance(fit, dict) else None
            control = " (constant-time control)" if isinstance(fit, dict) and fit.get(
                "control") is True else ""
            problems.append(f"{RESULTS}: fit entry #{i + 1}"
                            + (f" ({name}{control})" if isinstance(name, str) else "")
                            + f" is damaged ({problem}); it is fitted again (--force "
                              "refits every fit)")
            continue
        fits[(fit["name"], fit["control"])] = (float(fit["fit_seconds"]), fit["figures"])
    return fits


def write_atomic(path, text):
    """Write ``text`` to ``path`` through a temporary file and a rename: a reader (or a
    Ctrl-C) sees the old file or the new one.  The mode is ``open()``'s (0o666 less the
    umask)."""
    path = Path(path)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"  # not mkstemp's 0600
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def seed_folder(seed):
    """The sub-folder of one seed's run (``seed_3``)."""
    return f"seed_{seed}"


def elapsed_text(seconds):
    """A measured duration in seconds as the job prints it: ``"43 s"``, ``"2 min 1 s"``."""
    seconds = round(seconds)
    return f"{seconds} s" if seconds < 120 else f"{seconds // 60} min {seconds % 60} s"


def seconds_text(seconds):
    """An estimated duration in seconds: ``"40 s"`` under two minutes (rounded up to a
    multiple of five seconds), else ``"7 min"`` (rounded up)."""
    return (f"{math.ceil(seconds / 5) * 5:.0f} s" if seconds < 120
            else f"{math.ceil(seconds / 60):.0f} min")


# ---------------------------------------------------------------------------- Ctrl-C
class CompareInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`~temporal_xmodal.comparison.compare` or
    :func:`~temporal_xmodal.comparison.run_compare`; the finished fits are kept.

    A ``KeyboardInterrupt``; ``run_compare`` has written the finished fits before raising it
    (``resume=True`` skips them).

    Read more in the user guide: docs/index.md.

    Attributes
    ----------
    results : dict
        The finished fits, ``{(name, control): (fit seconds, figures)}``.
    rows : list of dict
        The table's rows of the finished fits.
    n_fits : int
        Fits the comparison has in all.
    on_disk : str or None
        Over several seeds: what is on disk (seeds finished, the means, the figure).
    """

    def __init__(self, results, rows, n_fits, on_disk=None):
        super().__init__(f"interrupted (Ctrl-C) after {len(results)} of {n_fits} fits")
        self.results, self.rows, self.n_fits = results, rows, n_fits
        self.on_disk = on_disk


class StopFits:
    """``with StopFits(results, rows, n_fits) as stop:`` around ``compare``'s fits: a Ctrl-C
    inside, or a fit Ctrl-C stopped (:meth:`check`), calls ``close()`` and raises
    :class:`CompareInterrupted` with the finished fits (``results``) and their ``rows()``."""

    def __init__(self, results, rows, n_fits, close=None):
        self.results, self.rows, self.n_fits, self.close = results, rows, n_fits, close

    def __enter__(self):
        return self

    def check(self, figures):
        """Stop here when the fit's ``figures`` are None (Ctrl-C stopped it)."""
        if figures is None:
            raise KeyboardInterrupt

    def __exit__(self, kind, exc, tb):
        if kind is None or not issubclass(kind, KeyboardInterrupt):
            return False
        if self.close is not None:
            self.close()
        if issubclass(kind, CompareInterrupted):
            return False
        raise CompareInterrupted(dict(self.results), self.rows(), self.n_fits) from None


@contextlib.contextmanager
def keep_finished_fits(out, write, plot, log):
    """Around one run's fits: on :class:`CompareInterrupted`, the finished fits are written
    (``write``) and printed and their figure drawn (``plot``; a second Ctrl-C skips it)."""
    try:
        yield
    except CompareInterrupted as stop:
        text = write(stop.rows, stop.results, stop.n_fits)
        log(f"\ninterrupted (Ctrl-C): {len(stop.results)} of {stop.n_fits} fits finished, "
            "the fit in progress dropped; the finished ones:\n")
        log(text)
        log(f"\nwrote {out / TABLE} and {out / RESULTS} (partial)")
        if plot is not None and stop.rows:
            try:
                plot(stop.rows)
            except KeyboardInterrupt:  # a second Ctrl-C: the results are written
                log("figure not drawn (Ctrl-C)")
        raise


@contextlib.contextmanager
def every_fit_written(out, rows, results, n_fits, write, log, plots):
    """Around the last writes and the figure of a finished run: on Ctrl-C the results are
    written again, said complete, and :class:`CompareInterrupted` raised."""
    try:
        yield
    except KeyboardInterrupt:
        write(rows, results, n_fits)
        log(f"\ninterrupted (Ctrl-C) after every fit finished: {out / RESULTS} is complete"
            + ("; the figure was not drawn" if plots else ""))
        raise CompareInterrupted(dict(results), rows, n_fits) from None


@contextlib.contextmanager
def seeds_stop_together(out, seed_list, runs, phase, log):
    """Around a run over ``seed_list`` (``runs``: the finished seeds' rows, filled as they
    finish; ``phase``: the means' and the figure's state): on Ctrl-C, what is on disk is
    said and set as ``on_disk`` of the :class:`CompareInterrupted` raised."""
    try:
        yield
    except KeyboardInterrupt as stop:  # a seed's fits (CompareInterrupted) or anywhere else
        on_disk = _seeds_on_disk(out, seed_list, len(runs), phase)
        log(f"\ninterrupted (Ctrl-C): {on_disk}")
        if isinstance(stop, CompareInterrupted):
            stop.on_disk = on_disk
            raise
        raise CompareInterrupted({}, [], 0, on_disk=on_disk) from None


def _seeds_on_disk(out, seed_list, n_done, phase):
    """What a run over ``seed_list`` stopped after ``n_done`` seeds has on disk, in one line."""
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


def exit_status(run, argv, output, log):
    """The command line's ``run()``; on Ctrl-C, what is kept and the command that goes on
    (``log``), or that nothing was written (stderr), and status 130."""
    try:
        return run()
    except CompareInterrupted as stop:
        again = [a for a in argv if a not in ("--resume", "--force")] + ["--resume"]
        command = f"python -m temporal_xmodal {shlex.join(again)}"
        if stop.on_disk is not None:  # a run over several seeds: what each part has
            log(f"to finish the job without refitting the finished fits: {command}")
        elif len(stop.results) == stop.n_fits:
            log(f"all {stop.n_fits} fits are written; to draw what was left without "
                f"refitting: {command}")
        else:
            log(f"{len(stop.results)} of {stop.n_fits} fits are kept; to finish the job "
                f"without refitting them: {command}")
        return INTERRUPTED
    except KeyboardInterrupt:  # before the first fit (imports, data): nothing to keep
        held = Path(output) / RESULTS
        print("\ninterrupted (Ctrl-C) before this run's first fit finished; it wrote nothing"
              + (f" ({held} is as it was: --resume goes on from its finished fits)"
                 if held.is_file() else ""), file=sys.stderr)
        return INTERRUPTED
