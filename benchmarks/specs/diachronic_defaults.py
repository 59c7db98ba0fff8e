"""Does DCM's own temporal term pay at defaults?  Each default against the value it replaced.

Every row of ``DiachronicEmbedder`` (the defaults, the defaults before issue 46's benchmark
(``before``), the defaults with one of those put back, checkpoint by validation loss) is
fitted with L_intra and without it (``decay=0``, all else equal: rows that differ only in
``window``, ``decay`` or ``intra_margin`` share that twin); the constant-time control once
per world and seed.  *Δ L_intra*: the paired difference of t-mAP@50 (same category,
|Δt| <= 5 % of the span) and of category mAP, mean ± std over the seeds.  Worlds: ``demo``
and ``steady`` (``--worlds`` adds ``content drift``), 3,000 items, the defaults' network.
Targets: Δ L_intra >= +0.04 t-mAP@50 on demo and >= +0.20 on steady; on demo, category mAP
>= the control's and t-mAP@50 >= the control's + 0.10.  Read more in
docs/estimators/diachronic.md.  Full run: about 30 min on 2 cores with ``--n-jobs 2``.
"""

from _common import Cell, retrieval_figures, stats, target

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
#: ``--quick``: a smoke run's network.
QUICK_NET = {"hidden_dim": 32, "embedding_dim": 8, "time_dim": 8, "max_epochs": 2}
INTRA = ("window", "decay", "intra_margin")


def _worlds():
    from temporal_xmodal.datasets import TEMPORAL_WORLDS

    return {"demo": {}, "steady": TEMPORAL_WORLDS["steady"],
            "content drift": TEMPORAL_WORLDS["content drift"]}


def arguments(parser):
    parser.add_argument("--worlds", default="demo,steady",
                        help="comma-separated subset of demo, steady, content drift")


def twins():
    """Row -> the row fitted without L_intra that it is paired with, and the fits to run."""
    out, by_params, jobs = {}, {}, []
    for row, params in ROWS.items():
        off = {k: v for k, v in params.items() if k not in INTRA}
        out[row] = by_params.setdefault(tuple(sorted(off.items())), f"{row}/off")
        if out[row] == f"{row}/off":
            jobs.append((f"{row}/off", {**off, "decay": 0.0}))
        jobs.append((row, params))
    return out, jobs + [("control", {"use_time": False})]


def cells(args):
    worlds = args.worlds.split(",")
    if unknown := set(worlds) - set(_worlds()):
        raise SystemExit(f"unknown worlds {sorted(unknown)}; choose from {', '.join(_worlds())}")
    return [Cell(w, s, row, params) for w in worlds for s in args.seeds
            for row, params in twins()[1]]


def data(world, seed, args):
    from temporal_xmodal.comparison.settings import synthetic_split

    return synthetic_split(300 if args.quick else 3000, random_state=seed, **_worlds()[world])


def estimator(cell, split, args):
    from temporal_xmodal import DiachronicEmbedder

    est = DiachronicEmbedder(n_image_features=split[4], random_state=cell.seed, **cell.params)
    if args.quick:
        est.set_params(**QUICK_NET)
    return est, split[0], split[1]


def score(model, cell, split, args):
    X_te, y_te, window = split[2], split[3], split[5]
    return {**retrieval_figures(model, X_te, y_te, window, X_te[:, -1]),
            "best_epoch": int(model.fit_report_.kept_epoch)}


def report(runs, args):
    from temporal_xmodal import DiachronicEmbedder

    pairs, _ = twins()
    fits = {(r["cell"].data, r["cell"].seed, r["cell"].case):
            {k: v for k, v in r.items() if k not in ("cell", "fit_seconds", "warnings",
                                                     "still_improving")} for r in runs}
    worlds = list(dict.fromkeys(r["cell"].data for r in runs))
    summary = {}
    for world in worlds:
        summary[world] = {}
        for row in [*ROWS, "control"]:
            per_seed = [fits[(world, s, row)] for s in args.seeds]
            entry = {k: stats([f[k] for f in per_seed]) for k in ("map", "tmap50", "best_epoch")}
            if row in pairs:
                off = [fits[(world, s, pairs[row])] for s in args.seeds]
                entry["off"] = {k: stats([f[k] for f in off]) for k in ("map", "tmap50")}
                for k in ("tmap50", "map"):
                    entry[f"delta_intra_{k}"] = stats([f[k] - o[k]
                                                       for f, o in zip(per_seed, off)])
            summary[world][row] = entry
    targets = {}
    for world, threshold in (("demo", 0.04), ("steady", 0.20)):
        if world in summary:
            targets[f"{world}_intra_pays"] = target(
                summary[world]["defaults"]["delta_intra_tmap50"]["mean"], threshold, ">=",
                f"{world}: defaults' t-mAP@50 − the same fit with decay=0 (L_intra off)")
    if "demo" in summary:
        demo = summary["demo"]
        for key, threshold, label in (("map", 0.0, "category mAP"), ("tmap50", 0.10, "t-mAP@50")):
            targets[f"demo_{'map' if key == 'map' else 'tmap'}_vs_control"] = target(
                demo["defaults"][key]["mean"] - demo["control"][key]["mean"], threshold, ">=",
                f"demo: defaults' {label} − the constant-time control's")
    return {"seeds": args.seeds, "n_samples": 300 if args.quick else 3000,
            "worlds": {w: _worlds()[w] for w in worlds}, "rows": ROWS, "before": BEFORE,
            "twins": pairs,
            "defaults": {k: str(v) for k, v in DiachronicEmbedder().get_params().items()
                         if k in {*INTRA, "time_encoding", "time_bins", "time_dropout",
                                  "selection_metric"}},
            "fits": [{"world": w, "seed": s, "row": r, **f} for (w, s, r), f in fits.items()],
            "summary": summary, "targets": targets,
            "total_seconds": sum(r["seconds"] for r in runs)}
