"""What the date filter costs: ``CrossModalIndex.search(within=...)`` against the same search
without it, on one dated gallery.

A user holding the dates restricts a search to the items dated within a window of the
query's date (``search(X, k, time=query_dates, within=...)``); every query then ranks its
candidates only.  This benchmark times that filtered search against the unfiltered search of
the same gallery, measured alternately in one run (median of ``--repeats``), for the torch
scan and for faiss (``IndexFlatIP`` with an ``IDSelectorBatch`` per distinct query date), and
checks that both give the brute-force top-k over the filtered candidates on a sample of the
queries.

Data: L2-normalised float32 embeddings (clustered random data), gallery and query dates
uniform over a century on a daily grid (the way a newspaper archive is dated), ``within`` one
year (about 2 % of the gallery a candidate) and ten years.

Target (issue "Time judged against the dates a user already has"): the filtered torch search
costs at most 1.5x the unfiltered one.

Run::

    python benchmarks/bench_search_filter.py          # 2,000 x 200,000, dim 200 (~2 min)
    python benchmarks/bench_search_filter.py --quick  # seconds
"""

import statistics
import time

import numpy as np
import torch
from _common import make_parser, print_header, print_targets, target, write_results

from temporal_xmodal.metrics._scan import TimeFilter, topk
from temporal_xmodal.search._exact import build_faiss_index, topk_faiss

NAME = "bench_search_filter"


def _data(n_queries, n_gallery, dim, rng):
    centres = rng.standard_normal((200, dim)).astype(np.float32)
    def draw(n):
        A = centres[rng.integers(0, len(centres), n)] + rng.standard_normal((n, dim),
                                                                              dtype=np.float32)
        return A / np.linalg.norm(A, axis=1, keepdims=True)
    days = lambda n: 1880 + rng.integers(0, 36525, n) / 365.25  # noqa: E731
    return draw(n_queries), draw(n_gallery), days(n_queries), days(n_gallery)


def _median_time(call, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main():
    parser = make_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    n_queries, n_gallery, dim, k = (200, 20_000, 64, 10) if args.quick else (2000, 200_000,
                                                                              200, 10)
    rng = np.random.default_rng(0)
    Q, G, tq, tg = _data(n_queries, n_gallery, dim, rng)
    Qt, Gt = torch.from_numpy(Q), torch.from_numpy(G)
    index = build_faiss_index(G)
    results = {"n_queries": n_queries, "n_gallery": n_gallery, "dim": dim, "k": k,
               "threads": args.threads, "repeats": args.repeats, "within": {}}
    plain, _ = _median_time(lambda: topk(Qt, Gt, k), args.repeats)
    plain_faiss, _ = _median_time(lambda: topk_faiss(Qt, None, k, index=index), args.repeats)
    print_header(f"{n_queries} queries x {n_gallery} gallery items, dim {dim}, top-{k}, "
                 f"{args.threads} threads")
    print(f"  unfiltered: torch {plain:.2f} s, faiss {plain_faiss:.2f} s")
    targets = {}
    for within in (1.0, 10.0):
        time_filter = TimeFilter(tq, tg, within)
        seconds, (scores, indices) = _median_time(
            lambda: topk(Qt, Gt, k, time_filter=time_filter), args.repeats)
        seconds_faiss, (scores_f, indices_f) = _median_time(
            lambda: topk_faiss(Qt, None, k, index=index, time_filter=time_filter), 1)
        sample = np.arange(0, n_queries, max(1, n_queries // 50))
        S = Q[sample] @ G.T
        S[np.abs(tq[sample, None] - tg[None, :]) > within] = -np.inf
        expected = np.argsort(-S, axis=1, kind="stable")[:, :k]
        exact = bool((indices[sample] == expected).all())
        agree_faiss = float((indices_f[sample] == expected).mean())
        share = float((np.abs(tq[sample, None] - tg[None, :]) <= within).mean())
        row = {"seconds": seconds, "seconds_faiss": seconds_faiss, "ratio": seconds / plain,
               "ratio_faiss": seconds_faiss / plain_faiss, "candidate_share": share,
               "exact_on_sample": exact, "faiss_agreement_on_sample": agree_faiss}
        results["within"][f"{within:g}Y"] = row
        print(f"  within {within:g} year(s) ({share:.1%} of the gallery a candidate): torch "
              f"{seconds:.2f} s ({row['ratio']:.2f}x unfiltered, exact: {exact}), faiss "
              f"{seconds_faiss:.2f} s ({row['ratio_faiss']:.2f}x, agreement "
              f"{agree_faiss:.3f})")
        targets[f"filtered_torch_{within:g}Y"] = target(
            row["ratio"], 1.5, "<", f"torch search within {within:g} year(s) / unfiltered")
    results["unfiltered_seconds"] = plain
    results["unfiltered_seconds_faiss"] = plain_faiss
    print_targets(targets)
    write_results(NAME, {"quick": args.quick, **results, "targets": targets}, args.output_dir)


if __name__ == "__main__":
    main()
