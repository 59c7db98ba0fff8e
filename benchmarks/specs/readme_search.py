"""The README's grid search, run as printed: does time pay beyond the date filter?

Runs the README's data snippet and its ``GridSearchCV`` over ``DiachronicEmbedder``'s
``use_time`` (wording drift world, scored on category mAP and filtered t-mAP@50) at 3,000
items and the default 25 epochs (the README prints 600 items and 3 epochs).  Targets: the
model beats its control by at least 0.03 category mAP and 0.02 filtered t-mAP@50, and the
search keeps it.  Full run: about 2 min on 2 cores.
"""

import re
import time
import warnings
from pathlib import Path

from _common import target

README = Path(__file__).resolve().parents[2] / "README.md"


def snippets(items, epochs):
    """The README's data snippet and grid-search snippet, at ``items`` and ``epochs``."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    search = next(b for b in blocks if "GridSearchCV(DiachronicEmbedder" in b)
    data = "\n".join(line for line in blocks[0].splitlines()
                     if line.startswith(("from ", "X, y, info", "d = ")))
    for size in ("3000", "1000", "600"):
        data = data.replace(f"make_temporal_crossmodal({size}", f"make_temporal_crossmodal({items}")
        search = search.replace(f"make_temporal_crossmodal({size}",
                                f"make_temporal_crossmodal({items}")
    return data, re.sub(r"max_epochs=\d+", f"max_epochs={epochs}", search)


def measure(args):
    from sklearn.exceptions import ConvergenceWarning

    data, search = snippets(*(("400", "2") if args.quick else ("3000", "25")))
    namespace = {}
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(data, namespace)  # noqa: S102 - the README's own code
        exec(search, namespace)  # noqa: S102
    seconds = time.perf_counter() - start
    results = namespace["search"].cv_results_
    rows = list(zip(results["params"], results["mean_test_map"],
                    results["mean_test_tmap@50|filter"]))
    by_use = {p["use_time"]: (m, f) for p, m, f in rows}
    gain_map = float(by_use[True][0] - by_use[False][0])
    gain_filtered = float(by_use[True][1] - by_use[False][1])
    best = namespace["search"].best_params_
    print(f"use_time=True - False: mAP {gain_map:+.4f}, t-mAP@50 + filter {gain_filtered:+.4f}; "
          f"best {best}; {seconds:.0f} s")
    return {"snippet": search, "seconds": seconds,
            "candidates": [{"params": {k: str(v) for k, v in p.items()}, "map": float(m),
                            "tmap50_filter": float(f)} for p, m, f in rows],
            "gain_map": gain_map, "gain_tmap50_filter": gain_filtered,
            "still_improving_fits": sum(issubclass(w.category, ConvergenceWarning)
                                        for w in caught),
            "targets": {
                "map_gain": target(gain_map, 0.03, ">=",
                                   "README grid search: category mAP, model - control"),
                "filtered_gain": target(gain_filtered, 0.02, ">=", "README grid search: "
                                        "t-mAP@50 + filter, model - control"),
                "keeps_time": target(float(best["use_time"]), 1.0, ">=",
                                     "README grid search: the search keeps use_time=True")}}
