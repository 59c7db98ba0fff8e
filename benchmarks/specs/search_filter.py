"""What the date filter costs: ``search(within=...)`` against the same search without it.

2,000 queries x 200,000 dated gallery items (clustered L2-normalised float32, dim 200; dates
uniform over a century on a daily grid), ``within`` 1 and 10 years, top 10; median of
``--repeats`` for the torch scan and faiss (``IDSelectorBatch`` per query date), both checked
against brute force on a sample of the queries.  Target: the filtered torch search costs at
most 1.5x the unfiltered one.  Full run: about 2 min on 2 cores.
"""

import statistics
import time

import numpy as np

from _common import print_header, target



def arguments(parser):
    parser.add_argument("--repeats", type=int, default=3)


def _data(n_queries, n_gallery, dim, rng):
    centres = rng.standard_normal((200, dim)).astype(np.float32)

    def draw(n):
        A = centres[rng.integers(0, len(centres), n)] + rng.standard_normal((n, dim),
                                                                              dtype=np.float32)
        return A / np.linalg.norm(A, axis=1, keepdims=True)

    def days(n):
        return 1880 + rng.integers(0, 36525, n) / 365.25

    return draw(n_queries), draw(n_gallery), days(n_queries), days(n_gallery)


def _median_time(call, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def measure(args):
    import torch

    from temporal_xmodal.metrics._scan import TimeFilter, topk
    from temporal_xmodal.search._exact import build_faiss_index, topk_faiss

    n_queries, n_gallery, dim, k = (200, 20_000, 64, 10) if args.quick else (2000, 200_000,
                                                                              200, 10)
    Q, G, tq, tg = _data(n_queries, n_gallery, dim, np.random.default_rng(0))
    Qt, Gt = torch.from_numpy(Q), torch.from_numpy(G)
    index = build_faiss_index(G)
    out = {"n_queries": n_queries, "n_gallery": n_gallery, "dim": dim, "k": k,
           "threads": args.threads, "repeats": args.repeats, "within": {}}
    plain, _ = _median_time(lambda: topk(Qt, Gt, k), args.repeats)
    plain_faiss, _ = _median_time(lambda: topk_faiss(Qt, None, k, index=index), args.repeats)
    print_header(f"{n_queries} queries x {n_gallery} items: unfiltered torch {plain:.2f} s, "
                 f"faiss {plain_faiss:.2f} s")
    targets = {}
    for within in (1.0, 10.0):
        time_filter = TimeFilter(tq, tg, within)
        seconds, (_, indices) = _median_time(
            lambda: topk(Qt, Gt, k, time_filter=time_filter), args.repeats)
        seconds_faiss, (_, indices_f) = _median_time(
            lambda: topk_faiss(Qt, None, k, index=index, time_filter=time_filter), 1)
        sample = np.arange(0, n_queries, max(1, n_queries // 50))
        S = Q[sample] @ G.T
        S[np.abs(tq[sample, None] - tg[None, :]) > within] = -np.inf
        expected = np.argsort(-S, axis=1, kind="stable")[:, :k]
        row = {"seconds": seconds, "seconds_faiss": seconds_faiss, "ratio": seconds / plain,
               "ratio_faiss": seconds_faiss / plain_faiss,
               "candidate_share": float((np.abs(tq[sample, None] - tg[None, :]) <= within)
                                        .mean()),
               "exact_on_sample": bool((indices[sample] == expected).all()),
               "faiss_agreement_on_sample": float((indices_f[sample] == expected).mean())}
        out["within"][f"{within:g}Y"] = row
        print(f"  within {within:g} Y: {row}")
        targets[f"filtered_torch_{within:g}Y"] = target(
            row["ratio"], 1.5, "<", f"torch search within {within:g} year(s) / unfiltered")
    return {**out, "unfiltered_seconds": plain, "unfiltered_seconds_faiss": plain_faiss,
            "targets": targets}
