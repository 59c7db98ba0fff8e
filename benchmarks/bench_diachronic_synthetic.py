"""Diachronic (DCM-Continuous) vs DCM-Binned vs TempXNet vs static on the synthetic data.

The diachronic protocols of Semedo & Magalhães, "Diachronic Cross-modal
Embeddings" (ACM MM 2019), on
``make_temporal_crossmodal(n_samples=3000, profiles="mixed", drift=1.0)`` (8
categories cycling spike / recurrent / steady; bursts of std 0.02 · span = 0.2
time units; text wording rotating by π/2 over the time range 0..10), random
train/test split 2/3 : 1/3, over 3 seeds.  Models (all neural ones: 25 epochs,
batch 64, no dropout, embedding 200, SGD momentum 0.9, lr 5e-3):

* ``DiachronicEmbedder(window=0.5, decay=1.0)`` (w and λ in the generator's
  time units: the window is 2.5 burst stds, ρ(Δt) = 1 − exp(−|Δt|) reaches
  0.63 one time unit apart), with ``loss_reduction="sum"`` (the thesis) and
  ``"sum_per_anchor"``;
* ``BinnedProcrustesEmbedder(bins=10, min_bin_size=50)`` with its default base
  (the DCM static model, 25 epochs per bin), and with ``alignment="none"``
  (unaligned control; same per-bin seeds, so the same per-bin models);
* ``TempXNetEmbedder(correlation="recency")`` with λ = 1 (thesis) and λ = 20;
* the static triplet model ``SAMEmbedder(margin_schedule="fixed",
  max_epochs=25, batch_size=64, dropout=0.0, embedding_dim=200)`` (the same
  training budget as the others; SAM's other defaults kept, e.g. the
  per-anchor loss reduction);
* ``CCACrossModal`` (linear reference).

Protocols on the test split (instants = 10 equal-width bins over the test
time range): coarse alignment mAP, local alignment mAP@10 with 50
queries per category, queries projected at the instant and kept at their own
time, time-period inference t-mAP@50 with window 0.5, and
temporally bounded mAP, micro and macro over bins.  Figures are the
mean of I→T and T→I; the orderings of the paper are checked on the
seed-mean differences.  The generator is used as is: nothing is tuned to
force an ordering.

Run::

    python benchmarks/bench_diachronic_synthetic.py          # 3 seeds (~15 min on 2 cores)
    python benchmarks/bench_diachronic_synthetic.py --world "content drift" --seeds 2

``--world NAME`` draws a world of :data:`temporal_xmodal.datasets.TEMPORAL_WORLDS` instead
(its settings over the ones above; results in ``bench_diachronic_synthetic_<name>.json``).
Every time-aware model fits with time (``use_time=True``, as in the papers): the orderings
are about the methods, not about the choice ``use_time="auto"`` makes.
    python benchmarks/bench_diachronic_synthetic.py --quick  # 1 seed, 2 epochs, n=300,
                                                             # 3 evaluation instants
"""

import time
import warnings

import numpy as np
from _common import make_parser, print_header, print_targets, target, write_results
from sklearn.model_selection import train_test_split

from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    TempXNetEmbedder,
    paper_settings,
)
from temporal_xmodal.time import TimeBins
from temporal_xmodal.datasets import TEMPORAL_WORLDS, make_temporal_crossmodal
from temporal_xmodal.estimators.binned import default_base_estimator
from temporal_xmodal.evaluation import (
    ResultTable,
    coarse_alignment,
    local_alignment,
    plot_per_bin_map,
    temporally_bounded_retrieval,
    time_period_inference,
)

WINDOW = 0.5  # DCM training window w, time units (generator range 0..10; burst std 0.2)
DECAY = 1.0  # DCM λ of ρ(Δt) = 1 − exp(−λ|Δt|), per time unit
EVAL_WINDOW = 0.5  # t-mAP@50 relevance window, time units
EVAL_BINS = 10  # instants of the per-bin protocols, over the test time range
QUERIES_PER_CATEGORY = 50

PROTOCOLS = {
    "coarse_map": "coarse mAP",
    "local_map10_instant": "local@10 inst",
    "local_map10_own": "local@10 own",
    "tmap50": "t-mAP@50",
    "bounded_map_micro": "bounded micro",
    "bounded_map_macro": "bounded macro",
}

DCM_SUM = "Diachronic (sum)"
DCM_SPA = "Diachronic (sum_per_anchor)"
BINNED = "Binned (Procrustes)"
BINNED_NONE = "Binned (no align)"
TXN1 = "TempXNet-Rec λ=1"
TXN20 = "TempXNet-Rec λ=20"
STATIC = "Static (SAM fixed)"
CCA = "CCA"


def _models(epochs, seed, nf, paper=False):
    """name -> (unfitted estimator, parameters to record); ``paper``: each with its paper's
    settings on top (:func:`temporal_xmodal.paper_settings`; the per-bin model too)."""
    neural = {"embedding_dim": 200, "max_epochs": epochs, "batch_size": 64, "dropout": 0.0}
    common = {"random_state": seed, "n_image_features": nf}
    # Full run: base_estimator=None, the DCM static model (25 epochs); --quick only
    # shortens its epochs.
    base = None if epochs == 25 else default_base_estimator().set_params(max_epochs=epochs)
    if paper:  # the DCM paper's static model: SGD at lr 5e-3
        base = (base or default_base_estimator()).set_params(
            **paper_settings(TempXNetEmbedder))
    specs = {
        DCM_SUM: (DiachronicEmbedder, {"window": WINDOW, "decay": DECAY,
                                       "loss_reduction": "sum", "max_epochs": epochs}),
        DCM_SPA: (DiachronicEmbedder, {"window": WINDOW, "decay": DECAY,
                                       "loss_reduction": "sum_per_anchor",
                                       "max_epochs": epochs}),
        BINNED: (BinnedProcrustesEmbedder, {"base_estimator": base, "bins": 10,
                                            "min_bin_size": 50, "alignment": "procrustes"}),
        BINNED_NONE: (BinnedProcrustesEmbedder, {"base_estimator": base, "bins": 10,
                                                 "min_bin_size": 50, "alignment": "none"}),
        TXN1: (TempXNetEmbedder, {"correlation": "recency", "temporal_weight": 1.0, **neural}),
        TXN20: (TempXNetEmbedder, {"correlation": "recency", "temporal_weight": 20.0, **neural}),
        STATIC: (SAMEmbedder, {"margin_schedule": "fixed", **neural}),
        CCA: (CCACrossModal, {}),
    }
    out = {}
    for name, (cls, params) in specs.items():
        kwargs = dict(params, **common) if cls is not CCACrossModal else {"n_image_features": nf}
        if cls in (DiachronicEmbedder, BinnedProcrustesEmbedder, TempXNetEmbedder):
            kwargs["use_time"] = True  # the papers' methods, with time
        if paper:
            kwargs.update(paper_settings(cls))
        record = {k: (v if v is None or isinstance(v, (int, float, str)) else repr(v))
                  for k, v in kwargs.items() if k not in ("random_state", "n_image_features")}
        out[name] = (cls(**kwargs), {"class": cls.__name__, **record})
    return out


def _evaluate(model, X, y, eval_bins, seed):
    figures, per_bin = {}, None
    figures["coarse_map"] = coarse_alignment(model, X, y)
    for mode in ("instant", "own"):
        figures[f"local_map10_{mode}"] = local_alignment(
            model, X, y, bins=eval_bins, queries_per_category=QUERIES_PER_CATEGORY, k=10,
            query_time=mode, random_state=seed)
    figures["tmap50"] = time_period_inference(model, X, y, window=EVAL_WINDOW, k=50)
    figures["bounded_map_micro"], per_bin = temporally_bounded_retrieval(
        model, X, y, bins=eval_bins, aggregate="micro")
    figures["bounded_map_macro"], _ = temporally_bounded_retrieval(
        model, X, y, bins=eval_bins, aggregate="macro")
    return figures, per_bin


def _mean_per_bin(tables):
    """Average the per-bin tables of the seeds (bins matched by index)."""
    cols = ("center", "n_items", "map_i2t", "map_t2i", "map_mean")
    stacked = {c: np.array([np.asarray(t[c], dtype=float) for t in tables]) for c in cols}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN bins stay NaN
        out = {c: np.nanmean(v, axis=0) for c, v in stacked.items()}
    out["bin"] = np.arange(len(out["center"]))
    return ResultTable(out)


def _plot(per_bin_mean, path, n_seeds, quick):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    identical = np.allclose(per_bin_mean[BINNED]["map_mean"],
                            per_bin_mean[BINNED_NONE]["map_mean"], equal_nan=True)
    shown = {k: v for k, v in per_bin_mean.items() if not (identical and k == BINNED_NONE)}
    fig, ax = plt.subplots(figsize=(10, 6))
    styles = ["-", "--", "-", ":", "-.", "--", "-", ":"]
    for (name, table), ls in zip(shown.items(), styles):
        plot_per_bin_map({name: table}, ax=ax, linestyle=ls, linewidth=2 if "Binned" in name
                         or "Diachronic" in name else 1.3)
    lows = np.concatenate([np.asarray(t["map_mean"], float) for t in shown.values()])
    ax.set_ylim(max(0.0, np.nanmin(lows) - 0.05), 1.0)
    note = " (Binned without alignment: identical, not drawn)" if identical else ""
    ax.set_title(f"Temporally bounded mAP per test bin, mean of {n_seeds} seed(s)"
                 f"{' [quick]' if quick else ''}{note}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left", ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"Per-bin plot written to {path}")


def _print_table(summary, seeds):
    print_header(f"Test-split figures (mean of I→T and T→I), mean ± std over {len(seeds)} seed(s)")
    width = 28
    print(" " * width + "".join(f"{label:>17}" for label in PROTOCOLS.values()))
    for name, entry in summary.items():
        cells = "".join(f"{entry['mean'][p]:>10.3f} ± {entry['std'][p]:.3f}" for p in PROTOCOLS)
        print(f"{name:<{width}}{cells}")


def _orderings(summary):
    m = {name: entry["mean"] for name, entry in summary.items()}

    def diff(a, b, p):
        return m[a][p] - m[b][p]

    targets = {}
    for tag, dcm in (("sum", DCM_SUM), ("spa", DCM_SPA)):
        targets[f"dcm_{tag}_coarse_beats_binned"] = target(
            diff(dcm, BINNED, "coarse_map"), 0.0, ">=",
            f"{dcm} − {BINNED}, coarse mAP (paper 0.359 vs 0.200)")
        targets[f"dcm_{tag}_local_beats_binned_own"] = target(
            m[dcm]["local_map10_instant"] - m[BINNED]["local_map10_own"], 0.0, ">=",
            f"{dcm} (query at instant) − {BINNED} (query at its own bin, the default), "
            "local mAP@10 (paper 0.322 vs 0.082)")
        targets[f"dcm_{tag}_local_beats_binned_instant"] = target(
            m[dcm]["local_map10_instant"] - m[BINNED]["local_map10_instant"], 0.0, ">=",
            f"{dcm} − {BINNED}, both queries at the instant (target_bin), local mAP@10")
        targets[f"dcm_{tag}_tmap_beats_tempxnet"] = target(
            diff(dcm, TXN1, "tmap50"), 0.0, ">=",
            f"{dcm} − {TXN1}, t-mAP@50 (paper 0.135 vs 0.061)")
    targets["tempxnet_tmap_beats_static"] = target(
        diff(TXN1, STATIC, "tmap50"), 0.0, ">=", f"{TXN1} − {STATIC}, t-mAP@50 "
        "(paper 0.061 vs 0.054)")
    targets["tempxnet20_tmap_beats_static"] = target(
        diff(TXN20, STATIC, "tmap50"), 0.0, ">=", f"{TXN20} − {STATIC}, t-mAP@50 "
        "(supplementary: stronger temporal weight)")
    others = [n for n in summary if not n.startswith("Binned")]
    for agg in ("micro", "macro"):
        p = f"bounded_map_{agg}"
        best = max(others, key=lambda n: m[n][p])
        targets[f"binned_best_bounded_{agg}"] = target(
            m[BINNED][p] - m[best][p], 0.0, ">=",
            f"{BINNED} − best non-binned ({best}), temporally bounded mAP {agg} "
            "(paper 0.724 vs ≤ 0.643)")
    return targets


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--world", default=None, choices=sorted(TEMPORAL_WORLDS),
                        help="a world of TEMPORAL_WORLDS (default: drift=1.0, the original)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--paper-settings", action="store_true",
                        help="every model with its paper's settings (paper_settings)")
    args = parser.parse_args()
    world = {"profiles": "mixed", "drift": 1.0, **TEMPORAL_WORLDS.get(args.world, {})}
    suffix = "" if args.world is None else "_" + args.world.replace(" ", "_")
    suffix += "_paper" if args.paper_settings else ""
    seeds = [0] if args.quick else list(range(args.seeds))
    epochs = 2 if args.quick else 25
    n_samples = 300 if args.quick else 3000
    n_eval_bins = 3 if args.quick else EVAL_BINS  # quick: fewer instants, the same protocols
    runs, per_bin_tables, fit_seconds, warned, params = {}, {}, {}, {}, {}
    burst_std = None
    start_all = time.perf_counter()
    for seed in seeds:
        X, y, info = make_temporal_crossmodal(n_samples, **world, return_info=True,
                                              random_state=seed)
        burst_std = float(info.burst_std)
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=1 / 3, random_state=seed)
        eval_bins = TimeBins(n_eval_bins).fit(X_te[:, -1])
        print_header(f"seed {seed}: {len(y_tr)} train / {len(y_te)} test, "
                     f"{eval_bins.n_bins_} test bins")
        for name, (model, record) in _models(epochs, seed, info.n_image_features,
                                             args.paper_settings).items():
            params[name] = record
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                start = time.perf_counter()
                model.fit(X_tr, y_tr)
                fit_s = time.perf_counter() - start
                figures, per_bin = _evaluate(model, X_te, y_te, eval_bins, seed)
            messages = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
            if messages:
                warned.setdefault(name, {})[str(seed)] = messages
            runs.setdefault(name, []).append(figures)
            per_bin_tables.setdefault(name, []).append(per_bin)
            fit_seconds.setdefault(name, []).append(fit_s)
            print(f"  {name:<28} fit {fit_s:6.1f} s  " + "  ".join(
                f"{PROTOCOLS[p]} {figures[p]['mean']:.3f}" for p in PROTOCOLS), flush=True)

    summary = {}
    for name, values in runs.items():
        summary[name] = {
            "mean": {p: float(np.mean([v[p]["mean"] for v in values])) for p in PROTOCOLS},
            "std": {p: float(np.std([v[p]["mean"] for v in values])) for p in PROTOCOLS},
            "mean_i2t": {p: float(np.mean([v[p]["i2t"] for v in values])) for p in PROTOCOLS},
            "mean_t2i": {p: float(np.mean([v[p]["t2i"] for v in values])) for p in PROTOCOLS},
            "runs": [{"seed": s, **v} for s, v in zip(seeds, values)],
            "per_bin": [t.records() for t in per_bin_tables[name]],
            "fit_seconds": fit_seconds[name],
        }
    _print_table(summary, seeds)
    targets = _orderings(summary)
    print_targets(targets)
    per_seed_diffs = {
        key: [float(r) for r in np.array([v[p]["mean"] for v in runs[a]])
              - np.array([v[q]["mean"] for v in runs[b]])]
        for key, (a, p, b, q) in {
            "dcm_spa_minus_binned_coarse": (DCM_SPA, "coarse_map", BINNED, "coarse_map"),
            "dcm_sum_minus_binned_coarse": (DCM_SUM, "coarse_map", BINNED, "coarse_map"),
            "dcm_spa_minus_binned_own_local": (DCM_SPA, "local_map10_instant", BINNED,
                                               "local_map10_own"),
            "dcm_spa_minus_tempxnet_tmap": (DCM_SPA, "tmap50", TXN1, "tmap50"),
            "dcm_sum_minus_tempxnet_tmap": (DCM_SUM, "tmap50", TXN1, "tmap50"),
            "tempxnet_minus_static_tmap": (TXN1, "tmap50", STATIC, "tmap50"),
        }.items()}
    print_header("Per-seed differences (mean of I→T and T→I)")
    for key, vals in per_seed_diffs.items():
        print(f"  {key:<34} " + "  ".join(f"{v:+.3f}" for v in vals))

    per_bin_mean = {name: _mean_per_bin(per_bin_tables[name]) for name in runs}
    args.output_dir.mkdir(parents=True, exist_ok=True)
    _plot(per_bin_mean, args.output_dir / f"bench_diachronic_synthetic{suffix}.png", len(seeds),
          args.quick)
    total = time.perf_counter() - start_all
    write_results(f"bench_diachronic_synthetic{suffix}", {
        "quick": args.quick,
        "parameters": {
            "seeds": seeds, "n_samples": n_samples, "max_epochs": epochs,
            "generator": {**world, "time_range": [0.0, 10.0], "burst_std": burst_std},
            "world": args.world, "paper_settings": args.paper_settings,
            "split": "train_test_split(test_size=1/3, random_state=seed)",
            "dcm_window": WINDOW, "dcm_decay": DECAY, "eval_window": EVAL_WINDOW,
            "eval_bins": n_eval_bins, "queries_per_category": QUERIES_PER_CATEGORY,
            "models": params, "protocols": list(PROTOCOLS),
        },
        "timings": {"total_seconds": total,
                    **{f"fit_{name}": float(np.mean(s)) for name, s in fit_seconds.items()}},
        "results": summary,
        "per_seed_differences": per_seed_diffs,
        "warnings": warned,
        "targets": targets,
    }, args.output_dir)


if __name__ == "__main__":
    main()
