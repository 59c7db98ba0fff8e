"""``mean_average_precision`` against scikit-learn: agreement, speed and memory.

1. Agreement: per-query AP against :func:`sklearn.metrics.average_precision_score` on
   random multilabel data, continuous and tied scores (target max |difference| < 1e-9).
2. Speed: mAP of 5,000 x 5,000 random embeddings (dim 32, 10 labels), one thread
   (``threadpool_limits(1)``) and ``n_jobs=2``, against ``Q @ G.T`` plus one
   ``average_precision_score(..., average="samples")`` call, timed in alternation, best of
   the repeats (the reference extrapolated from a subset of the queries where so marked);
   target >= 20x.
3. Memory: the peak RSS increase of one 20,000 x 20,000 call in a fresh process (Linux:
   ``VmHWM`` after resetting the peak through ``/proc/self/clear_refs``); target < 1 GiB.

Full run: about 30 s on 2 cores.
"""

import json
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path

import numpy as np

from _common import best_of, target

FULL = {"correctness_queries": 300, "correctness_gallery": 2000, "correctness_labels": 5,
        "speed_n": 5000, "dim": 32, "n_classes": 10, "parallel_n_jobs": 2, "repeats": 3,
        "reference_queries": 5000, "reference_repeats": 3, "memory_n": 20000, "seed": 0}
QUICK = {**FULL, "correctness_queries": 100, "correctness_gallery": 1000, "speed_n": 1000,
         "repeats": 1, "reference_queries": 200, "reference_repeats": 1, "memory_n": 2000}
MIB = 2**20


def _labels(rng, n_items, n_labels, density=0.2):
    """Random multilabel indicators, at least one label per item."""
    labels = rng.random((n_items, n_labels)) < density
    labels[np.arange(n_items), rng.integers(n_labels, size=n_items)] = True
    return labels


def _retrieval_data(n, params):
    rng = np.random.default_rng(params["seed"])
    return (rng.standard_normal((n, params["dim"])), rng.standard_normal((n, params["dim"])),
            rng.integers(params["n_classes"], size=n))


def correctness(params):
    """Max |ours - scikit-learn| of per-query AP, continuous and tied scores."""
    from sklearn.metrics import average_precision_score

    from temporal_xmodal.metrics import average_precision_per_query

    rng = np.random.default_rng(params["seed"])
    Lq = _labels(rng, params["correctness_queries"], params["correctness_labels"])
    Lg = _labels(rng, params["correctness_gallery"], params["correctness_labels"])
    relevance = (Lq.astype(np.int64) @ Lg.T.astype(np.int64)) > 0
    continuous = rng.standard_normal(relevance.shape)
    out = {}
    for case, scores in {"continuous_scores": continuous,
                         "tied_scores": np.round(continuous, 1)}.items():
        ours = average_precision_per_query(scores, relevance)
        ref = np.array([average_precision_score(r, s) for r, s in zip(relevance, scores)])
        out[case] = {"max_abs_diff": float(np.max(np.abs(ours - ref))),
                     "mean_ap": float(ours.mean()),
                     "distinct_scores_per_query": float(np.mean([np.unique(s).size
                                                                 for s in scores]))}
    out["max_abs_diff"] = max(r["max_abs_diff"] for r in out.values())
    out["relevant_fraction"] = float(relevance.mean())
    return out


def speed(params):
    """Best-of timings of ours (1 thread, n_jobs) and of the reference, in alternation."""
    from sklearn.metrics import average_precision_score
    from threadpoolctl import threadpool_limits

    from temporal_xmodal.metrics import mean_average_precision

    n, n_ref, jobs = params["speed_n"], params["reference_queries"], params["parallel_n_jobs"]
    Q, G, y = _retrieval_data(n, params)
    calls = {"one": lambda: mean_average_precision(Q, G, y, y),
             "par": lambda: mean_average_precision(Q, G, y, y, n_jobs=jobs),
             "ref": lambda: float(average_precision_score(
                 y[:n_ref, None] == y[None, :], Q[:n_ref] @ G.T, average="samples"))}
    best = {name: (float("inf"), None) for name in calls}
    for _ in range(max(params["repeats"], params["reference_repeats"])):
        for name, call in calls.items():
            with threadpool_limits(1) if name != "par" else nullcontext():
                best[name] = min(best[name], best_of(call, 1), key=lambda pair: pair[0])
    (t_one, map_one), (t_par, map_par), (t_ref_subset, map_ref) = (best["one"], best["par"],
                                                                   best["ref"])
    t_ref = t_ref_subset * n / n_ref
    map_subset = mean_average_precision(Q[:n_ref], G, y[:n_ref], y)
    return {"timings": {"ours_1_thread_s": t_one, f"ours_{jobs}_threads_s": t_par,
                        "reference_timed_s": t_ref_subset, "reference_s": t_ref},
            "results": {"reference_queries_timed": n_ref, "reference_extrapolated": n_ref < n,
                        "reference_extrapolation_factor": n / n_ref,
                        "speedup_1_thread": t_ref / t_one,
                        f"speedup_{jobs}_threads": t_ref / t_par, "map_ours": map_one,
                        "map_ours_n_jobs_abs_diff": abs(map_one - map_par),
                        "map_reference_on_timed_queries": map_ref,
                        "map_abs_diff_on_timed_queries": abs(map_subset - map_ref)}}


def _status_kib(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))


def memory_child(n):
    """In a fresh process: one n x n evaluation's time and peak RSS increase, as JSON."""
    from temporal_xmodal.metrics import mean_average_precision

    Q, G, y = _retrieval_data(n, FULL)
    mean_average_precision(Q[:8], G[:8], y[:8], y[:8])  # lazy imports, first allocations
    before = _status_kib("VmRSS") * 1024
    try:
        Path("/proc/self/clear_refs").write_text("5")  # the peak reset to the current RSS
        method = "VmHWM after the call - VmRSS before it (peak reset via /proc/self/clear_refs)"
    except OSError:
        method = "VmHWM after the call - VmRSS before it (peak not resettable: upper bound)"
    start = time.perf_counter()
    value = mean_average_precision(Q, G, y, y)
    elapsed, peak = time.perf_counter() - start, _status_kib("VmHWM") * 1024
    print(json.dumps({"n": n, "time_s": elapsed, "map": value, "method": method,
                      "rss_before_mib": before / MIB, "peak_rss_mib": peak / MIB,
                      "peak_rss_increase_mib": (peak - before) / MIB}))


def memory(params):
    n = params["memory_n"]
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parents[1])!r}); "
            f"from specs.metrics import memory_child; memory_child({n})")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    return {**res, "naive_score_matrix_bytes": n * n * 8, "naive_score_matrix_mib": n * n * 8 / MIB}


def measure(args):
    params = QUICK if args.quick else FULL
    corr, spd, mem = correctness(params), speed(params), memory(params)
    jobs, n, m = params["parallel_n_jobs"], params["speed_n"], params["memory_n"]
    print(f"max |AP diff| {corr['max_abs_diff']:.1e}; speed-up "
          f"{spd['results']['speedup_1_thread']:.1f}x (1 thread); peak "
          f"{mem['peak_rss_increase_mib']:.0f} MiB at {m} x {m}")
    return {"parameters": params,
            "timings": {**spd["timings"], "memory_evaluation_s": mem["time_s"]},
            "results": {"correctness": corr, "speed": spd["results"], "memory": mem},
            "targets": {
                "ap_matches_sklearn": target(corr["max_abs_diff"], 1e-9, "<",
                                             "max |AP ours - sklearn| over both cases < 1e-9"),
                "speedup_1_thread": target(spd["results"]["speedup_1_thread"], 20.0, ">=",
                                           f"mAP {n}x{n}, 1 thread, >= 20x the sklearn "
                                           "reference"),
                f"speedup_{jobs}_threads": target(
                    spd["results"][f"speedup_{jobs}_threads"], 20.0, ">=",
                    f"mAP {n}x{n}, n_jobs={jobs}, >= 20x the sklearn reference"),
                "peak_memory": target(mem["peak_rss_increase_mib"], 1024.0, "<",
                                      f"peak RSS increase (MiB) of the {m}x{m} evaluation "
                                      "< 1 GiB")}}
