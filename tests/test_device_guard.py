"""Every device, checked without one: training steps on torch's ``meta`` device.

CI has no GPU.  A fitted net is moved to ``meta`` and runs one training and one validation
step (and SAM's prototype refresh) under :class:`RejectMixedDevices`, which fails any op whose
inputs sit on two devices; meta tensors also fail on a host sync (``.item()``, ``nonzero``).
Before the batch was moved to the net's device once, skorch handed the loss the host batch:
SAM's margins, TempXNet's correlations (and their per-batch table uploads), the diachronic
Δt and SAM's f_mc all mixed devices on a GPU, and each case below failed here.  A pickle of
a fitted model must load on a machine without the training device: every tensor in it goes
through skorch's device mapping.
"""

import pickle

import numpy as np
import pytest
import torch

from _device_guard import RejectMixedDevices, plain_tensors, tensors_off_device
from _tiny import tiny
from temporal_xmodal._device import allow_meta
from temporal_xmodal import (
    DiachronicEmbedder,
    SAMEmbedder,
    TempXNetEmbedder,
)
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.estimators._neural import NeuralCrossModalEmbedder, _bool_indicator
from temporal_xmodal.estimators._registry import Fresh, all_estimators
from temporal_xmodal.training import BatchIterator, ScheduledMargin, make_dataset


def _registered(name, **params):
    """A builder ``n -> estimator``: the registered ``name`` at its tiny settings."""
    return lambda n: tiny(name, n_image_features=n, **params)


def neural_cases():
    """Every registered estimator trained by the shared neural core (its tiny settings),
    read from the registry when called, and the variants below."""
    cases = {entry.name: _registered(entry.name) for entry in all_estimators()
             if issubclass(entry.estimator, NeuralCrossModalEmbedder)}
    return {**cases, **VARIANTS}


#: Options that take other device paths.
VARIANTS = {
    "SAM-literal": lambda n: tiny(SAMEmbedder, semantic_normalisation="batch",
                                  n_image_features=n),
    "TempXNet-category": lambda n: tiny(TempXNetEmbedder, correlation="category",
                                        n_image_features=n),
    "TempXNet-topic": lambda n: tiny(TempXNetEmbedder, correlation="topic", n_image_features=n),
    "Diachronic-dropout": lambda n: tiny(DiachronicEmbedder, dropout=0.2, n_image_features=n),
    "Diachronic-concat-sinusoidal": lambda n: tiny(
        DiachronicEmbedder, conditioning="concat", time_encoding="sinusoidal",
        n_image_features=n),
}
NEURAL = neural_cases()
#: Groups its anchors by time with ``torch.unique``: one host sync per step, by design (the
#: option's cost is the projections it saves); meta has no kernel for it.
SYNCS = {"Diachronic-same-time": lambda n: tiny(DiachronicEmbedder, same_time_anchors=4,
                                                n_image_features=n)}


@pytest.fixture(autouse=True)
def _meta_stands_in():
    """``meta`` is the second device of these tests (no GPU needed); ``device="meta"`` is
    refused outside ``allow_meta``, which holds no values (issue 48, 12)."""
    with allow_meta():
        yield


@pytest.fixture(scope="module")
def data():
    X, y, info = make_temporal_crossmodal(160, random_state=0, return_info=True)
    return X, y, info.n_image_features


def _on_meta(net):
    """The fitted net with its module and criterion on ``meta`` (the training device)."""
    net.module_.to("meta")
    net.criterion_.to("meta")
    net.device = "meta"
    return net


def _dataset(est, X, y):
    """The estimator's training dataset (all rows), as its fit builds it."""
    X_image, X_text, time = (X[:, :est.n_image_features_],
                             X[:, est.n_image_features_:-1], X[:, -1])
    centred = est.time_axis_.centre(time)  # numeric times in years: already on the axis
    return make_dataset(X_image, X_text, _bool_indicator(np.asarray(y)),
                        est._batch_times(centred))


@pytest.mark.parametrize("name", [*NEURAL, *(
    pytest.param(name, marks=pytest.mark.xfail(raises=NotImplementedError, strict=True,
                                               reason="torch.unique syncs with the host"))
    for name in SYNCS)])
@pytest.mark.parametrize("placement", ["device", "staged"])
def test_a_training_step_stays_on_the_net_device(name, placement, data):
    X, y, n_img = data
    est = {**NEURAL, **SYNCS}[name](n_img).fit(X, y)
    net = _on_meta(est.net_)
    assert tensors_off_device(net.module_, "meta", name="module_") == []
    assert tensors_off_device(net.criterion_, "meta", name="criterion_") == []
    dataset = _dataset(est, X, y)
    batches = BatchIterator(dataset, batch_size=32, shuffle=True, device="meta",
                            placement=placement,
                            generator=torch.Generator().manual_seed(0))
    batch = next(iter(batches))
    assert {v.device.type for v in (*batch[0].values(), batch[1])} == {"meta"}
    with RejectMixedDevices() as guard:  # a batch on the device: nothing is uploaded
        step = net.train_step_single(batch)
        net.validation_step(batch)
    assert step["loss"].device.type == "meta"
    assert guard.uploads == []
    host_batch = dataset.batch(torch.arange(32))  # a user's iterator: batches on the host
    with RejectMixedDevices():
        net.train_step_single(host_batch)
        net.validation_step(host_batch)
        for _, cb in net.callbacks_:
            if isinstance(cb, ScheduledMargin):  # SAM's prototypes, on the device
                cb.on_epoch_begin(net, dataset_train=dataset)
    assert tensors_off_device(net.criterion_, "meta", name="criterion_") == []


def test_the_guard_sees_a_loss_fed_the_host_batch(data):
    """The bug the guard exists for: skorch's own step hands the loss the host batch."""
    X, y, n_img = data
    est = NEURAL["SAM"](n_img).fit(X, y)
    net = _on_meta(est.net_)
    host_batch = _dataset(est, X, y).batch(torch.arange(32))
    skorch_step = super(type(net), net).train_step_single
    with RejectMixedDevices(), pytest.raises(RuntimeError, match="mixes devices"):
        skorch_step(host_batch)


# ------------------------------------------------------------------ pickles
#: Settings beyond the tiny ones, by short name: the device paths worth pickling.
PICKLE_SETTINGS = {
    "CCA": {"embedding_dim": 4},
    "TempXNet": {"correlation": "category"},
    "Diachronic": {"dropout": 0.2},
    "Binned": {"base_estimator": Fresh(lambda: tiny(TempXNetEmbedder, temporal_weight=0))},
}


def pickle_cases():
    """Every registered estimator, read from the registry when called."""
    return {entry.name: _registered(entry.name, **PICKLE_SETTINGS.get(entry.name, {}))
            for entry in all_estimators()}


SIX = pickle_cases()


@pytest.mark.parametrize("name", list(SIX))
@pytest.mark.parametrize("keep_training_state", [False, True])
@pytest.mark.filterwarnings("ignore::temporal_xmodal.time.TimeBinWarning")  # tiny data: one bin
def test_a_pickle_loads_on_any_device(name, keep_training_state, data):
    """No tensor of a pickled model bypasses skorch's device mapping, and the copy embeds
    as the original."""
    X, y, n_img = data
    est = SIX[name](n_img)
    if "keep_training_state" in est.get_params():
        est.set_params(keep_training_state=keep_training_state)
    elif keep_training_state:
        pytest.skip(f"{name} has no training state")
    est.fit(X, y)
    assert plain_tensors(est) == []
    loaded = pickle.loads(pickle.dumps(est))
    np.testing.assert_allclose(loaded.transform(X[:20]), est.transform(X[:20]), atol=1e-6)
