"""Benchmark: memory and time of one ``DiachronicEmbedder`` epoch at the papers' scale.

What it measures
----------------
The DCM collection has ~700,000 items; users hold CLIP-sized features.  Data:
700,000 synthetic float32 items (``--quick``: 20,000) with 512 image + 512
text features, 50 categories and times in [0, 10) years, as one float32
``X = [image | text | time]`` (the data size below is ``X.nbytes``).

Each case runs in a fresh Python process (so that its peak memory is its
own):

* ``fit_vf0``: ``DiachronicEmbedder(max_epochs=1, validation_fraction=0)``
  (defaults otherwise: hidden 1024, time 200, D 200, FiLM conditioning with
  time dropout 0.5, batch 64, Adam lr 1e-4 with the time pathway at 3 × lr,
  ``device="cpu"``), then, in the same process on the same data, a plain
  torch loop doing the same work: the same module class and arguments
  (``DiachronicNet``), the same loss object (the estimator's ``_loss``), the
  same optimiser and parameter groups, batch size and seeded shuffling, the
  batch gathered from the same arrays; forward + loss + backward + step +
  ``loss.item()`` per batch.  Same thread count (``torch.get_num_threads()``
  is printed).
* ``fit_default``: the same estimator with the default
  ``validation_fraction=0.1`` (checkpoint by validation loss; the
  ``RetrievalScoring`` callback records ``valid_map`` on a 5,000-query sample
  of the 70,000 validation items, timed separately).

``train_batches`` (full run: 100) truncates the *training* part of the epoch
to its first batches (of the shuffled order, in the fit and in the plain loop
alike): one full epoch of 700,000 items at batch 64 is 10,938 batches, hours
on the 2 shared cores this benchmark was written on.  Everything else runs at
full size — the data, its validation, the datasets, the loss set-up, the
validation pass over all 70,000 held-out items and its retrieval scoring —
so the peak memory is that of a whole epoch (the training batches themselves
are 64 rows each), and the epoch ratio compares the same batches.

Peak memory: the process's peak resident set (``VmHWM`` of
``/proc/self/status``, reset through ``/proc/self/clear_refs`` after the data
is built; a sampling thread of ``VmRSS`` every 5 ms where that is not
available) minus the resident set before the data was created, divided by
the float32 data size.  The data itself counts (it is 1.0 of it).

Targets: peak ≤ 2 × data size (both cases); fit epoch time / plain-loop
epoch time < 1.25 (``fit_vf0``; the epoch time is skorch's ``dur``, the
plain loop's the same epoch timed in-process).

Figures are printed and written to ``benchmarks/results/bench_scale_fit.json``.
"""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
from _common import make_parser, print_header, print_targets, target, write_results

NAME = "bench_scale_fit"
FULL = {"n_samples": 700_000, "n_features": 512, "n_categories": 50, "batch_size": 64,
        "train_batches": 100}
QUICK = {"n_samples": 20_000, "n_features": 512, "n_categories": 50, "batch_size": 64,
         "train_batches": None}
CASES = {"fit_vf0": 0.0, "fit_default": 0.1}


# --------------------------------------------------------------------- memory
def _status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


class PeakRSS:
    """Peak resident set of this process from now on (bytes)."""

    def __enter__(self):
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # resets VmHWM to the current RSS
            self._sampler = None
        except OSError:
            self._peak, self._stop = _status("VmRSS"), threading.Event()
            self._sampler = threading.Thread(target=self._sample, daemon=True)
            self._sampler.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.005):
            self._peak = max(self._peak, _status("VmRSS"))

    def __exit__(self, *exc):
        if self._sampler is None:
            self.peak = _status("VmHWM")
        else:
            self._stop.set()
            self._sampler.join()
            self.peak = max(self._peak, _status("VmRSS"))
        self.method = "VmHWM" if self._sampler is None else "VmRSS sampling"


# ----------------------------------------------------------------------- data
def make_data(n, d, n_categories, seed=0, chunk=50_000):
    """float32 ``X = [image | text | time]`` (n, 2d + 1) and labels, built chunk by chunk."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((n_categories, 32)).astype(np.float32)
    W_img = rng.standard_normal((32, d)).astype(np.float32) / 6
    W_txt = rng.standard_normal((32, d)).astype(np.float32) / 6
    y = rng.integers(n_categories, size=n)
    X = np.empty((n, 2 * d + 1), dtype=np.float32)
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        latent = centres[y[s:e]] + 0.5 * rng.standard_normal((e - s, 32), dtype=np.float32)
        X[s:e, :d] = latent @ W_img + rng.standard_normal((e - s, d), dtype=np.float32)
        X[s:e, d:2 * d] = latent @ W_txt + rng.standard_normal((e - s, d), dtype=np.float32)
        X[s:e, -1] = rng.uniform(0, 10, e - s)
    return X, y


# ----------------------------------------------------------------- one case
def time_retrieval_scoring():
    """Time every ``RetrievalScoring.on_epoch_end`` of this process (the validation mAP of
    each epoch): a dict whose ``seconds`` and ``calls`` add up as the fits run."""
    from temporal_xmodal.training import RetrievalScoring

    scoring = {"seconds": 0.0, "calls": 0}
    original = RetrievalScoring.on_epoch_end

    def timed(self, net, **kwargs):
        start = time.perf_counter()
        original(self, net, **kwargs)
        scoring["seconds"] += time.perf_counter() - start
        scoring["calls"] += 1

    RetrievalScoring.on_epoch_end = timed
    return scoring


def truncated_iterator(n_batches):
    """``BatchIterator`` whose shuffled (training) passes stop after ``n_batches``."""
    from temporal_xmodal.training import BatchIterator

    class Truncated(BatchIterator):
        def __len__(self):
            full = super().__len__()
            return min(full, n_batches) if self.shuffle else full

    return Truncated


def plain_optimizer(est, module, config):
    """The estimator's optimiser over ``module``: Adam, the time pathway at ``time_lr_scale`` × lr."""
    import fnmatch

    import torch

    groups = dict(config.param_groups)
    split = {pattern: [] for pattern in groups}
    rest = []
    for name, parameter in module.named_parameters():
        match = next((p for p in groups if fnmatch.fnmatch(name, p)), None)
        (split[match] if match else rest).append(parameter)
    param_groups = [{"params": rest}] + [{"params": split[p], **groups[p]} for p in groups]
    optimizers = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD}
    extra = {"momentum": est.momentum} if est.optimizer == "sgd" else {}
    return optimizers[est.optimizer](param_groups, lr=est.lr, **extra)


def plain_loop(est, X, y, d, batch_size, seed, n_batches=None):
    """One epoch of the same work as the estimator's, in plain torch; its wall time."""
    import torch

    centred = est.time_axis_.centre(X[:, -1].astype(np.float64))
    tensors = {"image": torch.from_numpy(X[:, :d]), "text": torch.from_numpy(X[:, d:2 * d]),
               "time": torch.from_numpy(centred),
               "time_features": torch.as_tensor(est.time_encoding_.transform(centred))}
    Y = np.zeros((len(y), y.max() + 1), dtype=bool)
    Y[np.arange(len(y)), y] = True
    Y = torch.from_numpy(Y)
    torch.manual_seed(seed)
    from temporal_xmodal.estimators._neural import TrainingRows

    config = est._net_config(TrainingRows(X[:, :d], X[:, d:2 * d], centred, Y.numpy(), None))
    module = config.module(**config.module_params).train()
    criterion = config.criterion(**config.criterion_params)
    optimizer = plain_optimizer(est, module, config)
    generator = torch.Generator().manual_seed(seed)
    start = time.perf_counter()
    order = torch.randperm(len(y), generator=generator)
    total = 0.0
    stop = len(y) if n_batches is None else min(len(y), n_batches * batch_size)
    for s in range(0, stop, batch_size):
        rows = order[s:s + batch_size]
        batch = {key: value[rows] for key, value in tensors.items()}
        loss = criterion(module(**batch), Y[rows].to(torch.float32), batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return time.perf_counter() - start, total


def run_case(case, sizes):
    import torch

    from temporal_xmodal import DiachronicEmbedder

    d = sizes["n_features"]
    baseline = _status("VmRSS")
    X, y = make_data(sizes["n_samples"], d, sizes["n_categories"])
    data_bytes = X.nbytes
    scoring = time_retrieval_scoring()
    if sizes["train_batches"]:
        import temporal_xmodal.estimators._neural as neural

        neural.BatchIterator = truncated_iterator(sizes["train_batches"])
    est = DiachronicEmbedder(max_epochs=1, batch_size=sizes["batch_size"], device="cpu",
                             validation_fraction=CASES[case], n_image_features=d,
                             random_state=0)
    start = time.perf_counter()
    with PeakRSS() as peak:
        est.fit(X, y)
    fit_seconds = time.perf_counter() - start
    history = est.net_.history[-1]
    result = {
        "case": case, "validation_fraction": CASES[case], "threads": torch.get_num_threads(),
        "data_bytes": data_bytes, "baseline_rss": baseline, "peak_rss": peak.peak,
        "peak_method": peak.method,
        "peak_over_data": (peak.peak - baseline) / data_bytes,
        "fit_seconds": fit_seconds, "epoch_seconds": history["dur"],
        "train_loss": history["train_loss"],
        "retrieval_scoring_seconds": scoring["seconds"],
    }
    if case == "fit_vf0":
        seed = int(est.net_.iterator_train__generator.initial_seed())
        result["plain_epoch_seconds"], _ = plain_loop(est, X, y, d, sizes["batch_size"], seed,
                                                      sizes["train_batches"])
        result["epoch_ratio"] = result["epoch_seconds"] / result["plain_epoch_seconds"]
    return result


def main():
    parser = make_parser(__doc__.split("\n", 1)[0])
    parser.add_argument("--case", choices=sorted(CASES),
                        help="internal: run one case in this process and print its JSON")
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    if args.case:
        print(json.dumps(run_case(args.case, sizes)))
        return
    results = {}
    for case in CASES:
        command = [sys.executable, str(Path(__file__).resolve()), "--case", case]
        proc = subprocess.run(command + (["--quick"] if args.quick else []),
                              capture_output=True, text=True, env=os.environ.copy())
        if proc.returncode != 0:
            raise RuntimeError(f"case {case} failed:\n{proc.stdout}\n{proc.stderr}")
        results[case] = r = json.loads(proc.stdout.strip().splitlines()[-1])
        print_header(f"{case}: validation_fraction={r['validation_fraction']}, "
                     f"{sizes['n_samples']:,} items, {r['threads']} torch thread(s)")
        print(f"  data (float32 X)     {r['data_bytes'] / 2**20:10.1f} MiB")
        print(f"  peak RSS − baseline  {(r['peak_rss'] - r['baseline_rss']) / 2**20:10.1f} MiB"
              f"  = {r['peak_over_data']:.2f} × data  ({r['peak_method']})")
        print(f"  fit wall time        {r['fit_seconds']:10.1f} s  (epoch {r['epoch_seconds']:.1f} s,"
              f" of which RetrievalScoring {r['retrieval_scoring_seconds']:.1f} s)")
        if "plain_epoch_seconds" in r:
            print(f"  plain torch epoch    {r['plain_epoch_seconds']:10.1f} s  → fit epoch / plain"
                  f" = {r['epoch_ratio']:.3f}")
    targets = {
        f"{case}_peak_memory": target(results[case]["peak_over_data"], 2.0, "<",
                                      f"{case}: (peak RSS − baseline) / float32 data size")
        for case in CASES}
    targets["epoch_overhead"] = target(results["fit_vf0"]["epoch_ratio"], 1.25, "<",
                                       "DiachronicEmbedder epoch / plain torch epoch")
    print_targets(targets)
    write_results(NAME, {"quick": args.quick, "parameters": sizes, "results": results,
                         "targets": targets}, args.output_dir)


if __name__ == "__main__":
    main()
