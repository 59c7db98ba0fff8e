"""The README's grid search, run as written: does it move its score?

The README searches ``DiachronicEmbedder``'s ``window`` and ``decay`` at their defaults'
scale (shares of the training span), with L_intra off (``decay="0/Y"``) as one candidate, with
the time-window scorer (``SCORERS["tmap@50"]``) on the ``steady`` world, where only the date
separates two items of one category.  This script runs the README's first snippet (the data)
and its grid-search snippet exactly as they are printed there, then reports the spread of the
time-aware score between the best and the worst candidate, and category mAP beside it
(targets, issue "DCM's temporal term pays at defaults": a spread of at least 0.05, and the
best candidate has L_intra on).

Run::

    python benchmarks/bench_readme_search.py      # ~3 min on 2 CPU cores
"""

import re
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from _common import make_parser, print_header, print_targets, target, write_results

README = Path(__file__).resolve().parents[1] / "README.md"


def snippets():
    """The README's data snippet (the first Python block) and its grid-search snippet."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    search = next(b for b in blocks if "GridSearchCV(DiachronicEmbedder" in b)
    data = "\n".join(line for line in blocks[0].splitlines()
                     if line.startswith(("from ", "X, y, info", "d = ")))
    return data, search


def main():
    parser = make_parser(__doc__)
    args = parser.parse_args()
    data, search = snippets()
    if args.quick:  # a smoke run: fewer items and epochs, the same grid
        data = data.replace("make_temporal_crossmodal(3000", "make_temporal_crossmodal(400")
        search = search.replace("make_temporal_crossmodal(3000", "make_temporal_crossmodal(400")
        search = search.replace("max_epochs=60", "max_epochs=2")
    namespace = {}
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(data, namespace)  # noqa: S102 - the README's own code
        exec(search, namespace)  # noqa: S102
    seconds = time.perf_counter() - start
    still = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    print(f"  {still} of the search's fits warned that they were still improving")
    results = namespace["search"].cv_results_
    tmap, cat = results["mean_test_tmap@50"], results["mean_test_map"]
    print_header("The README's grid search (3-fold CV)")
    for params, t, m in zip(results["params"], tmap, cat):
        print(f"  {params}: t-mAP@50 {t:.4f}  mAP {m:.4f}")
    spread = float(np.max(tmap) - np.min(tmap))
    print(f"  spread of t-mAP@50 (best - worst candidate): {spread:.4f}; searched in "
          f"{seconds:.0f} s")
    best = results["params"][int(np.argmax(tmap))]
    intra_on = str(best.get("decay", "")).strip() not in ("0/Y", "0", "0.0")
    print(f"  best candidate: {best} (L_intra {'on' if intra_on else 'off'})")
    targets = {"spread": target(spread, 0.05, ">=",
                                "README grid search: best - worst candidate, t-mAP@50"),
               "best_has_intra": target(float(intra_on), 1.0, ">=",
                                        "README grid search: the best candidate has L_intra "
                                        "on (1) or off (0)"),
               "quiet": target(still, 1, "<", "README grid search: fits still improving "
                               "(a StillImprovingWarning each)")}
    print_targets(targets)
    write_results("bench_readme_search", {
        "quick": args.quick, "snippet": search, "seconds": seconds,
        "candidates": [{"params": {k: str(v) for k, v in p.items()}, "tmap50": float(t),
                        "map": float(m)} for p, t, m in zip(results["params"], tmap, cat)],
        "spread_tmap50": spread, "still_improving_fits": still, "targets": targets},
        args.output_dir)


if __name__ == "__main__":
    main()
