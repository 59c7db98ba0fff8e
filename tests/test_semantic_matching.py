"""SemanticMatchingCrossModal: class posteriors per modality, static or time-interacted."""

import numpy as np
import pytest
import scipy.sparse as sp

from temporal_xmodal import DiachronicEmbedder, SemanticMatchingCrossModal
from temporal_xmodal.datasets import TEMPORAL_WORLDS, make_temporal_crossmodal
from temporal_xmodal.estimators._semantic_matching import interacted_design
from temporal_xmodal.metrics import random_map


def _split(world, n=2000, seed=0):
    X, y, info = make_temporal_crossmodal(n, return_info=True, random_state=seed,
                                          **TEMPORAL_WORLDS[world])
    order = np.random.default_rng(seed).permutation(n)
    tr, te = order[: int(0.7 * n)], order[int(0.7 * n):]
    return X[tr], y[tr], X[te], y[te], info.n_image_features


@pytest.fixture(scope="module")
def wording():
    return _split("wording drift")


@pytest.fixture(scope="module")
def static():
    return _split("static")


def test_the_design_is_the_dense_interaction():
    rng = np.random.default_rng(0)
    A, bins = rng.normal(size=(7, 3)), rng.integers(0, 4, 7)
    dense = np.hstack([A] + [0.5 * A * (bins == b)[:, None] for b in range(4)])
    design = interacted_design(A, bins, 4, 0.5)
    assert sp.isspmatrix_csr(design) and design.nnz == 2 * A.size
    np.testing.assert_array_equal(design.toarray(), dense)


def test_it_embeds_class_posteriors(wording):
    X_tr, y_tr, X_te, y_te, d = wording
    model = SemanticMatchingCrossModal(n_image_features=d, use_time=False).fit(X_tr, y_tr)
    K = len(np.unique(y_tr))
    assert model.embedding_dim_ == K and model.transform(X_te).shape == (len(X_te), 2 * K)
    P = model.image_classifier_.predict_proba(model.image_scaler_.transform(X_te[:, :d]))
    np.testing.assert_allclose(model.transform_image(X_te[:, :d]),
                               P / np.linalg.norm(P, axis=1, keepdims=True))
    assert model.n_iter_ >= 1
    # the control reads no time: any instant gives the same projection
    np.testing.assert_array_equal(model.transform_text(X_te[:5, d:-1], time=0.0),
                                  model.transform_text(X_te[:5, d:-1], time=9.0))


def test_time_pays_where_the_wording_drifts(wording):
    """Wording drift: the same caption words mean another category later; the
    time-interacted classifier reads them in their period's vocabulary."""
    X_tr, y_tr, X_te, y_te, d = wording
    timed = SemanticMatchingCrossModal(n_image_features=d).fit(X_tr, y_tr)
    control = SemanticMatchingCrossModal(n_image_features=d, use_time=False).fit(X_tr, y_tr)
    gain = timed.score(X_te, y_te) - control.score(X_te, y_te)
    assert gain > 0.1, gain
    assert timed.score(X_te, y_te) > random_map(y_te) + 0.5
    # read at the wrong time, the text side loses what the date gave it
    wrong = X_te.copy()
    wrong[:, -1] = np.random.default_rng(0).permutation(wrong[:, -1])
    assert timed.score(wrong, y_te) < timed.score(X_te, y_te) - 0.05
    with pytest.raises(ValueError, match="pass time="):
        timed.transform_text(X_te[:3, d:-1])


def test_time_costs_little_where_it_says_nothing(static):
    X_tr, y_tr, X_te, y_te, d = static
    timed = SemanticMatchingCrossModal(n_image_features=d).fit(X_tr, y_tr)
    control = SemanticMatchingCrossModal(n_image_features=d, use_time=False).fit(X_tr, y_tr)
    assert timed.score(X_te, y_te) > control.score(X_te, y_te) - 0.02


def test_it_is_the_reference_a_neural_model_must_meet(wording):
    """The reference of issue 54: on a learnable world a short neural fit is well below it."""
    X_tr, y_tr, X_te, y_te, d = wording
    sm = SemanticMatchingCrossModal(n_image_features=d, use_time=False).fit(X_tr, y_tr)
    dcm = DiachronicEmbedder(n_image_features=d, max_epochs=2, random_state=0).fit(X_tr, y_tr)
    assert sm.score(X_te, y_te) > dcm.score(X_te, y_te)


def test_multilabel_trains_one_vs_rest():
    X, y, info = make_temporal_crossmodal(600, multilabel=True, return_info=True,
                                          random_state=0)
    d = info.n_image_features
    model = SemanticMatchingCrossModal(n_image_features=d).fit(X[:400], y[:400])
    assert model.embedding_dim_ == y.shape[1]
    assert model.image_classifier_.__class__.__name__ == "OneVsRestClassifier"
    assert model.score(X[400:], y[400:]) > random_map(y[400:]) + 0.2


def test_embedding_dim_projects_on_the_posteriors_principal_axes(wording):
    X_tr, y_tr, X_te, _, d = wording
    K = len(np.unique(y_tr))
    full = SemanticMatchingCrossModal(n_image_features=d).fit(X_tr, y_tr)
    rotated = SemanticMatchingCrossModal(K, n_image_features=d).fit(X_tr, y_tr)
    Z, R = full.transform(X_te), rotated.transform(X_te)
    # D = K is a rotation: the same image-text cosines
    np.testing.assert_allclose(Z[:, :K] @ Z[:, K:].T, R[:, :K] @ R[:, K:].T, atol=1e-10)
    small = SemanticMatchingCrossModal(3, n_image_features=d).fit(X_tr, y_tr)
    assert small.transform(X_te).shape == (len(X_te), 6) and small.components_.shape == (K, 3)
    with pytest.raises(ValueError, match="one dimension per class"):
        SemanticMatchingCrossModal(K + 1, n_image_features=d).fit(X_tr, y_tr)


def test_bad_input_is_refused_by_name(wording):
    X_tr, y_tr, _, _, d = wording
    with pytest.raises(ValueError, match="requires y"):
        SemanticMatchingCrossModal(n_image_features=d).fit(X_tr)
    with pytest.raises(ValueError, match="at least 2 classes"):
        SemanticMatchingCrossModal(n_image_features=d).fit(X_tr, np.zeros(len(X_tr)))
    with pytest.raises(ValueError, match="time_weight"):
        SemanticMatchingCrossModal(time_weight=0.0, n_image_features=d).fit(X_tr, y_tr)
    with pytest.raises(ValueError, match="device"):
        SemanticMatchingCrossModal(device="cuda:7", n_image_features=d).fit(X_tr, y_tr)


def test_the_compare_job_splits_it_as_the_others():
    """In the main job's table by default, deterministic (no seed passed)."""
    from temporal_xmodal.comparison import estimator_registry

    entry = estimator_registry(8)["SM"]
    assert isinstance(entry.estimator, SemanticMatchingCrossModal)
    assert entry.time_role == "inference" and entry.estimator.random_state is None


def test_a_constant_time_column_fits_the_static_model(wording):
    """With every training time equal there is one bin: the fit is the static SM exactly
    (the compare job's constant-time control is Rasiwasia et al.'s model)."""
    X_tr, y_tr, X_te, y_te, d = wording
    constant = X_tr.copy()
    constant[:, -1] = 0.0
    timed = SemanticMatchingCrossModal(n_image_features=d).fit(constant, y_tr)
    static = SemanticMatchingCrossModal(n_image_features=d, use_time=False).fit(X_tr, y_tr)
    assert timed.time_encoding_ is None
    np.testing.assert_allclose(timed.transform_text(X_te[:, d:-1], time=0.0),
                               static.transform_text(X_te[:, d:-1]), atol=1e-8)
