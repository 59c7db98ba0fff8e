"""DiachronicEmbedder on TICRC newspaper pictures: real dates vs a constant time column.

Data: TICRC ``train`` + ``train2`` (2,729 pictures with their issue dates, 1853–1922,
one caption each).  A random 20 % of ``train2`` (seed 0, 411 pictures) is held out
for evaluation; the model is fitted on ``train`` + the other 80 % of ``train2``.

Features (same for every model): EfficientNet-Lite0 pooled ImageNet features of the
pictures (1280-d, cached on disk under ``--cache-dir``, default
``~/.cache/temporal_xmodal``) standardised on the training pictures, and TF-IDF of
the captions (``TfidfTextFeatures``: ≤ 4096 terms, min_df 2, sublinear tf) fitted on
the training captions.

Evaluation (TICRC's task, spec ``sequential_ticrc_cca.md`` §B): each held-out
picture is a query projected at its own date; the candidates are ALL held-out
captions, each projected AT THE QUERY PICTURE'S DATE (captions carry no date of
their own: one ``transform_text(all_captions, time=query_date)`` per distinct query
date).  The score is the MRR of the gold caption (pessimistic ties).

Compared, with the same features, hyper-parameters and seeds:

* ``DiachronicEmbedder`` with time = the issue date in fractional years
  (window w = 2 years, decay λ = 0.5 per year, margin 1, paper architecture with a
  narrower hidden layer, see ``--hidden-dim``);
* the same model with a constant time column (all zeros): a static model.

Labels.  TICRC has no categories and exactly one relevant caption per picture, so
the meaningful labelling is ``y = arange(n)`` (``pair``): each pair is its own
class, the counterpart is the only positive and every other caption is a full
negative; DCM's intra (same-category) term then never fires and time acts only
through the time-conditioned projections.  As a second, cheaper-to-interpret
variant ``decade`` labels (y = decade of the issue date) make same-decade pairs
"same category": within w = 2 years they are neither pushed nor pulled, further
apart they are soft negatives weighted by ρ = 1 − exp(−λ|Δt|).  This drops the
hardest negatives (same-period captions, which are exactly the candidates that
compete at test time), so it is expected to do worse; it is run for one seed.

Reference figures: the random ranking (E[MRR] = H_N / N), which is also the only
FAIR date-only baseline (captions have no dates); and a date-only ranking that
scores each caption by how close the date of ITS OWN PICTURE is to the query's date
— this uses the answer's date and is printed only as a labelled LEAK / upper bound,
never as a method's score (``DESIGN.md``).  Featuriser throughput (images/s on the
CPU) is measured on uncached pictures.

Run::

    python benchmarks/bench_ticrc_dcm.py            # 3 seeds, ~10 min on 2 CPU cores
                                                    # (+ ~4 min once to fill the cache)
    python benchmarks/bench_ticrc_dcm.py --quick    # 1 seed, small subset, 2 epochs
"""

import os
import time
import warnings
from pathlib import Path

import numpy as np
from _common import make_parser, print_header, print_targets, target, write_results
from sklearn.preprocessing import StandardScaler

from temporal_xmodal import DiachronicEmbedder, TimeRangeWarning, stack_modalities
from temporal_xmodal.datasets._ticrc import load_ticrc, ticrc_training_pairs
from temporal_xmodal.features import EfficientNetImageFeatures, TfidfTextFeatures
from temporal_xmodal.metrics import reciprocal_rank_per_query

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ticrc"
CACHE = os.environ.get("TEMPORAL_XMODAL_CACHE", str(Path("~/.cache/temporal_xmodal")))


def _split(n_train, n_train2, fraction, quick):
    """Indices (into train + train2) of the fitting rows and of the held-out rows."""
    rng = np.random.default_rng(0)
    train2 = n_train + rng.permutation(n_train2)
    n_hold = int(round(fraction * n_train2))
    held, rest = np.sort(train2[:n_hold]), np.sort(train2[n_hold:])
    fit = np.concatenate([np.arange(n_train), rest])
    if quick:  # a small subset of both
        fit, held = np.sort(rng.choice(fit, 200, replace=False)), held[:60]
    return fit, held


def _caption_mrr(model, X_image, X_text, query_time, caption_order, target_caption):
    """RR of each query's gold caption; captions projected at the query's date."""
    n = len(X_image)
    Z_image = model.transform_image(X_image, time=query_time)
    candidates = X_text[caption_order]
    scores = np.empty((n, n))
    for instant in np.unique(query_time):  # one text projection per distinct date
        rows = np.flatnonzero(query_time == instant)
        scores[rows] = Z_image[rows] @ model.transform_text(candidates, time=instant).T
    relevance = np.zeros((n, n), dtype=bool)
    relevance[np.arange(n), target_caption] = True
    return reciprocal_rank_per_query(scores, relevance), len(np.unique(query_time))


def _summary(values):
    values = np.asarray(values, dtype=float)
    return {"mean": float(values.mean()), "std": float(values.std()),
            "runs": [float(v) for v in values]}


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--data", default=str(DATA), help="folder holding ticrc/train, train2")
    parser.add_argument("--cache-dir", default=CACHE,
                        help=f"image feature cache (default {CACHE}; env TEMPORAL_XMODAL_CACHE)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per model (default 3)")
    parser.add_argument("--epochs", type=int, default=25, help="max_epochs (paper: 25)")
    parser.add_argument("--hidden-dim", type=int, default=512, help="hidden units (paper 1024)")
    parser.add_argument("--window", type=float, default=2.0, help="w, in years")
    parser.add_argument("--decay", type=float, default=0.5, help="λ, per year")
    parser.add_argument("--holdout-fraction", type=float, default=0.2)
    parser.add_argument("--no-decade", action="store_true", help="skip the decade-label variant")
    args = parser.parse_args()
    quick = args.quick
    seeds = [0] if quick else list(range(args.seeds))
    epochs = 2 if quick else args.epochs
    hidden = 64 if quick else args.hidden_dim
    timings = {}

    # ------------------------------------------------------------------ data
    start = time.perf_counter()
    splits = [load_ticrc(args.data, "train"), load_ticrc(args.data, "train2")]
    paths, captions, dates = ticrc_training_pairs(splits)
    paths, dates = np.asarray(paths), np.asarray(dates)
    fit_rows, held_rows = _split(len(splits[0].picture_paths), len(splits[1].picture_paths),
                                 args.holdout_fraction, quick)
    timings["load_seconds"] = time.perf_counter() - start
    print_header("TICRC train + train2")
    print(f"  fit on {len(fit_rows)} pairs (train + {100 - 100 * args.holdout_fraction:.0f} % of "
          f"train2), evaluate on {len(held_rows)} held-out train2 pictures × "
          f"{len(held_rows)} captions")

    # -------------------------------------------------------------- features
    print_header("Features")
    probe_n = 8 if quick else 48
    probe = EfficientNetImageFeatures(batch_size=16, progress=False).fit()
    probe.transform(list(paths[:4]))  # warm-up (oneDNN kernels)
    probe.transform(list(paths[held_rows[:probe_n]]))
    throughput = probe.last_stats_["images_per_second"]
    print(f"  EfficientNet-Lite0 throughput (uncached, CPU, batch 16, {probe_n} images): "
          f"{throughput:.1f} images/s")
    rows = np.concatenate([fit_rows, held_rows])
    featuriser = EfficientNetImageFeatures(cache_dir=args.cache_dir, progress=True).fit()
    start = time.perf_counter()
    image_all = featuriser.transform(list(paths[rows]))
    timings["image_features_seconds"] = time.perf_counter() - start
    stats = dict(featuriser.last_stats_)
    print(f"  image features: {len(rows)} pictures, {stats['n_cached']} from the cache "
          f"({args.cache_dir}), {stats['n_computed']} computed"
          + (f" at {stats['images_per_second']:.1f} images/s" if stats["n_computed"] else "")
          + f"; {timings['image_features_seconds']:.1f} s")
    scaler = StandardScaler().fit(image_all[:len(fit_rows)])
    image_fit = scaler.transform(image_all[:len(fit_rows)])
    image_held = scaler.transform(image_all[len(fit_rows):])
    tfidf = TfidfTextFeatures(max_features=4096, min_df=2, sublinear_tf=True)
    text_fit = tfidf.fit_transform([captions[i] for i in fit_rows])
    text_held = tfidf.transform([captions[i] for i in held_rows])
    print(f"  text features: TF-IDF, {tfidf.n_features_out_} terms (fitted on the "
          f"{len(fit_rows)} training captions)")
    t_fit, t_held = dates[fit_rows], dates[held_rows]

    # Candidate captions in a random order (the gold caption of query i sits at target[i]).
    n_held = len(held_rows)
    caption_order = np.random.default_rng(1).permutation(n_held)
    target_caption = np.argsort(caption_order)

    # ------------------------------------------------------------ references
    harmonic = float(np.sum(1.0 / np.arange(1, n_held + 1)))
    random_mrr = harmonic / n_held
    leak_scores = -np.abs(t_held[:, None] - t_held[caption_order][None, :])
    relevance = np.zeros((n_held, n_held), dtype=bool)
    relevance[np.arange(n_held), target_caption] = True
    leak_mrr = float(np.mean(reciprocal_rank_per_query(leak_scores, relevance)))

    # --------------------------------------------------------------- models
    labels = {"pair": lambda t: np.arange(len(t)),
              "decade": lambda t: (np.floor(t) // 10).astype(int)}
    variants = [("pair", "dated"), ("pair", "constant")]
    if not args.no_decade:
        variants += [("decade", "dated"), ("decade", "constant")]
    params = dict(window=args.window, decay=args.decay, hidden_dim=hidden, max_epochs=epochs,
                  n_image_features=image_fit.shape[1])
    results = {}
    print_header(f"DiachronicEmbedder (w={args.window:g} y, λ={args.decay:g}/y, hidden "
                 f"{hidden}, {epochs} epochs, batch 64, SGD lr 5e-3 momentum 0.9, best epoch "
                 "by validation loss on 10 % of the fitting rows)")
    for label_name, time_name in variants:
        key = f"{time_name} time, {label_name} labels"
        use_seeds = seeds if label_name == "pair" else seeds[:1]
        runs, fit_s, eval_s, n_dates = [], [], [], 0
        for seed in use_seeds:
            time_fit = t_fit if time_name == "dated" else np.zeros_like(t_fit)
            time_held = t_held if time_name == "dated" else np.zeros_like(t_held)
            X = stack_modalities(image_fit, text_fit, time_fit)
            start = time.perf_counter()
            model = DiachronicEmbedder(**params, random_state=seed).fit(
                X, labels[label_name](t_fit))
            fit_s.append(time.perf_counter() - start)
            start = time.perf_counter()
            with warnings.catch_warnings():  # a few query dates lie outside the fit range
                warnings.simplefilter("ignore", TimeRangeWarning)
                rr, n_dates = _caption_mrr(model, image_held, text_held, time_held,
                                           caption_order, target_caption)
            eval_s.append(time.perf_counter() - start)
            runs.append(float(np.mean(rr)))
        results[key] = {"mrr": _summary(runs), "seeds": use_seeds,
                        "fit_seconds": float(np.mean(fit_s)),
                        "eval_seconds": float(np.mean(eval_s)),
                        "distinct_query_dates": int(n_dates)}
        print(f"  {key:<30} MRR {np.mean(runs):.4f} ± {np.std(runs):.4f} "
              f"({len(runs)} seed(s); {np.mean(fit_s):.1f} s/fit, {np.mean(eval_s):.1f} s/eval "
              f"over {n_dates} distinct query date(s))")
        timings[f"{key} fit_seconds"] = float(np.mean(fit_s))

    print_header(f"References ({n_held} candidates per query)")
    print(f"  random ranking, E[MRR] = H_N/N           {random_mrr:.4f}")
    print(f"  fair date-only ranking (captions undated) {random_mrr:.4f}  (= random)")
    print(f"  LEAK, upper bound only: rank captions by their own picture's date  {leak_mrr:.4f}")
    print("    (uses the answer's date; not a method's score)")

    dated = results["dated time, pair labels"]["mrr"]["mean"]
    static = results["constant time, pair labels"]["mrr"]["mean"]
    targets = {
        "dated_beats_constant": target(
            dated - static, 0.0, ">=",
            "MRR(real dates) − MRR(constant time), pair labels, mean over seeds"),
        "beats_random": target(dated / random_mrr, 1.0, ">=",
                               "MRR(real dates) / random MRR"),
    }
    print_targets(targets)
    write_results("bench_ticrc_dcm", {
        "quick": quick,
        "parameters": {
            "seeds": seeds, "max_epochs": epochs, "hidden_dim": hidden, "window_years": args.window,
            "decay_per_year": args.decay, "holdout_fraction": args.holdout_fraction,
            "holdout_seed": 0, "n_fit": int(len(fit_rows)), "n_heldout": int(n_held),
            "image_features": "EfficientNet-Lite0 pooled (1280), standardised",
            "text_features": f"TF-IDF ({tfidf.n_features_out_} terms, min_df 2, sublinear tf)",
            "time": "fractional years (issue date)", "cache_dir": args.cache_dir,
        },
        "timings": timings,
        "results": {
            "models": results,
            "random_mrr": random_mrr,
            "fair_date_only_mrr": random_mrr,
            "leak_upper_bound_caption_picture_date_mrr": leak_mrr,
            "featuriser": {"probe_images_per_second": throughput, "probe_images": probe_n,
                           "main_call": stats},
        },
        "targets": targets,
    }, args.output_dir)


if __name__ == "__main__":
    main()
