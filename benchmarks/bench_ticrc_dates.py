"""Where TICRC's dates carry signal: in which story a caption tells, dated to weeks.

A time-aware model can only turn dates into a gain if the data ties the date to the pairing
in a form it can learn.  This benchmark measures the form on TICRC's held-out split (the
data and split of ``bench_ticrc_all.py``; TF-IDF captions, EfficientNet-Lite0 pictures,
dates in fractional years), with no model trained:

* **nearest-caption date gap**: for each held-out caption, the date gap to its most similar
  training caption (TF-IDF cosine), as shares within 3 months and within a year, against a
  random training caption (the ratio is what the words add);
* **date-only ranking** (:func:`temporal_xmodal.estimators.date_prior_scores`, the
  honest reference of ``bench_ticrc_all.py``): held-out picture → caption MRR from the query's
  date alone, over the prior's neighbours × kernel bandwidth, against a random ranking.  A
  signal that lives in the era would favour wide kernels and many neighbours; one that lives
  in stories, few neighbours and narrow kernels;
* **date from the features**: ridge regression of the date on the pictures' and on the
  captions' features (fitted on the training pairs, alpha by leave-one-out), mean absolute
  error on the held-out pairs against predicting the median training date.

Measured (seed-0 split, 2,318 training and 411 held-out pairs): 9.2 % of the held-out
captions have their nearest training caption within 3 months (random: 1.7 %); the date-only
ranking peaks at 3 neighbours and 3 months (MRR 0.074; 2 years 0.062, 10 years 0.048); the
pictures predict the date to 8.0 years (R² 0.32), the captions to 8.6 (median date: 9.5).
So the dates pay through a nonparametric prior over the training captions
(:class:`~temporal_xmodal.estimators.DatePriorRetrieval`) and not through a smooth
time-conditioned projection (``docs/evaluation.md``, "Undated captions").

Run::

    python benchmarks/bench_ticrc_dates.py           # ~20 s on 2 CPU cores (features cached)
    python benchmarks/bench_ticrc_dates.py --quick   # 120 pairs (those of bench_ticrc_all --quick)
"""

import numpy as np
from _common import (add_ticrc_arguments, make_parser, print_header, print_targets, target,
                     write_results)
from sklearn.linear_model import RidgeCV

from temporal_xmodal.comparison import load_comparison_data
from temporal_xmodal.estimators import date_prior_scores
from temporal_xmodal.metrics import counterpart_reciprocal_ranks, random_mrr

NEIGHBOURS = (3, 25, 100)
BANDWIDTHS = (0.1, 0.25, 1.0, 2.0, 5.0, 10.0)  # years
GAPS = (0.25, 1.0)  # years


def _nearest_caption_gaps(text_train, t_train, text_test, t_test, rng):
    """Shares of held-out captions whose nearest / a random training caption is within each gap."""
    nearest = np.asarray((text_test @ text_train.T).argmax(axis=1)).ravel()
    gap = np.abs(t_train[nearest] - t_test)
    random_gap = np.abs(t_train[rng.integers(0, len(t_train), len(t_test))] - t_test)
    return {f"within_{g:g}_years": {"nearest": float(np.mean(gap <= g)),
                                    "random": float(np.mean(random_gap <= g))} for g in GAPS}


def _date_only_grid(text_train, t_train, text_test, t_test):
    """Held-out picture → caption MRR of the date-only ranking per (neighbours, bandwidth)."""
    return {f"{k} neighbours": {
        f"{h:g} years": float(counterpart_reciprocal_ranks(date_prior_scores(
            text_train, t_train, text_test, t_test, n_neighbors=k, bandwidth=h))[0].mean())
        for h in BANDWIDTHS} for k in NEIGHBOURS}


def _date_regression(blocks_train, blocks_test):
    """Mean absolute error (years) and R² of a ridge date regression from each modality."""
    t_train, t_test = blocks_train[2], blocks_test[2]
    out = {"median_date": {"mae": float(np.abs(t_test - np.median(t_train)).mean())}}
    for name, k in (("pictures", 0), ("captions", 1)):
        ridge = RidgeCV(alphas=np.logspace(-1, 4, 12)).fit(blocks_train[k], t_train)
        pred = ridge.predict(blocks_test[k])
        out[name] = {"mae": float(np.abs(pred - t_test).mean()),
                     "r2": float(1 - np.sum((pred - t_test) ** 2)
                                 / np.sum((t_test - t_test.mean()) ** 2))}
    return out


def main():
    parser = make_parser(__doc__)
    add_ticrc_arguments(parser)
    args = parser.parse_args()
    data = load_comparison_data("ticrc", data_dir=args.data_dir, cache_dir=args.cache_dir,
                                n_samples=120 if args.quick else None)
    blocks_train, blocks_test = data.blocks_train, data.blocks_test
    (_, text_train, t_train), (_, text_test, t_test) = blocks_train, blocks_test
    print_header(f"TICRC: {len(t_train)} training, {len(t_test)} held-out pairs")

    gaps = _nearest_caption_gaps(text_train, t_train, text_test, t_test,
                                 np.random.default_rng(0))
    for name, share in gaps.items():
        print(f"  nearest training caption {name.replace('_', ' ')}: {share['nearest']:.3f} "
              f"(a random one: {share['random']:.3f}; ratio "
              f"{share['nearest'] / max(share['random'], 1e-12):.1f})")

    grid = _date_only_grid(text_train, t_train, text_test, t_test)
    chance = random_mrr(len(t_test))
    print_header(f"Date-only ranking, held-out picture → caption MRR (random {chance:.4f})")
    print("  neighbours  " + "  ".join(f"{h:>5g} y" for h in BANDWIDTHS))
    for k, row in grid.items():
        print(f"  {k.split()[0]:>10}  " + "  ".join(f"{v:7.4f}" for v in row.values()))
    best_k, best_h = max(((k, h) for k in grid for h in grid[k]),
                         key=lambda kh: grid[kh[0]][kh[1]])
    best = grid[best_k][best_h]
    print(f"  best: {best_k}, {best_h}: {best:.4f} ({best / chance:.1f} × random)")

    regression = _date_regression(blocks_train, blocks_test)
    print_header("Date from the features (ridge), held-out mean absolute error")
    print(f"  median training date: {regression['median_date']['mae']:.2f} years")
    for name in ("pictures", "captions"):
        print(f"  {name}: {regression[name]['mae']:.2f} years (R² {regression[name]['r2']:.3f})")

    targets = {"date_only_beats_random": target(
        best / chance, 1.0, ">=", "best date-only MRR / random MRR (the dates carry signal)")}
    print_targets(targets)
    write_results("bench_ticrc_dates", {
        "quick": args.quick,
        "parameters": {"neighbours": NEIGHBOURS, "bandwidths_years": BANDWIDTHS,
                       "n_train": len(t_train), "n_test": len(t_test)},
        "results": {"nearest_caption_gaps": gaps, "date_only_mrr": grid,
                    "date_only_best": {"neighbours": best_k, "bandwidth": best_h, "mrr": best},
                    "random_mrr": chance, "date_regression": regression},
        "targets": targets,
    }, args.output_dir)


if __name__ == "__main__":
    main()
