"""Dropout with its own generator: nn.Dropout's behaviour, a fit's own random stream."""

import copy
import pickle
import threading

import numpy as np
import pytest
import torch

from temporal_xmodal.nn.layers import Dropout, keep_mask, keep_mask_at, reseed
from temporal_xmodal.estimators.diachronic import DiachronicNet
from temporal_xmodal.nn import TwoTowerNet


def test_matches_nn_dropout_semantics():
    x = torch.ones(2000, 50)
    drop = Dropout(0.3).train()
    out = drop(x)
    kept = out != 0
    assert abs(kept.float().mean().item() - 0.7) < 0.01
    torch.testing.assert_close(out[kept], torch.full_like(out[kept], 1 / 0.7))
    assert drop.eval()(x) is x  # identity in eval mode
    assert Dropout(0.0).train()(x) is x
    assert (Dropout(1.0).train()(x) == 0).all()


def test_rows_mode_zeroes_whole_items_unscaled():
    x = torch.rand(4000, 6) + 1
    out = Dropout(0.5, rows=True).train()(x)
    dropped = (out == 0).all(dim=1)
    assert ((out == 0) == dropped[:, None]).all()  # a row is dropped whole or not at all
    torch.testing.assert_close(out[~dropped], x[~dropped])  # no 1/(1-p) scaling
    assert abs(dropped.float().mean().item() - 0.5) < 0.03


def test_same_seed_same_masks_independent_of_the_global_generator():
    x = torch.ones(100, 20)
    a, b = Dropout(0.5).train(), Dropout(0.5).train()
    a.reseed(7)
    b.reseed(7)
    first = a(x)
    torch.manual_seed(123)
    torch.rand(1000)  # other code drawing from the global generator changes nothing
    torch.testing.assert_close(b(x), first)
    assert not torch.equal(a(x), first)  # the stream advances
    b.reseed(8)
    assert not torch.equal(b(x), first)


def test_reseed_gives_each_dropout_of_a_network_its_own_stream():
    net = DiachronicNet(5, 4, hidden_dim=300, time_dim=3, dropout=0.5, time_dropout=0.5)
    reseed(net, 3)
    seeds = [m.seed for m in net.modules() if isinstance(m, Dropout)]
    assert len(seeds) == 2 and len(set(seeds)) == 2
    tower = TwoTowerNet(5, 4, hidden_dim=8, dropout=0.1)
    reseed(tower, 3)
    assert len({m.seed for m in tower.modules() if isinstance(m, Dropout)}) == 2


@pytest.mark.parametrize("clone", [pickle.loads, copy.deepcopy], ids=["pickle", "deepcopy"])
def test_pickles_and_copies_restart_from_the_seed(clone):
    drop = Dropout(0.5).train()
    drop.reseed(11)
    x = torch.ones(50, 10)
    first = drop(x)
    copied = clone(pickle.dumps(drop)) if clone is pickle.loads else clone(drop)
    torch.testing.assert_close(copied(x), first)


def test_concurrent_threads_draw_their_own_masks():
    x = torch.ones(200, 64)
    expected = {}
    for seed in range(4):
        d = Dropout(0.5).train()
        d.reseed(seed)
        expected[seed] = [d(x) for _ in range(20)]
    got, barrier = {}, threading.Barrier(4)

    def run(seed):
        d = Dropout(0.5).train()
        d.reseed(seed)
        barrier.wait()
        got[seed] = [d(x) for _ in range(20)]

    threads = [threading.Thread(target=run, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for seed in range(4):
        for a, b in zip(got[seed], expected[seed]):
            torch.testing.assert_close(a, b)


@pytest.mark.parametrize("offset", [0, 12_346, 2**33 - 6, 7 * 2**32 + 10])
def test_the_compiled_steps_device_position_draws_the_same_masks(offset):
    """keep_mask_at (the position a device tensor, advanced in place, as a compiled step
    needs) gives keep_mask's masks, also across the 2**32-word boundaries of the key."""
    position = torch.tensor(offset // 2, dtype=torch.int64)
    for shape in [(41, 3), (7,), (1000, 13)]:
        expected = keep_mask(shape, 0.3, 2**40 + 17, offset, torch.device("cpu"))
        got = keep_mask_at(shape, 0.3, 2**40 + 17, position)
        assert torch.equal(got, expected)
        n = int(np.prod(shape))
        offset += n + n % 2
        assert int(position) == offset // 2


def test_a_compiled_step_and_an_eager_one_share_the_stream():
    """Traced (compiled) dropout reads the device position; eager calls the host count; the
    same masks either way, and both restart at reseed."""
    x = torch.ones(64, 10)
    eager, traced = Dropout(0.4).train(), Dropout(0.4).train()
    eager.reseed(5)
    traced.reseed(5)
    compiled = torch.compile(traced, backend="aot_eager", fullgraph=True, dynamic=False)
    for _ in range(3):
        torch.testing.assert_close(compiled(x), eager(x))
    assert int(traced.position) * 2 == eager._drawn
    traced.reseed(5)
    assert int(traced.position) == 0
