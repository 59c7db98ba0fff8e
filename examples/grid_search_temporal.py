"""Tuning ``DiachronicEmbedder``'s window, decay and margins with ``GridSearchCV``.

The estimators are ordinary scikit-learn estimators, so model selection is the usual
``GridSearchCV``.  Diachronic's time knobs act through its same-category term L_intra,
which is **off by default** (``decay=0``): at ``decay=0`` neither ``window`` nor
``intra_margin`` changes a single weight of the loss, and a grid over them repeats the same
fit (the estimator warns that L_intra is off; docs/estimators/diachronic.md, "Which knobs
matter").  So the search takes a **list of
grids**: one with L_intra off, where only the margin of L_inter (``margin``) is searched, and
one with L_intra on, where ``decay`` (the half-life of its weight ρ, a share of the training
span), ``window`` (same-category items closer than this are left alone) and ``intra_margin``
are searched as well::

    [{"decay": [0], "margin": [0.5, 1.0]},
     {"decay": ["5%", "20%"], "window": ["2%", "10%"], "intra_margin": [0.3, 1.0],
      "margin": [0.5, 1.0]}]

Every candidate is scored on the two figures the docs recommend (docs/metrics.md):
``SCORERS["map"]``, category mAP over every item at its own time (the question no date
filter answers), which decides (``refit="map"``), and ``SCORERS["tmap@50|filter"]``,
time-window mAP@50 with each query's candidates restricted to the window (what a user
holding the dates gets from any model; the unfiltered ``"tmap@50"`` is not used: a date
filter gives it to every model).  ``cv_results_`` is printed as a table, the best candidate
by each scorer is named, and the refitted best model is scored on held-out rows.

It runs on two synthetic worlds (``temporal_xmodal.datasets.TEMPORAL_WORLDS``):

* ``content drift``: each category's content turns half a turn over the time range, in
  pictures and captions alike, so a category's late items look unlike its early ones.  Items
  of one category far apart in time really differ, the time-window question (same category,
  close in time) is not the category question, and the content itself carries the date:
  the world where L_intra, which pushes an item's same-category partners far from it in
  time below its own counterpart, has something to act on;
* ``static``: one era, no drift, no event offsets: time says nothing about what an item
  looks like or how pictures and captions relate, so L_intra has nothing to act on.

The networks are smaller than the defaults (hidden 256, time layer 64, embedding 64, against
1024 / 200 / 200; the default 25 epochs) so that the 18 candidates × 3 folds × 2 worlds
run in minutes on 2 CPU cores; a fit may still be improving when training stops (the
``ConvergenceWarning``, ``StillImprovingWarning``, is silenced here; a real fit should heed
it).
``benchmarks/run.py grid_search`` runs this script's search and writes what it prints to
``benchmarks/results/bench_grid_search.json`` (with its wall time).

Run from the repository root::

    python examples/grid_search_temporal.py            # both worlds, the benchmark's sizes
    python examples/grid_search_temporal.py --fast     # tiny sizes and grids, seconds
    python examples/grid_search_temporal.py --world static
"""

import argparse
import time
import warnings

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold, ParameterGrid, train_test_split
from threadpoolctl import threadpool_limits

from temporal_xmodal import DiachronicEmbedder, TimeRangeWarning
from temporal_xmodal.datasets import TEMPORAL_WORLDS, make_temporal_crossmodal
from temporal_xmodal.scoring import SCORERS

#: The list of grids: L_intra off (``decay=0``: ``window`` and ``intra_margin`` do nothing,
#: so they are not searched), then L_intra on.  Shares (``"5%"``) are of the training span.
GRIDS = [
    {"decay": [0], "margin": [0.5, 1.0]},
    {"decay": ["5%", "20%"], "window": ["2%", "10%"], "intra_margin": [0.3, 1.0],
     "margin": [0.5, 1.0]},
]
#: ``--fast``: the same two kinds of grid, smaller.
FAST_GRIDS = [
    {"decay": [0], "margin": [1.0]},
    {"decay": ["5%"], "window": ["2%", "10%"], "intra_margin": [0.3], "margin": [1.0]},
]
#: The two recommended scorers; ``"map"`` decides (``refit``).
SCORING = {"map": SCORERS["map"], "tmap@50|filter": SCORERS["tmap@50|filter"]}
REFIT = "map"
#: Their keys in the summary (and the benchmark's JSON).
KEYS = {"map": "map", "tmap@50|filter": "tmap50_filter"}
#: Key of the summary -> the world's name in ``TEMPORAL_WORLDS``.
WORLDS = {"content_drift": "content drift", "static": "static"}
#: Sizes: items (a quarter held out), CV folds, and the network.
SIZES = {
    "full": {"n_samples": 3000, "cv": 3,
             "estimator": dict(hidden_dim=256, time_dim=64, embedding_dim=64, max_epochs=25)},
    "fast": {"n_samples": 400, "cv": 2,
             "estimator": dict(hidden_dim=32, time_dim=8, embedding_dim=16, max_epochs=2)},
}
#: The searched parameters, in the table's order.
PARAMS = ("decay", "window", "intra_margin", "margin")


def print_cv_table(search):
    """``cv_results_`` as a fixed-width table, best candidate (by the refit scorer) first.

    One row per candidate: its rank, the searched parameters (``-`` where the candidate's
    grid does not search one: at ``decay=0`` ``window`` and ``intra_margin`` do nothing),
    mean ± std of each scorer over the folds, and the mean fit time of one fold.
    """
    results = search.cv_results_
    widths = {n: max(len(n), 6) for n in PARAMS}
    header = (f"{'rank':>4}  " + "  ".join(f"{n:>{widths[n]}}" for n in PARAMS) + "  "
              + "  ".join(f"{s:>15}" for s in SCORING) + f"  {'fit [s]':>7}")
    print(header)
    print("-" * len(header))
    rank = results[f"rank_test_{search.refit}"]
    for i in sorted(range(len(rank)), key=lambda i: (rank[i], i)):
        params = results["params"][i]
        cells = [f"{params[n]!s:>{widths[n]}}" if n in params else f"{'-':>{widths[n]}}"
                 for n in PARAMS]
        cells += [f"{results[f'mean_test_{s}'][i]:>7.3f} ± {results[f'std_test_{s}'][i]:.3f}"
                  for s in SCORING]
        print(f"{rank[i]:>4}  " + "  ".join(cells) + f"  {results['mean_fit_time'][i]:>7.1f}")


def _figures(results, i):
    """Mean test score of candidate ``i`` under each scorer, by the summary's keys."""
    return {KEYS[s]: float(results[f"mean_test_{s}"][i]) for s in SCORING}


def _best_of(results, indices):
    """The best candidate among ``indices`` by each scorer: its params and both figures."""
    out = {}
    for s in SCORING:
        means = results[f"mean_test_{s}"]
        i = max(indices, key=lambda j: (means[j], -j))  # ties: the first listed
        out[KEYS[s]] = {"index": int(i), "params": dict(results["params"][i]),
                        **_figures(results, i)}
    return out


def summarise(search, held_out, seconds):
    """What the search found, as plain data (the benchmark writes it as JSON).

    ``candidates``: each candidate's params, mean and std of each scorer over the folds, its
    rank by each, its mean fit time; ``best``: the best candidate by each scorer;
    ``defaults``: the candidate at Diachronic's defaults of the searched knobs (``decay=0``,
    ``margin=1.0``); ``intra_off`` / ``intra_on``: the best candidate of each grid by each
    scorer and the spread (max − min) of each scorer's means within it; ``held_out``: the
    refitted best model (by ``refit``) on the held-out rows.
    """
    results = search.cv_results_
    n = len(results["params"])
    candidates = []
    for i in range(n):
        entry = {"params": dict(results["params"][i])}
        for s in SCORING:
            entry[KEYS[s]] = {"mean": float(results[f"mean_test_{s}"][i]),
                              "std": float(results[f"std_test_{s}"][i]),
                              "rank": int(results[f"rank_test_{s}"][i])}
        entry["fit_seconds"] = float(results["mean_fit_time"][i])
        candidates.append(entry)
    groups = {"intra_off": [i for i in range(n) if results["params"][i]["decay"] == 0],
              "intra_on": [i for i in range(n) if results["params"][i]["decay"] != 0]}
    summary = {"candidates": candidates, "best": _best_of(results, range(n))}
    defaults = next((i for i in groups["intra_off"]
                     if results["params"][i].get("margin") == 1.0), None)
    if defaults is not None:
        summary["defaults"] = {"index": defaults, "params": dict(results["params"][defaults]),
                               **_figures(results, defaults)}
    for name, indices in groups.items():
        summary[name] = {**_best_of(results, indices),
                         "spread": {KEYS[s]: float(np.ptp(results[f"mean_test_{s}"][indices]))
                                    for s in SCORING}}
    summary["spread"] = {KEYS[s]: float(np.ptp(results[f"mean_test_{s}"])) for s in SCORING}
    summary["held_out"] = {"params": dict(search.best_params_),
                           **{KEYS[s]: float(SCORING[s](search.best_estimator_, *held_out))
                              for s in SCORING}}
    summary["seconds"] = seconds
    return summary


def search_world(key, *, fast=False, n_jobs=2, random_state=0):
    """Run the list-of-grids search on one world; print its table and findings; return
    :func:`summarise`'s summary (with the world, the grids and the sizes)."""
    world, size = WORLDS[key], SIZES["fast" if fast else "full"]
    grids = FAST_GRIDS if fast else GRIDS
    X, y, info = make_temporal_crossmodal(size["n_samples"], return_info=True,
                                          random_state=random_state, **TEMPORAL_WORLDS[world])
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, stratify=y,
                                                        random_state=random_state)
    estimator = DiachronicEmbedder(n_image_features=info.n_image_features,
                                   random_state=random_state, **size["estimator"])
    search = GridSearchCV(estimator, grids, scoring=SCORING, refit=REFIT,
                          cv=KFold(size["cv"], shuffle=True, random_state=random_state),
                          n_jobs=n_jobs, error_score="raise")
    n_candidates = len(ParameterGrid(grids))
    print(f"\n== {world} ({key}): {len(X_train)} training rows, {len(X_test)} held out; "
          f"{n_candidates} candidates x {size['cv']} folds, n_jobs={n_jobs} ==")
    start = time.perf_counter()
    search.fit(X_train, y_train)
    summary = summarise(search, (X_test, y_test), time.perf_counter() - start)
    print(f"searched in {summary['seconds']:.0f} s\n")
    print_cv_table(search)
    print()
    for s in SCORING:
        best = summary["best"][KEYS[s]]
        print(f"best by {s}: {best['params']}  map {best['map']:.3f}, "
              f"tmap@50|filter {best['tmap50_filter']:.3f}")
    on, off = summary["intra_on"], summary["intra_off"]
    for s in SCORING:
        k = KEYS[s]
        print(f"{s}: best with L_intra on {on[k][k]:.3f}, off {off[k][k]:.3f} "
              f"({on[k][k] - off[k][k]:+.3f}); spread among the L_intra-on candidates "
              f"{on['spread'][k]:.3f}, among the L_intra-off ones {off['spread'][k]:.3f}")
    held = summary["held_out"]
    print(f"refitted on {REFIT} {held['params']}; held-out map {held['map']:.3f}, "
          f"tmap@50|filter {held['tmap50_filter']:.3f}")
    return {"world": world, "world_params": dict(TEMPORAL_WORLDS[world]), "grids": grids,
            "n_samples": size["n_samples"], "n_train": len(X_train), "n_held_out": len(X_test),
            "cv": size["cv"], "estimator": {"random_state": random_state, **size["estimator"]},
            **summary}


def run(worlds=tuple(WORLDS), *, fast=False, n_jobs=2, threads=1):
    """The searches of ``worlds`` (keys of :data:`WORLDS`): ``{key: summary}``.

    Sets this process's BLAS and torch threads to ``threads`` (scikit-learn's joblib
    workers get cores // ``n_jobs`` each) and silences the warnings a small search raises
    by design (see the module's docstring).
    """
    threadpool_limits(threads)
    torch.set_num_threads(threads)
    # Validation folds reach a little outside the training folds' time range; the
    # time-conditioned model extrapolates there.  (scikit-learn passes warning filters on
    # to its joblib workers.)
    warnings.simplefilter("ignore", TimeRangeWarning)
    # A fit may still be improving when training stops (see the docstring).
    warnings.simplefilter("ignore", ConvergenceWarning)
    return {key: search_world(key, fast=fast, n_jobs=n_jobs) for key in worlds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fast", action="store_true", help="tiny sizes and grids, seconds")
    parser.add_argument("--world", choices=[*WORLDS, "both"], default="both",
                        help="which world to search (default: both)")
    parser.add_argument("--n-jobs", type=int, default=2, help="parallel fits (default 2)")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS and torch threads of this process (default 1)")
    args = parser.parse_args()
    worlds = tuple(WORLDS) if args.world == "both" else (args.world,)
    run(worlds, fast=args.fast, n_jobs=args.n_jobs, threads=args.threads)


if __name__ == "__main__":
    main()
