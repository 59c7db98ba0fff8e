"""Adversarial probe: bad input against the six estimators and the metrics, as a JSON report.

The cases and their classification are ``tests/_bad_input.py`` (run as a test by
``tests/test_bad_input.py``, where every case must end ``clear`` or ``sane``).  This script
runs the same cases outside pytest, prints the counts of each outcome (and every case that
is not clear or sane) and writes ``benchmarks/results/probe_bad_input.json``.

The round 3 cases (issue 32's families 1-9 and issue 35's items 3-5: duration and rate
strings, interrupts, metric lengths, search ids, the default layout, whole rows to
``transform_text``) and issue 41's (``tests/_bad_input_issue41.py``: ``pipe[-1]`` given
arrays, a one-row validation split, bools as counts, ``pd.NaT``, rows as an array through a
Pipeline, a huge ``intra_balance``, a share too small to represent, staged batches on a
missing GPU, the StillImprovingWarning text, the date prior's defaults, the paper settings)
are also counted per family, with the part of the library each waits on (``OWNERS``), so
that a family still being fixed elsewhere shows apart.  So are issue 48's
(``tests/_bad_input_issue48.py``, families ``48.1``-``48.12``: dates outside
``datetime64[ns]``, checkpoint figures that cannot rank, the date prior's held-out pairs and
Ctrl-C, captions and their times, compiled fits in a search, ``search_embeddings``' device,
subpackages after a bare import, a ``"+5%"`` share, the meta device), which can also end
``misleading`` (an answer whose words are wrong).

Every case imports the library inside itself, so ``--issue48`` runs against an older tree
too (``PYTHONPATH=/path/to/old/tree python benchmarks/probe_bad_input.py --issue48``): the
tallies before and after a fix.

Run::

    python benchmarks/probe_bad_input.py [--quick]    # --quick: three estimators
    python benchmarks/probe_bad_input.py --round3     # the round 3 cases only (a minute)
    python benchmarks/probe_bad_input.py --issue41    # issue 41's cases only (a minute)
    python benchmarks/probe_bad_input.py --issue48    # issue 48's cases only (a minute)
    python benchmarks/probe_bad_input.py --issue57    # issue 57's cases only (a minute)
"""

import sys
import time
from collections import Counter
from pathlib import Path

from _common import make_parser, write_results

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _bad_input import (OWNERS, Case, Misleading, Wrong, all_cases,  # noqa: E402
                        classify, issue41_cases, issue48_cases, issue57_cases, round3_cases)
from _bad_input_issue41 import ISSUE41_OWNERS  # noqa: E402
from _bad_input_issue48 import ISSUE48_OWNERS  # noqa: E402
from _bad_input_issue57 import ISSUE57_OWNERS  # noqa: E402

#: The outcomes, in the order they are counted; the last four fail a case.
OUTCOMES = ("clear", "sane", "silent", "misleading", "obscure", "hang")
BAD = ("silent", "misleading", "obscure", "hang")

QUICK = ["CCACrossModal", "SAMEmbedder", "DiachronicEmbedder"]


def main(argv=None):
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--round3", action="store_true",
                        help="run only the round 3 cases (issues 32 and 35)")
    parser.add_argument("--issue41", action="store_true",
                        help="run only issue 41's cases (nothing silent, round 4)")
    parser.add_argument("--issue48", action="store_true",
                        help="run only issue 48's cases (nothing lost, nothing silent, round 5)")
    parser.add_argument("--issue57", action="store_true",
                        help="run only issue 57's cases (nothing lost, nothing silent, round 6)")
    parser.add_argument("--name", default=None,
                        help="the JSON's name (default: by the cases run), e.g. to keep the "
                             "tallies of an older tree apart")
    args = parser.parse_args(argv)
    if args.round3:
        cases = [("round 3", case) for case in round3_cases()]
    elif args.issue41:
        cases = [("issue 41", case) for case in issue41_cases(Case, Wrong)]
    elif args.issue48:
        cases = [("issue 48", case) for case in issue48_cases(Case, Wrong, Misleading)]
    elif args.issue57:
        cases = [("issue 57", case) for case in issue57_cases(Case, Wrong, Misleading)]
    else:
        cases = all_cases(QUICK) if args.quick else all_cases()
    rows = []
    start = time.perf_counter()
    for owner, case in cases:
        outcome, detail, due = classify(case, owner)
        family = getattr(case, "family", None)
        rows.append({"estimator": owner, "case": case.name, "due": due,
                     "outcome": outcome, "detail": detail, "family": family,
                     "waits_on": OWNERS.get(family) if family is not None else None})
    counts = Counter(r["outcome"] for r in rows)
    print(f"{len(rows)} cases in {time.perf_counter() - start:.0f} s: "
          + ", ".join(f"{k} {counts.get(k, 0)}" for k in OUTCOMES))
    for r in rows:
        if r["outcome"] in BAD:
            print(f"  {r['outcome']:8s} {r['estimator']:12s} {r['case']:45s} {r['detail'][:160]}")
    families = {}
    for r in rows:
        if r["family"] is not None:
            families.setdefault(str(r["family"]), Counter())[r["outcome"]] += 1
    if families:
        print("per family (round 3: issue 32 numbering, 35.x issue 35's items; issue 41 by "
              "name; 48.x issue 48's families):")
        for family, counter in families.items():
            bad = sum(counter[k] for k in BAD)
            owner = OWNERS.get(int(family) if family.isdigit() else family)
            print(f"  {family:18s} {owner:26s} " + ", ".join(
                f"{k} {v}" for k, v in sorted(counter.items())) + ("" if not bad else
                                                                   "  <- not fixed yet"))
    per_estimator = {}
    for r in rows:
        per_estimator.setdefault(r["estimator"], Counter())[r["outcome"]] += 1
    payload = {"n_cases": len(rows), "counts": dict(counts),
               "per_estimator": {k: dict(v) for k, v in per_estimator.items()},
               "quick": bool(args.quick), "round3_only": bool(args.round3),
               "issue41_only": bool(args.issue41), "issue48_only": bool(args.issue48),
               "issue57_only": bool(args.issue57),
               "per_family": {k: dict(v) for k, v in families.items()},
               "round3_per_family": {k: dict(v) for k, v in families.items()
                                     if k not in ISSUE41_OWNERS and k not in ISSUE48_OWNERS
                                     and k not in ISSUE57_OWNERS},
               "cases": rows}
    name = args.name or ("probe_bad_input_round3" if args.round3 else
                         "probe_bad_input_issue41" if args.issue41 else
                         "probe_bad_input_issue48" if args.issue48 else
                         "probe_bad_input_issue57" if args.issue57 else "probe_bad_input")
    write_results(name, payload, args.output_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
