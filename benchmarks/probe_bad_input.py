"""Adversarial probe: bad input against the six estimators and the metrics, as a JSON report.

The cases and their classification are ``tests/_bad_input.py`` (run as a test by
``tests/test_bad_input.py``, where every case must end ``clear`` or ``sane``).  This script
runs the same cases outside pytest, prints the counts of each outcome (and every case that
is not clear or sane) and writes ``benchmarks/results/probe_bad_input.json``.

Run::

    python benchmarks/probe_bad_input.py [--quick]    # --quick: three estimators
"""

import sys
import time
from collections import Counter
from pathlib import Path

from _common import make_parser, write_results

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _bad_input import all_cases, classify  # noqa: E402

QUICK = ["CCACrossModal", "SAMEmbedder", "DiachronicEmbedder"]


def main(argv=None):
    parser = make_parser(__doc__.splitlines()[0])
    args = parser.parse_args(argv)
    cases = all_cases(QUICK) if args.quick else all_cases()
    rows = []
    start = time.perf_counter()
    for owner, case in cases:
        outcome, detail, due = classify(case, owner)
        rows.append({"estimator": owner, "case": case.name, "due": due,
                     "outcome": outcome, "detail": detail})
    counts = Counter(r["outcome"] for r in rows)
    print(f"{len(rows)} cases in {time.perf_counter() - start:.0f} s: "
          + ", ".join(f"{k} {counts.get(k, 0)}" for k in
                      ("clear", "sane", "silent", "obscure", "hang")))
    for r in rows:
        if r["outcome"] in ("silent", "obscure", "hang"):
            print(f"  {r['outcome']:8s} {r['estimator']:25s} {r['case']:28s} {r['detail'][:200]}")
    per_estimator = {}
    for r in rows:
        per_estimator.setdefault(r["estimator"], Counter())[r["outcome"]] += 1
    payload = {"n_cases": len(rows), "counts": dict(counts),
               "per_estimator": {k: dict(v) for k, v in per_estimator.items()},
               "quick": bool(args.quick), "cases": rows}
    write_results("probe_bad_input", payload, args.output_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
