"""What a fit leaves to the caller's random generators, and the dtype of TempXNet's per-batch
correlations (float32 on every batch: float64 runs 32-64x slower on consumer GPUs)."""

from unittest import mock

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from _tiny import tiny
from temporal_xmodal import TempXNetEmbedder
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.estimators.tempxnet import (
    CategoryKDECorrelation,
    RecencyCorrelation,
    WordTopicCorrelation,
)
from temporal_xmodal.training import seeded


# ------------------------------------------------------------------------- RNG
def test_seeded_initialisation_leaves_the_callers_device_generators_alone():
    """``seeded`` seeds and restores the CPU generator, the only one initialisation draws
    from; torch.manual_seed would also reseed every CUDA (MPS, XPU) generator of the caller,
    which fork_rng(devices=[]) does not restore."""
    before = torch.get_rng_state()
    with mock.patch("torch.cuda.manual_seed_all") as cuda_seed, \
            mock.patch("torch.cuda.manual_seed") as cuda_seed_one:
        with seeded(5):
            first = torch.rand(3)
        with seeded(5):
            again = torch.rand(3)
    assert not cuda_seed.called and not cuda_seed_one.called
    assert torch.equal(first, again)
    assert torch.equal(first, torch.rand(3, generator=torch.Generator().manual_seed(5)))
    assert torch.equal(torch.get_rng_state(), before)


def test_a_fit_leaves_the_callers_generators_as_they_were():
    X, y, info = make_temporal_crossmodal(120, random_state=0, return_info=True)
    torch.manual_seed(123)
    state = torch.get_rng_state()
    with mock.patch("torch.cuda.manual_seed_all") as cuda_seed:
        tiny(TempXNetEmbedder, n_image_features=info.n_image_features).fit(X, y)
    assert not cuda_seed.called
    assert torch.equal(torch.get_rng_state(), state)


# --------------------------------------------------------- float32 correlations
class _Float64Ops(TorchDispatchMode):
    """Record the float64 results of more than ``limit`` elements."""

    def __init__(self, limit):
        super().__init__()
        self.limit, self.found = limit, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor) and t.dtype == torch.float64 and \
                    t.numel() > self.limit:
                self.found.append(f"{func}: {tuple(t.shape)}")
        return out


def _batch(B=64, V=30, C=4, seed=0):
    rng = np.random.default_rng(seed)
    time = 1.7e9 + rng.uniform(0, 3e8, 2000)  # epoch seconds: times stay float64
    labels = rng.random((2000, C)) < 0.3
    text = (rng.random((2000, V)) < 0.2) * rng.uniform(0.5, 2.0, (2000, V))
    day = 86400.0
    fitted = {
        "recency": RecencyCorrelation(bandwidth=200 * day).fit(time),
        "category": CategoryKDECorrelation(bandwidth=300 * day).fit(time, labels),
        "topic": WordTopicCorrelation(bandwidth=300 * day).fit(time, None, text),
        "topic-geometric": WordTopicCorrelation(bandwidth=300 * day,
                                                aggregation="geometric_mean").fit(
            time, None, text),
    }
    return fitted, (torch.from_numpy(time[:B]), torch.from_numpy(labels[:B]),
                    torch.from_numpy(text[:B]).float())


def _float64_reference(f, t, labels, text):
    """The matrix computed in float64 throughout (tables and text upcast)."""
    tables = {name: torch.as_tensor(np.asarray(table, dtype=np.float64)
                                    if np.asarray(table).dtype.kind == "f" else table)
              for name, table in f.tables().items()}
    if isinstance(f, RecencyCorrelation):
        d = (t[:, None] - t[None, :]).abs()
        return torch.exp(-d / f.bandwidth)
    return f.batch_matrix(t, labels, None if text is None else text.double(),
                          dtype=torch.float64, tables=tables)


@pytest.mark.parametrize("name", ["recency", "category", "topic", "topic-geometric"])
def test_batch_correlations_run_in_float32_and_equal_float64(name):
    """Only the times are float64 (centring, grid positions, and recency's pairwise
    differences keep epoch seconds); every other matrix of the batch (B x B, B x V, B x grid)
    is float32, and equals the float64 computation to float32 precision."""
    fitted, (t, labels, text) = _batch()
    f = fitted[name]
    assert all(np.asarray(table).dtype != np.float64 for table in f.tables().values())
    B = len(t)
    with _Float64Ops(limit=B) as spy:
        F = f.batch_matrix(t, labels, text)
    assert spy.found == ([f"aten.sub.Tensor: ({B}, {B})"] if name == "recency" else [])
    assert F.dtype == torch.float32
    reference = _float64_reference(f, t, labels, text)
    assert float(reference.max()) - float(reference[reference > 0].min()) > 0.5  # a spread
    torch.testing.assert_close(F.double(), reference, rtol=2e-5, atol=1e-6)
