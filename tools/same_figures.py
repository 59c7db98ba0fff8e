"""Compare two benchmark JSON files figure by figure, timings and metadata left out.

``python tools/same_figures.py COMMITTED.json RERUN.json [--ignore REGEX] [--rtol R]``
prints every path whose value differs (or exists on one side only) and exits 1 if any
does.  Left out by default: the metadata ``_common.write_results`` adds (command, date,
machine), and any key that names a duration, a rate, a speed ratio or a load (``TIMING``).
"""

import argparse
import json
import math
import re
import sys

#: Keys whose values are timings, rates or machine load: they differ between runs.
TIMING = (r"^(command|date|machine|timings|load_average|load_before|tree|merged)$|seconds|_s$|"
          r"wall|dur|_ms|ms_|per_fit|per_epoch|per_kilo|per_s|speedup|ratio|throughput|"
          r"fit_error|rss|^time|_time$|elapsed|cpu")


def differences(a, b, path="", ignore=re.compile(TIMING), rtol=0.0):
    """``[(path, a, b)]`` where ``a`` and ``b`` differ (keys matching ``ignore`` skipped)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in dict.fromkeys([*a, *b]):
            if ignore.search(str(key)):
                continue
            out += differences(a.get(key, "<absent>"), b.get(key, "<absent>"),
                               f"{path}.{key}", ignore, rtol)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b))
                for d in differences(x, y, f"{path}[{i}]", ignore, rtol)]
    if (isinstance(a, float) and isinstance(b, float)
            and (a == b or (math.isnan(a) and math.isnan(b))
                 or math.isclose(a, b, rel_tol=rtol, abs_tol=0.0))):
        return []
    return [] if a == b else [(path, a, b)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("committed")
    parser.add_argument("rerun")
    parser.add_argument("--ignore", action="append", default=[],
                        help="a regular expression of further keys to leave out")
    parser.add_argument("--rtol", type=float, default=0.0, help="relative tolerance (0)")
    args = parser.parse_args(argv)
    ignore = re.compile("|".join([TIMING, *args.ignore]))
    a, b = (json.load(open(p)) for p in (args.committed, args.rerun))
    found = differences(a, b, "", ignore, args.rtol)
    for path, x, y in found:
        print(f"{path}: {str(x)[:80]} != {str(y)[:80]}")
    print(f"{len(found)} difference(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
