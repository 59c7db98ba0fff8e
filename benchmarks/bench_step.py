"""A training step of SAM, TempXNet and Diachronic: kernels launched and time, before and after.

What it measures, for each estimator at its defaults (hidden 1,024; its own batch size):

1. **Kernel-launching ops per training step** through the public ``fit`` (a
   ``TorchDispatchMode`` counts the aten ops of one step that launch a kernel: views,
   allocations and profiler markers are not counted), on tiny dimensions so that only the
   count matters.  The optimiser is the one the fit builds for CUDA too (fused when torch
   has it): the count is what a GPU pays per step.
2. **CPU step time** (ms; an epoch's ``dur`` over its batches, the median of epochs 2–3, so
   that the first epoch's warm-up and a compiled step's compile time are left out) at the
   demo's feature sizes (64 image + 48 text) and at CLIP's (512 + 512); ``--repeats`` fits
   per tree, before and after alternating, and their median.
3. The same with ``compile_step=True`` on the CPU (inductor): the step time, the compile time
   (epoch 1 minus epoch 2) and the number of steps after which compiling has paid.

Items 1 and 2 run for two trees side by side, in the same run: this checkout ("after") and
``--base`` ("before", a git revision checked out in a temporary worktree), each fit in its own
subprocess with the same threads.  Writes ``benchmarks/results/bench_step.json``.

Usage::

    python benchmarks/bench_step.py                  # ~10 min on 2 cores
    python benchmarks/bench_step.py --quick          # small sizes, no compiled step (a smoke run)
    python benchmarks/bench_step.py --base 18a091d --threads 2
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAMES = ("SAM", "TempXNet", "Diachronic")
#: The commit before the kernel trims of issue 40.
DEFAULT_BASE = "18a091d"


# ------------------------------------------------------------------ the worker (one fit)
def _worker(spec):
    """Run one measurement in this process (PYTHONPATH picks the tree); print its JSON."""
    import collections
    import warnings

    import numpy as np
    import torch
    from skorch.callbacks import Callback
    from torch.utils._python_dispatch import TorchDispatchMode

    import temporal_xmodal as tx

    torch.set_num_threads(spec["threads"])
    warnings.simplefilter("ignore")
    free = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "detach",
            "alias", "lift_fresh", "_local_scalar_dense", "sym_size", "sym_stride",
            "sym_numel", "is_same_size", "set_", "_record_function_enter_new",
            "_record_function_exit"}

    class Count(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = collections.Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            name = func.overloadpacket.__name__
            if not (func.is_view or name in free):
                self.ops[name] += 1
            return out

    class CountStep(Callback):
        def initialize(self):
            self.seen, self.mode, self.counts = 0, None, []
            return self

        def on_batch_begin(self, net, training=False, **kwargs):
            if training:
                self.seen += 1
                if self.seen == 3:
                    self.mode = Count()
                    self.mode.__enter__()

        def on_batch_end(self, net, training=False, **kwargs):
            if self.mode is not None:
                self.mode.__exit__(None, None, None)
                self.counts.append(sum(self.mode.ops.values()))
                self.mode = None

    cls = {"SAM": tx.SAMEmbedder, "TempXNet": tx.TempXNetEmbedder,
           "Diachronic": tx.DiachronicEmbedder}[spec["name"]]
    rng = np.random.default_rng(0)
    n, di, dt = spec["n"], spec["d_image"], spec["d_text"]
    y = rng.integers(0, 10, n)
    X = np.hstack([rng.normal(size=(n, di)), rng.normal(size=(n, dt)),
                   rng.uniform(0, 10, (n, 1))])
    params = {"n_image_features": di, "validation_fraction": 0.0, "random_state": 0,
              "max_epochs": spec["epochs"], "device": "cpu"}
    if spec["kind"] == "kernels":
        # the optimiser as torch runs it on CUDA: fused where the fit asks for it, else
        # foreach (multi-tensor; the CPU's default is one op per parameter)
        for optimizer in (torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD):
            optimizer.__init__ = _foreach_default(optimizer.__init__)
        counter = CountStep()
        params.update(hidden_dim=8, embedding_dim=4, max_epochs=1, batch_size=100,
                      callbacks=[("count", counter)])
    if spec.get("compile") is not None:
        params["compile_step"] = spec["compile"]
    est = cls(**params).fit(X, y)
    if spec["kind"] == "kernels":
        return {"kernels": counter.counts[0]}
    rows = est.net_.history
    per_step = [1e3 * r["dur"] / r["train_batch_count"] for r in rows]
    steady = float(np.median(per_step[1:]))
    return {"step_ms": steady, "first_epoch_s": rows[0]["dur"],
            "epoch_s": float(np.median([r["dur"] for r in rows[1:]])),
            "batch_size": est.batch_size, "steps_per_epoch": rows[0]["train_batch_count"]}


def _foreach_default(init):
    def wrapped(self, *args, **kwargs):
        if not kwargs.get("fused"):
            kwargs.setdefault("foreach", True)
        return init(self, *args, **kwargs)
    return wrapped


def measure(tree, spec, timeout=1800):
    """One worker in a subprocess whose ``temporal_xmodal`` is ``tree``'s."""
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": str(spec["threads"])}
    out = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], env=env,
                         capture_output=True, text=True, timeout=timeout, cwd=tree)
    if out.returncode:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default=DEFAULT_BASE, help="git revision of 'before'")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3,
                        help="fits per tree and size, before and after alternating")
    parser.add_argument("--no-compile", action="store_true", help="skip the compiled step")
    parser.add_argument("--output-dir", default=str(ROOT / "benchmarks" / "results"))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(_worker(json.loads(args.worker))))
        return 0
    n, epochs = (600, 2) if args.quick else (4000, 3)
    sizes = {"demo": (64, 48)} if args.quick else {"demo": (64, 48), "clip": (512, 512)}
    results = {"benchmark": "bench_step", "command": ["bench_step.py", *(argv or sys.argv[1:])],
               "base": args.base, "threads": args.threads, "n_items": n, "epochs": epochs,
               "repeats": args.repeats, "load_average": os.getloadavg(),
               "date": datetime.date.today().isoformat(),
               "machine": {"cpu_count": os.cpu_count(),
                           "versions": {"torch": _torch_version()}}, "rows": []}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(base), args.base], cwd=ROOT,
                       check=True, capture_output=True)
        try:
            trees = {"before": base, "after": ROOT}
            for name in NAMES:
                row = {"estimator": name}
                for label, tree in trees.items():
                    spec = {"name": name, "kind": "kernels", "n": 530, "d_image": 16,
                            "d_text": 16, "epochs": 1, "threads": 1}
                    row[f"kernels_{label}"] = measure(tree, spec).get("kernels")
                for size, (di, dt) in sizes.items():
                    # before and after alternate, so that a change of the machine's load
                    # falls on both; the median of the repeats is reported
                    runs = {label: [] for label in trees}
                    for _ in range(args.repeats):
                        for label, tree in trees.items():
                            spec = {"name": name, "kind": "time", "n": n, "d_image": di,
                                    "d_text": dt, "epochs": epochs, "threads": args.threads}
                            if label == "after":
                                spec["compile"] = False
                            runs[label].append(measure(tree, spec))
                    for label in trees:
                        row[f"{size}_{label}"] = _median_run(runs[label])
                    if not (args.quick or args.no_compile):
                        spec = {"name": name, "kind": "time", "n": n, "d_image": di,
                                "d_text": dt, "epochs": epochs, "threads": args.threads,
                                "compile": True}
                        row[f"{size}_compiled"] = measure(ROOT, spec)
                results["rows"].append(row)
                _print_row(row, sizes)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT,
                           capture_output=True)
    out = Path(args.output_dir) / ("bench_step_quick.json" if args.quick else "bench_step.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")
    print("wrote", out)
    return 0


def _torch_version():
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True)
    return out.stdout.strip()


def _median_run(runs):
    """The run of median step time (with every repeat's step time), or the first error."""
    ok = [r for r in runs if "step_ms" in r]
    if not ok:
        return runs[0]
    ok.sort(key=lambda r: r["step_ms"])
    return {**ok[len(ok) // 2], "step_ms_repeats": [r["step_ms"] for r in runs if "step_ms" in r]}


def _print_row(row, sizes):
    name = row["estimator"]
    print(f"{name}: kernels per step {row['kernels_before']} -> {row['kernels_after']}")
    for size in sizes:
        before, after = row[f"{size}_before"], row[f"{size}_after"]
        if "step_ms" not in before or "step_ms" not in after:
            print(f"  {size}: failed: {before.get('error') or after.get('error')}")
            continue
        line = (f"  {size}: CPU step {before['step_ms']:.2f} -> {after['step_ms']:.2f} ms "
                f"(x{before['step_ms'] / after['step_ms']:.2f} faster, batch "
                f"{after['batch_size']})")
        compiled = row.get(f"{size}_compiled")
        if compiled and "step_ms" in compiled:
            gain = after["step_ms"] - compiled["step_ms"]
            cost = compiled["first_epoch_s"] - compiled["epoch_s"]
            paid = f"pays after {cost / (gain / 1e3):,.0f} steps" if gain > 0 else "never pays"
            line += (f"; compiled {compiled['step_ms']:.2f} ms, compile {cost:.1f} s, {paid}")
        elif compiled:
            line += f"; compiled: {compiled.get('error')}"
        print(line)


if __name__ == "__main__":
    sys.exit(main())
