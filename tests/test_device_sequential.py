"""SCML, Binned's per-bin models and the image featuriser follow their device (no GPU needed).

Each stage net of a small SCML fitted on the CPU is moved to torch's ``meta`` device the way a
fit on a GPU places it (module, criterion, meta-learner; ``net.device``), then runs one
training step (and, for the SGD stages, one validation step) on a CPU batch under
:class:`RejectMixedDevices`: an op mixing devices or a host sync (``.item()``, ``float()``,
``nonzero``) inside the step fails, as would a tensor left on the CPU.  See
``tests/_device_guard.py``.
"""

import pickle
import warnings

import numpy as np
import pytest
import torch
from skorch.callbacks import Callback
from skorch.exceptions import DeviceWarning

from _device_guard import RejectMixedDevices, plain_tensors, tensors_off_device
from temporal_xmodal import SequentialCrossModal, TempXNetEmbedder, _device
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.estimators import BinnedProcrustesEmbedder
from temporal_xmodal.estimators.sequential import (
    ClassificationLoss,
    LearnedOptimizerNet,
    MetaLearner,
    ModalityPoolIterator,
    ModalityPools,
    SequentialNet,
)
from temporal_xmodal.training import BatchIterator


META = torch.device("meta")
TINY = dict(max_epochs=2, hidden_dim=32, common_dim=16, embedding_dim=8, n_memory=40,
            n_meta_train=40, batch_size=32, random_state=0, device="cpu")


@pytest.fixture(autouse=True)
def _meta_allowed():
    """``device="meta"`` is refused outside :func:`~temporal_xmodal._device.allow_meta`:
    these tests use it as the second device, as the other device tests do."""
    with _device.allow_meta():
        yield


@pytest.fixture(scope="module")
def data():
    X, y, info = make_temporal_crossmodal(300, return_info=True, random_state=0)
    return X, y, info.n_image_features


def _recorder(seen):
    """A callback recording, per net, the data set it was fitted on and which parameters
    trained (the estimator freezes them again when a stage ends).  The record lives in a
    closure, so the callback itself holds no tensor."""

    class Record(Callback):
        def on_train_begin(self, net, X=None, y=None, **kwargs):
            seen[id(net)] = (X, [p.requires_grad for p in net.module_.parameters()])

    return Record()


def _to_meta(net, trainable):
    """Place a fitted net on ``meta`` as a fit on that device would: module, criterion and
    ``net.device`` (a learned-optimiser net moves its target and builds its state itself, at
    ``on_train_begin``), trainable parameters as during its stage, a fresh optimiser."""
    net.device = "meta"
    net.module_.to(META)
    net.criterion_.to(META)
    for p, grad in zip(net.module_.parameters(), trainable):
        p.requires_grad_(grad)
    if getattr(net, "optimizer__fused", False):
        net.optimizer__fused = False  # the fused kernels exist for CPU and CUDA, not meta
    net.initialize_optimizer()


def _one_step_on_meta(net, batch):
    """One training step (and one validation step for an SGD stage) under the guard.

    Returns
    -------
    uploads : list of str
        The host → device copies made inside the steps.
    """
    with RejectMixedDevices() as guard:
        step = net.train_step(batch)
        assert step["loss"].device == META
        if not isinstance(net, LearnedOptimizerNet):
            assert net.validation_step(batch)["loss"].device == META
    return guard.uploads


def _left_behind(net):
    found = []
    for name in ("module_", "criterion_", "callbacks_", "target", "state_"):
        found += tensors_off_device(getattr(net, name, None), META, name=name)
    return found


@pytest.mark.parametrize("params", [
    dict(),  # Stages I–IV with the learned optimiser
    dict(update_rule="sgd", stage2_scope="joint"),
    dict(paradigm="parallel"),
    dict(disentangle=True, n_memory=0),  # "w.o. mem" and 8 inputs per coordinate
], ids=["meta", "sgd-joint", "parallel", "disentangled-no-memory"])
def test_every_scml_stage_steps_on_its_device_without_host_syncs(data, params):
    X, y, d = data
    seen = {}
    est = SequentialCrossModal(**{**TINY, **params}, callbacks=[_recorder(seen)],
                               n_image_features=d).fit(X, y)
    assert est.nets_
    for name, net in est.nets_.items():
        dataset, trainable = seen[id(net)]
        _to_meta(net, trainable)
        if isinstance(net, LearnedOptimizerNet):
            net.on_train_begin(net, X=dataset)  # moves the target, builds M's state there
        # a host batch (a user's iterator): moved once per step, and nothing else uploaded
        host = next(iter(ModalityPoolIterator(dataset, batch_size=8,
                                              generator=torch.Generator().manual_seed(0))))
        assert all(t.device.type == "cpu" for t in host[0].values())
        uploads = _one_step_on_meta(net, host)
        steps = 1 if isinstance(net, LearnedOptimizerNet) else 2
        assert len(uploads) == steps * len(host[0]), (name, uploads)
        assert all(": (8, " in u for u in uploads), (name, uploads)
        assert _left_behind(net) == [], name
        # a batch the net's iterator delivers on its device: nothing is uploaded in a step
        on_device = next(iter(net.get_iterator(dataset, training=True)))
        assert {t.device for t in on_device[0].values()} == {META}, name
        assert _one_step_on_meta(net, on_device) == [], name


class _Stop(Exception):
    """Raised by :class:`_Probe` to end a fit once its net is placed."""


def _probe(where):
    """A callback that records, at a net's ``on_train_begin`` (after the net placed its
    module, criterion, target and state), its device and what it left off it; then stops."""

    class Probe(Callback):
        def on_train_begin(self, net, **kwargs):
            where[type(net).__name__] = (str(net.device), _left_behind(net))
            raise _Stop

    return Probe()


def test_the_estimator_device_reaches_every_net_module_and_meta_learner(data):
    X, y, d = data
    est = SequentialCrossModal(**TINY, n_image_features=d).fit(X, y)
    assert est.device_ == "cpu"
    assert {str(net.device) for net in est.nets_.values()} == {"cpu"}
    assert est.nets_["stage3"].module_ is est.meta_learner_
    assert est.nets_["stage4"].target is est.module_
    # a first fit on another device: S and the first plug are placed there
    where = {}
    with pytest.raises(_Stop):
        SequentialCrossModal(**{**TINY, "device": "meta"}, callbacks=[_probe(where)],
                             n_image_features=d).fit(X, y)
    assert where == {"StageNet": ("meta", [])}
    # a later partial_fit follows a changed device: M, S and the plugs move with it
    where.clear()
    est.set_params(device="meta", callbacks=[_probe(where)])
    with pytest.raises(_Stop):
        est.partial_fit(X[:40, :d], y[:40], modality="image")
    assert est.device_ == "meta"
    assert where == {"LearnedOptimizerNet": ("meta", [])}
    assert tensors_off_device(est.module_, META) == []
    assert tensors_off_device(est.meta_learner_, META) == []


def test_new_plug_and_state_are_created_on_the_module_device():
    net = SequentialNet(None, None, hidden_dim=8, common_dim=4, embedding_dim=4,
                        n_classes=3).to(META)
    plug = net.add_plug("image", 5)
    assert tensors_off_device(net, META) == [] and next(plug.parameters()).device == META
    learner = MetaLearner(n_inputs=4).to(META)
    h, c = learner.initial_state(10)
    assert h.device == c.device == META


def test_pool_batches_are_drawn_alike_on_every_device():
    """The rows of every step come from the CPU generator whatever the device and the
    placement: a device iterator delivers the CPU batches there, and leaves the generator
    where the CPU iteration does."""
    labels = torch.eye(2)
    pools = ModalityPools({"image": (torch.randn(50, 3), labels[torch.arange(50) % 2]),
                           "text": (torch.randn(7, 4), labels[torch.arange(7) % 2])},
                          driver="image")
    for steps in (None, 3):
        ref = torch.Generator().manual_seed(0)
        cpu = list(ModalityPoolIterator(pools, batch_size=16, steps_per_epoch=steps,
                                        generator=ref))
        for placement in ("device", "staged"):
            g = torch.Generator().manual_seed(0)
            on_meta = list(ModalityPoolIterator(pools, batch_size=16, steps_per_epoch=steps,
                                                generator=g, device="meta",
                                                placement=placement))
            assert torch.equal(g.get_state(), ref.get_state())
            assert len(on_meta) == len(cpu)
            for (a, _), (b, _) in zip(cpu, on_meta):
                assert a.keys() == b.keys()
                assert all(b[k].device == META and b[k].shape == a[k].shape for k in a)
        # both device paths gather the CPU loop's values (run here with the CPU as device)
        for path in ("_gathered_on", "_staged"):
            it = ModalityPoolIterator(pools, batch_size=16, steps_per_epoch=steps,
                                      generator=torch.Generator().manual_seed(0))
            got = list(getattr(it, path)(torch.device("cpu"), it._steps()))
            assert len(got) == len(cpu)
            for (a, ya), (b, yb) in zip(cpu, got):
                assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
                assert ya is None and yb is None
    # a net hands its device to the iterator
    net = LearnedOptimizerNet(MetaLearner(), criterion=ClassificationLoss,
                              target=SequentialNet(3, 4, hidden_dim=8),
                              iterator_train=ModalityPoolIterator, device="meta")
    assert str(net.get_iterator(pools, training=True).device) == "meta"


@pytest.mark.skipif(torch.cuda.is_available(), reason="tests the CPU-only fallback")
@pytest.mark.parametrize("keep_training_state", [False, True])
def test_scml_saved_from_cuda_loads_on_a_cpu_only_machine(data, keep_training_state):
    X, y, d = data
    est = SequentialCrossModal(**TINY, keep_training_state=keep_training_state,
                               n_image_features=d).fit(X, y)
    assert plain_tensors(est) == []  # S, M, the target and M's state go through a device mapping
    expected = est.transform(X)
    # as if trained on a GPU (the tensors are on the CPU here)
    nets = list(est.nets_.values())
    est.device_ = "cuda"
    for net in nets:
        net.device = "cuda"
    try:
        blob = pickle.dumps(est)
    finally:
        est.device_ = "cpu"
        for net in nets:
            net.device = "cpu"
    with pytest.warns(DeviceWarning) as record:  # ours, and skorch's "Setting self.device"
        back = pickle.loads(blob)
    assert any("no CUDA devices are available" in str(w.message) for w in record)
    assert back.device_ == "cpu"
    assert {str(net.device) for net in back.nets_.values()} == {"cpu"}
    # S and M travel as the Stage IV net's target and module (one copy, still shared)
    assert back.module_ is back.nets_["stage4"].target
    assert back.meta_learner_ is back.nets_["stage4"].module_
    np.testing.assert_array_equal(back.transform(X), expected)
    back.partial_fit(X[:60, :d], y[:60], modality="image")  # and continues on the CPU
    # without the nets (none holds them) S and M are pickled apart, mapped alike
    est.device_, nets = "cuda", est.nets_
    est.nets_ = {}
    try:
        blob = pickle.dumps(est)
    finally:
        est.device_, est.nets_ = "cpu", nets
    with pytest.warns(DeviceWarning, match="no CUDA devices are available"):
        alone = pickle.loads(blob)
    assert alone.device_ == "cpu"
    np.testing.assert_array_equal(alone.transform(X), expected)


def test_binned_per_bin_nets_step_on_their_device(data):
    X, y, d = data
    seen = {}
    base = TempXNetEmbedder(temporal_weight=0.0, hidden_dim=16, embedding_dim=8, max_epochs=2,
                            batch_size=32, device="cpu", callbacks=[_recorder(seen)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = BinnedProcrustesEmbedder(base, bins=2, min_bin_size=50, random_state=0,
                                       n_image_features=d).fit(X, y)
    assert len(est.bin_estimators_) == 2
    for model in est.bin_estimators_:
        net = model.net_
        assert str(net.device) == "cpu"  # the base's device parameter
        dataset, trainable = seen[id(net)]
        _to_meta(net, trainable)
        batch = next(iter(BatchIterator(dataset, batch_size=8)))
        _one_step_on_meta(net, batch)
        for name in ("module_", "criterion_"):
            assert tensors_off_device(getattr(net, name), META, name=name) == []
