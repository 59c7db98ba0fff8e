"""CCACrossModal: closed-form correctness and retrieval quality."""

import numpy as np
import pytest
import torch
from joblib import parallel_config
from sklearn.model_selection import GridSearchCV

from temporal_xmodal import CCACrossModal, stack_modalities
from temporal_xmodal.estimators import _cca
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.metrics import cross_modal_scores


def _latent_views(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, 4)) * [3.0, 2.0, 1.0, 0.5]
    X_img = z @ rng.standard_normal((4, 12)) + rng.standard_normal((n, 12))
    X_txt = z @ rng.standard_normal((4, 9)) + rng.standard_normal((n, 9))
    return X_img, X_txt


def test_constraints_and_correlations_hold_on_training_data():
    X_img, X_txt = _latent_views()
    X = stack_modalities(X_img, X_txt, np.arange(len(X_img)))
    cca = CCACrossModal(embedding_dim=6, reg=0.0, n_image_features=12).fit(X)
    U = (X_img - cca.image_mean_) @ cca.image_weights_
    V = (X_txt - cca.text_mean_) @ cca.text_weights_
    # a' S_xx a = I, b' S_yy b = I, a' S_xy b = diag(rho)  (spec §C.6)
    np.testing.assert_allclose(U.T @ U / (len(U) - 1), np.eye(6), atol=1e-8)
    np.testing.assert_allclose(V.T @ V / (len(V) - 1), np.eye(6), atol=1e-8)
    np.testing.assert_allclose(U.T @ V / (len(U) - 1), np.diag(cca.canonical_correlations_),
                               atol=1e-8)
    rho = cca.canonical_correlations_
    assert np.all(np.diff(rho) <= 1e-12)
    assert rho[3] > 0.5 > rho[4]  # four shared latent directions, the rest is noise


def test_matches_generalised_eigenproblem():
    from scipy.linalg import eigh

    X_img, X_txt = _latent_views(800, seed=1)
    X = stack_modalities(X_img, X_txt)
    cca = CCACrossModal(embedding_dim=4, reg=0.0, n_image_features=12).fit(X)
    Xc, Yc = X_img - X_img.mean(0), X_txt - X_txt.mean(0)
    Sxx, Syy, Sxy = Xc.T @ Xc, Yc.T @ Yc, Xc.T @ Yc
    # Sxy Syy^-1 Syx a = rho^2 Sxx a (thesis eq. 2.5 as a generalised eigenproblem)
    w = eigh(Sxy @ np.linalg.solve(Syy, Sxy.T), Sxx, eigvals_only=True)[::-1][:4]
    np.testing.assert_allclose(cca.canonical_correlations_, np.sqrt(w), atol=1e-8)


def test_regularisation_shrinks_correlations():
    X = stack_modalities(*_latent_views(300, seed=2))
    rho0 = CCACrossModal(4, reg=0.0, n_image_features=12).fit(X).canonical_correlations_
    rho1 = CCACrossModal(4, reg=1.0, n_image_features=12).fit(X).canonical_correlations_
    assert np.all(rho1 < rho0)


def test_time_and_labels_are_ignored():
    X, y, info = make_temporal_crossmodal(400, return_info=True, random_state=0)
    a = CCACrossModal(n_image_features=info.n_image_features).fit(X, y)
    X_shift = X.copy()
    X_shift[:, -1] = 1e6
    b = CCACrossModal(n_image_features=info.n_image_features).fit(X_shift)
    np.testing.assert_allclose(a.transform(X), b.transform(X_shift))


def test_values_whose_covariance_overflows_raise():
    X = stack_modalities(*_latent_views(100))
    X[:3, 0] = 1e300  # finite, but its square is not
    with pytest.raises(ValueError, match="image features deviate .* covariance overflows"):
        CCACrossModal(n_image_features=12).fit(X)


def test_embedding_dim_default_and_limit():
    X = stack_modalities(*_latent_views(100))
    cca = CCACrossModal(n_image_features=12).fit(X)
    assert cca.embedding_dim_ == cca.n_components_ == 9  # min(32, 12, 9)
    assert cca.transform(X).shape == (100, 18)
    with pytest.raises(ValueError, match="embedding_dim=10 exceeds"):
        CCACrossModal(10, n_image_features=12).fit(X)


def test_random_state_is_accepted_and_changes_nothing():
    X = stack_modalities(*_latent_views(100))
    a = CCACrossModal(random_state=0, n_image_features=12).fit(X)
    b = CCACrossModal(random_state=np.random.RandomState(7), n_image_features=12).fit(X)
    np.testing.assert_array_equal(a.transform(X), b.transform(X))


def test_the_torch_solve_matches_numpy(monkeypatch):
    """device="cuda" solves with torch: the same code on torch's CPU device gives NumPy's
    embeddings (CI has no GPU; tests/test_cuda.py runs it on one)."""
    X = stack_modalities(*_latent_views(200))
    numpy_fit = CCACrossModal(6, reg=1e-3, n_image_features=12).fit(X)
    monkeypatch.setattr(_cca, "closed_form_device", lambda device: torch.device("cpu"))
    torch_fit = CCACrossModal(6, reg=1e-3, n_image_features=12).fit(X)
    np.testing.assert_allclose(torch_fit.canonical_correlations_,
                               numpy_fit.canonical_correlations_, atol=1e-10)
    np.testing.assert_allclose(torch_fit.transform(X), numpy_fit.transform(X), atol=1e-8)


def test_closed_form_device_reads_device_as_every_estimator_does(monkeypatch):
    """``"auto"`` is CUDA when torch finds a GPU, as for every estimator; the CPU (and an
    explicit ``"cpu"``, the same bits on every machine) solves in NumPy."""
    assert _cca.closed_form_device("cpu") is None
    assert _cca.closed_form_device(torch.device("cpu")) is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert _cca.closed_form_device("auto") is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert _cca.closed_form_device("auto") == torch.device("cuda")
    assert _cca.closed_form_device("cuda:1") == torch.device("cuda:1")


def test_device_errors():
    X = stack_modalities(*_latent_views(100))
    with pytest.raises(RuntimeError, match="[Dd]evice"):
        CCACrossModal(device="gpu0", n_image_features=12).fit(X)
    if not torch.cuda.is_available():  # a CUDA request without a GPU: refused by name
        for device in ("cuda", "cuda:1", torch.device("cuda")):
            with pytest.raises(ValueError, match=r"device='cuda(:1)?' but torch finds no "
                                                 r"CUDA GPU"):
                CCACrossModal(device=device, n_image_features=12).fit(X)


def test_beats_chance_on_synthetic_data():
    X, y, info = make_temporal_crossmodal(3000, return_info=True, random_state=0)
    cca = CCACrossModal(n_image_features=info.n_image_features).fit(X[:2000])
    score = cca.score(X[2000:], y[2000:])
    # a random ranking has mAP ~ sum_c p_c^2 (about 1/8 here); require 0.2 above it
    chance = np.sum((np.bincount(y[2000:]) / 1000) ** 2)
    assert score > chance + 0.2, (score, chance)


def test_wikipedia_published_level(wiki):
    cca = CCACrossModal(n_image_features=wiki.n_image_features).fit(wiki.X_train, wiki.y_train)
    Z = cca.transform(wiki.X_test)
    d = cca.embedding_dim_
    s = cross_modal_scores(Z[:, :d], Z[:, d:], wiki.y_test, metrics=("map",))
    # published CCA on these features: about 0.25 (I->T) / 0.20 (T->I)
    assert s["map_i2t"] >= 0.22 and s["map_t2i"] >= 0.17, s


def test_grid_search_over_reg():
    X, y, info = make_temporal_crossmodal(600, return_info=True, random_state=1)
    # two fits at a time on threads: joblib's default worker processes spent 4 s starting and
    # importing torch for these 13 closed-form fits of a few milliseconds (the searches of
    # test_neural.py and test_diachronic.py run on worker processes)
    with parallel_config(backend="threading"):
        search = GridSearchCV(
            CCACrossModal(n_image_features=info.n_image_features),
            {"reg": [1e-4, 1.0], "embedding_dim": [2, 8]}, cv=3, n_jobs=2,
        ).fit(X, y)
    assert search.best_params_["embedding_dim"] == 8
    assert np.isfinite(search.best_score_)
