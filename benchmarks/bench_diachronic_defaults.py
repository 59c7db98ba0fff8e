"""Does DCM's own temporal term pay at defaults?  Each default against the value it replaced.

``DiachronicEmbedder``'s same-category term L_intra (soft negatives: same-category items more
than ``window`` apart, weighted by ρ = 1 − exp(−λ|Δt|); Semedo & Magalhães, ACM MM 2019,
Eq. 10) is switched off by ``decay=0``.  Every row is fitted twice on the same world and seed,
with L_intra and without (``decay=0``, everything else equal), and *Δ L_intra* is the paired
difference of the time-window mAP@50 (relevant = same category and ``|Δt| <=`` 5 % of the
span, each item at its own time: the question the term is for), mean ± std over the seeds;
category mAP is reported beside it.

Rows: the defaults (``defaults``), the defaults before this benchmark existed (``before``:
checkpoint on category mAP, time dropout 0.5, one min-max scalar as the time input, window 4
years, decay 0.1 per year, one margin for both terms), and the defaults with one of them put
back at a time (``... <- before``), so that each cause is measured alone; and the defaults
with the checkpoint of lowest validation loss (the paper's criterion), the other candidate for
a time-aware checkpoint.  The constant-time
control (``use_time=False``, the same seed) is fitted once per world and seed.

Worlds (``synthetic_split``, 3,000 items, 70/30 split, time 0-10 in years, the defaults'
network and 25 epochs):

* ``demo`` — the compare job's world (meanings pass between categories at era boundaries);
* ``steady`` — :data:`~temporal_xmodal.datasets.TEMPORAL_WORLDS` ``"steady"``: every category
  spread evenly over the span, nothing in an item dates it, so only the date separates two
  items of one category (the structure L_intra is for);
* ``content drift`` — each category's content turns with time: the content already tells
  the date, where L_intra is expected to cost (``--worlds`` adds it).

Targets (issue "DCM's temporal term pays at defaults", means over the seeds): defaults' Δ
L_intra ≥ +0.04 t-mAP@50 on ``demo`` and ≥ +0.20 on ``steady``; on ``demo`` the defaults'
category mAP ≥ the constant-time control's and t-mAP@50 ≥ the control's + 0.10.

Run::

    python benchmarks/bench_diachronic_defaults.py --n-jobs 2   # ~20 min on 2 CPU cores
    python benchmarks/bench_diachronic_defaults.py --quick      # a few seconds
"""

import time
import warnings

import numpy as np
import torch
from joblib import Parallel, delayed

from _common import (make_parser, print_header, print_targets, retrieval_figures, target,
                     write_results)

from temporal_xmodal import DiachronicEmbedder
from temporal_xmodal.comparison import synthetic_split
from temporal_xmodal.datasets import TEMPORAL_WORLDS

WORLDS = {"demo": {}, "steady": TEMPORAL_WORLDS["steady"],
          "content drift": TEMPORAL_WORLDS["content drift"]}
#: The defaults that this benchmark chose, each with the value it replaced.
BEFORE = {"selection_metric": "valid_map", "time_dropout": 0.5, "time_encoding": "minmax",
          "window+decay": ("4Y", "0.1/Y"), "intra_margin": None}
#: Row name -> parameters over the defaults.
ROWS = {"defaults": {},
        **{f"{knob} <- before": dict(zip(knob.split("+"), value)) if "+" in knob
           else {knob: value} for knob, value in BEFORE.items()},
        "selection_metric = valid_loss": {"selection_metric": "valid_loss"},
        "before": {"selection_metric": "valid_map", "time_dropout": 0.5,
                   "time_encoding": "minmax", "time_bins": 12, "window": "4Y",
                   "decay": "0.1/Y", "intra_margin": None}}


#: ``--quick``: a smoke run's network (the figures are not the targets').
QUICK_NET = {"hidden_dim": 32, "embedding_dim": 8, "time_dim": 8, "max_epochs": 2}


def _fit(world, seed, row, params, n_samples, quick, threads):
    """One fit: ``(world, seed, row, figures)``; ``row`` ends in ``"/off"`` for ``decay=0``."""
    torch.set_num_threads(threads)
    X_tr, y_tr, X_te, y_te, n_img, window = synthetic_split(
        n_samples, random_state=seed, **WORLDS[world])
    est = DiachronicEmbedder(n_image_features=n_img, random_state=seed, **params)
    if quick:
        est.set_params(**QUICK_NET)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # still-improving warnings: recorded as best_epoch
        est.fit(X_tr, y_tr)
    return world, seed, row, {**retrieval_figures(est, X_te, y_te, window, X_te[:, -1]),
                              "best_epoch": int(est.best_epoch_),
                              "seconds": time.perf_counter() - start}


def _jobs(worlds, seeds):
    """Every fit once: a row with L_intra, its twin without (``decay=0``: window, decay and
    intra_margin then act on nothing, so rows differing only in those share a twin), and the
    constant-time control."""
    jobs, twins, by_params = [], {}, {}
    for name, params in ROWS.items():
        off = {k: v for k, v in params.items() if k not in ("window", "decay", "intra_margin")}
        twins[name] = by_params.setdefault(tuple(sorted(off.items())), f"{name}/off")
        if twins[name] == f"{name}/off":
            jobs.append((f"{name}/off", {**off, "decay": 0.0}))
        jobs.append((name, params))
    jobs.append(("control", {"use_time": False}))
    return [(w, s, row, p) for w in worlds for s in seeds for row, p in jobs], twins


def _stats(values):
    values = np.asarray(values, dtype=float)
    return {"mean": float(values.mean()),
            "std": float(values.std(ddof=1)) if len(values) > 1 else 0.0,
            "values": values.tolist()}


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--worlds", default="demo,steady",
                        help="comma-separated subset of " + ", ".join(WORLDS))
    parser.add_argument("--n-jobs", type=int, default=1, help="fits in parallel processes")
    args = parser.parse_args()
    worlds = args.worlds.split(",")
    if unknown := set(worlds) - set(WORLDS):
        parser.error(f"unknown worlds {sorted(unknown)}; choose from {', '.join(WORLDS)}")
    seeds = [0] if args.quick else list(range(args.seeds))
    n_samples = 300 if args.quick else 3000
    threads = max(1, torch.get_num_threads() // max(1, args.n_jobs))
    jobs, twins = _jobs(worlds, seeds)
    start = time.perf_counter()
    done = Parallel(n_jobs=args.n_jobs, verbose=0)(
        delayed(_fit)(w, s, row, p, n_samples, args.quick, threads) for w, s, row, p in jobs)
    fits = {(w, s, row): f for w, s, row, f in done}

    summary = {}
    print_header(f"t-mAP@50 and category mAP, {len(seeds)} seed(s), mean ± std; "
                 "Δ L_intra: paired with decay=0")
    for world in worlds:
        summary[world] = {}
        control = [fits[(world, s, "control")] for s in seeds]
        rows = {**{name: [fits[(world, s, name)] for s in seeds] for name in ROWS},
                "control": control}
        for name, per_seed in rows.items():
            entry = {key: _stats([f[key] for f in per_seed])
                     for key in ("map", "tmap50", "best_epoch")}
            if name in twins:
                off = [fits[(world, s, twins[name])] for s in seeds]
                entry["off"] = {key: _stats([f[key] for f in off]) for key in ("map", "tmap50")}
                entry["delta_intra_tmap50"] = _stats(
                    [f["tmap50"] - o["tmap50"] for f, o in zip(per_seed, off)])
                entry["delta_intra_map"] = _stats(
                    [f["map"] - o["map"] for f, o in zip(per_seed, off)])
            summary[world][name] = entry
            text = (f"  {world:13s} {name:30s} t-mAP@50 {entry['tmap50']['mean']:.3f} ± "
                    f"{entry['tmap50']['std']:.3f}  mAP {entry['map']['mean']:.3f} ± "
                    f"{entry['map']['std']:.3f}  best epoch {entry['best_epoch']['mean']:4.1f}")
            if "delta_intra_tmap50" in entry:
                d, m = entry["delta_intra_tmap50"], entry["delta_intra_map"]
                text += (f"  | Δ L_intra t-mAP@50 {d['mean']:+.3f} ± {d['std']:.3f}, "
                         f"mAP {m['mean']:+.3f}")
            print(text, flush=True)

    targets = {}
    for world, threshold in (("demo", 0.04), ("steady", 0.20)):
        if world in summary:
            targets[f"{world}_intra_pays"] = target(
                summary[world]["defaults"]["delta_intra_tmap50"]["mean"], threshold, ">=",
                f"{world}: defaults' t-mAP@50 − the same fit with decay=0 (L_intra off)")
    if "demo" in summary:
        demo = summary["demo"]
        targets["demo_map_vs_control"] = target(
            demo["defaults"]["map"]["mean"] - demo["control"]["map"]["mean"], 0.0, ">=",
            "demo: defaults' category mAP − the constant-time control's")
        targets["demo_tmap_vs_control"] = target(
            demo["defaults"]["tmap50"]["mean"] - demo["control"]["tmap50"]["mean"], 0.10, ">=",
            "demo: defaults' t-mAP@50 − the constant-time control's")
    print_targets(targets)
    write_results("bench_diachronic_defaults", {
        "quick": args.quick, "seeds": seeds, "n_samples": n_samples,
        "worlds": {w: WORLDS[w] for w in worlds}, "rows": ROWS, "before": BEFORE,
        "twins": twins,
        "defaults": {k: str(v) for k, v in DiachronicEmbedder().get_params().items()
                     if k in {"window", "decay", "intra_margin", "time_encoding", "time_bins",
                              "time_dropout", "selection_metric"}},
        "fits": [{"world": w, "seed": s, "row": r, **f} for (w, s, r), f in fits.items()],
        "summary": summary, "targets": targets,
        "total_seconds": time.perf_counter() - start}, args.output_dir)


if __name__ == "__main__":
    main()
