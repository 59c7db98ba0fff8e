"""Benchmark: every estimator at the users' sizes: fit, transform, score and search, CPU seconds
and peak memory beyond the data.

Users hold 10⁴–10⁶ CLIP-sized items.  For each estimator of the registry (its job settings,
one epoch for the neural ones) and each size n (default 10k, 30k, 100k, 300k items of
512 + 512 float32 features, 12 categories, times over 10 years; ``--sizes`` for 1M), in a
fresh process (so that the peak is its own), this measures:

* ``fit``: process CPU seconds (one torch thread, one BLAS thread: the main job's default)
  and the peak resident set during the fit minus the resident set with the data built,
  divided by the float32 X's bytes (target ≤ 1.0: a fit holds at most one more copy);
* ``transform`` of all n rows: CPU s, peak beyond the data and the output, the output's
  dtype (target: float32 for float32 input, peak ≤ 1.0 × X);
* ``score`` on a held-out tenth (at most 30,000 rows): CPU s (above 5,000 rows a fixed
  5,000-query sample ranks every row: linear in n);
* ``search``: a ``CrossModalIndex`` over the n captions, 1,000 picture queries, top 10:
  CPU s and peak.

Beside them, a plain PyTorch loop of the same Diachronic network (the module, loss and
optimiser the estimator builds, batches gathered from the same arrays) measured in the same
process for its CPU s per epoch: what a user would otherwise write.

Figures: ``benchmarks/results/bench_scale.json`` (``--quick``: 2,000 and 4,000 items).
"""

import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _common import make_parser, print_header, print_targets, target, write_results
from bench_scale_fit import _status

NAME = "bench_scale"
SIZES = (10_000, 30_000, 100_000, 300_000)
QUICK_SIZES = (2_000, 4_000)
WIDTH = 512


class Peak:
    """Peak resident set from entry (``VmHWM`` reset through ``/proc/self/clear_refs``),
    in bytes beyond the resident set at entry."""

    def __enter__(self):
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        self.start = _status("VmRSS")
        return self

    def __exit__(self, *exc):
        self.beyond = _status("VmHWM") - self.start


def make_data(n, d=WIDTH, seed=0, chunk=50_000):
    """float32 ``X = [image | text | time]`` (n, 2d + 1), labels of 12 categories."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((12, 32)).astype(np.float32)
    maps = [rng.standard_normal((32, d)).astype(np.float32) / 6 for _ in range(2)]
    y = rng.integers(12, size=n)
    X = np.empty((n, 2 * d + 1), dtype=np.float32)
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        latent = centres[y[s:e]] + 0.7 * rng.standard_normal((e - s, 32), dtype=np.float32)
        for j, W in enumerate(maps):
            X[s:e, j * d:(j + 1) * d] = latent @ W + rng.standard_normal((e - s, d),
                                                                         dtype=np.float32)
        X[s:e, -1] = rng.uniform(0, 10, e - s)
    return X, y


def _cpu(func):
    start = time.process_time()
    out = func()
    return time.process_time() - start, out


def run_one(name, n):
    """One estimator at one size, in this process: the figures as a dict."""
    import torch

    from temporal_xmodal._device import thread_limits
    from temporal_xmodal.comparison.settings import estimator_registry, set_matching_params
    from temporal_xmodal.search import CrossModalIndex

    torch.set_num_threads(1)
    n_test = min(max(n // 10, 100), 30_000)
    X_all, y_all = make_data(n + n_test)
    X, y = X_all[:n], y_all[:n]
    X_test, y_test = X_all[n:], y_all[n:]
    size = X.nbytes
    est = estimator_registry(WIDTH, 0, 1.0)[name].estimator
    set_matching_params(est, max_epochs=1)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=Path(__file__).resolve().parent).stdout.strip()
    out = {"name": name, "n": n, "x_bytes": size, "commit": commit}
    with thread_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Peak() as peak:
            out["fit_cpu"], _ = _cpu(lambda: est.fit(X, y))
        out["fit_peak_over_x"] = peak.beyond / size
        with Peak() as peak:
            out["transform_cpu"], Z = _cpu(lambda: est.transform(X))
        out["transform_dtype"] = str(Z.dtype)
        out["transform_peak_over_x"] = (peak.beyond - Z.nbytes) / size
        del Z
        out["score_cpu"], out["score"] = _cpu(lambda: float(est.score(X_test, y_test)))
        d = WIDTH
        with Peak() as peak:
            def search():
                index = CrossModalIndex(est, modality="text", time=X[:, -1]).fit(X[:, d:-1])
                return index.search(X_test[:1000, :d], k=10, time=X_test[:1000, -1],
                                    as_frame=False)
            out["search_cpu"], _ = _cpu(search)
        out["search_peak_over_x"] = peak.beyond / size
    return out


def plain_diachronic(n):
    """CPU s of one epoch of the Diachronic network in a plain torch loop (the estimator's
    module, loss and optimiser), and of the estimator's own epoch on the same data."""
    import torch

    from bench_scale_fit import plain_loop
    from temporal_xmodal._device import thread_limits
    from temporal_xmodal.comparison.settings import estimator_registry, set_matching_params

    torch.set_num_threads(1)
    X, y = make_data(n)
    est = estimator_registry(WIDTH, 0, 1.0)["Diachronic"].estimator
    set_matching_params(est, max_epochs=1, validation_fraction=0.0, standardize=False)
    with thread_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_cpu, _ = _cpu(lambda: est.fit(X, y))
        seed = int(est.net_.iterator_train__generator.initial_seed())
        plain_cpu, _ = _cpu(lambda: plain_loop(est, X, y, WIDTH, est.batch_size, seed))
    return {"n": n, "fit_cpu": fit_cpu, "plain_loop_cpu": plain_cpu,
            "ratio": fit_cpu / plain_cpu}


def main():
    parser = make_parser(__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default=None, help="comma-separated sizes")
    parser.add_argument("--estimators", default=None, help="comma-separated names")
    parser.add_argument("--one", nargs=2, metavar=("NAME", "N"), help=argparse_hidden())
    parser.add_argument("--plain", type=int, default=None, help=argparse_hidden())
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]))))
        return
    if args.plain:
        print(json.dumps(plain_diachronic(args.plain)))
        return
    from temporal_xmodal.comparison.settings import estimator_registry

    sizes = ([int(s) for s in args.sizes.split(",")] if args.sizes
             else QUICK_SIZES if args.quick else SIZES)
    names = (args.estimators.split(",") if args.estimators
             else list(estimator_registry(WIDTH, 0, 1.0)))
    path = args.output_dir / f"{NAME}.json"
    previous = (json.loads(path.read_text()) if path.exists() and not args.quick else {})
    rows = {(r["name"], r["n"]): r for r in previous.get("rows", [])}
    script = Path(__file__).resolve()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(script.parent), os.environ.get("PYTHONPATH", "")])}
    for n in sizes:
        print_header(f"{n:,} items x ({WIDTH} + {WIDTH}) float32")
        for name in names:
            proc = subprocess.run([sys.executable, str(script), "--one", name, str(n)],
                                  capture_output=True, text=True, env=env)
            if proc.returncode != 0:
                print(f"  {name}: failed\n{proc.stderr[-2000:]}")
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            rows[(name, n)] = r
            print(f"  {name:18s} fit {r['fit_cpu']:7.1f} CPU s, peak {r['fit_peak_over_x']:.2f}x X"
                  f" | transform {r['transform_cpu']:6.1f} s, {r['transform_dtype']}, peak "
                  f"{r['transform_peak_over_x']:.2f}x | score {r['score_cpu']:5.1f} s | search "
                  f"{r['search_cpu']:5.1f} s, peak {r['search_peak_over_x']:.2f}x", flush=True)
    plain = previous.get("plain")
    n_plain = sizes[-1] if args.quick else min(max(sizes), 100_000)
    proc = subprocess.run([sys.executable, str(script), "--plain", str(n_plain)],
                          capture_output=True, text=True, env=env)
    if proc.returncode == 0:
        plain = json.loads(proc.stdout.strip().splitlines()[-1])
        print_header("Diachronic's epoch against a plain PyTorch loop of the same network")
        print(f"  {plain['n']:,} items: fit {plain['fit_cpu']:.1f} CPU s, plain loop "
              f"{plain['plain_loop_cpu']:.1f} CPU s, ratio {plain['ratio']:.2f}")
    else:
        print(proc.stderr[-2000:])
    rows = sorted(rows.values(), key=lambda r: (r["n"], r["name"]))
    largest = max(r["n"] for r in rows)
    targets = {}
    for r in rows:
        if r["n"] == largest:
            targets[f"{r['name']}_fit_memory"] = target(
                r["fit_peak_over_x"], 1.0, "<", f"fit peak beyond the data / X at {largest:,}")
            targets[f"{r['name']}_transform_memory"] = target(
                r["transform_peak_over_x"], 1.0, "<",
                f"transform peak beyond the data and the output / X at {largest:,}")
    if plain:
        targets["diachronic_vs_plain_loop"] = target(plain["ratio"], 1.25, "<",
                                                     "Diachronic epoch CPU / plain loop's")
    print_targets(targets)
    write_results(NAME, {"quick": args.quick, "width": WIDTH, "rows": rows, "plain": plain,
                         "targets": targets}, args.output_dir)


def argparse_hidden():
    import argparse
    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
