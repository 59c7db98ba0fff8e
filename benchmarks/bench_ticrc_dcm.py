"""DiachronicEmbedder on TICRC newspaper pictures: real dates vs a constant time column.

Data: TICRC ``train`` + ``train2`` (2,729 pictures with their issue dates, 1853–1922,
one caption each).  A random 20 % of ``train2`` (seed 0: 411 pictures, 405 distinct
dates) is held out for evaluation; the models are fitted on ``train`` + the other
80 % of ``train2`` (2,318 pairs).

Features (the same for every model): EfficientNet-Lite0 pooled ImageNet features
of the pictures (1280-d, cached on disk under ``--cache-dir``, default
``~/.cache/temporal_xmodal``), standardised on the training pictures, and TF-IDF of
the captions (``TfidfTextFeatures``: ≤ 4096 terms, min_df 2, sublinear tf) fitted
on the training captions only.

Evaluation (the task of TICRC, kubapok/cnlps-ticrc): each held-out
picture is a query projected at its own date; the candidates are ALL held-out
captions, each projected AT THE QUERY PICTURE'S DATE (captions carry no date of
their own: one ``transform_text(all_captions, time=query_date)`` per distinct query
date).  Score: MRR of the gold caption (``reciprocal_rank_per_query``; ties count
against the query).

Compared, with the same features, hyper-parameters and seeds (3):

* ``DiachronicEmbedder`` with time = issue date in fractional years, window
  w = 2 years, decay λ = 0.5 per year, margin 1, the paper's architecture
  (hidden 1024, time layer 200, D = 200), 25 epochs, batch 64, best epoch by
  validation loss (10 % of the fitting rows);
* the same model with a constant time column (all zeros): a static model.

Optimiser.  The main runs use Adam, lr 1e-4, and the estimator's default loss
reduction (sum ÷ batch size).  SGD lr 5e-3 momentum 0.9 with that reduction
("sgd") and the paper's literal recipe (SGD, plain summed loss, "paper-sgd") are
also run for one seed each.  With the plain sum and
all-pairs negatives its first epoch drives the static model's tanh outputs into
saturation (every caption gets the same embedding, MRR = 1/N), so it cannot
serve for the comparison (the dated model escapes, apparently because its time
input differs between items).

Labels.  TICRC has no categories and exactly one relevant caption per picture, so
the meaningful labelling is ``y = arange(n)`` (``pair``): each pair is its own
class, the counterpart is the only positive and every other caption a full
negative; DCM's intra (same-category) term never fires and time acts only through
the time-conditioned projections.  As a variant (one seed), ``decade`` labels (y =
decade of the issue date) make same-decade pairs "same category": within w = 2
years they are neither pushed nor pulled, further apart they are soft negatives
weighted by ρ = 1 − exp(−λ|Δt|).  That removes the negatives that matter most at
test time (captions of the same period), so it is expected to do worse.

Reference figures: the random ranking (E[MRR] = H_N / N); the honest date-only
ranking of ``temporal_xmodal.estimators.date_prior_scores`` (each caption's
date inferred from its most similar training captions); and a date-only ranking that
scores each caption by how close the date of ITS OWN PICTURE is to the query's date
— this uses the answer's date and is printed only as a labelled LEAK / upper bound,
never as a method's score (``DESIGN.md``).  Featuriser throughput (images/s on the
CPU, uncached) is measured with 1 thread and with all cores.

Threads: torch runs single-threaded by default (``--threads 1``): on a shared
2-core machine OpenMP's spinning threads made every small op up to 100x slower
(a 64×1024 tanh: 17 µs with 1 thread, 8.6 ms with 2 under load).

Run::

    python benchmarks/bench_ticrc_dcm.py            # 3 seeds, ~5 min on 2 CPU cores
                                                    # (+ ~2-4 min once to fill the cache)
    python benchmarks/bench_ticrc_dcm.py --quick    # 1 seed, small subset, 2 epochs
"""

import os
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from _common import make_parser, print_header, print_targets, target, write_results

from temporal_xmodal import DiachronicEmbedder, TimeRangeWarning, stack_modalities
from temporal_xmodal.datasets._ticrc_features import (
    default_cache_dir,
    image_feature_throughput,
    ticrc_features,
)
from temporal_xmodal.comparison.fits import DATE_PRIOR
from temporal_xmodal.estimators import date_prior_scores, query_time_scores
from temporal_xmodal.metrics import counterpart_reciprocal_ranks, random_mrr

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ticrc"
CACHE = default_cache_dir()


def _caption_mrr(model, X_image, X_text, query_time):
    """RR of each query's gold caption (captions projected at the query's date), the
    number of distinct query dates and the mean per-query score spread."""
    scores = query_time_scores(model, X_image, X_text, query_time)
    spread = float(np.mean(np.std(scores, axis=1)))  # ~0: the captions all score alike
    return counterpart_reciprocal_ranks(scores)[0], len(np.unique(query_time)), spread


def _summary(values):
    values = np.asarray(values, dtype=float)
    return {"mean": float(values.mean()), "std": float(values.std()),
            "runs": [float(v) for v in values]}


def _variants(args, seeds):
    """(label scheme, time column, optimiser recipe, seeds) of every model run."""
    runs = [("pair", "dated", "adam", seeds), ("pair", "constant", "adam", seeds)]
    if not args.no_extra:
        runs += [("decade", "dated", "adam", seeds[:1]), ("decade", "constant", "adam", seeds[:1]),
                 ("pair", "dated", "sgd", seeds[:1]), ("pair", "constant", "sgd", seeds[:1]),
                 ("pair", "dated", "paper-sgd", seeds[:1]),
                 ("pair", "constant", "paper-sgd", seeds[:1])]
    return runs


RECIPES = {"adam": {"optimizer": "adam", "lr": 1e-4},
           "sgd": {"optimizer": "sgd", "lr": 5e-3, "momentum": 0.9},
           "paper-sgd": {"optimizer": "sgd", "lr": 5e-3, "momentum": 0.9,
                         "loss_reduction": "sum"}}
LABELS = {"pair": lambda t: np.arange(len(t)),
          "decade": lambda t: (np.floor(t) // 10).astype(int)}


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--data", default=str(DATA), help="folder holding ticrc/train, train2")
    parser.add_argument("--cache-dir", default=CACHE,
                        help=f"image feature cache (default {CACHE}; env TEMPORAL_XMODAL_CACHE)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per main model (default 3)")
    parser.add_argument("--epochs", type=int, default=25, help="max_epochs (paper: 25)")
    parser.add_argument("--hidden-dim", type=int, default=1024, help="hidden units (paper 1024)")
    parser.add_argument("--window", type=float, default=2.0, help="w, in years (default 2)")
    parser.add_argument("--decay", type=float, default=0.5, help="λ, per year (default 0.5)")
    parser.add_argument("--holdout-fraction", type=float, default=0.2)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--no-extra", action="store_true",
                        help="skip the decade-label and paper-SGD variants")
    args = parser.parse_args()
    quick = args.quick
    seeds = [0] if quick else list(range(args.seeds))
    epochs = 2 if quick else args.epochs
    hidden = 64 if quick else args.hidden_dim
    timings = {}
    total_start = time.perf_counter()

    # ------------------------------------------------------------------ data
    print_header("Features")
    start = time.perf_counter()
    data = ticrc_features(args.data, holdout_fraction=args.holdout_fraction,
                          n_samples=260 if quick else None, cache_dir=args.cache_dir)
    timings["load_and_features_seconds"] = time.perf_counter() - start
    image_fit, text_fit, t_fit = data.image_fit, data.text_fit, data.time_fit
    image_held, text_held, t_held = data.image_heldout, data.text_heldout, data.time_heldout
    n_fit, n_held = len(t_fit), len(t_held)
    stats = {k: (None if isinstance(v, float) and np.isnan(v) else v)  # NaN: nothing computed
             for k, v in data.image_stats.items()}
    print(f"  TICRC train + train2: fit on {n_fit} pairs (train + "
          f"{100 - 100 * args.holdout_fraction:.0f} % of train2), evaluate on {n_held} held-out "
          f"train2 pictures × {n_held} captions")
    print(f"  image features: {stats['n_images']} pictures, {stats['n_cached']} from the cache "
          f"({args.cache_dir}), {stats['n_computed']} computed"
          + (f" at {stats['images_per_second']:.1f} images/s" if stats["n_computed"] else "")
          + f"; {timings['load_and_features_seconds']:.1f} s")
    print(f"  text features: TF-IDF, {data.text_features.n_features_out_} terms (fitted on the "
          f"{n_fit} training captions)")
    probe_n = 8 if quick else 48
    throughput = image_feature_throughput(
        [data.picture_paths[i] for i in data.heldout_rows[:probe_n]],
        threads=sorted({1, os.cpu_count() or 1}))
    for threads, rate in throughput.items():
        print(f"  EfficientNet-Lite0 throughput (uncached, CPU, {threads} thread(s), batch 16, "
              f"{probe_n} images): {rate:.1f} images/s")
    torch.set_num_threads(args.threads)

    # ------------------------------------------------------------ references
    rand_mrr = random_mrr(n_held)
    date_prior_mrr = float(np.mean(counterpart_reciprocal_ranks(date_prior_scores(
        text_fit, t_fit, text_held, t_held, **DATE_PRIOR))[0]))
    leak_scores = -np.abs(t_held[:, None] - t_held[None, :])
    leak_mrr = float(np.mean(counterpart_reciprocal_ranks(leak_scores)[0]))

    # --------------------------------------------------------------- models
    print_header(f"DiachronicEmbedder: w={args.window:g} years, λ={args.decay:g}/year, margin 1, "
                 f"hidden {hidden}, time 200, D 200, {epochs} epochs, batch 64, loss reduction "
                 f"{DiachronicEmbedder().loss_reduction} (paper-sgd: sum), "
                 f"best epoch by validation loss; torch threads {args.threads}")
    results = {}
    for label_name, time_name, recipe, use_seeds in _variants(args, seeds):
        key = f"{time_name} time, {label_name} labels, {recipe}"
        runs, fit_s, eval_s, spreads, n_dates = [], [], [], [], 0
        time_fit = t_fit if time_name == "dated" else np.zeros_like(t_fit)
        time_held = t_held if time_name == "dated" else np.zeros_like(t_held)
        X = stack_modalities(image_fit, text_fit, time_fit)
        for seed in use_seeds:
            start = time.perf_counter()
            model = DiachronicEmbedder(
                window=args.window, decay=args.decay, hidden_dim=hidden, max_epochs=epochs,
                n_image_features=image_fit.shape[1], random_state=seed, **RECIPES[recipe],
            ).fit(X, LABELS[label_name](t_fit))
            fit_s.append(time.perf_counter() - start)
            start = time.perf_counter()
            with warnings.catch_warnings():  # a few query dates lie outside the fit range
                warnings.simplefilter("ignore", TimeRangeWarning)
                rr, n_dates, spread = _caption_mrr(model, image_held, text_held, time_held)
            eval_s.append(time.perf_counter() - start)
            runs.append(float(np.mean(rr)))
            spreads.append(spread)
        collapsed = max(spreads) < 1e-6
        results[key] = {"mrr": _summary(runs), "seeds": use_seeds, "labels": label_name,
                        "time": time_name, "recipe": RECIPES[recipe],
                        "fit_seconds": float(np.mean(fit_s)),
                        "eval_seconds": float(np.mean(eval_s)),
                        "distinct_query_dates": int(n_dates),
                        "mean_score_std_per_query": float(np.mean(spreads)),
                        "collapsed": bool(collapsed)}
        timings[f"{key}: fit_seconds"] = float(np.mean(fit_s))
        print(f"  {key:<38} MRR {np.mean(runs):.4f} ± {np.std(runs):.4f}  "
              f"[{', '.join(f'{r:.4f}' for r in runs)}]  ({np.mean(fit_s):.0f} s/fit, "
              f"{np.mean(eval_s):.0f} s/eval over {n_dates} query date(s))"
              + ("  COLLAPSED: all captions score alike" if collapsed else ""))

    print_header(f"References ({n_held} candidates per query)")
    print(f"  random ranking, E[MRR] = H_N/N             {rand_mrr:.4f}")
    print(f"  honest date-only ranking (date from words) {date_prior_mrr:.4f}")
    print(f"  LEAK, upper bound only: captions ranked by their own picture's date  "
          f"{leak_mrr:.4f}")
    print("    (uses the answer's date; not a method's score)")

    dated = results["dated time, pair labels, adam"]["mrr"]["mean"]
    static = results["constant time, pair labels, adam"]["mrr"]["mean"]
    targets = {
        "dated_beats_constant": target(
            dated - static, 0.0, ">=",
            "MRR(real dates) − MRR(constant time), pair labels, Adam, mean over seeds"),
        "beats_random": target(dated / rand_mrr, 1.0, ">=",
                               "MRR(real dates) / random MRR"),
    }
    print_targets(targets)
    timings["total_seconds"] = time.perf_counter() - total_start
    print(f"\nTotal {timings['total_seconds']:.0f} s")
    write_results("bench_ticrc_dcm", {
        "quick": quick,
        "parameters": {
            "seeds": seeds, "max_epochs": epochs, "hidden_dim": hidden, "time_dim": 200,
            "embedding_dim": 200, "batch_size": 64,
            "loss_reduction": DiachronicEmbedder().loss_reduction,
            "window_years": args.window, "decay_per_year": args.decay, "margin": 1.0,
            "recipes": RECIPES, "torch_threads": args.threads,
            "holdout_fraction": args.holdout_fraction, "holdout_seed": 0,
            "n_fit": int(n_fit), "n_heldout": int(n_held),
            "image_features": "EfficientNet-Lite0 pooled (1280), standardised on the fit rows",
            "text_features": f"TF-IDF ({data.text_features.n_features_out_} terms, min_df 2, "
                             "sublinear tf)",
            "time": "fractional years of the issue date", "cache_dir": args.cache_dir,
        },
        "timings": timings,
        "results": {
            "models": results,
            "random_mrr": rand_mrr,
            "date_only_mrr": date_prior_mrr,
            "leak_upper_bound_caption_picture_date_mrr": leak_mrr,
            "featuriser": {"images_per_second_by_threads": {str(k): v
                                                            for k, v in throughput.items()},
                           "probe_images": probe_n, "main_call": stats},
        },
        "targets": targets,
    }, args.output_dir)


if __name__ == "__main__":
    main()
