"""Sensitivity of the temporal knobs: which ones move which protocol, and by how much.

Each temporal knob is moved over its documented range while every other parameter stays at
the estimator's own default (one knob at a time, around the default point):

* ``DiachronicEmbedder``: ``window`` (0.5 … 10 years; 10 years is the demo's whole span,
  where L_intra never applies), ``decay`` (0 … 10 per year; 0 switches L_intra off),
  ``intra_margin`` (the margin of the same-category triplets) and ``intra_balance`` (the
  weight of L_intra against L_inter per pair count; 1 is the paper's sampling);
* ``BinnedProcrustesEmbedder``: ``bins`` (1 … 10 equal-width bins; 1 bin is the static base
  model) and ``fine_tune_epochs`` (how long each bin continues the shared start);
* ``TempXNetEmbedder``: ``temporal_weight`` (0 is the static control … 1, the paper's) and
  ``bandwidth`` of the recency correlation.

Data: the compare job's synthetic worlds (``synthetic_split``; ``--world demo`` is
``DEMO_WORLD``, meanings move between three eras; ``recurring events`` and the other
:data:`~temporal_xmodal.datasets.TEMPORAL_WORLDS` by name), a random 70/30 split, time 0–10
read as years, a new world per seed.  Optionally TICRC (``--ticrc``): EfficientNet-Lite0 +
TF-IDF features of a random subset, the issue's *decade* as the label.

Protocols on the test rows (:func:`temporal_xmodal.evaluation.evaluate_estimator`, mean of
image→text and text→image): category mAP, time-window mAP@50 (time-period inference:
relevant = same label and ``|Δt| <=`` 5 % of the time span, each item at its own time),
local alignment (mAP@10 of queries projected into each of 10 time bins) and temporally
bounded retrieval (mAP within the query's own bin), over 3 seeds (seed = network
initialisation, and the world).  Networks are smaller and shorter-trained than the defaults
(hidden 256, D 64, 10 epochs) to fit the budget; the figures are for comparing knob values,
not the estimators' best.  *moves* = largest minus smallest mean over the knob's values;
*noise* = the largest standard deviation over seeds among its values.

Run::

    python benchmarks/bench_sensitivity.py            # ~15 min on 2 CPU cores, demo world
    python benchmarks/bench_sensitivity.py --world "recurring events" --estimators TempXNet
    python benchmarks/bench_sensitivity.py --estimators Diachronic --at intra_balance=1.0
    python benchmarks/bench_sensitivity.py --quick    # a few seconds

``--at KNOB=VALUE`` moves the point the knobs move around (the other knobs of that estimator
stay there), e.g. Diachronic's window/decay/intra_margin with L_intra weighted as the paper's
sampling weighs it; the JSON is then ``bench_sensitivity_at_<knob>_<value>.json``.
"""

import time
import warnings

import numpy as np
import torch
from _common import add_ticrc_arguments, make_parser, print_header, read_value, write_results
from sklearn.exceptions import ConvergenceWarning

from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    DiachronicEmbedder,
    TempXNetEmbedder,
    TimeRangeWarning,
)
from temporal_xmodal.comparison.data import load_comparison_data, synthetic_split
from temporal_xmodal.datasets import TEMPORAL_WORLDS
from temporal_xmodal.evaluation import evaluate_estimator
from temporal_xmodal.time import TimeBinWarning

#: The protocols: key of evaluate_estimator's figures -> name in the tables.
PROTOCOLS = {"map": "mAP", "tmap50": "t-mAP@50", "local_map10": "local@10",
             "bounded_map": "bin mAP"}

#: knob -> values (the documented range), one knob at a time.
KNOBS = {
    # window and decay as shares of the span (the defaults' spelling); a decay share is the
    # half-life of ρ.  "window+decay" moves both together, the same share for each.
    "Diachronic": {"window": ["1%", "2.5%", "5%", "10%", "40%"],
                   "decay": ["0/Y", "1%", "5%", "20%", "100%"],
                   "window+decay": [("1%", "1%"), ("2.5%", "2.5%"), ("5%", "5%"),
                                    ("10%", "10%"), ("40%", "100%")],
                   "intra_margin": [0.1, 0.3, 0.5, None],
                   "intra_balance": [None, 0.3, 1.0]},
    "Binned": {"bins": [1, 2, 3, 5, 10], "fine_tune_epochs": [1, 3, None]},
    "TempXNet": {"temporal_weight": [0.0, 0.1, 0.3, 1.0],
                 "bandwidth": ["0.3Y", "1Y", "3Y"]},
}
#: TICRC's decade labels leave a single label in a bin of 10 over 1853–1922: fewer bins there.
TICRC_BINS = [1, 2, 3, 5]
#: The point each knob moves around ("default" in the JSON and docs/results.md): each
#: estimator's own defaults (read from its signature), Binned's with the study's small base.
def _own_defaults(cls, knobs):
    """The estimator's own defaults of ``knobs``; a joint knob ``"a+b"`` is the pair."""
    params = cls().get_params()
    return {k: tuple(params[p] for p in k.split("+")) if "+" in k else params[k]
            for k in knobs}


DEFAULTS = {
    "Diachronic": _own_defaults(DiachronicEmbedder, KNOBS["Diachronic"]),
    "Binned": {k: BinnedProcrustesEmbedder().get_params()[k] for k in KNOBS["Binned"]},
    "TempXNet": {"temporal_weight": TempXNetEmbedder().temporal_weight,
                 "bandwidth": TempXNetEmbedder().bandwidth or "1Y"},
}


def _estimator(name, n_img, seed, epochs, hidden, params):
    small = dict(hidden_dim=hidden, embedding_dim=64, max_epochs=epochs, random_state=seed,
                 n_image_features=n_img)
    if name == "Diachronic":
        return DiachronicEmbedder(time_dim=64, **small, **params)
    if name == "TempXNet":
        return TempXNetEmbedder(**small, **params)
    base = TempXNetEmbedder(temporal_weight=0.0, hidden_dim=hidden, embedding_dim=64,
                            max_epochs=epochs, lr=1e-3)
    return BinnedProcrustesEmbedder(base, random_state=seed, n_image_features=n_img, **params)


def _datasets(args, seed):
    """name -> (X_train, y_train, X_test, y_test, n_image_features, t-mAP window)."""
    n_demo = 400 if args.quick else args.demo_samples
    world = {} if args.world == "demo" else TEMPORAL_WORLDS[args.world]
    out = {args.world: synthetic_split(n_demo, random_state=seed, **world)}
    if not args.quick and args.ticrc:
        if "ticrc" not in _TICRC:  # a fixed subset (seed 0) for every seed
            _TICRC["ticrc"] = _ticrc(args)
        out["ticrc"] = _TICRC["ticrc"]
    return out


_TICRC = {}


def _ticrc(args):
    data = load_comparison_data("ticrc", data_dir=args.data_dir, n_samples=args.ticrc_samples,
                                cache_dir=args.cache_dir, progress=False)
    decade = lambda blocks: (np.floor(blocks[2]) // 10).astype(int)  # noqa: E731
    t = np.concatenate([data.blocks_train[2], data.blocks_test[2]])
    return (data.X_train, decade(data.blocks_train), data.X_test,
            decade(data.blocks_test), data.n_image_features, 0.05 * np.ptp(t))


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


def main():
    parser = make_parser(__doc__)
    add_ticrc_arguments(parser)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=10, help="max_epochs (default 10)")
    parser.add_argument("--hidden-dim", type=int, default=256)
    parser.add_argument("--demo-samples", type=int, default=1500)
    parser.add_argument("--ticrc-samples", type=int, default=700)
    parser.add_argument("--ticrc", action="store_true", help="also TICRC (decade labels)")
    parser.add_argument("--world", default="demo",
                        choices=["demo", *(w for w in TEMPORAL_WORLDS if w != "meaning shift")])
    parser.add_argument("--at", action="append", default=[], metavar="KNOB=VALUE",
                        help="move the default point of the estimator that has KNOB")
    parser.add_argument("--estimators", default=",".join(KNOBS),
                        help="comma-separated subset of " + ", ".join(KNOBS))
    parser.add_argument("--knobs", default=None,
                        help="comma-separated subset of the estimators' knobs (default: all)")
    args = parser.parse_args()
    defaults = {name: dict(point) for name, point in DEFAULTS.items()}
    for item in args.at:
        knob, _, raw = item.partition("=")
        owners = [name for name, grid in KNOBS.items() if knob in grid]
        if not owners:
            parser.error(f"--at {item}: no estimator has a knob {knob!r}")
        for name in owners:
            defaults[name][knob] = read_value(raw) if raw != "None" else None
            for joint in (k for k in KNOBS[name] if knob in k.split("+") and "+" in k):
                defaults[name][joint] = tuple(defaults[name][p] for p in joint.split("+"))
    torch.set_num_threads(1)
    warnings.simplefilter("ignore", TimeRangeWarning)
    warnings.simplefilter("ignore", ConvergenceWarning)
    warnings.simplefilter("ignore", TimeBinWarning)  # small bins merged: the bins knob's edge
    seeds = [0] if args.quick else list(range(args.seeds))
    epochs, hidden = (2, 32) if args.quick else (args.epochs, args.hidden_dim)
    knobs = ({"Diachronic": {"decay": ["0/Y", "5%"]}, "TempXNet": {"temporal_weight": [0.0, 1.0]}}
             if args.quick else {k: {knob: values for knob, values in v.items()
                                     if args.knobs is None or knob in args.knobs.split(",")}
                                 for k, v in KNOBS.items() if k in args.estimators.split(",")})

    runs = []  # one row per (dataset, estimator, knob, value, seed)
    start = time.perf_counter()
    for seed in seeds:
        for data_name, (X_tr, y_tr, X_te, y_te, n_img, window) in _datasets(args, seed).items():
            for name, grid in knobs.items():
                if data_name == "ticrc" and name == "Binned":
                    # decade labels: 10 bins over 70 years hold one label each
                    grid = {"bins": TICRC_BINS}
                default_scores = None  # the default point, fitted once and shared by the knobs
                for knob, values in grid.items():
                    for value in values:
                        is_default = value == defaults[name][knob]
                        if is_default and default_scores is not None:
                            runs.append({**default_scores, "knob": knob, "value": _label(value)})
                            continue
                        # the moved knob last: a joint knob's default must not undo it
                        params = {**_point(defaults[name]), **_point({knob: value})}
                        t0 = time.perf_counter()
                        model = _estimator(name, n_img, seed, epochs, hidden, params)
                        model.fit(X_tr, y_tr)
                        row = {"dataset": data_name, "estimator": name, "knob": knob,
                               "value": _label(value), "seed": seed,
                               "fit_seconds": time.perf_counter() - t0}
                        figures = evaluate_estimator(model, X_te, y_te, time_window=window)
                        row.update({name_: float(figures[key]) for key, name_ in PROTOCOLS.items()})
                        runs.append(row)
                        if is_default:
                            default_scores = row
                        print(f"[{time.perf_counter() - start:6.0f} s] {data_name:5s} {name:10s} "
                              f"{knob}={_label(value):6s} seed {seed}: "
                              + "  ".join(f"{p} {row[p]:.4f}" for p in PROTOCOLS.values()),
                              flush=True)

    # ---------------------------------------------------------------- summary
    summary = []
    print_header("Mean over seeds (range = best − worst value of the knob)")
    keys = sorted({(r["dataset"], r["estimator"], r["knob"]) for r in runs},
                  key=lambda k: (k[0], list(KNOBS).index(k[1]), k[2]))
    for data_name, name, knob in keys:
        rows = [r for r in runs if (r["dataset"], r["estimator"], r["knob"]) == (data_name, name, knob)]
        values = list(dict.fromkeys(r["value"] for r in rows))
        entry = {"dataset": data_name, "estimator": name, "knob": knob,
                 "default": _label(defaults[name][knob]), "values": {}}
        for v in values:
            sel = [r for r in rows if r["value"] == v]
            entry["values"][v] = {s: {"mean": float(np.mean([r[s] for r in sel])),
                                      "std": float(np.std([r[s] for r in sel])),
                                      "n_seeds": len(sel)} for s in PROTOCOLS.values()}
        for s in PROTOCOLS.values():
            means = [entry["values"][v][s]["mean"] for v in values]
            entry[f"range_{s}"] = float(max(means) - min(means))
            entry[f"noise_{s}"] = float(max(entry["values"][v][s]["std"] for v in values))
        summary.append(entry)
        cells = "  ".join(f"{v}: {entry['values'][v]['mAP']['mean']:.3f}/"
                          f"{entry['values'][v]['t-mAP@50']['mean']:.3f}" for v in values)
        print(f"{data_name:5s} {name:10s} {knob:15s} moves "
              + " ".join(f"{s} {entry[f'range_{s}']:.3f}" for s in PROTOCOLS.values())
              + f" | mAP/t-mAP {cells}")

    suffix = "" if args.world == "demo" else "_" + args.world.replace(" ", "_")
    if (args.epochs, args.hidden_dim, args.demo_samples) != (10, 256, 1500):
        suffix += f"_{args.demo_samples}x{args.epochs}ep_h{args.hidden_dim}"
    suffix += "".join("_at_" + item.replace("=", "_") for item in args.at)
    write_results("bench_sensitivity" + suffix, {
        "quick": args.quick,
        "settings": {"seeds": seeds, "max_epochs": epochs, "hidden_dim": hidden,
                     "embedding_dim": 64, "demo_samples": 400 if args.quick else args.demo_samples,
                     "world": args.world, "protocols": list(PROTOCOLS.values()),
                     "ticrc_samples": args.ticrc_samples if args.ticrc and not args.quick else None,
                     "knobs": knobs, "defaults": defaults, "at": args.at},
        "summary": summary, "runs": runs,
        "total_seconds": time.perf_counter() - start,
    }, args.output_dir)


if __name__ == "__main__":
    main()
