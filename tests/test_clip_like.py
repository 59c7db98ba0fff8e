"""Tests of ``make_clip_like``, the synthetic world in the geometry of CLIP embeddings.

The geometry (unit rows, a shared offset per modality, the gap between the
modalities) and the difficulty a linear class-posterior baseline meets on it
(docs/datasets.md, "make_clip_like: a CLIP-like world"): above chance, below perfect, and a
caption's category needs its era while a picture's does not.
"""

import doctest

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

import temporal_xmodal.datasets._clip_like as clip_like_module
from temporal_xmodal.datasets import TEMPORAL_WORLDS, make_clip_like, make_temporal_crossmodal
from temporal_xmodal.metrics import cross_modal_scores


def _blocks(X, info):
    d = info.n_image_features
    return X[:, :d], X[:, d:-1], X[:, -1]


def test_shapes_dtypes_and_unit_rows():
    X, y, info = make_clip_like(300, n_image_features=40, n_text_features=24,
                                return_info=True, random_state=0)
    assert X.shape == (300, 40 + 24 + 1) and X.dtype == np.float64 and np.isfinite(X).all()
    assert y.shape == (300,) and np.issubdtype(y.dtype, np.integer)
    assert set(np.unique(y)) == set(range(12))  # the default world: 12 categories
    assert info.n_image_features == 40 and info.n_text_features == 24
    X_img, X_txt, t = _blocks(X, info)
    np.testing.assert_allclose(np.linalg.norm(X_img, axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(X_txt, axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(t, info.time)
    assert info.image_projection.shape == (64, 40) and info.text_projection.shape == (48, 24)
    assert info.image_offset.shape == (40,) and info.text_offset.shape == (24,)
    np.testing.assert_allclose(np.linalg.norm(info.image_offset), 3.0)
    assert len(make_clip_like(50, random_state=0)) == 2


def test_the_embedding_is_the_documented_map_of_the_world():
    # Without noise: each row is (f P / r + o) / norm, with unit mean square signal norm.
    X, _, info = make_clip_like(200, embedding_noise=0.0, return_info=True, random_state=3)
    X_img, X_txt, _ = _blocks(X, info)
    for F, f, P, o in ((X_img, info.image_features, info.image_projection, info.image_offset),
                       (X_txt, info.text_features, info.text_projection, info.text_offset)):
        signal = f @ P
        np.testing.assert_allclose(np.mean(np.sum(signal**2, axis=1)), 1.0)
        raw = signal + o
        np.testing.assert_allclose(F, raw / np.linalg.norm(raw, axis=1, keepdims=True))


def test_shared_offset_and_modality_gap():
    X, _, info = make_clip_like(1000, return_info=True, random_state=0)
    X_img, X_txt, _ = _blocks(X, info)
    a, b = np.random.RandomState(0).randint(0, 1000, (2, 2000))
    within_img = np.mean(np.sum(X_img[a] * X_img[b], axis=1))
    within_txt = np.mean(np.sum(X_txt[a] * X_txt[b], axis=1))
    across = np.mean(np.sum(X_img[a] * X_txt[b], axis=1))
    # 9 / (9 + 1 + 4) = 0.64 expected (offset 3, unit signal, noise 2); across ~ 0.
    assert within_img > 0.55 and within_txt > 0.55
    assert abs(across) < 0.2 and min(within_img, within_txt) - abs(across) > 0.4
    # Without the offset, items of one modality are nearly orthogonal (the noise dominates).
    X0, _ = make_clip_like(1000, offset=0.0, random_state=0)
    assert abs(np.mean(np.sum(X0[a, :512] * X0[b, :512], axis=1))) < 0.1


def test_same_seed_same_output_and_the_world_is_make_temporal_crossmodal_s():
    X1, y1 = make_clip_like(200, random_state=7)
    X2, y2 = make_clip_like(200, random_state=np.random.RandomState(7))
    X3, _ = make_clip_like(200, random_state=8)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.allclose(X1, X3)
    # The world is drawn first, from the same stream: the generator's own output.
    _, _, info = make_clip_like(200, return_info=True, random_state=7, event_strength=2.0)
    W, y_w, truth = make_temporal_crossmodal(200, n_categories=12, drift=0.0, meaning_shift=0.5,
                                             event_strength=2.0, return_info=True,
                                             random_state=7)
    np.testing.assert_array_equal(info.image_features, W[:, :64])
    np.testing.assert_array_equal(info.text_features, W[:, 64:-1])
    np.testing.assert_array_equal(info.era, truth.era)
    np.testing.assert_array_equal(info.wording, truth.wording)


def test_a_named_world_in_clip_geometry():
    X, y, info = make_clip_like(200, return_info=True, random_state=0,
                                **TEMPORAL_WORLDS["static"])
    assert np.all(info.era == 0) and np.all(info.text_category == info.category)
    assert len(np.unique(y)) == 12  # the default world's categories stay unless overridden
    X, y = make_clip_like(200, n_categories=4, multilabel=True, random_state=0)
    assert y.shape == (200, 4)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"n_samples": 0}, InvalidParameterError, "'n_samples' parameter of make_clip_like"),
    ({"n_image_features": 0}, InvalidParameterError, "'n_image_features'"),
    ({"n_text_features": 1.5}, InvalidParameterError, "'n_text_features'"),
    ({"offset": -1.0}, InvalidParameterError, "'offset'"),
    ({"embedding_noise": -0.1}, InvalidParameterError, "'embedding_noise'"),
    ({"offset": True}, InvalidParameterError, "'offset'"),
    ({"return_info": 1}, InvalidParameterError, "'return_info'"),
    # The world's parameters are the generator's, checked by it (under this name).
    ({"drift": -1.0}, InvalidParameterError, "'drift' parameter of make_clip_like"),
    ({"n_samples": 5}, ValueError, "n_samples must be >= n_categories"),
    ({"colour": 1}, TypeError, "colour"),
])
def test_bad_parameters_raise(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        make_clip_like(**{"n_samples": 100, **kwargs})


def _probe():
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


def _accuracy(F, y, train, test, era=None):
    """Accuracy of a linear probe on held-out items; with ``era``, one probe per era."""
    groups = np.zeros(len(y), dtype=int) if era is None else era
    right = 0
    for g in np.unique(groups):
        a, b = train[groups[train] == g], test[groups[test] == g]
        right += np.sum(_probe().fit(F[a], y[a]).predict(F[b]) == y[b])
    return right / len(test)


def test_a_linear_baseline_beats_chance_and_captions_need_their_era():
    # docs/datasets.md: 2,000 items, seeds 0-9: mAP 0.59-0.72 (chance 0.084); per-era text
    # probes +0.20 to +0.31 accuracy over a static one, per-era image probes +0.00 to +0.03
    # (only the era's category frequencies: the pictures never change).
    X, y, info = make_clip_like(2000, return_info=True, random_state=0)
    X_img, X_txt, _ = _blocks(X, info)
    train, test = train_test_split(np.arange(len(y)), test_size=0.3, random_state=0)
    Z_img = _probe().fit(X_img[train], y[train]).predict_proba(X_img[test])
    Z_txt = _probe().fit(X_txt[train], y[train]).predict_proba(X_txt[test])
    mAP = cross_modal_scores(Z_img, Z_txt, y[test], metrics=("map",), similarity="cosine")["map"]
    chance = (np.bincount(y[test]) / len(test))[y[test]].mean()
    assert mAP > chance + 0.3 and mAP < 0.9
    text_gain = (_accuracy(X_txt, y, train, test, info.era)
                 - _accuracy(X_txt, y, train, test))
    image_gain = (_accuracy(X_img, y, train, test, info.era)
                  - _accuracy(X_img, y, train, test))
    assert text_gain > 0.15
    assert image_gain < 0.06 and text_gain - image_gain > 0.12


def test_docstring_example_runs():
    failures, _ = doctest.testmod(clip_like_module, raise_on_error=False)
    assert failures == 0
