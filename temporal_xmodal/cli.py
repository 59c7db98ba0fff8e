"""Command line: ``python -m temporal_xmodal compare [options]``.

Every argument and the output folder are checked before any data is loaded, any model
fitted and torch imported; a bad one is one ``error:`` line under ``compare``'s usage line,
exit status 2.  Read more in docs/index.md ("Comparing the estimators").
"""

import argparse
import contextlib
import os
import sys
import time
import uuid
import warnings
from functools import partial
from pathlib import Path

from .comparison.estimate import SYNTHETIC_FEATURES, SYNTHETIC_TRAIN_SHARE, estimate_lines
from .comparison.job import (COMPARED_NAMES, DATASETS, MIN_SAMPLES, check_names,
                             check_output_folder, data_folder, elapsed_text, exit_status,
                             job_key, unique_names)

#: Units of ``--time-unit`` (:func:`temporal_xmodal.time.to_time_axis`'s), written out.
TIME_UNITS = ("years", "months", "weeks", "days", "hours", "minutes", "seconds")
#: Options that read a user's file (``--data``).
DATA_OPTIONS = ("image", "text", "time", "label", "label_sep")

__all__ = ["main"]

#: Display names of the compared estimators.
ESTIMATOR_NAMES = COMPARED_NAMES
#: torch threads per fit (``--n-threads``): one; the spare cores serve parallel fits
#: (docs/scaling.md, "A busy machine").
DEFAULT_THREADS = 1


def _parser():
    """The top-level parser and ``compare``'s (whose usage line its errors print)."""
    parser = argparse.ArgumentParser(prog="python -m temporal_xmodal",
                                     description="Cross-modal embeddings over time.")
    sub = parser.add_subparsers(dest="command", required=True)
    cmp_ = sub.add_parser("compare", help="fit every estimator side by side and compare them")
    cmp_.add_argument("--dataset", choices=DATASETS, default=None,
                      help="synthetic (embedded, default), wiki (Wikipedia benchmark, undated) "
                           "or ticrc (dated newspaper pictures and captions)")
    own = cmp_.add_argument_group(
        "your own data", "compare --data FILE --image img_ --text txt_ --time date "
                         "[--label label]: every estimator on your rows")
    own.add_argument("--data", default=None, metavar="FILE",
                     help="a Parquet, CSV, Feather or .npz file of your rows (instead of "
                          "--dataset); default output: compare_output_<file name>")
    own.add_argument("--image", default=None, metavar="PREFIX|A,B,...",
                     help="the image feature columns: a name prefix (img_) or a "
                          "comma-separated list; a Parquet or Feather list column (an "
                          "array per row) img is read as img_0, img_1, ...")
    own.add_argument("--text", default=None, metavar="PREFIX|A,B,...",
                     help="the text feature columns, as --image")
    own.add_argument("--time", default=None, metavar="COLUMN",
                     help="the time column: dates, or numbers in --time-unit (absent: undated)")
    own.add_argument("--time-unit", default="years", choices=TIME_UNITS,
                     help="unit of numeric times and of the axis dates map to (default years)")
    own.add_argument("--label", default=None, metavar="COLUMN",
                     help="class labels, or a multilabel column (see --label-sep); absent: "
                          "each row is an image-text pair, ranked by MRR")
    own.add_argument("--label-sep", default=None, metavar="SEP",
                     help="separator of a multilabel string column (e.g. '|')")
    own.add_argument("--split", default="random", choices=("random", "time"),
                     help="random: 30%% of the rows held out at random (default); time: train "
                          "on the earlier 70%%, test on the latest 30%%")
    own.add_argument("--window", default="5%",
                     help="time window of t-mAP@50 and the date filter: a share of the span "
                          "(default 5%%), a duration (180D) or a number in --time-unit")
    cmp_.add_argument("--data-dir", default=None,
                      help="folder holding wiki/ and ticrc/ (default: $TEMPORAL_XMODAL_DATA, "
                           "else ../shared/data relative to the current directory)")
    cmp_.add_argument("--cache-dir", default=None,
                      help="ticrc image feature cache (default: $TEMPORAL_XMODAL_CACHE, else "
                           "~/.cache/temporal_xmodal)")
    cmp_.add_argument("--output", default=None,
                      help="folder for table.txt, results.json and the plots (default: "
                           "compare_output; compare_output_quick when --n-samples or "
                           "--max-epochs is given, so that a quick look writes beside the main "
                           "job's results, not over them). A folder holding another run's "
                           "results is refused (see --force)")
    cmp_.add_argument("--resume", action="store_true",
                      help="keep the fits that the output folder holds for this same run "
                           "(after a Ctrl-C) and fit only the others")
    cmp_.add_argument("--force", action="store_true",
                      help="replace the results of another run in the output folder")
    cmp_.add_argument("--n-samples", type=int, default=None,
                      help=f"items used, train + test, at least {MIN_SAMPLES}: synthetic data set "
                           "size (default 3000); wiki/ticrc: a random subset in the split's "
                           "proportions (default: all)")
    cmp_.add_argument("--seed", type=int, default=0)
    cmp_.add_argument("--seeds", type=int, default=1,
                      help="runs of the whole job, with seeds --seed, --seed + 1, ... (each "
                           "in <output>/seed_<k>/); the table is then the mean, and its first "
                           "lines give each figure's spread over the seeds (default 1)")
    cmp_.add_argument("--max-epochs", type=int, default=None,
                      help="epochs of the neural estimators, at least 1 (default: each "
                           "estimator's own, printed in the figure's title)")
    cmp_.add_argument("--estimators", default=None,
                      help="comma-separated subset to run, among "
                           f"{','.join(ESTIMATOR_NAMES)} (default: all)")
    cmp_.add_argument("--n-jobs", type=int, default=1,
                      help="estimators fitted in parallel (joblib's loky worker processes, "
                           "which start in a few seconds and then scale best: the compared "
                           "fits take seconds to minutes; -1: every core; default 1)")
    cmp_.add_argument("--n-threads", type=int, default=DEFAULT_THREADS,
                      help="torch threads of each fit (default 1: on a machine that other "
                           "work shares, fits on 2 threads made the quick job about 3 times "
                           "slower than on one (docs/index.md); use --n-jobs for the other "
                           "cores)")
    cmp_.add_argument("--verbose", action="store_true", help="print the training epochs")
    cmp_.add_argument("--no-plots", action="store_true")
    return parser, cmp_


def _check_output(output):
    """Create the output folder and a probe file in it; the problem in words, or None."""
    folder = Path(output)
    if folder.exists() and not folder.is_dir():
        return f"--output {output}: an existing file, not a folder"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-probe-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        return f"--output {output}: cannot write there ({exc.strerror or exc})"
    return None


#: Most runs of the job ``--seeds`` asks for (each one refits every estimator).
MAX_SEEDS = 100


def _check_compare_args(args):
    """The first problem with the arguments of ``compare`` in words, or None; sets ``args.names``."""
    if args.n_samples is not None and args.n_samples < MIN_SAMPLES:
        return (f"--n-samples must be at least {MIN_SAMPLES} (items, train + test); "
                f"got {args.n_samples}")
    if args.max_epochs is not None and args.max_epochs < 1:
        return f"--max-epochs must be at least 1; got {args.max_epochs}"
    if args.seeds < 1:
        return f"--seeds must be at least 1 (runs of the job); got {args.seeds}"
    if args.seeds > MAX_SEEDS:
        return (f"--seeds must be at most {MAX_SEEDS} (each seed reruns the whole job); "
                f"got {args.seeds}")
    if args.n_jobs == 0 or args.n_jobs < -1:
        return f"--n-jobs must be a positive number of workers or -1 (every core); got {args.n_jobs}"
    if args.n_threads < 1:
        return f"--n-threads must be at least 1; got {args.n_threads}"
    if args.seed < 0:
        return f"--seed must be at least 0; got {args.seed}"
    if args.resume and args.force:
        return "--resume keeps this run's finished fits and --force replaces another run's: pass one"
    args.names, args.repeated = None, []
    if args.estimators is not None:
        names = [name.strip() for name in args.estimators.split(",") if name.strip()]
        try:
            check_names(names)
        except ValueError as error:
            return f"--{error}"
        args.names, args.repeated = unique_names(names)
    args.user_data = None
    if args.data is not None:
        problem = _read_user_data(args)
        if problem:
            return problem
    problem = _check_output(args.output)
    if problem is None:
        args.job = job_key("data" if args.data else args.dataset,
                           None if args.data else args.n_samples, args.seed, args.max_epochs,
                           args.names, data=args.user_data.key if args.data else None,
                           seeds=args.seeds)
        problem, _ = check_output_folder(args.output, args.job, resume=args.resume,
                                         force=args.force)
    return problem


def _block(spec):
    """``--image img_`` is a prefix; ``--image a,b,c`` a list of columns."""
    return [name.strip() for name in spec.split(",") if name.strip()] if "," in spec else spec


def _read_user_data(args):
    """Read and check ``--data FILE`` (no torch yet); the problem in one line, or None."""
    if args.dataset is not None:
        return "--data and --dataset name two data sets: pass one"
    missing = [f"--{name}" for name in ("image", "text") if getattr(args, name) is None]
    if missing:
        return (f"--data needs {' and '.join(missing)}: the image and text feature columns, "
                "a name prefix (img_) or a comma-separated list")
    from .comparison.user_data import UserDataError, load_user_data

    try:
        args.user_data = load_user_data(
            args.data, image=_block(args.image), text=_block(args.text), time=args.time,
            label=args.label, label_sep=args.label_sep, time_unit=args.time_unit,
            split=args.split, window=args.window, random_state=args.seed,
            n_samples=args.n_samples)
    except UserDataError as exc:
        return str(exc)
    return None


def main(argv=None):
    """Entry point of ``python -m temporal_xmodal`` and the ``temporal-xmodal`` script.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    status : int
        0 on success, 2 when the data folder (or an optional dependency of the data set)
        is missing, 130 after Ctrl-C (the finished fits are written).

    Raises
    ------
    SystemExit
        With status 2 on a bad argument or an unusable output folder.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    parser, compare_parser = _parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # argparse would name the top-level parser: the error is compare's
        compare_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    given = [f"--{name.replace('_', '-')}" for name in DATA_OPTIONS
             if getattr(args, name) is not None]
    if args.data is None and given:
        compare_parser.error(f"{', '.join(given)} read your own file: pass it with --data FILE "
                             "(the embedded data sets name their columns themselves)")
    if args.data is None and args.dataset is None:
        args.dataset = "synthetic"
    try:
        if args.dataset not in (None, "synthetic"):  # before the output folder is created
            data_folder(args.data_dir, args.dataset)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.output is None:
        quick = args.n_samples is not None or args.max_epochs is not None
        args.output = ("compare_output_quick" if quick else "compare_output") + (
            f"_{Path(args.data).stem}" if args.data else "")
    problem = _check_compare_args(args)
    if problem:
        compare_parser.error(problem)
    started = time.perf_counter()
    return exit_status(partial(_run, args, started), argv, args.output, _flushed_print)


#: This package's folder: a warning located in it has no line of the user's to point at.
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


@contextlib.contextmanager
def _warnings_as_notes():
    """Show a warning located in the package as a ``note (Category): message`` line (the
    command line has no line of the user's to point at), and a checkpoint warning in the
    job's words; only the display changes, restored on return."""
    shown = warnings.formatwarning

    def note(message, category, filename, lineno, line=None):
        from .comparison.report import checkpoint_note

        # by name: importing the class would import scikit-learn before the job needs it
        reworded = (checkpoint_note(str(message))
                    if any(c.__name__ == "CheckpointWarning" for c in category.__mro__)
                    else None)
        if reworded or os.path.abspath(str(filename)).startswith(_PACKAGE):
            return f"note ({category.__name__}): {reworded or message}\n"
        return shown(message, category, filename, lineno, line)

    warnings.formatwarning = note
    try:
        yield
    finally:
        warnings.formatwarning = shown


def _run(args, started):
    """Everything after the checks: the heavy imports, the threads, the estimate, the job."""
    with _warnings_as_notes():
        import torch

        from ._device import thread_limits

        threads = torch.get_num_threads()
        torch.set_num_threads(args.n_threads)
        try:  # BLAS and OpenMP too
            with thread_limits(args.n_threads):
                return _run_job(args, started)
        finally:  # main() called from Python leaves torch as it found it
            torch.set_num_threads(threads)


def _run_job(args, started):
    from joblib import parallel_config

    from .comparison import run_compare

    if args.repeated:
        _flushed_print(f"--estimators names {', '.join(args.repeated)} more than once: each "
                       "runs once")
    if args.dataset == "synthetic" or args.data:
        size = (len(args.user_data.X_train) / SYNTHETIC_TRAIN_SHARE if args.data
                else args.n_samples or 3000)
        n_features = args.user_data.X_train.shape[1] - 1 if args.data else SYNTHETIC_FEATURES
        for line in estimate_lines(size, args.max_epochs, args.names, n_features,
                                   seeds=args.seeds, n_threads=args.n_threads,
                                   pairs=bool(args.data) and args.user_data.pairs):
            _flushed_print(line)
    try:
        # loky workers (--n-jobs) get the same threads per fit
        with parallel_config(backend="loky", inner_max_num_threads=args.n_threads):
            run_compare(args.dataset or "synthetic", args.output,
                        n_samples=None if args.data else args.n_samples,
                        random_state=args.seed, plots=not args.no_plots,
                        max_epochs=args.max_epochs, data_dir=args.data_dir,
                        cache_dir=args.cache_dir, estimators=args.names, n_jobs=args.n_jobs,
                        verbose=args.verbose, log=_flushed_print, resume=args.resume,
                        force=args.force, data=args.user_data, seeds=args.seeds)
    except (FileNotFoundError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _flushed_print(f"finished in {elapsed_text(time.perf_counter() - started)}")
    return 0


def _flushed_print(message):
    print(message, flush=True)
