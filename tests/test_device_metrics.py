"""Full-ranking mAP in torch on the embeddings' device, and the device-sized block plans."""

import numpy as np
import pytest
import torch

from _device_guard import HostSyncs
from temporal_xmodal.metrics import mean_average_precision, mean_average_precision_torch
from temporal_xmodal.metrics._scan import gpu_block_sizes, scan_budget


def _multilabel(rng, n, n_labels, p=0.25):
    return rng.random((n, n_labels)) < p  # some rows without any label: no relevant item


def _data(rng, tied, n_q=120, n_g=700, dim=6):
    Q, G = rng.standard_normal((n_q, dim)), rng.standard_normal((n_g, dim))
    if tied:  # rounded embeddings: many exactly tied scores, large tie groups
        Q, G = np.round(Q), np.round(G)
    return Q, G


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("working_memory", [None, 0.05])  # 0.05 MiB: blocks of one query
def test_map_torch_equals_numpy_multilabel(tied, dtype, working_memory):
    rng = np.random.default_rng(0)
    Q, G = _data(rng, tied)
    yq, yg = _multilabel(rng, len(Q), 5), _multilabel(rng, len(G), 5)
    Q, G = Q.astype(np.float32 if dtype == torch.float32 else np.float64), G.astype(Q.dtype)
    ref, ref_per_query = mean_average_precision(Q, G, yq, yg, return_per_query=True)
    value, per_query = mean_average_precision_torch(
        torch.from_numpy(Q), torch.from_numpy(G), torch.from_numpy(yq), torch.from_numpy(yg),
        working_memory=working_memory, return_per_query=True)
    assert isinstance(value, float)
    assert value == pytest.approx(ref, abs=1e-12)
    assert per_query.dtype == torch.float64 and per_query.shape == (len(Q),)
    assert np.isnan(ref_per_query).sum() > 0  # queries without a relevant item: skipped
    np.testing.assert_array_equal(np.isnan(per_query.numpy()), np.isnan(ref_per_query))
    np.testing.assert_allclose(per_query.numpy(), ref_per_query, rtol=0, atol=1e-12)
    if tied:  # ties really are exercised: equal scores within a query's ranking
        S = Q.astype(np.float64) @ G.astype(np.float64).T
        assert (np.diff(np.sort(S, axis=1), axis=1) == 0).mean() > 0.5


def test_map_torch_class_labels_and_counts_as_labels():
    rng = np.random.default_rng(1)
    Q, G = _data(rng, tied=True)
    yq, yg = rng.integers(0, 4, len(Q)), rng.integers(0, 4, len(G))
    ref = mean_average_precision(Q, G, yq, yg)
    Qt, Gt = torch.from_numpy(Q), torch.from_numpy(G)
    assert mean_average_precision_torch(Qt, Gt, torch.from_numpy(yq),
                                        torch.from_numpy(yg)) == pytest.approx(ref, abs=1e-12)
    onehot = np.eye(4)  # float indicators: non-zero = has the label
    assert mean_average_precision_torch(
        Qt, Gt, torch.from_numpy(onehot[yq]), torch.from_numpy(onehot[yg])
    ) == pytest.approx(ref, abs=1e-12)


def test_map_torch_hand_computed_and_no_relevant_item_at_all():
    Z = torch.eye(4)
    labels = torch.tensor([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=torch.bool)
    # each query: itself at rank 1 (tied with nothing), its mate tied with 2 others at rank 4
    assert mean_average_precision_torch(Z, Z, labels, labels) == pytest.approx(0.75)
    none = torch.zeros((4, 2), dtype=torch.bool)
    value, per_query = mean_average_precision_torch(Z, Z, none, labels, return_per_query=True)
    assert np.isnan(value) and torch.isnan(per_query).all()


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_map_torch_makes_one_host_sync(device):
    # meta tensors hold no data: a host sync anywhere but the final .item() would fail
    rng = np.random.default_rng(2)
    Q, G = (torch.from_numpy(a).to(device) for a in _data(rng, tied=True))
    yq = torch.from_numpy(_multilabel(rng, len(Q), 3)).to(device)
    yg = torch.from_numpy(_multilabel(rng, len(G), 3)).to(device)
    with HostSyncs(fake=0.5 if device == "meta" else None) as syncs:
        mean_average_precision_torch(Q, G, yq, yg, working_memory=0.2)  # several blocks
    assert syncs.calls == ["aten._local_scalar_dense.default"]


def test_map_torch_bad_inputs():
    Z, y = torch.eye(4), torch.tensor([0, 0, 1, 1])
    with pytest.raises(ValueError, match="query embeddings contain NaN or infinity"):
        mean_average_precision_torch(torch.where(Z == 1, torch.nan, Z), Z, y, y)
    with pytest.raises(ValueError, match="gallery embeddings contain NaN or infinity"):
        mean_average_precision_torch(Z, Z * torch.inf, y, y)
    with pytest.raises(ValueError, match="differ in dimension: 4 vs 3"):
        mean_average_precision_torch(Z, Z[:, :3], y, y)
    with pytest.raises(ValueError, match="one row per item"):
        mean_average_precision_torch(Z, Z, y[:3], y)
    with pytest.raises(ValueError, match="both be 1-D class labels"):
        mean_average_precision_torch(Z, Z, y, torch.eye(2)[y])
    with pytest.raises(ValueError, match="on one device"):
        mean_average_precision_torch(Z, Z.to("meta"), y, y)
    with pytest.raises(TypeError, match="must be an instance of 'torch.Tensor'"):
        mean_average_precision_torch(Z.numpy(), Z, y, y)
    with pytest.raises(ValueError, match="empty"):
        mean_average_precision_torch(Z[:0], Z, y[:0], y)


def test_scan_budget_and_gpu_block_sizes():
    assert scan_budget("cpu") == 64 * 2**20
    assert scan_budget("cpu", cpu_default=256) == 256 * 2**20
    assert scan_budget("cuda", 10) == 10 * 2**20
    if not torch.cuda.is_available():  # free memory unreadable: the fallback
        assert scan_budget("cuda") == 2**30
    else:
        assert 0 < scan_budget("cuda") <= 8 * 2**30
    # the whole gallery with >= 1,024 queries when it fits; else 1,024 queries and wide chunks
    assert gpu_block_sizes(10_000, 10**6, 8, 8 * 2**30) == (1073, 10**6)
    assert gpu_block_sizes(10_000, 10**6, 8, 2**30) == (1024, 2**30 // 8 // 1024)
    assert gpu_block_sizes(10_000, 1000, 8, 2**30) == (4096, 1000)
    assert gpu_block_sizes(3, 10**6, 8, 2**20) == (3, 2**20 // 8 // 3)
    assert gpu_block_sizes(10, 10, 8, 1) == (1, 1)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_map_torch_on_cuda_equals_numpy():
    rng = np.random.default_rng(3)
    for tied in (False, True):
        Q, G = _data(rng, tied, n_q=500, n_g=3000)
        yq, yg = _multilabel(rng, len(Q), 5), _multilabel(rng, len(G), 5)
        ref = mean_average_precision(Q, G, yq, yg)
        value = mean_average_precision_torch(*(torch.from_numpy(a).cuda()
                                               for a in (Q, G, yq, yg)))
        assert value == pytest.approx(ref, abs=1e-12)
