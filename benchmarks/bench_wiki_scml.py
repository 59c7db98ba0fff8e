"""SequentialCrossModal (SCML) on Wikipedia: forgetting, final mAP, stage timings.

Part 1 — forgetting and retrieval (Song & Tan, "Sequential Learning for Cross-modal
Retrieval", Wiki setting: text first, K = 64, 150 epochs, batch 64, λ = 0.01,
N_mem = N_meta-train = 200; the plug width is ``--hidden-dim``, default 1024,
the estimator's default — the paper's Wiki plugs had 4096).  For each seed,
Stage I (text) runs once; the fitted estimator is copied and Stage II + one
Stage IV variant run on the images, so every variant shares the same
first-modality model:

* ``w.o. F`` — no Stage IV (the model after Stage II, S untouched);
* ``SCML`` — S updated by the learned optimiser (meta-learner);
* ``SCML-M`` — S updated by plain SGD on memory + new data;
* ``naive`` — Stage II trains the image plug and S jointly, no memory (Fig. 5);
* ``PCML`` — both modalities at once (the parallel paradigm).

Forgetting is the drop of the first modality's (text) quality from after
Stage II to the final model: test accuracy of S's classifier on text and
text→text mAP (test queries, training database).  Retrieval follows the
paper: test queries against the training set as database, Hamming ranking of 64-bit
codes, with per-modality database codes (Table 4/5 reading) and fused codes
(Table 2/3 reading).  Our features are the data set's 128-d SIFT BoW and
10-d LDA, not the paper's 4096-d AlexNet features, so only orderings compare.

Reference: ``CCACrossModal`` (deterministic, one fit; at most 10 components, the
width of the LDA text features) under the same protocol, ranked by the Hamming
distance of its sign codes (what SCML's codes are ranked by) and by the cosine of
its continuous projections; SCML's
``avg`` is also given with its continuous codes h (cosine), so that the cost of
binarising is separated from the method.

Part 2 — the meta-learner step: one LSTM call over all coordinates of θ
against one call per parameter tensor (the loop a straightforward L2L port
would write) and a per-coordinate loop (timed on a sample, scaled).

Run::

    python benchmarks/bench_wiki_scml.py            # 5 seeds, ~30 min on 2 CPU cores
    python benchmarks/bench_wiki_scml.py --quick    # 1 seed, 2 epochs, plug width 128,
                                                    # 300 train / 150 test items (more
                                                    # than n_memory, n_meta_train: 200)
    python benchmarks/bench_wiki_scml.py --seeds 1 --variants SCML --name bench_wiki_scml_time
                                                    # the default fit alone: its stage times
"""

import copy
import os
import time
from pathlib import Path

import numpy as np
import torch
from _common import best_of, make_parser, print_header, print_targets, target, write_results

from temporal_xmodal import CCACrossModal, SequentialCrossModal
from temporal_xmodal.datasets import load_wiki
from temporal_xmodal.metrics import mean_average_precision
from temporal_xmodal.estimators.sequential import MetaLearner

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wiki"
#: Song & Tan, Wiki (AlexNet 4096-d + LDA features): I→T, T→I, Avg (64-bit)
PAPER = {
    "SCML (Table 4/5, text first)": (0.4232, 0.7049, 0.5640),
    "SCML (Table 2/3, 64 bits)": (0.4907, 0.6885, 0.5896),
    "PCML (Table 5)": (0.3830, 0.7087, 0.5458),
}
VARIANTS = {
    "w.o. F": {"update_rule": "none"},
    "SCML": {"update_rule": "meta"},
    "SCML-M": {"update_rule": "sgd"},
    "naive": {"update_rule": "none", "stage2_scope": "joint"},
}


def evaluate(model, data):
    """Retrieval (test queries vs training database) and first-modality figures."""
    d = data.n_image_features
    img_tr, txt_tr = data.X_train[:, :d], data.X_train[:, d:-1]
    img_te, txt_te = data.X_test[:, :d], data.X_test[:, d:-1]
    y_tr, y_te = data.y_train, data.y_test
    q_img, q_txt = model.transform_image(img_te), model.transform_text(txt_te)
    db_img, db_txt = model.transform_image(img_tr), model.transform_text(txt_tr)
    fused = model.transform_fused(data.X_train)

    def mAP(q, g):
        return mean_average_precision(q, g, y_te, y_tr, similarity="hamming")

    codes = np.searchsorted(model.classes_, y_te)
    fig = {
        "i2t": mAP(q_img, db_txt), "t2i": mAP(q_txt, db_img),
        "i2t_fused": mAP(q_img, fused), "t2i_fused": mAP(q_txt, fused),
        "text_accuracy": float((model.class_probabilities(txt_te, "text").argmax(1)
                                == codes).mean()),
        "image_accuracy": float((model.class_probabilities(img_te, "image").argmax(1)
                                 == codes).mean()),
        "t2t": mAP(q_txt, db_txt),
    }
    fig["avg"] = (fig["i2t"] + fig["t2i"]) / 2
    fig["avg_fused"] = (fig["i2t_fused"] + fig["t2i_fused"]) / 2
    kind = model.codes
    fig["avg_continuous"] = retrieval_avg(model.set_params(codes="continuous"), data, "cosine")
    model.set_params(codes=kind)
    return fig


def retrieval_avg(model, data, similarity):
    """Mean of I→T and T→I mAP, test queries against the training database."""
    d = data.n_image_features
    y_tr, y_te = data.y_train, data.y_test
    i2t = mean_average_precision(model.transform_image(data.X_test[:, :d]),
                                 model.transform_text(data.X_train[:, d:-1]), y_te, y_tr,
                                 similarity=similarity)
    t2i = mean_average_precision(model.transform_text(data.X_test[:, d:-1]),
                                 model.transform_image(data.X_train[:, :d]), y_te, y_tr,
                                 similarity=similarity)
    return (i2t + t2i) / 2


def cca_reference(data):
    """CCA under SCML's protocol: sign codes (Hamming) and continuous (cosine).

    CCA has at most min(image, text) dimensions components: 10 on Wikipedia (10-d LDA), so
    its codes have 10 bits, not 64.
    """
    n_text = data.X_train.shape[1] - 1 - data.n_image_features
    n_components = min(64, data.n_image_features, n_text)
    cca = CCACrossModal(embedding_dim=n_components,
                        n_image_features=data.n_image_features).fit(data.X_train)
    return {"n_components": n_components, "hamming": retrieval_avg(cca, data, "hamming"),
            "cosine": retrieval_avg(cca, data, "cosine")}


def run_seed(data, seed, epochs, hidden_dim, variants=None):
    d = data.n_image_features
    txt_tr, img_tr = data.X_train[:, d:-1], data.X_train[:, :d]
    base = SequentialCrossModal(hidden_dim=hidden_dim, max_epochs=epochs, random_state=seed,
                                n_image_features=d)
    start, cpu = time.perf_counter(), time.process_time()
    base.partial_fit(txt_tr, data.y_train, modality="text")
    stage1, stage1_cpu = time.perf_counter() - start, time.process_time() - cpu
    rows = {}
    for name, params in VARIANTS.items():
        if variants is not None and name not in variants:
            continue
        model = copy.deepcopy(base).set_params(**params)
        start, cpu = time.perf_counter(), time.process_time()
        model.partial_fit(img_tr, data.y_train, modality="image")
        rows[name] = {"fit_seconds": stage1 + time.perf_counter() - start,
                      "fit_cpu_seconds": stage1_cpu + time.process_time() - cpu,
                      **evaluate(model, data), "stage_seconds": dict(model.stage_seconds_)}
    if variants is not None and "PCML" not in variants:
        return rows
    start, cpu = time.perf_counter(), time.process_time()
    pcml = SequentialCrossModal(paradigm="parallel", hidden_dim=hidden_dim, max_epochs=epochs,
                                random_state=seed, n_image_features=d).fit(data.X_train,
                                                                           data.y_train)
    rows["PCML"] = {"fit_seconds": time.perf_counter() - start,
                    "fit_cpu_seconds": time.process_time() - cpu,
                    **evaluate(pcml, data), "stage_seconds": dict(pcml.stage_seconds_)}
    return rows


def meta_step_timing(n_coordinates, repeats):
    """One M step on all coordinates vs per-tensor and per-coordinate loops."""
    torch.manual_seed(0)
    learner = MetaLearner(n_inputs=4).requires_grad_(False)
    # the paper's Wiki S (K = 64, C = 10): 128×128, 128, 64×128, 64, 10×64, 10
    shapes = [(128, 128), (128,), (64, 128), (64,), (10, 64), (10,)]
    sizes = [int(np.prod(s)) for s in shapes]
    n = sum(sizes) if n_coordinates is None else n_coordinates
    inputs = torch.randn(n, 4)
    state = learner.initial_state(n)

    def vectorised():
        return learner(inputs, state)[0]

    def per_tensor():
        out, start = [], 0
        for size in sizes:
            sl = slice(start, start + size)
            out.append(learner(inputs[sl], (state[0][:, sl], state[1][:, sl]))[0])
            start += size
        return torch.cat(out)

    sample = 500

    def per_coordinate():
        return torch.cat([learner(inputs[i:i + 1], (state[0][:, i:i + 1],
                                                    state[1][:, i:i + 1]))[0]
                          for i in range(sample)])

    with torch.no_grad():
        t_vec, g_vec = best_of(vectorised, repeats)
        t_tensor, g_tensor = best_of(per_tensor, repeats)
        t_coord, g_coord = best_of(per_coordinate, 1)
    return {
        "n_coordinates": n,
        "vectorised_ms": 1e3 * t_vec,
        "per_tensor_ms": 1e3 * t_tensor,
        "per_coordinate_ms_extrapolated": 1e3 * t_coord * n / sample,
        "max_abs_diff_per_tensor": float((g_vec - g_tensor).abs().max()),
        "max_abs_diff_per_coordinate": float((g_vec[:sample] - g_coord).abs().max()),
    }


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--data", default=str(DATA), help="folder of the Wikipedia data set")
    parser.add_argument("--seeds", type=int, default=5, help="number of seeds (default 5)")
    parser.add_argument("--epochs", type=int, default=150, help="Stage I epochs (default 150)")
    parser.add_argument("--hidden-dim", type=int, default=None,
                        help="plug width (default 1024; quick 128)")
    parser.add_argument("--variants", default=None,
                        help="comma-separated models to fit, of " + ", ".join([*VARIANTS, "PCML"])
                        + " (default: all; the forgetting targets need w.o. F, SCML and SCML-M)")
    parser.add_argument("--name", default="bench_wiki_scml",
                        help="name of the JSON result (default bench_wiki_scml)")
    args = parser.parse_args()
    variants = None if args.variants is None else args.variants.split(",")
    unknown = sorted(set(variants or ()) - {*VARIANTS, "PCML"})
    if unknown:
        parser.error(f"unknown --variants {unknown}")
    torch.set_num_threads(1)
    data = load_wiki(args.data)
    if args.quick:  # a subset (the quick run checks the wiring, not the figures)
        for key, n in (("X_train", 300), ("y_train", 300), ("X_test", 150), ("y_test", 150)):
            data[key] = data[key][:n]
    args.hidden_dim = args.hidden_dim or (128 if args.quick else 1024)
    seeds = [0] if args.quick else list(range(args.seeds))
    epochs = 2 if args.quick else args.epochs

    print_header("Meta-learner step (one LSTM call for all coordinates)")
    timing = meta_step_timing(None, 3 if args.quick else 20)
    print(f"  {timing['n_coordinates']} coordinates: vectorised {timing['vectorised_ms']:.2f} ms,"
          f" per tensor {timing['per_tensor_ms']:.2f} ms "
          f"({timing['per_tensor_ms'] / timing['vectorised_ms']:.1f}×), per coordinate "
          f"~{timing['per_coordinate_ms_extrapolated']:.0f} ms (extrapolated, "
          f"{timing['per_coordinate_ms_extrapolated'] / timing['vectorised_ms']:.0f}×); "
          f"max |diff| {timing['max_abs_diff_per_tensor']:.1e} / "
          f"{timing['max_abs_diff_per_coordinate']:.1e}")

    print_header(f"Wikipedia, text first, seeds {seeds}, {epochs} epochs")
    load_before = os.getloadavg()
    started = time.perf_counter()
    runs = [run_seed(data, seed, epochs, args.hidden_dim, variants) for seed in seeds]
    wall = time.perf_counter() - started
    names = list(runs[0])
    keys = [k for k in runs[0][names[0]] if k != "stage_seconds"]
    summary = {}
    for name in names:
        vals = {k: [r[name][k] for r in runs] for k in keys}
        summary[name] = {"mean": {k: float(np.mean(v)) for k, v in vals.items()},
                         "std": {k: float(np.std(v)) for k, v in vals.items()},
                         "stage_seconds": {s: float(np.mean([r[name]["stage_seconds"][s]
                                                             for r in runs]))
                                           for s in runs[0][name]["stage_seconds"]}}
    ref = summary["w.o. F"]["mean"] if "w.o. F" in summary else None
    print(f"  {'model':<8} {'I→T':>7} {'T→I':>7} {'avg':>7} ± std   {'fused avg':>9}  "
          f"{'text acc':>8} {'T→T':>6}  {'Δ text acc':>10} {'Δ T→T':>7}  stages [s]")
    for name in names:
        m, s = summary[name]["mean"], summary[name]["std"]
        stages = ", ".join(f"{k} {v:.1f}" for k, v in summary[name]["stage_seconds"].items())
        print(f"  {name:<8} {m['i2t']:7.4f} {m['t2i']:7.4f} {m['avg']:7.4f} ± {s['avg']:.4f} "
              f"{m['avg_fused']:9.4f}  {m['text_accuracy']:8.4f} {m['t2t']:6.4f}  "
              + (f"{m['text_accuracy'] - ref['text_accuracy']:+10.4f} "
                 f"{m['t2t'] - ref['t2t']:+7.4f}  " if ref else f"{'—':>10} {'—':>7}  ")
              + f"{stages}; fit {m['fit_seconds']:.1f} (CPU {m['fit_cpu_seconds']:.1f})")
    cca = cca_reference(data)
    print("  SCML avg with continuous codes (cosine): "
          + ", ".join(f"{n} {summary[n]['mean']['avg_continuous']:.4f}" for n in names))
    print(f"  CCA, {cca['n_components']} components: avg {cca['hamming']:.4f} with "
          f"{cca['n_components']}-bit sign codes (Hamming), {cca['cosine']:.4f} continuous "
          "(cosine)")
    print_header("Paper, Wiki (AlexNet 4096-d + LDA features; not comparable in level)")
    for name, (i2t, t2i, avg) in PAPER.items():
        print(f"  {name:<30} I→T {i2t:.4f}  T→I {t2i:.4f}  avg {avg:.4f}")

    def drop(name, key):
        return ref[key] - summary[name]["mean"][key]

    targets = {} if ref is None or not {"SCML", "SCML-M"} <= set(summary) else {
        "meta_forgets_less_than_sgd_accuracy": target(
            drop("SCML-M", "text_accuracy") - drop("SCML", "text_accuracy"), 0.0, ">=",
            "first-modality (text) accuracy drop: SCML-M − SCML"),
        "meta_forgets_less_than_sgd_t2t": target(
            drop("SCML-M", "t2t") - drop("SCML", "t2t"), 0.0, ">=",
            "first-modality text→text mAP drop: SCML-M − SCML"),
        "meta_beats_sgd_final_map": target(
            summary["SCML"]["mean"]["avg"] - summary["SCML-M"]["mean"]["avg"], 0.0, ">=",
            "final mean cross-modal mAP: SCML − SCML-M"),
    }
    targets["vectorised_step_vs_coordinate_loop"] = target(
        timing["per_coordinate_ms_extrapolated"] / timing["vectorised_ms"], 10.0, ">=",
        "meta-learner step, per-coordinate loop ÷ one vectorised call")
    print_targets(targets)
    print(f"  wall time of the fits {wall:.1f} s; load average (1, 5, 15 min) before "
          f"{load_before}, after {os.getloadavg()} on {os.cpu_count()} cores")
    write_results(args.name, {
        "quick": args.quick, "parameters": {"seeds": seeds, "max_epochs": epochs,
                                            "hidden_dim": args.hidden_dim, "variants": VARIANTS,
                                            "fitted": names, "torch_threads": 1,
                                            "n_train": len(data.y_train),
                                            "n_test": len(data.y_test)},
        "meta_step": timing, "runs": runs, "results": summary, "cca_reference": cca,
        "paper": PAPER, "wall_seconds": wall,
        "load_average": {"before": load_before, "after": os.getloadavg()},
        "targets": targets}, args.output_dir)


if __name__ == "__main__":
    main()
