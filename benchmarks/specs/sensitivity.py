"""Sensitivity of the temporal knobs: which ones move which protocol, and by how much.

Each temporal knob of Diachronic (``window``, ``decay``, both together, ``intra_margin``,
``intra_balance``), Binned (``bins``, ``fine_tune_epochs``) and TempXNet
(``temporal_weight``, ``bandwidth``) moves over its documented range, one at a time, the
others at the estimator's defaults (``--at KNOB=VALUE`` moves that point).  Data: the
compare job's synthetic worlds (``--world``), 1,500 items, a random 70/30 split, 3 seeds;
smaller networks than the defaults (hidden 256, D 64, 10 epochs).  Protocols on the test
rows (:func:`temporal_xmodal.evaluation.evaluate_estimator`): category mAP, t-mAP@50, local
alignment, temporally bounded mAP.  Summary per knob: the mean over the seeds per value,
*range* (largest minus smallest mean) and *noise* (the largest std over its values).
Full run: about 7 min on 2 cores.
"""

import numpy as np

from _common import Cell, read_value

#: The protocols: key of evaluate_estimator's figures -> name in the tables.
PROTOCOLS = {"map": "mAP", "tmap50": "t-mAP@50", "local_map10": "local@10",
             "bounded_map": "bin mAP"}
#: knob -> values (the documented range), one knob at a time; window and decay as shares
#: of the span, "window+decay" both together.
KNOBS = {
    "Diachronic": {"window": ["1%", "2.5%", "5%", "10%", "40%"],
                   "decay": ["0/Y", "1%", "5%", "20%", "100%"],
                   "window+decay": [("1%", "1%"), ("2.5%", "2.5%"), ("5%", "5%"),
                                    ("10%", "10%"), ("40%", "100%")],
                   "intra_margin": [0.1, 0.3, 0.5, None],
                   "intra_balance": [None, 0.3, 1.0]},
    "Binned": {"bins": [1, 2, 3, 5, 10], "fine_tune_epochs": [1, 3, None]},
    "TempXNet": {"temporal_weight": [0.0, 0.1, 0.3, 1.0], "bandwidth": ["0.3Y", "1Y", "3Y"]},
}
QUICK_KNOBS = {"Diachronic": {"decay": ["0/Y", "5%"]}, "TempXNet": {"temporal_weight": [0.0, 1.0]}}


def _defaults():
    """Each estimator's own defaults of its knobs (a joint knob ``"a+b"`` is the pair)."""
    from temporal_xmodal import BinnedProcrustesEmbedder, DiachronicEmbedder, TempXNetEmbedder

    out = {}
    for name, cls in (("Diachronic", DiachronicEmbedder), ("Binned", BinnedProcrustesEmbedder),
                      ("TempXNet", TempXNetEmbedder)):
        params = cls().get_params()
        out[name] = {k: tuple(params[p] for p in k.split("+")) if "+" in k else params[k]
                     for k in KNOBS[name]}
    out["TempXNet"]["bandwidth"] = out["TempXNet"]["bandwidth"] or "1Y"
    return out


def arguments(parser):
    from temporal_xmodal.datasets import TEMPORAL_WORLDS

    parser.add_argument("--epochs", type=int, default=10, help="max_epochs (default 10)")
    parser.add_argument("--hidden-dim", type=int, default=256)
    parser.add_argument("--demo-samples", type=int, default=1500)
    parser.add_argument("--world", default="demo",
                        choices=["demo", *(w for w in TEMPORAL_WORLDS if w != "meaning shift")])
    parser.add_argument("--at", action="append", default=[], metavar="KNOB=VALUE",
                        help="move the default point of the estimator that has KNOB")
    parser.add_argument("--estimators", default=",".join(KNOBS),
                        help="comma-separated subset of " + ", ".join(KNOBS))
    parser.add_argument("--knobs", default=None,
                        help="comma-separated subset of the estimators' knobs (default: all)")


def name(args):
    suffix = "" if args.world == "demo" else "_" + args.world.replace(" ", "_")
    if (args.epochs, args.hidden_dim, args.demo_samples) != (10, 256, 1500):
        suffix += f"_{args.demo_samples}x{args.epochs}ep_h{args.hidden_dim}"
    return "bench_sensitivity" + suffix + "".join("_at_" + a.replace("=", "_") for a in args.at)


def _label(value):
    if isinstance(value, tuple):
        return "+".join(_label(v) for v in value)
    return "None" if value is None else str(value)


def _point(point):
    """Estimator parameters of a point of the knobs (joint knobs ``"a+b"`` split)."""
    params = {}
    for knob, value in point.items():
        params.update(zip(knob.split("+"), value) if "+" in knob else [(knob, value)])
    return params


def _setup(args):
    """The knobs to move and the points they move around, from the command line."""
    defaults = _defaults()
    for item in args.at:
        knob, _, raw = item.partition("=")
        owners = [n for n, grid in KNOBS.items() if knob in grid]
        if not owners:
            raise SystemExit(f"--at {item}: no estimator has a knob {knob!r}")
        for n in owners:
            defaults[n][knob] = read_value(raw) if raw != "None" else None
            for joint in (k for k in KNOBS[n] if "+" in k and knob in k.split("+")):
                defaults[n][joint] = tuple(defaults[n][p] for p in joint.split("+"))
    knobs = QUICK_KNOBS if args.quick else {
        n: {k: v for k, v in grid.items() if args.knobs is None or k in args.knobs.split(",")}
        for n, grid in KNOBS.items() if n in args.estimators.split(",")}
    return knobs, defaults


def _rows(args):
    """``(seed, estimator, knob, value, is_default)`` in the order of the JSON's runs."""
    knobs, defaults = _setup(args)
    return [(seed, n, knob, value, value == defaults[n][knob]) for seed in args.seeds
            for n, grid in knobs.items() for knob, values in grid.items() for value in values]


def cells(args):
    _, defaults = _setup(args)
    out, seen = [], set()
    for seed, n, knob, value, is_default in _rows(args):
        key = (seed, n) if is_default else (seed, n, knob, _label(value))
        if key not in seen:  # the default point is fitted once and shared by the knobs
            seen.add(key)
            params = {**_point(defaults[n]), **({} if is_default else _point({knob: value}))}
            out.append(Cell(args.world, seed, n, {"key": key, "params": params}))
    return out


def data(world, seed, args):
    from temporal_xmodal.comparison.settings import synthetic_split
    from temporal_xmodal.datasets import TEMPORAL_WORLDS

    return synthetic_split(400 if args.quick else args.demo_samples, random_state=seed,
                           **({} if world == "demo" else TEMPORAL_WORLDS[world]))


def estimator(cell, split, args):
    from temporal_xmodal import BinnedProcrustesEmbedder, DiachronicEmbedder, TempXNetEmbedder

    epochs, hidden = (2, 32) if args.quick else (args.epochs, args.hidden_dim)
    small = dict(hidden_dim=hidden, embedding_dim=64, max_epochs=epochs, random_state=cell.seed,
                 n_image_features=split[4])
    if cell.case == "Diachronic":
        est = DiachronicEmbedder(time_dim=64, **small, **cell.params["params"])
    elif cell.case == "TempXNet":
        est = TempXNetEmbedder(**small, **cell.params["params"])
    else:
        base = TempXNetEmbedder(temporal_weight=0.0, hidden_dim=hidden, embedding_dim=64,
                                max_epochs=epochs, lr=1e-3)
        est = BinnedProcrustesEmbedder(base, random_state=cell.seed, n_image_features=split[4],
                                       **cell.params["params"])
    return est, split[0], split[1]


def score(model, cell, split, args):
    from temporal_xmodal.evaluation import evaluate_estimator

    figures = evaluate_estimator(model, split[2], split[3], time_window=split[5])
    return {label: float(figures[key]) for key, label in PROTOCOLS.items()}


def report(runs, args):
    knobs, defaults = _setup(args)
    fitted = {r["cell"].params["key"]: r for r in runs}
    rows = []
    for seed, n, knob, value, is_default in _rows(args):
        run = fitted[(seed, n) if is_default else (seed, n, knob, _label(value))]
        rows.append({"dataset": args.world, "estimator": n, "knob": knob,
                     "value": _label(value), "seed": seed, "fit_seconds": run["fit_seconds"],
                     **{p: run[p] for p in PROTOCOLS.values()}})
    summary = []
    for n, grid in knobs.items():
        for knob in sorted(grid):
            mine = [r for r in rows if (r["estimator"], r["knob"]) == (n, knob)]
            values = list(dict.fromkeys(r["value"] for r in mine))
            entry = {"dataset": args.world, "estimator": n, "knob": knob,
                     "default": _label(defaults[n][knob]), "values": {}}
            for v in values:
                sel = [r[p] for r in mine if r["value"] == v for p in PROTOCOLS.values()]
                sel = np.array(sel).reshape(-1, len(PROTOCOLS))
                entry["values"][v] = {p: {"mean": float(sel[:, i].mean()),
                                          "std": float(sel[:, i].std()),
                                          "n_seeds": len(sel)}
                                      for i, p in enumerate(PROTOCOLS.values())}
            for p in PROTOCOLS.values():
                means = [entry["values"][v][p]["mean"] for v in values]
                entry[f"range_{p}"] = float(max(means) - min(means))
                entry[f"noise_{p}"] = float(max(entry["values"][v][p]["std"] for v in values))
            summary.append(entry)
            print(f"{n:10s} {knob:15s} moves " + " ".join(
                f"{p} {entry[f'range_{p}']:.3f}" for p in PROTOCOLS.values()))
    epochs, hidden = (2, 32) if args.quick else (args.epochs, args.hidden_dim)
    return {"settings": {"seeds": args.seeds, "max_epochs": epochs, "hidden_dim": hidden,
                         "embedding_dim": 64,
                         "demo_samples": 400 if args.quick else args.demo_samples,
                         "world": args.world, "protocols": list(PROTOCOLS.values()),
                         "ticrc_samples": None, "knobs": knobs, "defaults": defaults,
                         "at": args.at},
            "summary": summary, "runs": rows,
            "total_seconds": sum(r["seconds"] for r in runs)}
