"""Tuning the temporal knobs that matter with ``GridSearchCV`` and a time-aware scorer.

The estimators are ordinary scikit-learn estimators, so model selection is the
usual ``GridSearchCV``.  This script tunes the knobs that move the scores
(docs/estimators/diachronic.md, "Which knobs matter"):

1. ``BinnedProcrustesEmbedder``'s ``bins``: 1 bin is the static model, more bins
   follow meanings that move between eras but fit each bin's model on fewer rows.
   With the quick CCA per bin used here the data lost outweighs the time gained
   (the search picks 1 bin); with a neural per-bin model 3 bins beat 1 by 0.13
   time-window mAP@50 in the sensitivity study;
2. ``TempXNetEmbedder``'s ``temporal_weight`` (0 is its static control) and the
   ``bandwidth`` of its recency correlation.

(``DiachronicEmbedder``'s ``window`` and ``decay`` act through its same-category term; the
README's grid search tunes them at their defaults, shares of the training span; see the page.)

Every candidate is scored with several scorers of :mod:`temporal_xmodal.scoring`
at once (time-window mAP@50, plain mAP, MRR), refitted on the time-aware one, which
is the one that sees what time buys, and ``cv_results_`` is printed as a table with
the spread between the best and the worst candidate.  Folds are fitted in parallel
(``n_jobs``).  The data is the compare job's world (``DEMO_WORLD``: meanings move
between three eras, the writing style stays).

Run from the repository root::

    python examples/grid_search_temporal.py            # ~40 s on 2 CPU cores
    python examples/grid_search_temporal.py --fast     # a few seconds
"""

import argparse
import time
import warnings

import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold, ParameterGrid, train_test_split
from threadpoolctl import threadpool_limits

from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    TempXNetEmbedder,
    TimeRangeWarning,
)
from temporal_xmodal.comparison.data import DEMO_WORLD
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.scoring import SCORERS, make_retrieval_scorer

#: Relevance window of the time-aware scorer: 5 % of the synthetic time span (0..10).
TIME_WINDOW = 0.5


def print_cv_table(search):
    """``cv_results_`` as a fixed-width table, best candidate first.

    One row per candidate: its rank (by the refit scorer), the values of the
    searched parameters, mean ± std of every scorer over the folds, and the mean
    fit time of one fold.
    """
    results = search.cv_results_
    scorers = list(search.scorer_)  # the names given in scoring=
    names = sorted({key[len("param_"):] for key in results if key.startswith("param_")})
    widths = {n: max(len(n), 6) for n in names}
    header = (f"{'rank':>4}  " + "  ".join(f"{n:>{widths[n]}}" for n in names) + "  "
              + "  ".join(f"{s:>15}" for s in scorers) + f"  {'fit [s]':>7}")
    print(header)
    print("-" * len(header))
    rank = results[f"rank_test_{search.refit}"]
    for i in sorted(range(len(rank)), key=lambda i: rank[i]):
        params = results["params"][i]
        cells = [f"{params[n]!s:>{widths[n]}}" if n in params else f"{'-':>{widths[n]}}"
                 for n in names]
        cells += [f"{results[f'mean_test_{s}'][i]:>8.3f} ± {results[f'std_test_{s}'][i]:.3f}"
                  for s in scorers]
        print(f"{rank[i]:>4}  " + "  ".join(cells) + f"  {results['mean_fit_time'][i]:>7.1f}")


def run_search(title, estimator, grid, data, args):
    """Fit one GridSearchCV, print its table, its best parameters and its test score."""
    X_train, X_test, y_train, y_test = data
    scoring = {
        # relevant = same category AND |Δt| <= TIME_WINDOW (time: last column of X)
        f"t-mAP@50 (w={TIME_WINDOW:g})": make_retrieval_scorer("map", k=50,
                                                               time_window=TIME_WINDOW),
        "mAP": SCORERS["map"],  # mean of image->text and text->image mAP
        "MRR": SCORERS["mrr"],  # here: first item sharing the query's label
    }
    refit = next(iter(scoring))  # select (and refit) on the time-aware scorer
    search = GridSearchCV(estimator, grid, scoring=scoring, refit=refit,
                          cv=KFold(args.cv, shuffle=True, random_state=0),
                          n_jobs=args.n_jobs, error_score="raise")
    print(f"\n{title}: {len(ParameterGrid(grid))} candidates x {args.cv} folds, n_jobs={args.n_jobs}")
    start = time.perf_counter()
    search.fit(X_train, y_train)
    print(f"searched in {time.perf_counter() - start:.1f} s\n")
    print_cv_table(search)
    means = search.cv_results_[f"mean_test_{refit}"]
    print(f"\nbest parameters: {search.best_params_}")
    print(f"spread of {refit} (best − worst candidate): {max(means) - min(means):.3f}")
    print(f"best CV {refit}: {search.best_score_:.3f}; refitted best model on the "
          f"held-out test rows: {search.score(X_test, y_test):.3f}")
    return search


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fast", action="store_true", help="tiny sizes, a few seconds")
    parser.add_argument("--n-jobs", type=int, default=2, help="parallel folds (default 2)")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS and torch threads of this process (default 1; the "
                             "joblib workers get cores // n_jobs each)")
    args = parser.parse_args()
    args.cv = 2 if args.fast else 3
    threadpool_limits(args.threads)
    torch.set_num_threads(args.threads)
    # Validation folds reach a little outside the training folds' time range; the
    # time-conditioned models extrapolate there.  (scikit-learn passes warning
    # filters on to its joblib workers.)
    warnings.simplefilter("ignore", TimeRangeWarning)
    # The example trains a few epochs to run in seconds, so the models are still
    # improving when training ends; a real fit should heed this warning.
    warnings.simplefilter("ignore", ConvergenceWarning)

    # ---------------------------------------------------------------- data
    X, y, info = make_temporal_crossmodal(400 if args.fast else 1500, return_info=True,
                                          random_state=0, **DEMO_WORLD)
    data = train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
    print(f"Synthetic data: {len(data[0])} training rows (searched with {args.cv}-fold CV), "
          f"{len(data[1])} test rows, time in [{info.time_range[0]:g}, {info.time_range[1]:g}] "
          "years")

    # ------------------------------------ 1. BinnedProcrustesEmbedder
    # bins: an int is a number of equal-width bins (a duration such as "2Y" a bin width)
    bins = [1, 3] if args.fast else [1, 2, 3, 6]
    run_search("1. BinnedProcrustesEmbedder(bins)",
               BinnedProcrustesEmbedder(CCACrossModal(embedding_dim=16), min_bin_size=30,
                                        random_state=0, n_image_features=info.n_image_features,
                                        use_time=True),
               {"bins": bins}, data, args)

    # --------------------------------------------- 2. TempXNetEmbedder
    # Small networks keep the search quick; the paper's sizes are the defaults.
    small = dict(use_time=True, hidden_dim=64 if args.fast else 256, embedding_dim=32,
                 max_epochs=2 if args.fast else 10, random_state=0,
                 n_image_features=info.n_image_features)
    grid = ({"temporal_weight": [0.0, 5.0]} if args.fast else
            {"temporal_weight": [0.0, 1.0, 5.0], "bandwidth": ["1M", "1Y"]})
    run_search("2. TempXNetEmbedder(temporal_weight, bandwidth)",
               TempXNetEmbedder(**small), grid, data, args)


if __name__ == "__main__":
    main()
