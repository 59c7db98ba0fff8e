"""Grid search over DiachronicEmbedder's window, decay and margins, on two worlds (issue 56).

Runs the search of ``examples/grid_search_temporal.py`` (imported, not copied: what the
example prints at its default sizes is what this file writes) and records it:

* a ``GridSearchCV`` on ``DiachronicEmbedder`` with a **list of grids**,
  ``[{"decay": [0], "margin": [0.5, 1.0]}, {"decay": ["5%", "20%"], "window": ["2%",
  "10%"], "intra_margin": [0.3, 1.0], "margin": [0.5, 1.0]}]`` (at ``decay=0``, the
  default, L_intra is off and ``window`` / ``intra_margin`` do nothing, so the first grid
  does not search them: 18 candidates, none a repeat), scored on ``SCORERS["map"]`` (category
  mAP, ``refit``) and ``SCORERS["tmap@50|filter"]`` (time-window mAP@50 with date-filtered
  candidates), 3-fold CV on 2,250 of 3,000 items, the other 750 held out for the refitted
  model;
* on two worlds of ``TEMPORAL_WORLDS``: ``content drift`` (each category's content turns
  with time in both modalities: items of one category far apart in time differ, so L_intra
  has something to act on) and ``static`` (time says nothing: it has not);
* Diachronic smaller than its defaults (hidden 256, time layer 64, embedding 64; its other
  parameters, 25 epochs included, at their defaults) so that the 108 fits (and a refit per
  world) run in minutes on 2 CPU cores.

The JSON (``benchmarks/results/bench_grid_search.json``) holds, besides the command, the
commit (``git rev-parse --short HEAD``, and whether the work tree had uncommitted changes)
and the machine: ``grids``, ``scorers``, and under ``results.<world>`` (``content_drift``,
``static``) each candidate's params and mean / std / rank per scorer (``candidates[i].map``,
``candidates[i].tmap50_filter``), ``best`` per scorer, ``defaults`` (``decay=0``,
``margin=1.0``), ``intra_off`` / ``intra_on`` (best per scorer within each grid and the spread
of its means), ``held_out`` (the refitted best on the held-out rows) and ``seconds`` (the
search's wall time); ``seconds`` at the top is the whole run's.

Besides, ``pipeline_bins``: the search of docs/pipelines.md, "Grid search over durations"
(``BinnedProcrustesEmbedder``'s bin width as a duration, through a Pipeline fed a DataFrame
with real dates, 600 items of the demo world, 3 folds, the same two scorers), whose figures
that page quotes.

Run::

    python benchmarks/bench_grid_search.py             # the committed JSON
    python benchmarks/bench_grid_search.py --quick     # the example's --fast sizes, seconds
"""

import subprocess
import sys
import time
import warnings
from pathlib import Path

from _common import make_parser, print_header, write_results

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
import grid_search_temporal as example  # noqa: E402 - the example's search, not a copy

#: docs/pipelines.md's duration grid (bin widths) and its data size.
BIN_WIDTHS = ["10Y", "5Y", "3Y", "2Y"]
PIPELINE_ITEMS = 600


def _git(*args):
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def pipeline_bins(quick=False):
    """docs/pipelines.md's duration search: mean / std of both scorers per bin width."""
    import pandas as pd
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from temporal_xmodal import (BinnedProcrustesEmbedder, CCACrossModal,
                                 make_crossmodal_transformer)
    from temporal_xmodal.comparison.data import DEMO_WORLD
    from temporal_xmodal.datasets import make_temporal_crossmodal

    n = 300 if quick else PIPELINE_ITEMS
    X, y, info = make_temporal_crossmodal(n, return_info=True, random_state=0, **DEMO_WORLD)
    d = info.n_image_features
    df = pd.DataFrame(X[:, :-1], columns=[f"img_{i}" for i in range(d)]
                      + [f"txt_{i}" for i in range(X.shape[1] - 1 - d)])
    df["date"] = pd.Timestamp("1880-01-01") + pd.to_timedelta(X[:, -1] * 365.25, unit="D")
    pipe = make_pipeline(
        make_crossmodal_transformer("img_", "txt_", "date", image_transformer=StandardScaler(),
                                    text_transformer=StandardScaler()),
        BinnedProcrustesEmbedder(CCACrossModal(embedding_dim=16), min_bin_size=30,
                                 n_image_features="auto", random_state=0))
    search = GridSearchCV(pipe, {"binnedprocrustesembedder__bins": BIN_WIDTHS},
                          scoring=example.SCORING, refit=example.REFIT,
                          cv=KFold(3, shuffle=True, random_state=0))
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(df, y)
    seconds = time.perf_counter() - start
    results = search.cv_results_
    out = {"n_samples": n, "cv": 3, "bins": BIN_WIDTHS, "seconds": seconds}
    for s, key in example.KEYS.items():
        out[key] = {width: {"mean": float(m), "std": float(v)} for width, m, v in
                    zip(BIN_WIDTHS, results[f"mean_test_{s}"], results[f"std_test_{s}"])}
        out[f"best_{key}"] = BIN_WIDTHS[int(results[f"mean_test_{s}"].argmax())]
    print_header(f"docs/pipelines.md: Binned bin widths through a Pipeline ({n} items)")
    for width in BIN_WIDTHS:
        print(f"  bins={width:>3}: map {out['map'][width]['mean']:.3f} ± "
              f"{out['map'][width]['std']:.3f}, tmap@50|filter "
              f"{out['tmap50_filter'][width]['mean']:.3f} ± "
              f"{out['tmap50_filter'][width]['std']:.3f}")
    return out


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--fast", dest="quick", action="store_true",
                        help="the same as --quick (the example's name for it)")
    parser.add_argument("--n-jobs", type=int, default=2, help="parallel fits (default 2)")
    args = parser.parse_args()
    start = time.perf_counter()
    results = example.run(fast=args.quick, n_jobs=args.n_jobs, threads=1)
    bins = pipeline_bins(args.quick)
    seconds = time.perf_counter() - start
    print(f"\nwhole run: {seconds:.0f} s")
    status = _git("status", "--porcelain", "--untracked-files=no")
    write_results("bench_grid_search", {
        "quick": args.quick,
        "commit": _git("rev-parse", "--short", "HEAD"),
        "worktree_clean": None if status is None else not status,
        "n_jobs": args.n_jobs,
        "grids": example.FAST_GRIDS if args.quick else example.GRIDS,
        "scorers": {key: f'SCORERS["{s}"]' for s, key in example.KEYS.items()},
        "refit": example.REFIT,
        "seconds": seconds,
        "results": results,
        "pipeline_bins": bins,
    }, args.output_dir)


if __name__ == "__main__":
    main()
