"""Grid search over DiachronicEmbedder's window, decay and margins, on two worlds.

Runs the search of ``examples/grid_search_temporal.py`` (imported, not copied): a list of
grids (``decay=0`` with two margins; ``decay`` x ``window`` x ``intra_margin`` x ``margin``:
18 candidates), scored on ``SCORERS["map"]`` (refit) and ``SCORERS["tmap@50|filter"]``,
3-fold CV on 2,250 of 3,000 items of ``content drift`` and ``static``, the other 750 held
out for the refitted best; a smaller Diachronic than the defaults (hidden 256, time 64, D
64).  Besides, ``pipeline_bins``: docs/pipelines.md's search of Binned's bin width as a
duration through a Pipeline fed a DataFrame with real dates (600 demo items, 3 folds).
The JSON records the commit.  Read more in docs/pipelines.md.  Full run: about 3 min on
2 cores (``--n-jobs`` defaults to 2 here).
"""

import subprocess
import sys
import time
from pathlib import Path

from _common import timed_fit

N_JOBS = 2
ROOT = Path(__file__).resolve().parents[2]
#: docs/pipelines.md's duration grid (bin widths) and its data size.
BIN_WIDTHS = ["10Y", "5Y", "3Y", "2Y"]


def _example():
    sys.path.insert(0, str(ROOT / "examples"))
    import grid_search_temporal

    return grid_search_temporal


def _git(*args):
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def pipeline_bins(example, quick=False):
    """docs/pipelines.md's duration search: mean / std of both scorers per bin width."""
    import pandas as pd
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from temporal_xmodal import (BinnedProcrustesEmbedder, CCACrossModal,
                                 make_crossmodal_transformer)
    from temporal_xmodal.comparison.settings import DEMO_WORLD
    from temporal_xmodal.datasets import make_temporal_crossmodal

    n = 300 if quick else 600
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
    out = {"n_samples": n, "cv": 3, "bins": BIN_WIDTHS, "seconds": timed_fit(search, df, y)}
    results = search.cv_results_
    for s, key in example.KEYS.items():
        out[key] = {width: {"mean": float(m), "std": float(v)} for width, m, v in
                    zip(BIN_WIDTHS, results[f"mean_test_{s}"], results[f"std_test_{s}"])}
        out[f"best_{key}"] = BIN_WIDTHS[int(results[f"mean_test_{s}"].argmax())]
    return out


def measure(args):
    example = _example()
    start = time.perf_counter()
    results = example.run(fast=args.quick, n_jobs=args.n_jobs, threads=1)
    bins = pipeline_bins(example, args.quick)
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"commit": _git("rev-parse", "--short", "HEAD"),
            "worktree_clean": None if status is None else not status, "n_jobs": args.n_jobs,
            "grids": example.FAST_GRIDS if args.quick else example.GRIDS,
            "scorers": {key: f'SCORERS["{s}"]' for s, key in example.KEYS.items()},
            "refit": example.REFIT, "seconds": time.perf_counter() - start,
            "results": results, "pipeline_bins": bins}
