"""The GPU's data paths, run on the CPU: staging, the device-copy budget, workers sharing one
device, and the keys of the device copies.

CI has no GPU, so these paths are reached here with what the CPU has: the forced ``"staged"``
placement (batches gathered on the host, into pinned memory where the platform has it, and
copied one batch ahead) and a fake free-memory figure for torch's ``meta`` device, whose copies
the fake counts as the driver would (:func:`fake_memory`).  ``tests/test_cuda.py`` runs the
same paths on a real GPU.
"""

import importlib.util
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch
from joblib import Parallel, delayed, parallel_config

from temporal_xmodal import _device
from temporal_xmodal.metrics import _scan
from temporal_xmodal.metrics._scan import _plan
from temporal_xmodal.estimators.sequential import ModalityPoolIterator, ModalityPools
from temporal_xmodal.training import BatchIterator, make_dataset
from temporal_xmodal.training import _placement

META = torch.device("meta")


def _dataset(n=50, rows=None, seed=0):
    rng = np.random.default_rng(seed)
    Y = np.zeros((n, 3), dtype=bool)
    Y[np.arange(n), rng.integers(0, 3, n)] = True
    return make_dataset(rng.standard_normal((n, 4), dtype=np.float32),
                        rng.standard_normal((n, 5), dtype=np.float32), Y,
                        {"time": rng.uniform(0, 5, n)}, rows=rows)


def _nbytes(dataset):
    return _device.nbytes((dataset.X, dataset.y))


def fake_memory(monkeypatch, total, holders, wait=None):
    """Give ``meta`` a device memory of ``total`` bytes, used by what ``holders`` (datasets)
    have copied there, as the driver's free figure counts every process's copies.  ``wait``:
    called before each reading (a barrier that lets two workers read at once)."""

    def device_memory(device):
        if torch.device(device).type != "meta":
            return None
        if wait is not None:
            wait()
        used = sum(_device.nbytes(copy) for dataset in holders
                   for copy in dataset._copies.values())
        return total - used, total

    # the one reader (the data's placement reads it there), and the name the scans' budget
    # imported from it
    for module in (_device, _plan):
        monkeypatch.setattr(module, "device_memory", device_memory)


# ------------------------------------------------------------- 1. the staging path
@pytest.mark.parametrize("rows", [None, np.arange(3, 47, 2)])
def test_staged_batches_equal_host_batches(rows):
    """The forced staged mode runs the GPU's staging path on the CPU (into pinned memory
    where the platform has it) through the public iterator: the same batches as the host
    path, in the same order, in the same dtypes."""
    data = _dataset(rows=rows)
    runs = {}
    for device, placement in ((None, "auto"), ("cpu", "staged")):
        runs[placement] = list(BatchIterator(data, batch_size=8, shuffle=True,
                                             generator=torch.Generator().manual_seed(3),
                                             device=device, placement=placement))
    host, staged = runs["auto"], runs["staged"]
    assert len(staged) == len(host) == len(BatchIterator(data, batch_size=8))
    for (X_a, y_a), (X_b, y_b) in zip(host, staged):
        assert X_a.keys() == X_b.keys()
        for key in X_a:
            assert torch.equal(X_a[key], X_b[key]) and X_a[key].dtype == X_b[key].dtype
            assert X_b[key].is_pinned() == torch.cuda.is_available()
        assert torch.equal(y_a, y_b) and y_b.dtype == torch.float32


def test_staged_pool_batches_equal_host_batches():
    labels = torch.eye(2)
    pools = ModalityPools({"image": (torch.randn(50, 3), labels[torch.arange(50) % 2]),
                           "text": (torch.randn(7, 4), labels[torch.arange(7) % 2])},
                          driver="image")
    for steps in (None, 3):
        runs = [list(ModalityPoolIterator(pools, batch_size=16, steps_per_epoch=steps,
                                          generator=torch.Generator().manual_seed(0),
                                          device=device, placement=placement))
                for device, placement in ((None, "auto"), ("cpu", "staged"))]
        assert len(runs[0]) == len(runs[1])
        for (a, _), (b, _) in zip(*runs):
            assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
            assert all(b[k].is_pinned() == torch.cuda.is_available() for k in b)


# --------------------------------------------------------- 1. the device-copy budget
def test_auto_placement_copies_what_fits_in_half_the_device(monkeypatch):
    """With a free-memory figure (faked here), ``placement="auto"`` copies the data once when
    the device stays at most half full with it, and gathers every batch from that copy."""
    small, large = _dataset(40), _dataset(400)
    fake_memory(monkeypatch, total=2 * _nbytes(small) + 1, holders=[small, large])
    assert not large.place(META) and large.tensors(META)[0] is large.X
    assert small.place(META)
    X, y = small.tensors(META)
    assert {t.device for t in (*X.values(), y)} == {META}
    with _device.allow_meta():  # meta: the second device, no GPU needed
        batches = list(BatchIterator(small, batch_size=16, device=META))
        assert {b.device for X, y in batches for b in (*X.values(), y)} == {META}
        # nothing is left to the larger data: staged, never placed
        assert {b.device for X, y in BatchIterator(large, batch_size=64, device=META)
                for b in (*X.values(), y)} == {META}
    assert large.tensors(META)[0] is large.X
    small.release()
    assert small.tensors(META)[0] is small.X


def test_workers_sharing_a_device_never_fill_more_than_half_of_it(monkeypatch):
    """Two workers place their data at the same moment: each reading of the free memory sees
    the other's copy (the reading and the copy are one step), so together they stay within
    half the device.  Without that, both read an empty device and both copy."""
    first, second = _dataset(200, seed=1), _dataset(200, seed=2)
    barrier = threading.Barrier(2, timeout=0.5)

    def together():  # let the second worker read while the first reads, if it can
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            pass

    fake_memory(monkeypatch, total=int(3.5 * _nbytes(first)), holders=[first, second],
                wait=together)
    placed = Parallel(n_jobs=2, backend="threading")(
        delayed(dataset.place)(META) for dataset in (first, second))
    assert sorted(placed) == [False, True]


@pytest.mark.skipif(importlib.util.find_spec("fcntl") is None,
                    reason="no fcntl: the lock holds within one process")
def test_the_placement_lock_holds_across_processes():
    """Another process (another joblib or Dask worker) waits for the device's lock."""
    probe = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY)\n"
             "try: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
             "except BlockingIOError: sys.exit(3)")
    path = _placement._lock_path(META)
    with _placement.device_lock(META):
        held = subprocess.run([sys.executable, "-c", probe, path])
    free = subprocess.run([sys.executable, "-c", probe, path])
    assert (held.returncode, free.returncode) == (3, 0)


def test_scan_budget_in_a_worker_is_a_fixed_share_of_the_device(monkeypatch):
    """A scan budgets a quarter of the free memory alone; inside a parallel worker (other
    workers may scan on the same device at the same moment) at most 1/64 of the device."""
    total = 64 * 2**30
    monkeypatch.setattr(_plan, "device_memory",
                        lambda device: (total, total) if torch.device(device) == META else None)
    alone = _scan.scan_budget(META)
    assert alone == min(_plan._GPU_MAX_BUDGET, total // 4)
    with parallel_config(backend="threading"):
        in_worker = Parallel(n_jobs=2)(delayed(_scan.scan_budget)(META) for _ in range(2))
    assert in_worker == [total // 64] * 2
    assert _scan.scan_budget("cpu") == _scan.DEFAULT_WORKING_MEMORY * 2**20
    assert _scan.scan_budget(META, working_memory=3) == 3 * 2**20  # an explicit budget wins


# ------------------------------------------------------------------ 2. device keys
def test_device_copies_are_found_under_any_name_of_their_device():
    """``"meta:0"``, ``"meta"`` and a tensor's ``.device`` name one device, hence one copy
    (on CUDA: ``"cuda"``, ``"cuda:0"`` and ``tensor.device`` with device 0 current)."""
    data = _dataset()
    valid = data.subset(np.arange(10))
    assert data.place("meta:0", "device")
    tensor_device = torch.empty(0, device="meta").device
    X, y = valid.tensors(tensor_device)
    assert X is data._copies.get(META, None)[0] and X["image"].device == META
    assert valid.labels(tensor_device).device == META
    assert data.place(META, "device") and len(data._copies) == 1  # not copied again
    assert _device.device_key("cpu:0") == _device.device_key("cpu") == torch.device("cpu")
