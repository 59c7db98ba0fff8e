"""Helpers shared by the benchmarks: command line, machine info, statistics, targets, JSON.

``run.py`` and its specs use them, and so do the scripts not yet made specs (``python
benchmarks/bench_*.py`` puts this folder on ``sys.path``).
"""

import argparse
import ast
import json
import os
import platform
import sys
import time
import warnings
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np

#: Default folder of the JSON results.
RESULTS_DIR = Path(__file__).resolve().parent / "results"
#: Default folder of the real data sets (``$TEMPORAL_XMODAL_DATA`` or ``../shared/data``).
DATA = Path(os.environ.get("TEMPORAL_XMODAL_DATA",
                           Path(__file__).resolve().parents[2] / "shared" / "data"))

_PACKAGES = ("numpy", "scipy", "scikit-learn", "torch", "temporal-xmodal")


@dataclass
class Cell:
    """One fit of a benchmark's grid (``run.py``): data set ``data`` drawn at ``seed``,
    ``case`` (an estimator or a row), ``params`` for the spec."""

    data: str
    seed: int
    case: str
    params: dict = field(default_factory=dict)


def make_parser(description):
    """Argument parser with the options every benchmark has: ``--quick``, ``--output-dir``."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true",
        help="small sizes (a smoke run of a few seconds); figures are not the targets'",
    )
    parser.add_argument(
        "--output-dir", type=Path, default=RESULTS_DIR,
        help=f"folder of the JSON result (default: {RESULTS_DIR})",
    )
    return parser


def add_ticrc_arguments(parser):
    """``--data-dir`` (the folder holding ``ticrc/``) and ``--cache-dir`` (image features)."""
    from temporal_xmodal.datasets._ticrc_features import default_cache_dir

    parser.add_argument("--data-dir", type=Path, default=DATA,
                        help=f"folder holding ticrc/ (default {DATA}; env TEMPORAL_XMODAL_DATA)")
    parser.add_argument("--cache-dir", default=default_cache_dir(),
                        help="image feature cache (default $TEMPORAL_XMODAL_CACHE or "
                             "~/.cache/temporal_xmodal)")


def add_settings_argument(parser):
    """``--set NAME.PARAM=VALUE`` (repeatable): a parameter of one estimator of the registry."""
    parser.add_argument(
        "--set", dest="settings", action="append", default=[], metavar="NAME.PARAM=VALUE",
        help="set a parameter of one compared estimator, e.g. --set "
             "Binned+Procrustes.align_on=image or --set Diachronic.selection_metric=valid_loss "
             "(repeatable; VALUE is read as a Python literal, else as a string)",
    )


def read_value(raw):
    """A command-line value read as a Python literal, else kept as the string."""
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return raw


def parse_settings(parser, items, estimators):
    """``--set`` items as ``{name: {param: value}}``, checked against the estimators.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        Reports a malformed item, an unknown estimator or a parameter the
        estimator refuses (``parser.error``).
    items : list of str
        ``"NAME.PARAM=VALUE"``.
    estimators : dict of str -> estimator
        The registry's unfitted estimators by display name.

    Returns
    -------
    settings : dict of str -> dict
    """
    from sklearn.base import clone

    settings = {}
    for item in items:
        key, sep, raw = item.partition("=")
        name, dot, param = key.rpartition(".")
        if not (sep and dot and name and param):
            parser.error(f"--set {item!r}: expected NAME.PARAM=VALUE")
        if name not in estimators:
            parser.error(f"--set {item!r}: unknown estimator {name!r}; choose from "
                         f"{', '.join(estimators)}")
        settings.setdefault(name, {})[param] = read_value(raw)
    for name, params in settings.items():
        try:  # unknown parameters fail in set_params, bad values in the constraints' check
            clone(estimators[name]).set_params(**params)._validate_params()
        except (ValueError, TypeError) as error:
            parser.error(f"--set: {name}: {error}")
    return settings


def _version(package):
    """Installed version of ``package`` without importing it (None if absent)."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def machine_info():
    """Platform, CPU count, Python and library versions, BLAS threading."""
    info = {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "versions": {name: _version(name) for name in _PACKAGES},
    }
    try:
        from threadpoolctl import threadpool_info

        info["blas"] = [
            {key: pool.get(key) for key in ("internal_api", "version", "num_threads")}
            for pool in threadpool_info()
        ]
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        pass
    return info


def best_of(func, repeats):
    """Run ``func()`` ``repeats`` times; return (best wall time in seconds, last result)."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - start)
    return best, result


def timed_fit(estimator, X, y, clock=time.perf_counter):
    """Seconds of ``estimator.fit(X, y)`` by ``clock`` (wall time; ``time.process_time``: CPU
    time), its warnings silenced (the benchmarks' policy for a fit timed alone)."""
    start = clock()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(X, y)
    return clock() - start


def stats(values, ddof=1):
    """``{"mean", "std", "values"}`` of a figure over seeds (``std`` with ``ddof``; 0 for one
    value)."""
    values = np.asarray(values, dtype=float)
    return {"mean": float(values.mean()),
            "std": float(values.std(ddof=ddof)) if len(values) > 1 else 0.0,
            "values": values.tolist()}


def target(value, threshold, comparison, description):
    """One pass/fail entry: ``value`` against ``threshold`` with ``comparison`` ``">="`` or ``"<"``."""
    if comparison == ">=":
        passed = value >= threshold
    elif comparison == "<":
        passed = value < threshold
    else:
        raise ValueError(f"comparison must be '>=' or '<'; got {comparison!r}.")
    return {
        "description": description,
        "value": float(value),
        "threshold": threshold,
        "comparison": comparison,
        "passed": bool(passed),
    }


def print_header(title):
    """Print a section title."""
    print(f"\n== {title} ==")


def print_targets(targets):
    """Print the pass/fail line of every target."""
    print_header("Targets")
    for name, entry in targets.items():
        verdict = "PASS" if entry["passed"] else "FAIL"
        print(f"  [{verdict}] {name}: {entry['description']} "
              f"(value {entry['value']:.4g} {entry['comparison']} {entry['threshold']:g})")


def retrieval_figures(estimator, X, y, window, time):
    """Category mAP, time-window mAP@50 and local alignment of a fitted embedder on ``X``.

    Relevant for the time-window figures: same category and ``|Δt| <= window`` of ``time``,
    the items' real times (also for a constant-time control).  ``tmap50`` ranks every
    candidate, ``tmap50_filter`` only those within ``window`` of the query's date, each AP@50
    divided by min(50, the relevant items); ``*_topk`` divide by the relevant items found in
    the top 50.  Local alignment (Semedo & Magalhães, ACM MM 2019: queries projected at 10
    instants of the real times, AP@10): ``local_map10``, ``local_i2t``, ``local_t2i``.
    """
    from dataclasses import replace

    from temporal_xmodal.evaluation import embed_split, local_alignment
    from temporal_xmodal.evaluation.report import time_window_figures
    from temporal_xmodal.metrics import cross_modal_scores

    split = replace(embed_split(estimator, X, y), time=np.asarray(time, dtype=float))
    Zi, Zt = split.Z_image, split.Z_text
    out = {"map": cross_modal_scores(Zi, Zt, y, metrics=("map",))["map"],
           **time_window_figures(Zi, Zt, y, split.time, window)}
    local = local_alignment(None, split, bins=10, random_state=0)
    out.update(local_map10=local["mean"], local_i2t=local["i2t"], local_t2i=local["t2i"])
    return out


def write_results(name, payload, output_dir):
    """Write ``payload`` plus machine info to ``<output_dir>/<name>.json``; return the path."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    document = {
        "benchmark": name,
        "command": [Path(sys.argv[0]).name, *sys.argv[1:]],
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine_info(),
        **payload,
    }
    path = output_dir / f"{name}.json"
    path.write_text(json.dumps(document, indent=2, allow_nan=True) + "\n")
    print(f"\nResults written to {path}")
    return path


def settings_line(doc):
    """How a result was produced, for docs/results.md: the command, its date, the cores and
    torch's version."""
    import shlex

    machine = doc.get("machine", {})
    command = shlex.join(["python", f"benchmarks/{doc['command'][0]}", *doc["command"][1:]])
    return (f"`{command}` ({doc.get('date', 'undated')}, {machine.get('cpu_count', '?')} CPU "
            f"cores, torch {machine.get('versions', {}).get('torch', '?')})")
