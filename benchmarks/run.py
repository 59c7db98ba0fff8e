"""Run one benchmark: ``python benchmarks/run.py NAME [--quick] [options]``.

A benchmark is a spec, ``benchmarks/specs/NAME.py``; ``python benchmarks/run.py --list``
lists them, ``python benchmarks/run.py NAME --help`` gives one's options.  The runner owns
what every benchmark shares: the command line (``--quick``, ``--output-dir``, ``--n-jobs``,
``--threads``, ``--seeds``), the thread policy (``--threads`` torch and BLAS threads per
worker, by default the cores over ``--n-jobs``), the warning policy (every warning of a fit
and its scoring is recorded and silenced), the grid of fits, their timing (seconds of wall
time), and the JSON (``benchmarks/results/<name>.json``: command, date, machine and
versions beside the spec's payload).  A spec defines, beside its docstring (the ``--help``
text):

* optionally ``arguments(parser)`` (its own options), ``name(args)`` (the JSON's name where
  it is not ``bench_NAME``), ``SEEDS`` and ``N_JOBS`` (defaults of ``--seeds``, 3, and
  ``--n-jobs``, 1);
* either ``measure(args) -> payload``: a measurement that is not a grid of fits;
* or a grid: ``cells(args)`` (``_common.Cell`` s: data set, seed, case), ``data(key, seed,
  args)`` (built once per data set and seed, in the worker), ``estimator(cell, split, args)
  -> (unfitted estimator, X, y)``, ``score(fitted, cell, split, args) -> figures`` and
  ``report(runs, args) -> payload``, each run being ``{"cell", "fit_seconds", "seconds",
  "still_improving", "warnings", **figures}``.

A payload may hold ``targets`` (:func:`_common.target` entries); they are printed.
"""

import argparse
import ast
import importlib
import os
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the specs import their sibling _common
    sys.path.insert(0, str(HERE))

from _common import RESULTS_DIR, print_targets, write_results  # noqa: E402


def specs():
    """The benchmarks' names, sorted."""
    return sorted(p.stem for p in (HERE / "specs").glob("*.py") if not p.stem.startswith("_"))


def load(name):
    """The spec module of ``name`` (``bench_`` prefix and ``.py`` suffix allowed)."""
    name = Path(name).stem.removeprefix("bench_")
    if name not in specs():
        raise SystemExit(f"no benchmark {name!r}; choose from {', '.join(specs())}")
    return importlib.import_module(f"specs.{name}")


def set_threads(threads):
    """``threads`` torch threads and BLAS threads in this process (the runner's policy)."""
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(threads)
    threadpool_limits(threads)


def parser_for(spec, name):
    parser = argparse.ArgumentParser(prog=f"run.py {name}", description=spec.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="small sizes (a smoke run); the figures are not the targets'")
    parser.add_argument("--output-dir", type=Path, default=RESULTS_DIR,
                        help=f"folder of the JSON result (default: {RESULTS_DIR})")
    n_jobs = getattr(spec, "N_JOBS", 1)
    parser.add_argument("--n-jobs", type=int, default=n_jobs,
                        help=f"parallel processes (default {n_jobs})")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch and BLAS threads per worker (default: cores / n-jobs)")
    if hasattr(spec, "cells"):
        parser.add_argument("--seeds", type=int, default=getattr(spec, "SEEDS", 3),
                            help=f"seeds 0 .. N-1 (default {getattr(spec, 'SEEDS', 3)}; "
                                 "--quick: seed 0)")
    if hasattr(spec, "arguments"):
        spec.arguments(parser)
    return parser


def _run_group(name, key, cells, args):
    """The cells of one data set and seed, in this process: their runs."""
    spec = load(name)
    set_threads(args.threads)
    split = spec.data(key[0], key[1], args)
    runs = []
    for cell in cells:
        estimator, X, y = spec.estimator(cell, split, args)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            estimator.fit(X, y)
            fit_seconds = time.perf_counter() - start
            figures = spec.score(estimator, cell, split, args)
        report = getattr(estimator, "fit_report_", None)
        runs.append({"cell": cell, "fit_seconds": fit_seconds,
                     "seconds": time.perf_counter() - start,
                     "still_improving": bool(report is not None and report.still_improving),
                     "warnings": sorted({f"{w.category.__name__}: {w.message}" for w in caught}),
                     **figures})
        shown = "  ".join(f"{k} {v.get('mean', v) if isinstance(v, dict) else v:.4f}"
                          for k, v in figures.items() if isinstance(v, float)
                          or isinstance(v, dict) and isinstance(v.get("mean"), float))[:150]
        print(f"  {cell.data} seed {cell.seed} {cell.case}: {shown} ({fit_seconds:.0f} s)",
              flush=True)
    return runs


def run_grid(name, spec, args):
    """Every cell of the spec's grid, grouped by data set and seed (in ``cells`` order)."""
    from joblib import Parallel, delayed

    groups = {}
    for cell in spec.cells(args):
        groups.setdefault((cell.data, cell.seed), []).append(cell)
    done = Parallel(n_jobs=args.n_jobs)(delayed(_run_group)(name, key, cells, args)
                                        for key, cells in groups.items())
    return [run for runs in done for run in runs]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help", "--list"):
        print(__doc__ if argv[:1] != ["--list"] else "")
        for name in specs():
            doc = ast.get_docstring(ast.parse((HERE / "specs" / f"{name}.py").read_text()))
            print(f"  {name:22s} {doc.splitlines()[0]}")
        return 0
    name = Path(argv[0]).stem.removeprefix("bench_")
    spec = load(name)
    args = parser_for(spec, name).parse_args(argv[1:])
    args.threads = args.threads or max(1, (os.cpu_count() or 1) // max(1, args.n_jobs))
    if hasattr(spec, "cells"):
        args.seeds = [0] if args.quick else list(range(args.seeds))
    set_threads(args.threads)
    payload = spec.measure(args) if hasattr(spec, "measure") else spec.report(
        run_grid(name, spec, args), args)
    if payload.get("targets"):
        print_targets(payload["targets"])
    write_results(spec.name(args) if hasattr(spec, "name") else f"bench_{name}",
                  {"quick": args.quick, **payload}, args.output_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
