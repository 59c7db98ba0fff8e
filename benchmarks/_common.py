"""Helpers shared by the benchmark scripts: command line, machine info, timing, output.

Not a benchmark itself.  The scripts in this folder import it as a sibling
module (``python benchmarks/bench_*.py`` puts this folder on ``sys.path``).
"""

import argparse
import json
import os
import platform
import sys
import time
from importlib import metadata
from pathlib import Path

#: Default folder of the JSON results.
RESULTS_DIR = Path(__file__).resolve().parent / "results"

_PACKAGES = ("numpy", "scipy", "scikit-learn", "torch", "temporal-xmodal")


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
