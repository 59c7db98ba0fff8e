"""On a CUDA device: the same fit as on the CPU, up to float error, and a GPU pickle that loads
without one; the device paths that the CPU tests reach by stand-ins (``tests/test_device_paths.py``,
``tests/test_device_numerics.py``) on the real device.  Skipped without CUDA (CI has none;
``tests/test_device_guard.py`` guards the device handling there).  Run by
``benchmarks/gpu_check.sh``."""

import pickle
import warnings
from unittest import mock

import numpy as np
import pytest
import torch

from _tiny import tiny
from temporal_xmodal import TempXNetEmbedder
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.estimators._registry import Fresh, all_estimators, get_entry
from temporal_xmodal.estimators.tempxnet import (
    CategoryKDECorrelation,
    RecencyCorrelation,
    WordTopicCorrelation,
)
from temporal_xmodal.metrics import _scan
from temporal_xmodal.training import BatchIterator, make_dataset
from temporal_xmodal.training import _placement

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

SMALL = dict(embedding_dim=16, hidden_dim=64, max_epochs=3, batch_size=32, random_state=0)
#: The time-aware estimators fit with their times: a CPU fit and a GPU fit must not choose
#: differently between time and a control for reasons that have nothing to do with the device.
TIMED = dict(SMALL, use_time=True)
#: Settings by short name: wider nets and more epochs than the registry's tiny ones, so that a
#: CPU fit and a GPU fit are compared on something learnt.  An estimator not listed runs at its
#: tiny settings (``tests/_tiny.py``).
CUDA_SETTINGS = {
    "CCA": dict(embedding_dim=8),
    "SAM": SMALL,
    "TempXNet": dict(TIMED, correlation="category"),
    "Diachronic": dict(TIMED, dropout=0.1),
    "SCML": dict(embedding_dim=8, hidden_dim=32, common_dim=16, max_epochs=3, batch_size=32,
                 n_memory=20, n_meta_train=20, random_state=0),
    # Binned's own random_state draws the bins' seeds: without it (None) every fit draws
    # others from NumPy's global generator, and a CPU and a GPU fit differed by up to 0.9 on
    # the first GPU run for that reason alone.  No validation rows in the bins' models: each
    # bin holds ~180 rows, and a checkpoint chosen on 18 of them may flip with float error.
    "Binned": dict(base_estimator=Fresh(TempXNetEmbedder, temporal_weight=0,
                                        validation_fraction=0, **SMALL), bins=2,
                   min_bin_size=50, use_time=True, random_state=0),
}


def _registered(name):
    """A builder ``(n, device) -> estimator``: the registered ``name`` on ``device``."""
    if name not in CUDA_SETTINGS:
        return lambda n, device: tiny(name, n_image_features=n, device=device)
    return lambda n, device: get_entry(name).make(
        "default", n_image_features=n, device=device, **CUDA_SETTINGS[name])


#: Every registered estimator (``temporal_xmodal.estimators.all_estimators``).
SIX = {entry.name: _registered(entry.name) for entry in all_estimators()}


@pytest.fixture(scope="module")
def data():
    X, y, info = make_temporal_crossmodal(400, random_state=0, return_info=True)
    return X, y, info.n_image_features


@pytest.mark.parametrize("name", list(SIX))
def test_cuda_fit_equals_cpu_fit_and_loads_without_cuda(name, data):
    X, y, n_img = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cpu = SIX[name](n_img, "cpu").fit(X, y)
        gpu = SIX[name](n_img, "cuda").fit(X, y)
    Z_cpu, Z_gpu = cpu.transform(X), gpu.transform(X)
    if name == "SCML":  # binary codes: float error may flip a code near 0
        assert np.mean(Z_cpu == Z_gpu) > 0.99
    else:
        np.testing.assert_allclose(Z_gpu, Z_cpu, atol=2e-3)
    assert gpu.score(X, y) == pytest.approx(cpu.score(X, y), abs=0.01)
    payload = pickle.dumps(gpu)
    with mock.patch("torch.cuda.is_available", return_value=False), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skorch: "loading on device cpu instead"
        loaded = pickle.loads(payload)
        Z_loaded = loaded.transform(X)
    np.testing.assert_allclose(Z_loaded, Z_gpu, atol=1e-5)


def _dataset(n=300):
    rng = np.random.default_rng(0)
    Y = np.eye(4, dtype=bool)[rng.integers(0, 4, n)]
    return make_dataset(rng.standard_normal((n, 6), dtype=np.float32),
                        rng.standard_normal((n, 5), dtype=np.float32), Y,
                        {"time": rng.uniform(0, 5, n)}, rows=np.arange(3, n, 2))


def test_staged_and_device_copy_batches_are_the_host_batches():
    """Pinned staging (one batch ahead), the device copy and the host path give the same
    batches; the staged ones came through pinned memory."""
    data = _dataset()
    runs = {}
    for device, placement in ((None, "auto"), ("cuda", "device"), ("cuda", "staged"),
                              ("cpu", "staged")):
        it = BatchIterator(data, batch_size=16, shuffle=True, device=device,
                           placement=placement, generator=torch.Generator().manual_seed(1))
        runs[device, placement] = [({k: v.cpu() for k, v in X.items()}, y.cpu())
                                   for X, y in it]
    host = runs[None, "auto"]
    for key, run in runs.items():
        assert len(run) == len(host), key
        for (X_a, y_a), (X_b, y_b) in zip(host, run):
            assert all(torch.equal(X_a[k], X_b[k]) for k in X_a) and torch.equal(y_a, y_b), key
    staged_cpu = next(iter(BatchIterator(data, batch_size=16, device="cpu",
                                         placement="staged")))
    assert all(v.is_pinned() for v in staged_cpu[0].values())
    data.release()


def test_device_copies_have_one_key_per_gpu_and_a_real_budget():
    data = _dataset()
    assert data.place("cuda", "auto")  # a few KB: fits in half of any GPU
    index = torch.cuda.current_device()
    for name in ("cuda", f"cuda:{index}", torch.empty(0, device="cuda").device):
        assert data.tensors(name)[0]["image"].is_cuda, name
    assert len(data._copies) == 1
    free, total = _scan.device_memory("cuda")
    assert 0 < free <= total
    assert not _placement.fits(total, torch.device("cuda"))
    data.release()


def test_a_fit_leaves_the_cuda_generator_as_it_was(data):
    X, y, n_img = data
    torch.cuda.manual_seed(7)
    state = torch.cuda.get_rng_state()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        SIX["TempXNet"](n_img, "cuda").fit(X[:200], y[:200])
    assert torch.equal(torch.cuda.get_rng_state(), state)


def test_float32_correlations_match_on_cuda():
    rng = np.random.default_rng(0)
    time = rng.uniform(0, 20, 500)
    labels = rng.random((500, 4)) < 0.3
    text = (rng.random((500, 30)) < 0.2).astype(np.float32)
    t, lab, txt = (torch.from_numpy(a[:64]) for a in (time, labels, text))
    for f in (RecencyCorrelation(0.5).fit(time), CategoryKDECorrelation().fit(time, labels),
              WordTopicCorrelation().fit(time, None, text)):
        on_cpu = f.batch_matrix(t, lab, txt)
        on_gpu = f.batch_matrix(t.cuda(), lab.cuda(), txt.cuda())
        assert on_gpu.is_cuda and on_gpu.dtype == torch.float32
        torch.testing.assert_close(on_gpu.cpu(), on_cpu, rtol=1e-5, atol=1e-6)
