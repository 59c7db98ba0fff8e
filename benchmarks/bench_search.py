"""Benchmark of exact top-k search and of the @k metrics on a 10^6-item gallery.

What it measures
----------------
1. Search: 10,000 queries x 1,000,000 gallery items, dimension 200, top-100,
   inner product of L2-normalised float32 embeddings (clustered random data:
   1,000 centres + noise, so neighbourhoods are meaningful):

   * ours: :func:`temporal_xmodal.search.search_embeddings` (chunked matrix
     products pruned by each query's running k-th best score, on the CPU,
     ``torch.set_num_threads(2)``);
   * ``faiss.IndexFlatIP`` (exact, ``faiss.omp_set_num_threads(2)``);
   * ``sklearn.neighbors.NearestNeighbors(algorithm="brute", metric="cosine")``
     with BLAS limited to 2 threads, timed on a subset of the queries and
     scaled linearly to all queries (the output says so).

   Reports the throughputs (queries/s), the ratios measured in this run
   (targets: >= 0.8x faiss, >= 10x scikit-learn), the agreement of the top-k
   sets (fraction of identical neighbours; a differing neighbour must score
   within 1e-5 of the k-th score, i.e. a tie in float32), and our peak memory
   beyond the gallery (target < 1 GiB).
2. Metrics: :func:`temporal_xmodal.metrics.retrieval_metrics_at_k` (mAP@100,
   recall@100, MRR, nDCG@100) of 1,000 labelled queries (label = cluster)
   against the same 10^6 gallery: time and peak memory beyond the gallery.

Peak memory is the process' peak resident set (``VmHWM``, reset through
``/proc/self/clear_refs`` before each measured call, Linux) minus its resident
set before the call, in which the gallery already lives.

How to run
----------
::

    python benchmarks/bench_search.py            # full sizes (several minutes on 2 cores)
    python benchmarks/bench_search.py --mid      # 2,000 x 200,000: iterate in a minute
    python benchmarks/bench_search.py --quick    # small sizes, 1 thread, seconds (a smoke
                                                 # run, usually beside other jobs)
    python benchmarks/bench_search.py --mid --repeats 3   # best of 3 for ours and faiss

The figures are printed and written to ``benchmarks/results/bench_search.json``.
"""

import time

import numpy as np
import torch
from _common import make_parser, print_header, print_targets, target, write_results
from threadpoolctl import threadpool_limits

from temporal_xmodal.metrics import retrieval_metrics_at_k
from temporal_xmodal.search import search_embeddings

NAME = "bench_search"
FULL = {
    "n_queries": 10_000,
    "n_gallery": 1_000_000,
    "dim": 200,
    "k": 100,
    "n_clusters": 1000,
    "noise": 1.0,
    "threads": 2,
    "sklearn_queries": 200,
    "metric_queries": 1000,
    "metric_k": 100,
    "seed": 0,
}
MID = {**FULL, "n_queries": 2000, "n_gallery": 200_000, "sklearn_queries": 100,
       "metric_queries": 200}
QUICK = {**FULL, "n_queries": 300, "n_gallery": 10_000, "dim": 64, "n_clusters": 50,
         "sklearn_queries": 100, "metric_queries": 100, "threads": 1}
FAISS_RATIO_TARGET = 0.8
SKLEARN_RATIO_TARGET = 10.0
MEMORY_TARGET_MIB = 1024.0
TIE_TOLERANCE = 1e-5
MIB = 2**20


# --------------------------------------------------------------------------
# Data and memory probes
# --------------------------------------------------------------------------


def clustered(rng, n, centres, noise, labels_out=None, chunk=100_000):
    """``n`` L2-normalised float32 rows around random centres, built chunk by chunk."""
    out = np.empty((n, centres.shape[1]), dtype=np.float32)
    labels = np.empty(n, dtype=np.int64)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        lab = rng.integers(len(centres), size=stop - start)
        block = centres[lab] + noise * rng.standard_normal((stop - start, centres.shape[1]),
                                                            dtype=np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start:stop], labels[start:stop] = block, lab
    return out, labels


def make_data(params):
    rng = np.random.default_rng(params["seed"])
    d = params["dim"]
    centres = rng.standard_normal((params["n_clusters"], d), dtype=np.float32) / np.sqrt(d) * 3
    G, yg = clustered(rng, params["n_gallery"], centres, params["noise"] / np.sqrt(d))
    Q, yq = clustered(rng, params["n_queries"], centres, params["noise"] / np.sqrt(d))
    return Q, yq, G, yg


def _status_kib(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


class PeakMemory:
    """Peak RSS increase of a block of code (Linux ``VmHWM`` after a peak reset)."""

    def __enter__(self):
        self.before = _status_kib("VmRSS") * 1024
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            self.method = "VmHWM - VmRSS before (peak reset via /proc/self/clear_refs)"
        except OSError:
            self.method = "VmHWM - VmRSS before (peak not resettable: upper bound)"
        return self

    def __exit__(self, *exc):
        self.peak_increase_mib = (_status_kib("VmHWM") * 1024 - self.before) / MIB


def timed(func):
    start = time.perf_counter()
    result = func()
    return time.perf_counter() - start, result


# --------------------------------------------------------------------------
# Agreement of two top-k results
# --------------------------------------------------------------------------


def agreement(Q, G, idx_a, idx_b):
    """Fraction of shared neighbours, and whether every difference is a float32 tie."""
    k = idx_a.shape[1]
    shared = np.array([len(np.intersect1d(a, b, assume_unique=True))
                       for a, b in zip(idx_a, idx_b)])
    differing = np.flatnonzero(shared < k)
    unexplained = 0
    for q in differing:  # exact scores of the differing neighbours vs the k-th score
        only = np.setdiff1d(np.union1d(idx_a[q], idx_b[q]), np.intersect1d(idx_a[q], idx_b[q]))
        s_only = G[only] @ Q[q]
        kth = np.sort(G[idx_a[q]] @ Q[q])[0]
        unexplained += int(np.any(np.abs(s_only - kth) > TIE_TOLERANCE))
    return {
        "shared_fraction": float(shared.mean() / k),
        "queries_identical": float(np.mean(shared == k)),
        "queries_differing": int(differing.size),
        "differences_not_ties": unexplained,
    }


# --------------------------------------------------------------------------
# Runs
# --------------------------------------------------------------------------


def best_timed(func, repeats):
    """Best wall time of ``repeats`` calls, and the last result."""
    runs = [timed(func) for _ in range(repeats)]
    return min(t for t, _ in runs), runs[-1][1]


def run_search(Q, G, params, repeats=1):
    k, nq = params["k"], len(Q)
    search_embeddings(Q[:8], G[:5000], k)  # warm-up: thread pools, first allocations
    with PeakMemory() as mem:
        t_ours, (s_ours, i_ours) = best_timed(lambda: search_embeddings(Q, G, k), repeats)
    res = {"repeats": repeats, "ours_s": t_ours,
           "ours_peak_beyond_gallery_mib": mem.peak_increase_mib,
           "memory_method": mem.method, "gallery_mib": G.nbytes / MIB}
    try:
        import faiss
    except ImportError:
        faiss = None
    if faiss is not None:
        faiss.omp_set_num_threads(params["threads"])
        _faiss_index(faiss, G[:5000]).search(Q[:8], k)  # warm-up
        t_build, index = timed(lambda: _faiss_index(faiss, G))
        t_faiss, (_, i_faiss) = best_timed(lambda: index.search(Q, k), repeats)
        del index
        res.update(faiss_build_s=t_build, faiss_s=t_faiss,
                   faiss_agreement=agreement(Q, G, i_ours, i_faiss))
    from sklearn.neighbors import NearestNeighbors

    n_sub = min(params["sklearn_queries"], nq)
    nn = NearestNeighbors(n_neighbors=k, algorithm="brute", metric="cosine").fit(G)
    t_sk_sub, (_, i_sk) = timed(lambda: nn.kneighbors(Q[:n_sub]))
    res.update(sklearn_queries_timed=n_sub, sklearn_timed_s=t_sk_sub,
               sklearn_s=t_sk_sub * nq / n_sub, sklearn_extrapolated=n_sub < nq,
               sklearn_agreement=agreement(Q[:n_sub], G, i_ours[:n_sub], i_sk))
    return res


def _faiss_index(faiss, G):
    index = faiss.IndexFlatIP(G.shape[1])
    index.add(G)
    return index


def run_metrics(Q, yq, G, yg, params):
    n = params["metric_queries"]
    retrieval_metrics_at_k(Q[:8], G[:5000], yq[:8], yg[:5000], k=params["metric_k"])  # warm-up
    with PeakMemory() as mem:
        t, scores = timed(lambda: retrieval_metrics_at_k(Q[:n], G, yq[:n], yg,
                                                         k=params["metric_k"]))
    return {"time_s": t, "peak_beyond_gallery_mib": mem.peak_increase_mib,
            "memory_method": mem.method, "scores": scores}


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def print_search(res, params):
    nq, ng = params["n_queries"], params["n_gallery"]
    print_header(f"Search: {nq:,} queries x {ng:,} gallery, dim {params['dim']}, "
                 f"top-{params['k']}, {params['threads']} threads, float32, "
                 f"best of {res['repeats']} (ours, faiss)")
    rows = [("ours (torch, chunked)", res["ours_s"], "")]
    if "faiss_s" in res:
        rows.append(("faiss IndexFlatIP", res["faiss_s"],
                     f"(+ {res['faiss_build_s']:.2f} s to build the index)"))
    note = (f"EXTRAPOLATED: {res['sklearn_queries_timed']} queries timed "
            f"({res['sklearn_timed_s']:.2f} s) x {nq / res['sklearn_queries_timed']:g}"
            if res["sklearn_extrapolated"] else "all queries")
    rows.append(("sklearn NearestNeighbors brute", res["sklearn_s"], note))
    for label, seconds, extra in rows:
        print(f"  {label:32s}: {seconds:9.2f} s  {nq / seconds:9.0f} queries/s  {extra}")
    if "faiss_s" in res:
        a = res["faiss_agreement"]
        print(f"  throughput ratio ours / faiss   : {res['faiss_s'] / res['ours_s']:.2f} x")
        print(f"  top-k vs faiss: {a['shared_fraction']:.6f} of neighbours shared, "
              f"{a['queries_identical']:.4f} of queries identical, "
              f"{a['differences_not_ties']} differences beyond float32 ties")
    a = res["sklearn_agreement"]
    print(f"  throughput ratio ours / sklearn : {res['sklearn_s'] / res['ours_s']:.1f} x")
    print(f"  top-k vs sklearn (timed queries): {a['shared_fraction']:.6f} shared, "
          f"{a['differences_not_ties']} differences beyond float32 ties")
    print(f"  our peak memory beyond the gallery ({res['gallery_mib']:.0f} MiB): "
          f"{res['ours_peak_beyond_gallery_mib']:.0f} MiB  [{res['memory_method']}]")


def print_metrics(res, params):
    print_header(f"@k metrics: {params['metric_queries']:,} labelled queries x "
                 f"{params['n_gallery']:,} gallery, k={params['metric_k']}")
    figures = ", ".join(f"{m} {v:.4f}" for m, v in res["scores"].items())
    print(f"  time {res['time_s']:.2f} s; peak memory beyond the gallery "
          f"{res['peak_beyond_gallery_mib']:.0f} MiB; {figures}")


def main(argv=None):
    parser = make_parser(__doc__)
    parser.add_argument("--mid", action="store_true",
                        help="medium sizes (2,000 x 200,000), to iterate on the target's shape")
    parser.add_argument("--repeats", type=int, default=1,
                        help="time our search and faiss' this many times; report the best")
    args = parser.parse_args(argv)
    size = "quick" if args.quick else "mid" if args.mid else "full"
    params = {"quick": QUICK, "mid": MID, "full": FULL}[size]
    torch.set_num_threads(params["threads"])
    threadpool_limits(params["threads"])
    print(f"bench_search ({size} sizes); {params['threads']} "
          "threads for torch, faiss and BLAS, on a machine shared with other jobs "
          "(timings are noisy; ratios are measured in the same run)")
    Q, yq, G, yg = make_data(params)
    search = run_search(Q, G, params, args.repeats)
    print_search(search, params)
    metrics = run_metrics(Q, yq, G, yg, params)
    print_metrics(metrics, params)
    targets = {
        "faster_than_sklearn": target(search["sklearn_s"] / search["ours_s"],
                                      SKLEARN_RATIO_TARGET, ">=",
                                      "throughput ours / sklearn brute cosine >= 10x"),
        "search_memory": target(search["ours_peak_beyond_gallery_mib"], MEMORY_TARGET_MIB, "<",
                                "our search's peak memory beyond the gallery < 1 GiB"),
        "metrics_memory": target(metrics["peak_beyond_gallery_mib"], MEMORY_TARGET_MIB, "<",
                                 "@k metrics' peak memory beyond the gallery < 1 GiB"),
    }
    if "faiss_s" in search:
        targets["vs_faiss"] = target(search["faiss_s"] / search["ours_s"], FAISS_RATIO_TARGET,
                                     ">=", "throughput ours / faiss IndexFlatIP >= 0.8x")
        targets["same_topk_as_faiss"] = target(
            search["faiss_agreement"]["differences_not_ties"], 1, "<",
            "top-k sets equal faiss' up to float32 ties")
    print_targets(targets)
    if size != "full":
        print(f"  ({size} run: sizes below the target sizes, pass/fail is indicative only)")
    timings = {"ours_s": search["ours_s"], "sklearn_timed_s": search["sklearn_timed_s"],
               "metrics_s": metrics["time_s"]}
    if "faiss_s" in search:
        timings["faiss_s"] = search["faiss_s"]
    write_results(NAME, {"quick": args.quick, "size": size, "parameters": params,
                         "timings": timings,
                         "results": {"search": search, "metrics": metrics},
                         "targets": targets}, args.output_dir)


if __name__ == "__main__":
    main()
