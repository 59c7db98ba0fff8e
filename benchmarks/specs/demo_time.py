"""What time buys in each kind of world: estimator x world x {time, constant-time control}.

The compare job's estimators (its registry, time-aware ones at their defaults) on
``synthetic_split`` of each world of ``TEMPORAL_WORLDS`` (``demo`` is the job's meaning-shift
world) and of ``make_clip_like`` (``clip-like``), 3,000 items, 3 seeds; every time-aware
estimator also with a constant time column (its control, same seed).  Figures per run
(:func:`_common.retrieval_figures`): category mAP, t-mAP@50 over every candidate and with
the date filter, local alignment per direction; Δ beyond the filter = the stronger of the
model's two t-mAP@50 readings minus the stronger of its control's.  The targets (issue
"Time judged against the dates a user already has", and issue 54's against the
class-posterior reference SM) are in :func:`targets`; read more in
docs/estimators/diachronic.md.

``--estimators NAME --merge`` reruns some estimators and keeps the others' runs from the
JSON in ``--output-dir``; ``--world KEY=VALUE`` overrides a generator parameter in every
world; ``--set NAME.PARAM=VALUE`` sets an estimator's parameter.  Full run: about 50 min on
2 cores with ``--n-jobs 2``.
"""

import json

from _common import (Cell, add_settings_argument, parse_settings, read_value,
                     retrieval_figures, stats, target)

CLIP_WORLD = "clip-like"
NAMES = ("CCA", "SM", "SAM", "TempXNet-Rec", "Diachronic", "Binned+Procrustes")
#: Worlds where what a category looks like or how it is worded changes with time.
CHANGING = ("demo", "content drift", "wording drift")
#: Worlds where time says little about how pictures and captions relate.
QUIET = ("static", "steady", "recurring events")


def _worlds():
    """World name -> its overrides of the demo world (``DEMO_WORLD`` is "meaning shift")."""
    from temporal_xmodal.datasets import TEMPORAL_WORLDS

    return {"demo": {}, **{name: TEMPORAL_WORLDS[name] for name in TEMPORAL_WORLDS
                           if name != "meaning shift"}, CLIP_WORLD: {}}


def _registry(n_image_features=1, seed=0):
    from temporal_xmodal.comparison.settings import estimator_registry

    return estimator_registry(n_image_features, seed, None)


def arguments(parser):
    parser.add_argument("--estimators", default=",".join(NAMES),
                        help="comma-separated subset of " + ", ".join(NAMES))
    parser.add_argument("--worlds", default=None, help="comma-separated subset of the worlds")
    parser.add_argument("--world", action="append", default=[], metavar="KEY=VALUE",
                        help="a parameter of make_temporal_crossmodal in every world")
    parser.add_argument("--binned-init", default="auto", choices=["auto", "independent"],
                        help="shorthand for --set Binned+Procrustes.init=...")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other estimators' runs of the JSON in --output-dir")
    parser.add_argument("--label", default="", help="the JSON is bench_demo_time_<label>.json")
    add_settings_argument(parser)


def parse_world(parser, items):
    """``--world KEY=VALUE`` items as generator parameters, each checked by a small draw."""
    from temporal_xmodal.comparison.settings import synthetic_split

    world = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not (sep and key):
            parser.error(f"--world {item!r}: expected KEY=VALUE")
        world[key] = read_value(raw)
    try:
        synthetic_split(200, **world)
    except (TypeError, ValueError) as error:
        parser.error(f"--world {' '.join(items)}: {error}")
    return world


def name(args):
    return "bench_demo_time" + (f"_{args.label}" if args.label else "")


def cells(args):
    import argparse

    parser = argparse.ArgumentParser(prog="run.py demo_time")
    args.world_overrides = parse_world(parser, args.world)
    args.names = args.estimators.split(",")
    registry = _registry()
    args.settings = parse_settings(parser, args.settings,
                                   {n: entry.estimator for n, entry in registry.items()})
    if args.binned_init != "auto":
        args.settings.setdefault("Binned+Procrustes", {}).setdefault("init", args.binned_init)
    args.world_names = args.worlds.split(",") if args.worlds else list(_worlds())
    for unknown, known in ((set(args.world_names) - set(_worlds()), _worlds()),
                           (set(args.names) - set(NAMES), NAMES)):
        if unknown:
            parser.error(f"unknown {sorted(unknown)}; choose from {', '.join(known)}")
    return [Cell(world, seed, n, {"control": control})
            for world in args.world_names for seed in args.seeds
            for n, entry in registry.items() if n in args.names
            for control in ((False, True) if entry.time_role != "none" else (False,))]


def data(world, seed, args):
    from temporal_xmodal.comparison.settings import synthetic_split, with_constant_time
    from temporal_xmodal.datasets import make_clip_like, make_temporal_crossmodal

    X_tr, y_tr, X_te, y_te, n_img, window = synthetic_split(
        300 if args.quick else 3000, random_state=seed,
        generator=make_clip_like if world == CLIP_WORLD else make_temporal_crossmodal,
        **{**args.world_overrides, **_worlds()[world]})

    def constant(X):
        return with_constant_time((X[:, :n_img], X[:, n_img:-1], X[:, -1]))

    return {"train": (X_tr, y_tr), "test": (X_te, y_te), "control_train": (constant(X_tr), y_tr),
            "control_test": (constant(X_te), y_te), "window": window,
            "registry": _registry(n_img, seed)}


def estimator(cell, split, args):
    from sklearn.base import clone

    from temporal_xmodal.comparison.settings import set_matching_params

    est = clone(split["registry"][cell.case].estimator)
    est.set_params(**args.settings.get(cell.case, {}))
    if args.quick:
        set_matching_params(est, max_epochs=3)
    return (est, *split["control_train" if cell.params["control"] else "train"])


def score(model, cell, split, args):
    X, y = split["control_test" if cell.params["control"] else "test"]
    return retrieval_figures(model, X, y, split["window"], split["test"][0][:, -1])


def _row(runs):
    """A (world, seed, estimator) row of the JSON: the model's figures, its control's
    prefixed ``control_`` and the differences."""
    model = next(r for r in runs if not r["cell"].params["control"])
    figures = {k: v for k, v in model.items() if k not in ("cell", "fit_seconds", "seconds",
                                                           "warnings", "still_improving")}
    row = {**figures, "still_improving": model["still_improving"]}
    for control in (r for r in runs if r["cell"].params["control"]):
        row["control"] = control["map"]
        row.update({f"control_{k}": control[k] for k in figures if k != "map"})
        row["control_still_improving"] = control["still_improving"]
        row["delta_time"] = row["map"] - row["control"]
        row["delta_tmap50"] = row["tmap50"] - row["control_tmap50"]
        row["delta_filtered"] = row["tmap50_filter"] - row["control_tmap50_filter"]
        row["delta_beyond_filter"] = (max(row["tmap50"], row["tmap50_filter"])
                                      - max(control["tmap50"], control["tmap50_filter"]))
    row["seconds"] = sum(r["seconds"] for r in runs)
    return row


def _merge(args, runs):
    """Add the other estimators' runs of the JSON in ``--output-dir`` to ``runs``; return
    what was kept, for the JSON."""
    path = args.output_dir / f"{name(args)}.json"
    old = json.loads(path.read_text())
    if old["seeds"] != args.seeds or old["quick"] != args.quick:
        raise SystemExit(f"--merge: {path} holds seeds {old['seeds']} (quick={old['quick']}); "
                         f"this run has seeds {args.seeds} (quick={args.quick})")
    for world, per_seed in old["runs"].items():
        runs.setdefault(world, [{} for _ in args.seeds])
        for new, previous in zip(runs[world], per_seed):
            new.update({k: v for k, v in previous.items() if k not in args.names and k not in new})
    return {"rerun": args.names, "kept_from": old["date"], "kept_command": old["command"]}


def report(runs, args):
    by_row = {}
    for run in runs:
        c = run["cell"]
        by_row.setdefault(c.data, {}).setdefault(c.seed, {}).setdefault(c.case, []).append(run)
    table = {world: [{n: _row(r) for n, r in seeds[s].items()} for s in args.seeds]
             for world, seeds in by_row.items()}
    merged = _merge(args, table) if args.merge else None
    summary = {}
    for world, per_seed in table.items():
        summary[world] = {}
        for n in per_seed[0]:
            keys = set.intersection(*(set(r[n]) for r in per_seed)) - {"seconds"}
            summary[world][n] = {k: stats([r[n][k] for r in per_seed])
                                 for k in per_seed[0][n] if k in keys}
    worlds = _worlds()
    return {"seeds": args.seeds, "n_samples": 300 if args.quick else 3000,
            "binned_init": args.binned_init, "settings": args.settings,
            "worlds": {w: worlds[w] for w in table}, "world_overrides": args.world_overrides,
            "runs": table, "merged": merged, "summary": summary, "targets": targets(summary)}


def targets(summary):
    """The issues' targets over the summary (those whose rows ran)."""
    out = {}

    def mean(world, est, key):
        return summary.get(world, {}).get(est, {}).get(key, {}).get("mean")

    def add(key, a, b, threshold, description):
        if a is not None and b is not None:
            out[key] = target(a - b, threshold, ">=", description)

    for world in summary:
        dcm, changing = mean(world, "Diachronic", "map"), world in CHANGING
        if changing or world in QUIET:
            add(f"{world}_Diachronic_map_vs_SAM", dcm, mean(world, "SAM", "map"),
                0.05 if changing else -0.01, f"{world}: Diachronic category mAP − SAM's")
            add(f"{world}_Diachronic_map_vs_control", dcm, mean(world, "Diachronic", "control"),
                0.03 if changing else -0.01,
                f"{world}: Diachronic category mAP − its constant-time control's")
        add(f"{world}_Diachronic_filtered", mean(world, "Diachronic", "delta_filtered"), 0.0,
            0.02 if world in ("demo", "wording drift") else -0.005,
            f"{world}: Diachronic + filter − its control + filter (t-mAP@50)")
        for est in ("TempXNet-Rec", "Binned+Procrustes"):
            add(f"{world}_{est}_delta_time", mean(world, est, "delta_time"), 0.0, -0.02,
                f"{world}: {est} category mAP − its control's")
    for world in summary:  # issue 54: against static SM (SM's control), local alignment
        reference = mean(world, "SM", "control")
        for est in ("SAM", "TempXNet-Rec", "Diachronic", "Binned+Procrustes"):
            add(f"{world}_{est}_map_vs_SM", mean(world, est, "map"), reference, -0.02,
                f"{world}: {est} category mAP − static SM's")
        if world in CHANGING:
            add(f"{world}_Diachronic_map_vs_SM_plus", mean(world, "Diachronic", "map"),
                reference, 0.05, f"{world}: Diachronic category mAP − static SM's "
                "(meaning moves)")
        for d in ("local_i2t", "local_t2i"):
            dcm, sam = mean(world, "Diachronic", d), mean(world, "SAM", d)
            if dcm is None or sam is None:
                continue
            if world in ("static", "steady"):
                add(f"{world}_Diachronic_{d}_vs_SAM", dcm, sam, -0.01,
                    f"{world}: Diachronic {d} − SAM's (nothing changes)")
            elif world in CHANGING or world.startswith("clip"):
                add(f"{world}_Diachronic_{d}_vs_SAM", dcm, sam, 0.02,
                    f"{world}: Diachronic {d} − SAM's")
                add(f"{world}_Diachronic_{d}_vs_Binned", dcm,
                    mean(world, "Binned+Procrustes", d), 0.0,
                    f"{world}: Diachronic {d} − Binned+Procrustes'")
        if "drift" in world:
            add(f"{world}_Diachronic_filter_vs_SAM_filter",
                mean(world, "Diachronic", "tmap50_filter"), mean(world, "SAM", "tmap50_filter"),
                0.01, f"{world}: Diachronic + filter − SAM + filter (t-mAP@50)")
    add("wording drift_Diachronic_map_vs_Binned", mean("wording drift", "Diachronic", "map"),
        mean("wording drift", "Binned+Procrustes", "map"), 0.0,
        "wording drift: Diachronic category mAP − Binned+Procrustes'")
    return out
