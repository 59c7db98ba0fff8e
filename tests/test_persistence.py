"""Saving and loading the neural estimators: slim pickles, warm start after loading, devices."""

import io
import pickle
import warnings

import joblib
import numpy as np
import pytest
import torch
from skorch.exceptions import DeviceWarning

from _tiny import tiny
from temporal_xmodal import DiachronicEmbedder, SAMEmbedder, TempXNetEmbedder
from temporal_xmodal.datasets import make_temporal_crossmodal

NEURAL = [SAMEmbedder, TempXNetEmbedder, DiachronicEmbedder]
#: On top of the tiny settings: weights large enough for the pickle-size checks to tell the
#: optimiser's state from the rest, two epochs (the histories below count them), the CPU.
SIZES = dict(hidden_dim=32, embedding_dim=8, max_epochs=2, batch_size=64, device="cpu")
#: a slim pickle holds the weights and at most this much more (layout, history, parameters)
OVERHEAD = 64 * 1024


@pytest.fixture(scope="module")
def data():
    X, y, info = make_temporal_crossmodal(300, return_info=True, random_state=0)
    return X, y, info.n_image_features


def _fit(cls, data, **params):
    X, y, n_img = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. the synthetic span's plausibility notes
        return tiny(cls, n_image_features=n_img, **{**SIZES, **params}).fit(X, y)


def _weight_bytes(est):
    return sum(p.numel() * p.element_size() for p in est.net_.module_.parameters())


class _TensorSpy(pickle.Pickler):
    """A pickler that records the tensors it meets itself.

    skorch pickles the module, criterion and optimiser into a buffer of its own, which it
    maps to the CPU when loaded without CUDA; a tensor met here would be loaded on the
    device it was saved from.  The shuffling generator's state (uint8) is left out: the
    generator is always made on the CPU.
    """

    def __init__(self, file):
        super().__init__(file)
        self.tensors = 0

    def reducer_override(self, obj):
        if isinstance(obj, torch.Tensor) and obj.dtype != torch.uint8:
            self.tensors += 1
        return NotImplemented


def _outer_tensors(est):
    spy = _TensorSpy(io.BytesIO())
    spy.dump(est)
    return spy.tensors


@pytest.mark.parametrize("cls", NEURAL)
def test_pickle_holds_only_inference_state_and_transforms_identically(cls, data, tmp_path):
    X, y, n_img = data
    est = _fit(cls, data)
    blob = pickle.dumps(est)
    assert len(blob) < _weight_bytes(est) + OVERHEAD
    # the estimator in memory keeps its training state
    assert est.net_.has_training_state() and est.net_.callbacks_
    back = pickle.loads(blob)
    assert not back.net_.has_training_state() and back.net_.train_split is None
    assert len(back.net_.history) == 2 and back.net_.history[-1, "batches"] == []
    np.testing.assert_array_equal(back.transform(X), est.transform(X))
    np.testing.assert_array_equal(back.transform_text(X[:5, n_img:-1], time=2.0),
                                  est.transform_text(X[:5, n_img:-1], time=2.0))
    joblib.dump(est, tmp_path / "model.joblib")
    np.testing.assert_array_equal(joblib.load(tmp_path / "model.joblib").transform(X),
                                  est.transform(X))
    assert _outer_tensors(est) == 0  # nothing pinned to the training device
    # with the training state too: callbacks and the validation split pickle through skorch's
    # device mapping or as host arrays
    assert _outer_tensors(_fit(cls, data, keep_training_state=True)) == 0
    assert _outer_tensors({"weights": est.net_.module_.state_dict()}) > 0  # the check sees them


@pytest.mark.parametrize("cls", NEURAL)
def test_keep_training_state_pickles_the_optimiser_and_continues_exactly(cls, data):
    X, y, _ = data
    full = _fit(cls, data, keep_training_state=True)
    assert len(pickle.dumps(full)) > len(pickle.dumps(_fit(cls, data))) + 2 * _weight_bytes(full)
    back = pickle.loads(pickle.dumps(full))
    assert back.net_.has_training_state()
    for est in (full, back):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.set_params(warm_start=True, max_epochs=1).fit(X, y)
    assert len(back.net_.history) == 3
    np.testing.assert_array_equal(back.transform(X), full.transform(X))


@pytest.mark.parametrize("cls", NEURAL)
def test_warm_start_after_loading_a_slim_pickle_continues_from_the_weights(cls, data):
    X, y, _ = data
    est = _fit(cls, data)
    back = pickle.loads(pickle.dumps(est))
    before = back.transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back.set_params(warm_start=True, max_epochs=1).fit(X, y)
    assert back.net_.has_training_state() and len(back.net_.history) == 3
    after = back.transform(X)
    assert np.isfinite(after).all() and not np.array_equal(after, before)
    # the slim pickle of the continued model is slim again
    assert len(pickle.dumps(back)) < _weight_bytes(back) + OVERHEAD


@pytest.mark.skipif(torch.cuda.is_available(), reason="tests the CPU-only fallback")
def test_model_saved_from_cuda_loads_on_a_cpu_only_machine(data):
    X, y, _ = data
    est = _fit(DiachronicEmbedder, data)
    expected = est.transform(X)
    est.net_.device = "cuda"  # as if trained on a GPU (the tensors are on the CPU here)
    try:
        blob = pickle.dumps(est)
    finally:
        est.net_.device = "cpu"
    with pytest.warns(DeviceWarning) as record:  # ours, and skorch's "Setting self.device"
        back = pickle.loads(blob)
    assert any("no CUDA devices are available" in str(w.message) for w in record)
    assert str(back.net_.device) == "cpu"
    np.testing.assert_array_equal(back.transform(X), expected)
