"""Every estimator on TICRC newspaper pictures: caption MRR with real dates and without.

Data and split (those of ``bench_ticrc_dcm.py``, :func:`temporal_xmodal.datasets.
ticrc_features`): TICRC ``train`` + ``train2``; a random 20 % of ``train2`` (seed 0:
411 pictures) is held out, the models are fitted on ``train`` + the other 80 % of
``train2`` (2,318 pairs).  Features: EfficientNet-Lite0 pooled ImageNet features
(1280-d, disk cache under ``--cache-dir``) standardised on the fitting pictures, and
TF-IDF of the captions (≤ 4096 terms, min_df 2, sublinear tf) fitted on the fitting
captions.  Time: the issue date in fractional years.  Labels: the pairs
(``y = arange(n)``: the counterpart is the only positive).

Evaluation (TICRC's task; :func:`temporal_xmodal.evaluation.evaluate_undated`): each
held-out picture, projected at its own date, ranks ALL held-out captions, each
caption projected AT THE QUERY PICTURE'S DATE (captions carry no date of their own).
Score: MRR of the gold caption (ties count against the query).  Also recorded: the
caption → picture MRR and "Δ date" (MRR minus the MRR obtained with the query dates
shuffled among the queries).

Estimators: the registry of ``python -m temporal_xmodal compare`` with its TICRC
settings (:func:`temporal_xmodal.comparison.estimator_registry`, dataset ``"ticrc"``:
Adam, lr 1e-4 for the neural ones — SGD at lr 5e-3 collapses SAM and TempXNet with
pair labels; Diachronic window 2 years, decay 0.5 / year; Binned 10 bins of ≥ 50
pairs over the dates; otherwise each estimator's defaults).  Each estimator that uses
time (TempXNet-Rec in training, Diachronic and Binned+Procrustes in training and at
inference) is also fitted and evaluated with a constant time column ("without time":
all zeros, the same model made static; Binned then has a single bin).  CCA and SAM
ignore time: one run.  Binned+Procrustes with real dates: the 3 sparse early bins (< 50
pairs) are merged into their neighbours, 7 bins remain (the merge warnings are
silenced here).  TempXNet-Rec is time-blind on TICRC: its temporal term (eq. 4.6)
averages over the batch items sharing the anchor's label, and with pair labels that is
the anchor alone, whose recency correlation with itself is 1 whatever its date, so both
variants train the same model (identical MRR).

References:

* random ranking, E[MRR] = H_N / N;
* date-only ranking (honest): captions have no date, so each candidate caption's
  date distribution is estimated from its 25 most similar TRAINING captions
  (TF-IDF cosine, weighted by similarity; Gaussian kernel of 2 years over their
  pictures' dates) and captions are ranked by that density at the query's date
  (:func:`temporal_xmodal.estimators.date_prior_scores`): p(t_q | caption),
  the Bayes ranking from the date alone.  It uses only the training pairs, the
  query's date and the candidates' text;
* LEAK, upper bound only: captions ranked by the date of the picture they belong to
  (the answer's date; ``DESIGN.md``).  Not a method's score.

Date-prior fusion (``--date-prior NAMES``, a method beyond the papers,
:class:`temporal_xmodal.estimators.DatePriorRetrieval`): each named estimator's
content score plus β · log p(t_q | caption), the date density of the caption's most similar
training captions; β and the prior's neighbours and bandwidth are chosen on 20 % of the
fitting pairs held out (the estimator refitted without them), never on the evaluation
pairs.  Printed: the estimator alone, fused, and β, and the same for its constant-time control fused with the same dated prior
(``DatePriorRetrieval(content_time="constant")``): the difference between the two fused
figures is what the estimator's own use of time adds on top of the prior.

The featuriser's throughput (images/s on the CPU, uncached, batch 16, ``--probe-
images`` held-out pictures, 1 thread and all cores) is printed with the data.

Threads: torch and BLAS run single-threaded during the fits by default (``--threads 1``;
see ``bench_ticrc_dcm.py``: OpenMP spinning on a shared 2-core machine; the featuriser
probe shows the same effect).

Run::

    python benchmarks/bench_ticrc_all.py             # 3 seeds, ~20 min on 2 CPU cores
                                                     # (--seeds 1: ~8 min)
    python benchmarks/bench_ticrc_all.py --quick     # 1 seed, 120 pairs, 2 epochs, < 1 min
                                                     # (featuriser probe: 2 images, 1 thread)
    python benchmarks/bench_ticrc_all.py --estimators Binned+Procrustes \
        --set Binned+Procrustes.align_on=image       # one estimator's parameter changed
"""

import os
import time
import warnings

import numpy as np
import torch
from _common import (add_settings_argument, add_ticrc_arguments, make_parser, parse_settings,
                     print_header, print_targets, target, write_results)
from threadpoolctl import threadpool_limits

from temporal_xmodal.time import TimeBinWarning
from temporal_xmodal.comparison.fits import DATE_PRIOR, compare, undated_references
from temporal_xmodal.comparison.settings import (
    estimator_registry,
    left_out,
    load_comparison_data,
    set_matching_params,
    with_constant_time,
)
from temporal_xmodal.datasets._ticrc_features import image_feature_throughput
from temporal_xmodal.estimators import DatePriorRetrieval, query_time_scores
from temporal_xmodal.metrics import counterpart_reciprocal_ranks

VARIANTS = {"real dates": False, "without time": True}  # name -> constant time column


def _leak_mrr(time_test):
    """LEAK: captions ranked by the date of their own picture (upper bound only)."""
    scores = -np.abs(time_test[:, None] - time_test[None, :])
    return float(counterpart_reciprocal_ranks(scores)[0].mean())


def _summary(values):
    values = np.asarray(values, dtype=float)
    return {"mean": float(values.mean()), "std": float(values.std()),
            "runs": [float(v) for v in values]}


#: Estimators the main job leaves out on TICRC (SCML: it learns from class labels only, and
#: the labels are the pairs).  Measured here, but not held to the pairing target.
LABEL_ONLY = left_out("ticrc")


def _configured(registry, name, overrides, settings):
    """The registry's estimator ``name`` with the shared overrides and its own ``--set``s."""
    est = set_matching_params(registry[name].estimator, **overrides)
    return est.set_params(**(settings or {}).get(name, {}))


def _fit_all(data, seeds, overrides, names=None, settings=None):
    """Per seed: fit and evaluate every (estimator, variant); returns name -> variant -> rows."""
    runs = {}
    for seed in seeds:
        for variant, constant in VARIANTS.items():
            registry = estimator_registry(data.n_image_features, seed, data.time_window,
                                          dataset="ticrc")
            chosen = {name: _configured(registry, name, overrides, settings)
                      for name, entry in registry.items()
                      if (not constant or entry.time_role != "none")
                      and (names is None or name in names)}
            X_train, X_test = data.X_train, data.X_test
            if constant:
                X_train = with_constant_time(data.blocks_train)
                X_test = with_constant_time(data.blocks_test)
            print(f"  seed {seed}, {variant}:")
            with warnings.catch_warnings():
                # without time every item falls in one bin: Binned merges them (expected)
                warnings.simplefilter("ignore", TimeBinWarning)
                rows = compare(chosen, X_train, data.y_train, X_test, data.y_test,
                               time_window=None, protocol="undated",
                               log=lambda message: print(f"    {message}", flush=True))
            for row in rows:
                runs.setdefault(row["name"], {}).setdefault(variant, []).append(row)
                print(f"      {row['name']:<18} MRR {row['mrr']:.4f}  T→I {row['mrr_t2i']:.4f}"
                      f"  Δdate {row['date_gain']:+.4f}  fit {row['fit_seconds']:.0f} s",
                      flush=True)
    return runs


def _fuse_all(data, seeds, overrides, names, settings=None):
    """Per seed and named estimator: held-out MRR alone and fused with the date prior, for the
    dated estimator and for its constant-time control fused with the same (dated) prior."""
    image, text, time_test = data.blocks_test
    rows = {}
    for seed in seeds:
        registry = estimator_registry(data.n_image_features, seed, data.time_window,
                                      dataset="ticrc")
        for name in names:
            est = _configured(registry, name, overrides, settings)
            row = {}
            for variant in ("dated", "constant"):
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", TimeBinWarning)
                    fused = DatePriorRetrieval(est, n_image_features=data.n_image_features,
                                               content_time=variant, random_state=seed
                                               ).fit(data.X_train, data.y_train)
                content_time = time_test if variant == "dated" else np.zeros_like(time_test)
                alone = query_time_scores(fused.estimator_, image, text, content_time)
                prefix = "" if variant == "dated" else "control_"
                row.update({
                    f"{prefix}alone": float(counterpart_reciprocal_ranks(alone)[0].mean()),
                    f"{prefix}fused": float(counterpart_reciprocal_ranks(
                        fused.scores(image, text, time_test))[0].mean()),
                    f"{prefix}weight": fused.weight_,
                    f"{prefix}prior_params": fused.prior_params_,
                    f"{prefix}seconds": time.perf_counter() - start})
            rows.setdefault(name, []).append(row)
            print(f"  seed {seed} {name:<18} alone {row['alone']:.4f}  fused {row['fused']:.4f}"
                  f"  β {row['weight']:g}  | constant-time control alone "
                  f"{row['control_alone']:.4f}  fused {row['control_fused']:.4f}"
                  f"  β {row['control_weight']:g}  prior {row['prior_params']} / "
                  f"{row['control_prior_params']}  ({row['seconds']:.0f} + "
                  f"{row['control_seconds']:.0f} s)", flush=True)
    keys = ("alone", "fused", "weight", "control_alone", "control_fused", "control_weight")
    return {name: {**{key: _summary([r[key] for r in per_seed]) for key in keys},
                   "prior_params": [r["prior_params"] for r in per_seed],
                   "control_prior_params": [r["control_prior_params"] for r in per_seed]}
            for name, per_seed in rows.items()}


def _table(results, time_role, references):
    """The printed table: one line per estimator, then the references."""
    header = (f"{'estimator':<18} {'time use':<19} {'MRR real dates':>16} "
              f"{'MRR without time':>17} {'Δ':>7} {'T→I MRR':>8} {'Δ date':>7} {'fit [s]':>8}")
    lines = [header, "-" * len(header)]
    for name, variants in results.items():
        real = variants["real dates"]
        cell = f"{real['mrr']['mean']:.4f} ± {real['mrr']['std']:.4f}"
        if "without time" in variants:
            static = variants["without time"]["mrr"]
            other = f"{static['mean']:.4f} ± {static['std']:.4f}"
            gap = f"{real['mrr']['mean'] - static['mean']:+.4f}"
        else:
            other, gap = "(ignores time)", ""
        lines.append(f"{name:<18} {time_role[name]:<19} {cell:>16} {other:>17} {gap:>7} "
                     f"{real['mrr_t2i']['mean']:>8.4f} {real['date_gain']['mean']:>+7.4f} "
                     f"{real['fit_seconds']:>8.1f}")
    lines.append("-" * len(header))
    labels = {"random": "random ranking (H_N / N)",
              "date_prior": "date-only, honest (date from words)",
              "leak_upper_bound": "LEAK bound: caption's picture date"}
    for key, label in labels.items():
        lines.append(f"{label:<38} {references[key]:>16.4f}")
    return "\n".join(lines)


def main():
    parser = make_parser(__doc__)
    add_ticrc_arguments(parser)
    parser.add_argument("--seeds", type=int, default=3, help="seeds per model (default 3)")
    parser.add_argument("--epochs", type=int, default=None,
                        help="max_epochs of every neural estimator (default: its own)")
    parser.add_argument("--probe-images", type=int, default=64,
                        help="uncached images of the throughput probe (default 64)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--estimators", default=None,
                        help="comma-separated display names (default: every estimator)")
    parser.add_argument("--date-prior", default="",
                        help="comma-separated display names to also fuse with the caption "
                             "date prior (default: none)")
    add_settings_argument(parser)
    args = parser.parse_args()
    registry = estimator_registry(1, dataset="ticrc")
    known = list(registry)
    settings = parse_settings(parser, args.settings,
                              {name: entry.estimator for name, entry in registry.items()})
    names = None if args.estimators is None else args.estimators.split(",")
    fused_names = [n for n in args.date_prior.split(",") if n]
    if unknown := set(names or []).union(fused_names) - set(known):
        parser.error(f"unknown estimators {sorted(unknown)}; choose from {', '.join(known)}")
    quick = args.quick
    seeds = [0] if quick else list(range(args.seeds))
    overrides = {"max_epochs": 2, "hidden_dim": 64} if quick else (
        {"max_epochs": args.epochs} if args.epochs else {})
    probe_n = 2 if quick else args.probe_images
    # quick: the probe on one thread only (the same measurement; a second thread's first
    # use starts OpenMP's pool, seconds on a machine whose cores are busy)
    probe_threads = [1] if quick else sorted({1, os.cpu_count() or 1})
    total_start = time.perf_counter()

    print_header("TICRC train + train2")
    start = time.perf_counter()
    data = load_comparison_data("ticrc", data_dir=args.data_dir, cache_dir=args.cache_dir,
                                n_samples=120 if quick else None)
    load_seconds = time.perf_counter() - start
    print(f"  {data.description}; {load_seconds:.1f} s")
    throughput = image_feature_throughput(data.test_picture_paths[:probe_n],
                                          threads=probe_threads)
    for threads, rate in throughput.items():
        print(f"  EfficientNet-Lite0 throughput (uncached, CPU, {threads} thread(s), batch 16, "
              f"{probe_n} images): {rate:.1f} images/s")
    torch.set_num_threads(args.threads)

    references = undated_references(data.blocks_train, data.blocks_test)
    references["leak_upper_bound"] = _leak_mrr(data.blocks_test[2])

    print_header(f"Fits (seeds {seeds}, overrides {overrides or 'none'}, torch threads "
                 f"{args.threads})")
    with threadpool_limits(args.threads):  # BLAS (CCA) too: spinning threads on a shared machine
        runs = _fit_all(data, seeds, overrides, names, settings)
        fusion = {}
        if fused_names:
            print_header("Date-prior fusion (β chosen on held-out fitting pairs)")
            fusion = _fuse_all(data, seeds, overrides, fused_names, settings)
    time_role = {name: entry.time_role for name, entry in
                estimator_registry(data.n_image_features, dataset="ticrc").items()}
    results = {
        name: {variant: {"mrr": _summary([r["mrr"] for r in rows]),
                         "mrr_t2i": _summary([r["mrr_t2i"] for r in rows]),
                         "date_gain": _summary([r["date_gain"] for r in rows]),
                         "fit_seconds": float(np.mean([r["fit_seconds"] for r in rows])),
                         "per_period": rows[0]["per_period"]}
               for variant, rows in variants.items()}
        for name, variants in runs.items()
    }
    print_header(f"Caption MRR, {len(data.X_test)} held-out pictures × {len(data.X_test)} "
                 f"captions (mean ± std over {len(seeds)} seed(s))")
    print(_table(results, time_role, references))
    print("  Δ = real dates − without time.  Δ date = MRR − MRR with the query dates shuffled.\n"
          "  The LEAK line uses the answer's date: an upper bound, not a method's score.")
    for name, row in fusion.items():
        print(f"  + date prior: {name:<18} alone {row['alone']['mean']:.4f} ± "
              f"{row['alone']['std']:.4f}  fused {row['fused']['mean']:.4f} ± "
              f"{row['fused']['std']:.4f}  (β {row['weight']['runs']})  | constant-time "
              f"control fused {row['control_fused']['mean']:.4f} ± "
              f"{row['control_fused']['std']:.4f}  (β {row['control_weight']['runs']})")

    best = max(v["real dates"]["mrr"]["mean"] for v in results.values())
    for name in sorted(set(results) & set(LABEL_ONLY)):
        print(f"  {name}: not held to the targets: {LABEL_ONLY[name]}.")
    paired = [v["real dates"]["mrr"]["mean"] for k, v in results.items() if k not in LABEL_ONLY]
    targets = {
        "best_beats_date_only": target(best - references["date_prior"], 0.0, ">=",
                                       "best MRR (real dates) − honest date-only MRR"),
    }
    for name, variants in results.items():
        if "without time" in variants and name not in LABEL_ONLY:
            targets[f"{name}_time_never_hurts"] = target(
                variants["real dates"]["mrr"]["mean"] - variants["without time"]["mrr"]["mean"],
                0.0, ">=", f"{name}: MRR with real dates − its constant-time control's")
    if paired:
        targets["all_beat_random"] = target(min(paired) / references["random"], 1.0, ">=",
                                            "lowest MRR (real dates) / random MRR, estimators "
                                            "that learn from the pairing")
    print_targets(targets)
    total = time.perf_counter() - total_start
    print(f"\nTotal {total:.0f} s")
    write_results("bench_ticrc_all", {
        "quick": quick,
        "parameters": {
            "seeds": seeds, "overrides": overrides, "settings": settings,
            "torch_threads": args.threads,
            "holdout_fraction": 0.2, "holdout_seed": 0,
            "n_fit": int(len(data.X_train)), "n_heldout": int(len(data.X_test)),
            "time_role": time_role, "date_prior": DATE_PRIOR, "data": data.description,
            **data.extra,
        },
        "timings": {"load_seconds": load_seconds, "total_seconds": total},
        "results": {
            "models": results,
            "date_prior_fusion": fusion,
            "references": references,
            "featuriser": {"images_per_second_by_threads": {str(k): v for k, v in
                                                            throughput.items()},
                           "probe_images": probe_n},
        },
        "targets": targets,
    }, args.output_dir)


if __name__ == "__main__":
    main()
