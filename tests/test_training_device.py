"""The device path of a fit, on the CPU: where batches are gathered, losses settled once per
epoch, datasets pickled without device copies, dropout masks independent of the device."""

import ast
import inspect
import pickle
import textwrap

import numpy as np
import pytest
import torch
from skorch import NeuralNet
from skorch.callbacks import Callback

from _tiny import tiny
from temporal_xmodal import SAMEmbedder
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.nn.layers import _M32, _mix_int, keep_mask
from temporal_xmodal.training import BatchIterator, CrossModalNet, make_dataset


def _dataset(n=50, rows=None):
    rng = np.random.default_rng(0)
    Y = np.zeros((n, 3), dtype=bool)
    Y[np.arange(n), rng.integers(0, 3, n)] = True
    return make_dataset(rng.standard_normal((n, 4), dtype=np.float32),
                        rng.standard_normal((n, 5), dtype=np.float32), Y,
                        {"time": rng.uniform(0, 5, n)}, rows=rows)


@pytest.mark.parametrize("rows", [None, np.arange(3, 47, 2)])
def test_batches_are_the_same_wherever_they_are_gathered(rows):
    """Gathered from the host tensors, from the device copy, or staged: the same batches, in
    the same order (one CPU generator draws it)."""
    data = _dataset(rows=rows)
    cpu = torch.device("cpu")
    runs = []
    for gather in ("host", "device copy", "staged"):
        it = BatchIterator(data, batch_size=8, shuffle=True,
                           generator=torch.Generator().manual_seed(3))
        if gather == "host":
            runs.append(list(it))
            continue
        steps = it._steps()
        runs.append(list(it._gathered_on(cpu, steps) if gather == "device copy"
                         else it._staged(cpu, steps)))
    for other in runs[1:]:
        assert len(other) == len(runs[0]) == len(BatchIterator(data, batch_size=8))
        for (X_a, y_a), (X_b, y_b) in zip(runs[0], other):
            assert X_a.keys() == X_b.keys()
            for key in X_a:
                assert torch.equal(X_a[key], X_b[key]) and X_a[key].dtype == X_b[key].dtype
            assert torch.equal(y_a, y_b) and y_b.dtype == torch.float32


def test_placement_moves_once_is_shared_by_subsets_and_released():
    data = _dataset()
    valid = data.subset(np.arange(10))
    assert data.place("cpu") and data.tensors("cpu")[0] is data.X  # the CPU: nothing moves
    assert not data.place("meta", "staged") and not data.place("meta", "auto")  # not CUDA
    assert data.place("meta", "device")
    X_meta, y_meta = valid.tensors("meta")  # the validation rows share the copy
    assert {t.device.type for t in (*X_meta.values(), y_meta)} == {"meta"}
    assert valid.labels("meta").device.type == "meta"
    copied = pickle.loads(pickle.dumps(valid))  # never the device copy; host arrays
    assert copied.tensors("meta")[0] is copied.X and copied.X["image"].device.type == "cpu"
    torch.testing.assert_close(copied.labels(), valid.labels())
    data.release()
    assert valid.tensors("meta")[0] is valid.X


class _BatchLossTypes(Callback):
    def on_train_begin(self, net, **kwargs):
        self.during = []

    def on_batch_end(self, net, training=False, **kwargs):
        self.during.append(net.history[-1, "batches", -1,
                                       "train_loss" if training else "valid_loss"])


def test_batch_losses_stay_on_the_device_until_the_epoch_ends():
    X, y, info = make_temporal_crossmodal(300, random_state=0, return_info=True)
    spy = _BatchLossTypes()
    est = tiny(SAMEmbedder, n_image_features=info.n_image_features, callbacks=[spy]).fit(X, y)
    assert spy.during and all(torch.is_tensor(v) and v.dim() == 0 for v in spy.during)
    for row in est.net_.history:
        batches = row["batches"]
        assert all(isinstance(b["train_loss"], float) for b in batches if "train_loss" in b)
        losses = [b["train_loss"] for b in batches if "train_loss" in b]
        sizes = [b["train_batch_size"] for b in batches if "train_loss" in b]
        # skorch's epoch figure is the size-weighted mean of the (settled) batch losses
        assert row["train_loss"] == pytest.approx(np.average(losses, weights=sizes))
        assert isinstance(row["valid_loss"], float)


def _reference_keep(n, p, seed, offset):
    """The dropout hash of ``temporal_xmodal.nn.layers`` in plain Python integers."""
    def mix(x):
        x = (((x >> 16) ^ x) * 0x45D9F3B) & _M32
        x = (((x >> 16) ^ x) * 0x45D9F3B) & _M32
        return (x >> 16) ^ x

    position = offset // 2
    key = _mix_int(_mix_int(seed) ^ _mix_int(seed >> 32) ^ _mix_int(position >> 32)
                   ^ 0x9E3779B9)
    threshold = int(round((1.0 - p) * 2**16))
    draws = []
    for i in range((n + 1) // 2):
        word = mix(((position & _M32) + i) ^ key)
        draws += [word & 0xFFFF, word >> 16]
    return np.array(draws[:n]) < threshold


@pytest.mark.parametrize("offset", [0, 12_346, 2**33 - 6, 7 * 2**32 + 10])
def test_dropout_masks_are_exact_integer_functions_of_seed_and_position(offset):
    """The mask is pure integer arithmetic (every product < 2**63), so every device computes
    the same one: here, against the same hash in Python integers."""
    mask = keep_mask((41, 3), 0.3, 2**40 + 17, offset, torch.device("cpu"))
    np.testing.assert_array_equal(mask.numpy().ravel(), _reference_keep(123, 0.3, 2**40 + 17,
                                                                        offset))
    big = keep_mask((200_000,), 0.3, 5, offset, torch.device("cpu")).float().mean().item()
    assert abs(big - 0.7) < 0.005


def _calls(function):
    """The sorted calls of a function's body (its docstring left out), as source text."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    return sorted(ast.unparse(node.func) for node in ast.walk(tree)
                  if isinstance(node, ast.Call))


def test_run_single_epoch_is_skorchs_loop_but_the_recorded_loss():
    """CrossModalNet.run_single_epoch copies skorch's epoch loop (pyproject caps skorch to the
    release it was copied from); the one change: the batch loss is recorded as a device
    tensor (``detach``), not as a float (``item``, a host sync per step).  A skorch whose loop
    calls anything else (a new hook, a new record) fails here."""
    skorch_calls = [call.replace(".item", ".detach") for call in _calls(
        NeuralNet.run_single_epoch)]
    assert _calls(CrossModalNet.run_single_epoch) == skorch_calls
    assert "step['loss'].item" in _calls(NeuralNet.run_single_epoch)
