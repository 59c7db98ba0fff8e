"""Benchmark of the neural estimators and search on a GPU, against what a user would otherwise run.

What it measures (on ``--device``, default CUDA when present)
-----------------------------------------------------------
1. Training throughput (items/s of training epochs, from skorch's epoch ``dur``) of SAM,
   TempXNet and Diachronic on random features, ``--n`` items × (512 + 512) features, 20
   categories, times over 10 years, ``validation_fraction=0``, two epochs (the second is
   timed; the first pays CUDA's start-up), at their default batch size and at 1,024; the step
   time is the epoch's duration over its batches.  Against, in the same run:

   * the same fit on this machine's CPU (every core; fewer items, throughput is per item),
   * a plain PyTorch loop over tensors already on the device: the same module class and
     sizes, the same loss object, the same optimiser and learning rate, the same batch size,
     a CPU ``randperm`` per epoch and batches gathered on the device, one host sync per epoch
     (what a user writing the loop by hand would do; the floor of our fit).

2. One Diachronic epoch at the DCM collection's size (``--dcm-items``, default 700,000 ×
   1,024 features) at defaults, validation included (the epoch's ``dur`` covers the
   validation mAP), and the share of the device's time spent in kernels during one
   Diachronic epoch (``torch.profiler``: CUDA kernel time over the epoch's wall time, on the
   first 100,000 items).

3. Exact top-k search (``search_embeddings``, k = 100, dim 200) against a plain
   ``Q_block @ G.T`` + ``torch.topk`` in blocks of 1,000 queries on the same device; both
   top-k lists are checked to agree (same scores).

4. The main job (``python -m temporal_xmodal compare``): its wall time.

Targets (GPU only; ``issues``: "On a GPU: correct, guarded in CI, and fast"): step time at the
default batch ≤ 1.5 ms for SAM, TempXNet and Diachronic; Diachronic at batch 1,024 ≥ 600,000
items/s; each estimator at defaults ≥ 10× its CPU throughput; our fit ≥ 0.9× the plain
loop; the DCM-size epoch ≤ 20 s; search ≤ 1.2× block matmul + ``topk``; the main job ≤ 30 s.
Without CUDA the same figures are printed for the CPU and no target is checked.

Every target gets a PASS or FAIL line, also when its part failed or was left out for want of
time (``--budget-s``: the parts run in the order 1, 3, 4, 2, the DCM-size epoch last, each only
when the time left covers it; the main job runs under a time-out), so the run cannot hang and
never ends without its verdicts.

How to run
----------
::

    python benchmarks/bench_gpu.py                 # on a GPU: about 3 minutes
    python benchmarks/bench_gpu.py --budget-s 200  # what gpu_check.sh runs
    python benchmarks/bench_gpu.py --quick         # small sizes, any device (a smoke run)

With the CUDA tests, in one command (``docs/scaling.md``): ``bash benchmarks/gpu_check.sh``.
"""

import math
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np
import torch

from _common import make_parser, print_header, print_targets, target, write_results

ESTIMATORS = ("SAM", "TempXNet", "Diachronic")


def make_data(n, d_image=512, d_text=512, n_classes=20, seed=0):
    """Random float32 features with a class signal, integer labels and times in [0, 10)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    centres = rng.standard_normal((n_classes, d_image + d_text)).astype(np.float32)
    X = rng.standard_normal((n, d_image + d_text), dtype=np.float32)
    X += centres[y]
    X = np.hstack([X, rng.uniform(0, 10, (n, 1)).astype(np.float32)])
    return X, y, d_image


def make_estimator(name, device, d_image, **params):
    from temporal_xmodal import DiachronicEmbedder, SAMEmbedder, TempXNetEmbedder

    cls = {"SAM": SAMEmbedder, "TempXNet": TempXNetEmbedder,
           "Diachronic": DiachronicEmbedder}[name]
    # one fit with the times (the time-aware models' only fit from issue 31 on)
    timed = {} if name == "SAM" else {"use_time": True}
    return cls(n_image_features=d_image, device=device, random_state=0,
               **{"validation_fraction": 0.0, "max_epochs": 2, **timed, **params})


def epoch_figures(est, n_train):
    """Items/s and ms per step of the fit's last epoch."""
    row = est.net_.history[-1]
    return {"items_per_s": n_train / row["dur"],
            "step_ms": 1e3 * row["dur"] / row["train_batch_count"], "epoch_s": row["dur"]}


def fit_throughput(name, X, y, d_image, device, **params):
    est = make_estimator(name, device, d_image, **params).fit(X, y)
    return est, epoch_figures(est, len(X))


def plain_loop(est, X, y, d_image, device, epochs=2):
    """The fitted estimator's module class, loss and optimiser (same class, parameter groups,
    options and learning-rate decay) in a hand-written eager loop over device-resident
    tensors; the last epoch's items/s."""
    net = est.net_
    module = type(net.module_)(**net.get_params_for("module")).to(device)
    criterion = net.criterion_
    # the fit's optimiser: its class, parameter groups (Diachronic's time pathway has its
    # own rate) and options (fused), over the new module's parameters
    names = {id(p): name for name, p in net.module_.named_parameters()}
    params = dict(module.named_parameters())
    groups = [{**{k: v for k, v in group.items() if k != "params"},
               "params": [params[names[id(p)]] for p in group["params"]]}
              for group in net.optimizer_.param_groups]
    for group in groups:
        group["lr"] = group.setdefault("initial_lr", group["lr"])
    optimizer = type(net.optimizer_)(groups)
    decay = float(getattr(est, "lr_decay", 0) or 0)  # the fit's per-step learning-rate decay
    step = 0
    batch_size = est.batch_size
    n = len(X)
    image = torch.as_tensor(X[:, :d_image], device=device)
    text = torch.as_tensor(X[:, d_image:-1], device=device)
    inputs = est._batch_times(est.time_axis_.centre(X[:, -1].astype(np.float64)))
    times = {k: torch.as_tensor(v, device=device) for k, v in inputs.items()}
    Y = torch.as_tensor(np.eye(y.max() + 1, dtype=bool)[y], device=device)  # class codes
    generator = torch.Generator().manual_seed(0)
    for epoch in range(epochs):
        sync(device)
        start = time.perf_counter()
        if getattr(criterion, "needs_prototypes", False):  # SAM: the epoch's f_mc, on device
            module.eval()
            with torch.no_grad():
                z_img = torch.cat([module.embed_image(image[s:s + 4096])
                                   for s in range(0, n, 4096)])
                z_txt = torch.cat([module.embed_text(text[s:s + 4096])
                                   for s in range(0, n, 4096)])
            weights = Y.to(torch.float32)
            counts = weights.sum(0).clamp(min=1)[:, None]
            criterion.refresh(epoch, weights.T @ z_img / counts, weights.T @ z_txt / counts)
        module.train()
        order = torch.randperm(n, generator=generator).to(device)
        losses = []
        for s in range(0, n, batch_size):
            index = order[s:s + batch_size]
            batch = {"image": image[index], "text": text[index],
                     **{k: v[index] for k, v in times.items()}}
            labels = Y[index].to(torch.float32)
            if decay:
                for group in optimizer.param_groups:
                    group["lr"] = group["initial_lr"] / (1.0 + decay * step)
            step += 1
            optimizer.zero_grad()
            loss = criterion(module(**batch), labels, batch)
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
        torch.stack(losses).sum().item()  # one sync per epoch
        elapsed = time.perf_counter() - start
    return n / elapsed


def sync(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def throughput(args, device, X, y, d_image, X_cpu, y_cpu):
    rows = {}
    for name in ESTIMATORS:
        for label, params in (("default", {}), ("batch 1024", {"batch_size": 1024})):
            est, fig = fit_throughput(name, X, y, d_image, device, **params)
            fig["plain_items_per_s"] = plain_loop(est, X, y, d_image, device)
            fig["fit_over_plain"] = fig["items_per_s"] / fig["plain_items_per_s"]
            if label == "default" and torch.device(device).type != "cpu":
                _, cpu = fit_throughput(name, X_cpu, y_cpu, d_image, "cpu", **params)
                fig["cpu_items_per_s"] = cpu["items_per_s"]
                fig["over_cpu"] = fig["items_per_s"] / cpu["items_per_s"]
            fig["batch_size"] = est.batch_size
            rows[f"{name} ({label})"] = fig
            print(f"  {name:<11} {label:<10} batch {est.batch_size:>5}: "
                  f"{fig['items_per_s']:>11,.0f} items/s, step {fig['step_ms']:.2f} ms; "
                  f"plain loop {fig['plain_items_per_s']:>11,.0f} (fit/plain "
                  f"{fig['fit_over_plain']:.2f})"
                  + (f"; CPU {fig['cpu_items_per_s']:,.0f} (×{fig['over_cpu']:.1f})"
                     if "over_cpu" in fig else ""), flush=True)
    return rows


def dcm_epoch(args, device):
    """One Diachronic epoch at defaults, validation included, and its kernel-time share."""
    X, y, d_image = make_data(args.dcm_items, args.width, args.width, seed=1)
    est = make_estimator("Diachronic", device, d_image, validation_fraction=0.1,
                         max_epochs=1).fit(X, y)
    row = est.net_.history[-1]
    result = {"items": len(X), "epoch_s": row["dur"], "valid_map": row["valid_map"]}
    print(f"  Diachronic, {len(X):,} items × {X.shape[1] - 1:,} features, one epoch with "
          "validation: "
          f"{row['dur']:.1f} s", flush=True)
    if torch.device(device).type == "cuda":
        from torch.profiler import ProfilerActivity, profile

        # one more epoch on the first 100,000 items (the share does not depend on the size;
        # profiling every op of 10,000 steps would cost more than the epoch)
        part = slice(0, min(len(X), 100_000))
        est.set_params(warm_start=True, max_epochs=1)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            start = time.perf_counter()
            est.fit(X[part], y[part])
            torch.cuda.synchronize()
            wall = time.perf_counter() - start
        kernel_us = sum(e.self_device_time_total for e in prof.key_averages()
                        if e.device_type.name == "CUDA")
        result["kernel_share"] = kernel_us / 1e6 / wall
        print(f"  share of the epoch's wall time in CUDA kernels: {result['kernel_share']:.0%}")
    return result


def search(args, device):
    from temporal_xmodal.search import search_embeddings

    gen = torch.Generator().manual_seed(0)
    Q = torch.nn.functional.normalize(torch.randn(args.queries, 200, generator=gen), dim=1)
    G = torch.nn.functional.normalize(torch.randn(args.gallery, 200, generator=gen), dim=1)
    Q, G = Q.to(device), G.to(device)
    k = 100

    def ours():
        return search_embeddings(Q, G, k=k, device=device)

    def plain():
        scores, indices = [], []
        for s in range(0, len(Q), 1000):
            top = torch.topk(Q[s:s + 1000] @ G.T, k, dim=1)
            scores.append(top.values)
            indices.append(top.indices)
        return torch.cat(scores).cpu().numpy(), torch.cat(indices).cpu().numpy()

    timings = {}
    for name, fn in (("ours", ours), ("plain", plain)):
        fn()
        sync(device)
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            result = fn()
            sync(device)
            best = min(best, time.perf_counter() - start)
        timings[name] = (best, result)
    same = np.allclose(timings["ours"][1][0], timings["plain"][1][0], atol=1e-5)
    out = {"queries": len(Q), "gallery": len(G), "k": k, "ours_s": timings["ours"][0],
           "plain_s": timings["plain"][0], "same_topk_scores": bool(same)}
    out["ratio"] = out["ours_s"] / out["plain_s"]
    print(f"  search {len(Q):,} × {len(G):,} × 200, k = {k}: {out['ours_s']:.3f} s; block "
          f"matmul + topk {out['plain_s']:.3f} s (ratio {out['ratio']:.2f}); same top-k "
          f"scores: {same}")
    return out


def main_job(args, timeout):
    """The main job's wall time; it is stopped after ``timeout`` seconds (a failure)."""
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "temporal_xmodal", "compare", "--output", folder,
                   "--no-plots"]
        if args.quick:
            command += ["--n-samples", "200", "--max-epochs", "1", "--estimators",
                        "CCA,Diachronic"]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"the main job exited with {done.returncode}: "
                           f"{done.stderr.strip()[-2000:]}")
    print(f"  {' '.join(command[1:4])} ...: {wall:.1f} s")
    return {"command": command[1:], "wall_s": wall}


class Budget:
    """Seconds left to the run (``None``: no limit)."""

    def __init__(self, seconds):
        self.end = None if seconds is None else time.perf_counter() + seconds

    def left(self):
        return math.inf if self.end is None else self.end - time.perf_counter()


def run_part(title, budget, needs, fn, *args):
    """``fn(*args)`` under a section title; None (and why) when it failed or when less than
    ``needs`` seconds are left."""
    print_header(title)
    if budget.left() < needs:
        print(f"  not run: {budget.left():.0f} s left of the budget, it needs about {needs} s")
        return None
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001 - the other parts and every verdict still come
        print("  FAILED:\n" + "".join("    " + line for line in
                                       traceback.format_exc().splitlines(True)[-12:]))
        return None


def not_run(threshold, comparison, description):
    """The FAIL entry of a target whose part did not give its figure."""
    entry = target(math.nan, threshold, comparison, description)
    entry.update(passed=False, description=description + " [not measured]")
    return entry


def gpu_targets(rows, dcm, found, job, skip_main_job):
    """Every target of the GPU issue, FAIL where its figure is missing."""
    def check(value, threshold, comparison, description):
        return (target(value, threshold, comparison, description) if value is not None
                else not_run(threshold, comparison, description))

    rows = rows or {}
    targets = {}
    for name in ESTIMATORS:
        row = rows.get(f"{name} (default)", {})
        targets[f"{name}_step"] = check(row.get("step_ms"), 1.5, "<",
                                        f"{name} step at the default batch (ms)")
        targets[f"{name}_over_cpu"] = check(row.get("over_cpu"), 10, ">=",
                                            f"{name} items/s over the CPU's")
    for name in ESTIMATORS:
        for label in ("default", "batch 1024"):
            key = f"{name} ({label})"
            targets[f"{key}_over_plain"] = check(rows.get(key, {}).get("fit_over_plain"), 0.9,
                                                 ">=", f"{key}: fit over the plain loop")
    targets["diachronic_1024"] = check(rows.get("Diachronic (batch 1024)", {}).get(
        "items_per_s"), 600_000, ">=", "Diachronic items/s at batch 1,024")
    targets["dcm_epoch"] = check((dcm or {}).get("epoch_s"), 20, "<",
                                 "one DCM-size Diachronic epoch with validation (s)")
    targets["search"] = check((found or {}).get("ratio"), 1.2, "<",
                              "search over block matmul + topk (time ratio)")
    if found is not None and not found["same_topk_scores"]:
        targets["search"].update(passed=False, description=targets["search"]["description"]
                                 + " [top-k scores differ]")
    if not skip_main_job:
        targets["main_job"] = check((job or {}).get("wall_s"), 30, "<",
                                    "the main job's wall time (s)")
    return targets


def main(argv=None):
    parser = make_parser(__doc__.split("\n")[0])
    parser.add_argument("--device", default="auto", help="auto: CUDA when available")
    parser.add_argument("--n", type=int, default=None,
                        help="items of the throughput fits (default 100,000; quick 300)")
    parser.add_argument("--dcm-items", type=int, default=None,
                        help="items of the DCM-size epoch (default 700,000; quick 300)")
    parser.add_argument("--skip-main-job", action="store_true")
    parser.add_argument("--budget-s", type=float, default=None,
                        help="seconds for the whole run: a part that would not fit is left "
                             "out (its targets FAIL); default: no limit")
    args = parser.parse_args(argv)
    budget = Budget(args.budget_s)
    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" \
        else args.device
    on_gpu = torch.device(device).type == "cuda"
    args.n = args.n or (300 if args.quick else 100_000)
    args.dcm_items = args.dcm_items or (300 if args.quick else 700_000)
    args.queries, args.gallery = (200, 5_000) if args.quick else (10_000, 1_000_000)
    args.width = 32 if args.quick else 512  # features per modality
    print(f"device: {torch.cuda.get_device_name() if on_gpu else 'cpu'}; torch "
          f"{torch.__version__}; {torch.get_num_threads()} CPU threads")

    X, y, d_image = make_data(args.n, args.width, args.width)
    n_cpu = min(args.n, 10_000)  # the CPU's throughput, on fewer items
    quick = args.quick or not on_gpu  # no budget to plan for: every part runs
    rows = run_part(f"Training throughput ({args.n:,} items × {2 * args.width:,} features, "
                    "epoch 2 timed)", budget, 0, throughput, args, device, X, y, d_image,
                    X[:n_cpu], y[:n_cpu])
    found = run_part("Exact top-k search", budget, 0 if quick else 30, search, args, device)
    job = None
    if not args.skip_main_job:
        job = run_part("The main job", budget, 0 if quick else 40, main_job, args,
                       None if budget.end is None else max(30.0, min(120.0, budget.left() - 5)))
    dcm = run_part("Diachronic epoch at the DCM collection's size", budget,
                   0 if quick else 60, dcm_epoch, args, device)

    targets = {}
    if on_gpu and not args.quick:
        targets = gpu_targets(rows, dcm, found, job, args.skip_main_job)
        print_targets(targets)
    else:
        print("\n(no target checked: " + ("quick run" if args.quick else "no GPU") + ")")
    write_results("bench_gpu", {"device": device, "throughput": rows, "dcm_epoch": dcm,
                                "search": found, "main_job": job, "targets": targets,
                                "budget_s": args.budget_s}, args.output_dir)
    return 0 if all(entry["passed"] for entry in targets.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
