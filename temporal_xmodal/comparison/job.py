"""One run of the main job and its output folder, without importing anything heavy.

The command line reads everything here before it imports torch: the options'
vocabulary (:data:`DATASETS`, :data:`COMPARED_NAMES`, :data:`MIN_SAMPLES`), the
data folder, and the output folder, which it may only write when that folder
holds nothing or the same run's results.

A run is identified by its **job key** (:func:`job_key`): the data set, its
size, the seed, the epochs and the estimators.  ``results.json`` records it
under ``meta.job`` and is rewritten atomically after every fit, with every
finished fit under ``fits``, so that a Ctrl-C loses at most the fit in progress
and ``--resume`` skips the finished ones (:func:`finished_fits`).
"""

import json
import math
import os
import secrets
from pathlib import Path

__all__ = ["COMPARED_NAMES", "DATASETS", "MIN_SAMPLES", "RESULTS", "check_names",
           "check_output_folder",
           "data_folder", "default_data_dir", "describe_job", "finished_fits", "job_key",
           "seconds_text", "unique_names", "write_atomic"]

#: The data sets of ``compare --dataset``.
DATASETS = ("synthetic", "wiki", "ticrc")
#: Display names of the compared estimators, in the table's order: the ``compare`` entries
#: of ``estimators/_registry.py`` (``tests/test_cli.py`` checks that they agree), written
#: out so that ``--help`` and ``--estimators`` need no import of the estimators.
COMPARED_NAMES = ("CCA", "SM", "SAM", "TempXNet-Rec", "Diachronic", "Binned+Procrustes", "SCML")
#: Fewest items (train + test) a comparison accepts: below this the test split has
#: a handful of items per class and time bin, and the figures are noise.
MIN_SAMPLES = 100
#: The results file in the output folder.
RESULTS = "results.json"


def default_data_dir():
    """Folder of the real data sets: ``$TEMPORAL_XMODAL_DATA`` or ``../shared/data``.

    The relative default is resolved against the current directory (the
    layout of a checkout next to the shared data).

    Read more in the user guide: docs/index.md.

    Returns
    -------
    path : Path
    """
    return Path(os.environ.get("TEMPORAL_XMODAL_DATA", Path.cwd() / ".." / "shared" / "data"))


def data_folder(data_dir, name):
    """The folder of data set ``name`` under ``data_dir``, or a FileNotFoundError saying how to set it.

    Parameters
    ----------
    data_dir : str, Path or None
        ``None``: :func:`default_data_dir`.
    name : {"wiki", "ticrc"}

    Returns
    -------
    folder : Path
    """
    folder = Path(default_data_dir() if data_dir is None else data_dir) / name
    if not folder.is_dir():
        raise FileNotFoundError(
            f"data folder not found: {folder.resolve()} (the {name!r} data set). Pass "
            f"--data-dir (the folder holding {name}/) or set TEMPORAL_XMODAL_DATA.")
    return folder


def check_names(names):
    """Refuse estimator names the job does not know, naming the known ones and the closest
    (``"TempXNet"`` → ``"TempXNet-Rec"``); an empty list is refused too.  The command
    line's ``--estimators`` and the Python functions read names through this one check."""
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
    """The estimator names once each, in the table's order (:data:`COMPARED_NAMES`; names
    it does not hold after, as given), and the names given more than once."""
    names = list(names)
    repeated = sorted({name for name in names if names.count(name) > 1})
    order = {name: i for i, name in enumerate(COMPARED_NAMES)}
    once = sorted(dict.fromkeys(names), key=lambda name: order.get(name, len(order)))
    return once, repeated


def job_key(dataset, n_samples, random_state, max_epochs, estimators, data=None, seeds=1):
    """What makes two runs the same: the data, its size, the seed, the epochs, the estimators.

    Parallel workers, threads, plots and verbosity do not change the figures' meaning and
    are not part of it.  The estimators are recorded once each in the table's order
    (``CCA,CCA`` and ``SAM,CCA`` run what ``CCA`` and ``CCA,SAM`` run).

    Parameters
    ----------
    dataset : str
    n_samples, max_epochs : int or None
        The options as given (``None``: the defaults).
    random_state : int
    estimators : sequence of str or None
        The names run (``None``: the data set's default list).
    data : dict or None, default=None
        A user's data (``compare --data``): its file, a digest of its contents and the
        options that read it (``key`` of
        :func:`~temporal_xmodal.comparison.user_data.load_user_data`).
    seeds : int, default=1
        Runs over consecutive seeds (``--seeds``): the folder of their means is another
        run than one seed's.  The one key of a run: the command line checks the folder
        with it before any fit, the job writes it.

    Returns
    -------
    key : dict
        JSON-ready.
    """
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
    """May this run write to ``output``?  The problem in one line (or None), and what to resume.

    A folder without ``results.json`` is free.  One holding the same run's results is
    rewritten (``resume``: its finished fits are kept and skipped).  One holding another
    run's results is refused unless ``force``: the message names ``--output`` and
    ``--force``.

    Parameters
    ----------
    output : str or Path
        The output folder (it need not exist).
    key : dict
        :func:`job_key` of this run.
    resume : bool, default=False
        Keep the finished fits of the same run.
    force : bool, default=False
        Replace another run's results.

    Returns
    -------
    problem : str or None
        Why the run may not write there.
    document : dict or None
        The results to resume from (``resume`` and the same run), else None.
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
    """The finished fits recorded in a results document: ``{(name, control): (seconds, figures)}``.

    A damaged entry (a hand edit, a truncated copy: a missing key, a value of the wrong
    kind) is left out, so that its fit runs again, and said in ``problems``.

    Parameters
    ----------
    document : dict or None
        A ``results.json`` document (``None``: nothing finished).
    problems : list or None, default=None
        Where a line per damaged entry is appended (naming it and what is wrong).

    Returns
    -------
    fits : dict
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
    Ctrl-C) sees the old file or the new one, never half of one.  The file's mode is the
    one ``open()`` gives (``0o666`` less the umask).

    Parameters
    ----------
    path : str or Path
    text : str
    """
    path = Path(path)
    # not tempfile.mkstemp, whose file is 0600: the file gets the mode open() gives,
    # 0666 less the umask, as the figure beside it does (issue 56, 2)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def elapsed_text(seconds):
    """A measured duration as the job prints it: ``"43 s"``, ``"2 min 1 s"`` (rounded to
    the second, never up to the next minute as an estimate is: :func:`seconds_text`)."""
    seconds = round(seconds)
    return f"{seconds} s" if seconds < 120 else f"{seconds // 60} min {seconds % 60} s"


def seconds_text(seconds):
    """The job's wording of a duration: ``"40 s"`` under two minutes (rounded up to a
    multiple of five seconds), else ``"7 min"`` (rounded up)."""
    return (f"{math.ceil(seconds / 5) * 5:.0f} s" if seconds < 120
            else f"{math.ceil(seconds / 60):.0f} min")
