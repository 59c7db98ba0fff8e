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
import os
import tempfile
from pathlib import Path

__all__ = ["COMPARED_NAMES", "DATASETS", "MIN_SAMPLES", "RESULTS", "check_output_folder",
           "data_folder", "default_data_dir", "describe_job", "finished_fits", "job_key",
           "write_atomic"]

#: The data sets of ``compare --dataset``.
DATASETS = ("synthetic", "wiki", "ticrc")
#: Display names of the compared estimators, in the table's order: the ``compare`` entries
#: of ``estimators/_registry.py`` (``tests/test_cli.py`` checks that they agree), written
#: out so that ``--help`` and ``--estimators`` need no import of the estimators.
COMPARED_NAMES = ("CCA", "SAM", "TempXNet-Rec", "Diachronic", "Binned+Procrustes", "SCML")
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


def job_key(dataset, n_samples, random_state, max_epochs, estimators):
    """What makes two runs the same: the data, its size, the seed, the epochs, the estimators.

    Parallel workers, threads, plots and verbosity do not change the figures' meaning and
    are not part of it.

    Parameters
    ----------
    dataset : str
    n_samples, max_epochs : int or None
        The options as given (``None``: the defaults).
    random_state : int
    estimators : sequence of str or None
        The names run (``None``: the data set's default list).

    Returns
    -------
    key : dict
        JSON-ready.
    """
    return {"dataset": dataset, "n_samples": n_samples, "seed": random_state,
            "max_epochs": max_epochs,
            "estimators": None if estimators is None else list(estimators)}


def describe_job(key):
    """The job key in a few words: ``synthetic, 3000 items, seed 0, epochs ..., CCA``."""
    if not isinstance(key, dict):
        return "a run of an earlier version (no job key)"
    size = "default size" if key.get("n_samples") is None else f"{key['n_samples']} items"
    epochs = ("the estimators' epochs" if key.get("max_epochs") is None
              else f"max_epochs={key['max_epochs']}")
    names = ("every estimator" if key.get("estimators") is None
             else ",".join(key["estimators"]))
    return f"{key.get('dataset')}, {size}, seed {key.get('seed')}, {epochs}, {names}"


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
    held = document.get("meta", {}).get("job") if isinstance(document, dict) else None
    if held != key:
        if force:
            return None, None
        return (f"--output {output} holds the results of another run ({describe_job(held)}); "
                f"this run ({describe_job(key)}) would replace them: pass --output DIR to "
                "write elsewhere, or --force to replace them"), None
    return None, (document if resume else None)


def finished_fits(document):
    """The finished fits recorded in a results document: ``{(name, control): (seconds, figures)}``.

    Parameters
    ----------
    document : dict or None
        A ``results.json`` document (``None``: nothing finished).

    Returns
    -------
    fits : dict
    """
    if not document:
        return {}
    return {(fit["name"], bool(fit["control"])): (float(fit["fit_seconds"]), fit["figures"])
            for fit in document.get("fits", [])}


def write_atomic(path, text):
    """Write ``text`` to ``path`` through a temporary file and a rename: a reader (or a
    Ctrl-C) sees the old file or the new one, never half of one.

    Parameters
    ----------
    path : str or Path
    text : str
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
