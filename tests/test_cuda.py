"""On a CUDA device: the same fit as on the CPU, up to float error, and a GPU pickle that loads
without one.  Skipped without CUDA (CI has none; ``tests/test_device_guard.py`` guards the
device handling there).  Run by ``benchmarks/gpu_check.sh``."""

import pickle
import warnings
from unittest import mock

import numpy as np
import pytest
import torch

from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    SequentialCrossModal,
    TempXNetEmbedder,
)
from temporal_xmodal.datasets import make_temporal_crossmodal

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

SMALL = dict(embedding_dim=16, hidden_dim=64, max_epochs=3, batch_size=32, random_state=0)
SIX = {
    "CCA": lambda n, device: CCACrossModal(embedding_dim=8, n_image_features=n),
    "SAM": lambda n, device: SAMEmbedder(n_image_features=n, device=device, **SMALL),
    "TempXNet": lambda n, device: TempXNetEmbedder(correlation="category", n_image_features=n,
                                                   device=device, **SMALL),
    "Diachronic": lambda n, device: DiachronicEmbedder(n_image_features=n, dropout=0.1,
                                                       device=device, **SMALL),
    "SCML": lambda n, device: SequentialCrossModal(
        n_image_features=n, embedding_dim=8, hidden_dim=32, common_dim=16, max_epochs=3,
        batch_size=32, n_memory=20, n_meta_train=20, device=device, random_state=0),
    "Binned": lambda n, device: BinnedProcrustesEmbedder(
        TempXNetEmbedder(temporal_weight=0, device=device, **SMALL), bins=2,
        min_bin_size=50, n_image_features=n),
}


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
