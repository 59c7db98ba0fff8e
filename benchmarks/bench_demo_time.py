"""What time buys, and what it costs, in each kind of world: estimator × world × {time, control, Δ}.

The estimators of ``python -m temporal_xmodal compare`` (the registry, each at the settings
the main job uses, time-aware ones at their defaults, ``use_time=True``) are fitted on
:func:`temporal_xmodal.comparison.synthetic_split` in the worlds of
:data:`temporal_xmodal.datasets.TEMPORAL_WORLDS`, over several seeds:

* ``demo`` — :data:`temporal_xmodal.comparison.DEMO_WORLD` ("meaning shift"): caption wordings
  pass between categories at each era boundary, the writing style is stable, so only the date
  tells a routine caption's era;
* ``content drift`` — what each category looks like (both modalities) turns slowly with time;
* ``recurring events`` — every category recurs in bursts whose items share strong offsets;
* ``static`` — nothing about how pictures and captions relate changes with time;
* ``steady`` — the static world with every category spread evenly over the span: only the
  date separates two items of one category;
* ``wording drift`` — caption wording drifts continuously over the span;
* ``clip-like`` — :func:`~temporal_xmodal.datasets.make_clip_like`: 12 categories whose
  caption wordings pass between categories at era boundaries, in CLIP's geometry (unit-norm
  512-d vectors, a large offset shared by each modality, strong noise).

Beside them: the class-posterior reference SM (``SemanticMatchingCrossModal``; its
constant-time control is Rasiwasia et al.'s static SM) and local alignment per direction
(``local_i2t``, ``local_t2i``: queries projected at each of 10 instants, the candidates of
that instant, AP@10; Semedo & Magalhães, ACM MM 2019), with issue 54's targets.

``--world KEY=VALUE`` changes a parameter of
:func:`~temporal_xmodal.datasets.make_temporal_crossmodal` in every world (recorded as
``world_overrides``); ``--worlds`` picks some of them.  With ``--world profiles=steady`` no
category has bursts, so no caption carries event words that name its category whatever its
wording: with ``--seeds 2 --estimators Diachronic --worlds demo,static --world
profiles=steady --set Diachronic.max_epochs=100``, Diachronic beat its constant-time control
by +0.330 ± 0.030 (stop 20, ``use_time=True``).

Every time-aware estimator is also fitted and evaluated with a constant time column (its
constant-time control, same seed); Δ-time = its mAP (mean of I→T and T→I over the test
split) minus the control's.  Static estimators (SAM, CCA) get one run per world.  Also
reported: the time-window mAP@50 of the main job's table (relevant = same category and
|Δt| ≤ 5 % of the span; the control is embedded without time, the window uses the real
test times), each read twice: over every candidate and **with the date filter** (each
query's candidates restricted to the items within the window of its date: the search a
user holding the dates runs with any model, static ones included).  A time-aware model
earns its place on that question only by what it adds **beyond the filter**: Δ beyond the
filter = the stronger of its two readings minus the stronger of its control's two
(``delta_beyond_filter``).

Targets (issue "Time judged against the dates a user already has", means over the seeds,
every estimator at its defaults):

* category mAP: Diachronic ≥ SAM − 0.01 and ≥ its control − 0.01 on ``static``, ``steady``
  and ``recurring events``; ≥ SAM + 0.05 and ≥ its control + 0.03 on ``demo``, ``content
  drift`` and ``wording drift`` (the question a filter cannot answer: category retrieval
  across time where wording, meaning or content changes); ≥ Binned+Procrustes on ``wording
  drift``;
* filtered t-mAP@50: Diachronic + filter ≥ its control + filter + 0.02 on ``demo`` and
  ``wording drift``, and ≥ its control + filter − 0.005 in every world;
* TempXNet and Binned: category mAP ≥ their control − 0.02 in every world (reported; their
  pages say where their terms pay).

``--estimators Diachronic --merge`` reruns one estimator and keeps the others' runs from the
JSON already written (recorded under ``merged``), so that changing one estimator does not
cost the whole run.

Run::

    python benchmarks/bench_demo_time.py --n-jobs 2  # 3 seeds, 5 worlds, ~50 min on 2 CPU cores
    python benchmarks/bench_demo_time.py --n-jobs 2 --estimators Diachronic --merge  # ~8 min
    python benchmarks/bench_demo_time.py --quick     # 1 seed, 300 items, 3 epochs
    python benchmarks/bench_demo_time.py --worlds demo,static --set Diachronic.use_time=True
    python benchmarks/bench_demo_time.py --estimators Binned+Procrustes --binned-init independent
"""

import json
import time
import warnings

import numpy as np
import torch
from joblib import Parallel, delayed
from sklearn.base import clone

from _common import (add_settings_argument, make_parser, parse_settings, print_header,
                     print_targets, read_value, retrieval_figures, target, write_results)

from temporal_xmodal.comparison import (estimator_registry, set_matching_params, synthetic_split,
                                        with_constant_time)
from temporal_xmodal.comparison.run import beyond_filter
from temporal_xmodal.datasets import TEMPORAL_WORLDS, make_clip_like, make_temporal_crossmodal

#: The worlds, each as its overrides of the demo world (DEMO_WORLD is "meaning shift").
#: The CLIP-like world (issue 54, 4): the demo's meaning shift in CLIP's geometry
#: (:func:`~temporal_xmodal.datasets.make_clip_like`).
CLIP_WORLD = "clip-like"
WORLDS = {"demo": {}, **{name: TEMPORAL_WORLDS[name] for name in TEMPORAL_WORLDS
                         if name != "meaning shift"}, CLIP_WORLD: {}}
NAMES = ("CCA", "SM", "SAM", "TempXNet-Rec", "Diachronic", "Binned+Procrustes")
#: Worlds where what a category looks like or how it is worded changes with time: category
#: retrieval across time is what a time-aware model is for there.
CHANGING = ("demo", "content drift", "wording drift")
#: Worlds where the meaning of a category's captions or pictures moves with time (issue 54:
#: Diachronic ≥ static SM + 0.05 there).
MEANING_MOVES = ("demo", "wording drift", "content drift")
#: Worlds where time says little about how pictures and captions relate.
QUIET = ("static", "steady", "recurring events")


def parse_world(parser, items):
    """``--world KEY=VALUE`` items as generator parameters, each checked by a small draw."""
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


def _blocks(X, n_image_features):
    """``(X_image, X_text, time)`` of a numeric ``[image | text | time]`` X."""
    return X[:, :n_image_features], X[:, n_image_features:-1], X[:, -1]


def run_world(world, seed, n_samples, max_epochs, names=NAMES, settings=None, overrides=None):
    generator = make_clip_like if world == CLIP_WORLD else make_temporal_crossmodal
    X_tr, y_tr, X_te, y_te, n_img, window = synthetic_split(
        n_samples, random_state=seed, generator=generator,
        **{**(overrides or {}), **WORLDS[world]})
    time_te = X_te[:, -1]
    const_tr = with_constant_time(_blocks(X_tr, n_img))
    const_te = with_constant_time(_blocks(X_te, n_img))
    out = {}
    for name, entry in estimator_registry(n_img, seed, None).items():
        if name not in names:
            continue
        est = entry.estimator
        est.set_params(**(settings or {}).get(name, {}))
        if max_epochs is not None:
            set_matching_params(est, max_epochs=max_epochs)
        start = time.perf_counter()
        fitted, short = _fit(clone(est), X_tr, y_tr)
        row = {**retrieval_figures(fitted, X_te, y_te, window, time_te), "still_improving": short}
        if entry.time_role != "none":
            fitted, short = _fit(clone(est), const_tr, y_tr)
            control = retrieval_figures(fitted, const_te, y_te, window, time_te)
            row["control"] = control["map"]
            row.update({f"control_{key}": value for key, value in control.items()
                        if key != "map"})
            row["control_still_improving"] = short
            row["delta_time"] = row["map"] - row["control"]
            row["delta_tmap50"] = row["tmap50"] - row["control_tmap50"]
            row["delta_filtered"] = row["tmap50_filter"] - row["control_tmap50_filter"]
            row["delta_beyond_filter"] = beyond_filter(row, control)  # the main job's Δ>filter
        row["seconds"] = time.perf_counter() - start
        out[name] = row
        flags = [label for label, key in (("model", "still_improving"),
                                          ("control", "control_still_improving")) if row.get(key)]
        print(f"  {world:16s} seed {seed} {name:18s} mAP {row['map']:.4f}"
              + (f"  control {row['control']:.4f}  Δ-time {row['delta_time']:+.4f}"
                 if "control" in row else "")
              + f"  t-mAP@50 {row['tmap50']:.4f} + filter {row['tmap50_filter']:.4f}"
              + (f" (beyond the filter {row['delta_beyond_filter']:+.4f})" if "control" in row
                 else "")
              + f"  ({row['seconds']:.0f} s)"
              + (f"  [still improving at the last epoch: {', '.join(flags)}]" if flags else ""),
              flush=True)
    return out


def _run(world, seed, n_samples, max_epochs, names, settings, overrides, threads):
    """:func:`run_world` in a worker with ``threads`` torch threads: ``(world, seed, runs)``."""
    if threads:
        torch.set_num_threads(threads)
    return world, seed, run_world(world, seed, n_samples, max_epochs, names, settings, overrides)


def _fit(estimator, X, y):
    """The fitted estimator and whether it (or a model inside it) was still improving at its
    last epoch (its ``fit_report_``; a closed-form model has none); warnings are silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(X, y)
    report = getattr(estimator, "fit_report_", None)
    return estimator, bool(report is not None and report.still_improving)


def _stats(values):
    values = np.asarray(values, dtype=float)
    return {"mean": float(values.mean()), "std": float(values.std(ddof=1)) if len(values) > 1
            else 0.0, "values": values.tolist()}


def _merge(args, runs, names, seeds):
    """Add the other estimators' runs of the JSON in ``args.output_dir`` to ``runs`` (in
    place): per world and seed, the new runs of ``names`` replace the old ones.  Returns what
    was kept, for the JSON."""
    path = args.output_dir / _json_name(args.label)
    old = json.loads(path.read_text())
    if old["seeds"] != seeds or old["quick"] != args.quick:
        raise SystemExit(f"--merge: {path} holds seeds {old['seeds']} (quick={old['quick']}); "
                         f"this run has seeds {seeds} (quick={args.quick})")
    for world, per_seed in old["runs"].items():
        if world not in runs:
            runs[world] = [{} for _ in seeds]
        for new, previous in zip(runs[world], per_seed):
            new.update({k: v for k, v in previous.items() if k not in names and k not in new})
    return {"rerun": names, "kept_from": old["date"], "kept_command": old["command"]}


def _json_name(label):
    return f"bench_demo_time{'_' + label if label else ''}.json"


def _targets(summary):
    """The issue's targets over the summary (those whose rows ran)."""
    targets = {}

    def mean(world, name, key):
        return summary.get(world, {}).get(name, {}).get(key, {}).get("mean")

    def add(key, value, threshold, description):
        if value is not None:
            targets[key] = target(value, threshold, ">=", description)

    for world in summary:
        dcm, sam = mean(world, "Diachronic", "map"), mean(world, "SAM", "map")
        control = mean(world, "Diachronic", "control")
        changing = world in CHANGING
        if world in CHANGING or world in QUIET:
            need_sam, need_control = (0.05, 0.03) if changing else (-0.01, -0.01)
            if dcm is not None and sam is not None:
                add(f"{world}_Diachronic_map_vs_SAM", dcm - sam, need_sam,
                    f"{world}: Diachronic category mAP − SAM's")
            if dcm is not None and control is not None:
                add(f"{world}_Diachronic_map_vs_control", dcm - control, need_control,
                    f"{world}: Diachronic category mAP − its constant-time control's")
        add(f"{world}_Diachronic_filtered", mean(world, "Diachronic", "delta_filtered"),
            0.02 if world in ("demo", "wording drift") else -0.005,
            f"{world}: Diachronic + filter − its control + filter (t-mAP@50)")
        for name in ("TempXNet-Rec", "Binned+Procrustes"):
            add(f"{world}_{name}_delta_time", mean(world, name, "delta_time"), -0.02,
                f"{world}: {name} category mAP − its control's")
    _issue54_targets(summary, mean, add)
    binned = mean("wording drift", "Binned+Procrustes", "map")
    dcm = mean("wording drift", "Diachronic", "map")
    if binned is not None and dcm is not None:
        add("wording drift_Diachronic_map_vs_Binned", dcm - binned, 0.0,
            "wording drift: Diachronic category mAP − Binned+Procrustes'")
    return targets


def _issue54_targets(summary, mean, add):
    """Issue 54: the neural models against the class-posterior reference (SM, static: its
    constant-time control), and Diachronic's local alignment (a query read at another
    instant) and filtered figure against SAM and Binned."""
    for world in summary:
        reference = mean(world, "SM", "control")
        for name in ("SAM", "TempXNet-Rec", "Diachronic", "Binned+Procrustes"):
            value = mean(world, name, "map")
            if reference is not None and value is not None:
                add(f"{world}_{name}_map_vs_SM", value - reference, -0.02,
                    f"{world}: {name} category mAP − static SM's")
        if world in MEANING_MOVES and reference is not None:
            value = mean(world, "Diachronic", "map")
            if value is not None:
                add(f"{world}_Diachronic_map_vs_SM_plus", value - reference, 0.05,
                    f"{world}: Diachronic category mAP − static SM's (meaning moves)")
        quiet = world in ("static", "steady")
        for direction in ("local_i2t", "local_t2i"):
            dcm, sam = mean(world, "Diachronic", direction), mean(world, "SAM", direction)
            binned = mean(world, "Binned+Procrustes", direction)
            if dcm is None or sam is None:
                continue
            if quiet:
                add(f"{world}_Diachronic_{direction}_vs_SAM", dcm - sam, -0.01,
                    f"{world}: Diachronic {direction} − SAM's (nothing changes)")
            elif world in CHANGING or world.startswith("clip"):
                add(f"{world}_Diachronic_{direction}_vs_SAM", dcm - sam, 0.02,
                    f"{world}: Diachronic {direction} − SAM's")
                if binned is not None:
                    add(f"{world}_Diachronic_{direction}_vs_Binned", dcm - binned, 0.0,
                        f"{world}: Diachronic {direction} − Binned+Procrustes'")
        if "drift" in world:
            dcm, sam = (mean(world, n, "tmap50_filter") for n in ("Diachronic", "SAM"))
            if dcm is not None and sam is not None:
                add(f"{world}_Diachronic_filter_vs_SAM_filter", dcm - sam, 0.01,
                    f"{world}: Diachronic + filter − SAM + filter (t-mAP@50)")


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--estimators", default=",".join(NAMES),
                        help="comma-separated subset of " + ", ".join(NAMES))
    parser.add_argument("--binned-init", default="auto", choices=["auto", "independent"],
                        help="Binned+Procrustes' init ('independent': the paper's per-bin "
                             "models from scratch)")
    parser.add_argument("--worlds", default=",".join(WORLDS),
                        help="comma-separated subset of " + ", ".join(WORLDS))
    parser.add_argument("--world", action="append", default=[], metavar="KEY=VALUE",
                        help="a parameter of make_temporal_crossmodal for both worlds, e.g. "
                             "--world profiles=steady (repeatable; the static world keeps "
                             "meaning_shift=0)")
    parser.add_argument("--n-jobs", type=int, default=1,
                        help="(world, seed) runs in parallel processes, each with "
                             "cores / n-jobs torch threads")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other estimators' runs from the JSON already in "
                             "--output-dir (same seeds), replacing only those of "
                             "--estimators, and recompute the summary and targets over both")
    parser.add_argument("--label", default="",
                        help="suffix of the JSON's name (bench_demo_time_<label>.json), e.g. "
                             "'before' for a run at the defaults a change replaces")
    add_settings_argument(parser)
    args = parser.parse_args()
    world_overrides = parse_world(parser, args.world)
    names = args.estimators.split(",")
    settings = parse_settings(parser, args.settings, {
        name: entry.estimator for name, entry in estimator_registry(1, 0, None).items()})
    # --binned-init is a shorthand for --set Binned+Procrustes.init=... (--set wins)
    if args.binned_init != "auto":
        settings.setdefault("Binned+Procrustes", {}).setdefault("init", args.binned_init)
    worlds = args.worlds.split(",")
    if unknown := set(worlds) - set(WORLDS):
        parser.error(f"unknown worlds {sorted(unknown)}; choose from {', '.join(WORLDS)}")
    if unknown := set(names) - set(NAMES):
        parser.error(f"unknown estimators {sorted(unknown)}; choose from {', '.join(NAMES)}")
    seeds = range(1 if args.quick else args.seeds)
    n_samples, max_epochs = (300, 3) if args.quick else (3000, None)
    threads = max(1, (torch.get_num_threads()) // args.n_jobs) if args.n_jobs > 1 else 0
    done = Parallel(n_jobs=args.n_jobs)(
        delayed(_run)(world, s, n_samples, max_epochs, names, settings, world_overrides, threads)
        for world in worlds for s in seeds)
    runs = {world: [r for w, _, r in sorted(done, key=lambda d: d[1]) if w == world]
            for world in worlds}
    merged = _merge(args, runs, names, list(seeds)) if args.merge else None
    summary = {}
    for world, per_seed in runs.items():
        summary[world] = {}
        for name in per_seed[0]:
            keys = set.intersection(*(set(r[name]) for r in per_seed)) - {"seconds"}
            summary[world][name] = {key: _stats([r[name][key] for r in per_seed])
                                    for key in per_seed[0][name] if key in keys}
    print_header(f"mAP over {len(seeds)} seed(s), mean ± std")
    for world, rows in summary.items():
        for name, row in rows.items():
            text = f"  {world:16s} {name:18s} mAP {row['map']['mean']:.4f} ± {row['map']['std']:.4f}"
            if "delta_time" in row:
                d = row["delta_time"]
                text += (f"  control {row['control']['mean']:.4f} ± {row['control']['std']:.4f}"
                         f"  Δ-time {d['mean']:+.4f} ± {d['std']:.4f}")
            text += (f"  | t-mAP@50 {row['tmap50']['mean']:.4f}, + filter "
                     f"{row['tmap50_filter']['mean']:.4f} ± {row['tmap50_filter']['std']:.4f}")
            text += (f"  | local@10 I→T {row['local_i2t']['mean']:.4f} T→I "
                     f"{row['local_t2i']['mean']:.4f}")
            if "delta_beyond_filter" in row:
                d = row["delta_beyond_filter"]
                text += (f"  control + filter {row['control_tmap50_filter']['mean']:.4f}"
                         f"  beyond the filter {d['mean']:+.4f} ± {d['std']:.4f}")
            print(text)
    targets = _targets(summary)
    print_targets(targets)
    write_results(_json_name(args.label)[:-5],
                         {"quick": args.quick, "seeds": list(seeds), "n_samples": n_samples,
                          "binned_init": args.binned_init, "settings": settings,
                          "worlds": {name: WORLDS[name] for name in runs},
                          "world_overrides": world_overrides, "runs": runs, "merged": merged,
                          "summary": summary,
                          "targets": targets}, args.output_dir)


if __name__ == "__main__":
    main()
