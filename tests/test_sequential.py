"""SequentialCrossModal (SCML): modules, eq. 10, the learned optimiser, the stages."""

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch
from sklearn.exceptions import NotFittedError
from skorch.callbacks import Callback
from torch.nn import functional as F

from temporal_xmodal import SequentialCrossModal
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.estimators.sequential import (
    ClassificationLoss,
    LearnedOptimizerNet,
    MetaLearner,
    ModalityPoolIterator,
    ModalityPools,
    SequentialNet,
    classification_loss,
    preprocess_gradients,
)
from temporal_xmodal.metrics import mean_average_precision
from temporal_xmodal.training import TrainingInterruptedWarning


#: small and fast; same stages as the defaults
FAST = dict(max_epochs=4, hidden_dim=64, common_dim=32, embedding_dim=16, n_memory=60,
            n_meta_train=60, batch_size=32, random_state=0)


@pytest.fixture(scope="module")
def data():
    X, y, info = make_temporal_crossmodal(600, return_info=True, random_state=0)
    d = info.n_image_features
    return X[:400], y[:400], X[400:], y[400:], d


@pytest.fixture(scope="module")
def fast_model(data):
    """SCML at FAST, fitted once for the tests that only read it (transform, probabilities)."""
    X, y, _, _, d = data
    return SequentialCrossModal(**FAST, n_image_features=d).fit(X, y)


@pytest.fixture(scope="module")
def no_update_model(data):
    """SCML at FAST with ``update_rule="none"``, fitted once: ``codes`` and
    ``database_codes`` act at inference only, so each test sets them on its own copy."""
    X, y, _, _, d = data
    return SequentialCrossModal(**FAST, update_rule="none", n_image_features=d).fit(X, y)


# ----------------------------------------------------------------- modules
def test_preprocessing_matches_eq8():
    p = 10.0
    x = torch.tensor([[2.0, -1e-6], [0.0, -3.0]])
    out = preprocess_gradients(x, p)
    expected = torch.tensor([
        [np.log(2.0) / p, 1.0, -1.0, np.exp(p) * -1e-6],
        [-1.0, 0.0, np.log(3.0) / p, -1.0],
    ], dtype=torch.float32)
    torch.testing.assert_close(out, expected)


def test_meta_learner_is_coordinatewise_and_vectorised():
    torch.manual_seed(0)
    learner = MetaLearner(n_inputs=4)
    torch.nn.init.normal_(learner.head.weight)
    inputs = torch.randn(50, 4)
    state = learner.initial_state(50)
    with torch.no_grad():
        g, (h, c) = learner(inputs, state)
        for i in (0, 17, 49):  # one coordinate alone gives the same update and state
            gi, (hi, ci) = learner(inputs[i:i + 1], learner.initial_state(1))
            torch.testing.assert_close(gi, g[i:i + 1])
            torch.testing.assert_close(hi[:, 0], h[:, i])
    assert g.shape == (50,) and h.shape == (2, 50, 20)


@pytest.mark.parametrize("n_shared", [2, 4])
def test_meta_learner_shared_inputs_equal_the_broadcast_columns_bit_for_bit(n_shared):
    """The losses, the same for every coordinate, may be given once (``shared``): the
    learned optimiser's step does so instead of stacking them N times."""
    torch.manual_seed(0)
    learner = MetaLearner(n_inputs=2 * n_shared)
    torch.nn.init.normal_(learner.head.weight)
    grads = torch.randn(300, n_shared) * torch.tensor([1e-7, 1.0, 1e-3, 10.0][:n_shared])
    losses = torch.tensor([2.3, 1e-6, 0.0, 0.7][:n_shared])
    state = tuple(torch.randn_like(s) for s in learner.initial_state(300))
    with torch.no_grad():
        g, (h, c) = learner(torch.cat([grads, losses.expand(300, -1)], dim=1), state)
        g2, (h2, c2) = learner(grads, state, losses)
    assert torch.equal(g, g2) and torch.equal(h, h2) and torch.equal(c, c2)


def test_unified_model_logits_at_its_own_parameters_equal_its_forward():
    torch.manual_seed(0)
    net = SequentialNet(6, 5, hidden_dim=16, common_dim=8, embedding_dim=4, n_classes=3)
    u = torch.randn(10, 8)
    S = net.unified
    S.dropout.reseed(0)
    twin = copy.deepcopy(S)  # the same dropout stream: the same masks, call after call
    assert torch.equal(S(u), twin.logits_at(u, list(twin.parameters())))
    # other parameters: the forward of a module holding them
    shifted = [p.detach() + 0.1 for p in S.parameters()]
    with torch.no_grad():
        for p, q in zip(twin.parameters(), shifted):
            p.copy_(q)
    assert torch.equal(twin(u), S.logits_at(u, shifted))


def test_meta_learner_starts_with_zero_updates():
    learner = MetaLearner(n_inputs=4)
    g, _ = learner(torch.randn(10, 4), learner.initial_state(10))
    assert torch.count_nonzero(g) == 0


def test_unified_model_parameter_count_matches_the_wiki_architecture():
    net = SequentialNet(4096, 10, hidden_dim=4096, embedding_dim=64, n_classes=10)
    # S of the Wikipedia setting (Song & Tan, Table 1): 16,512 + 8,256 + 650 = 25,418 θ
    assert sum(p.numel() for p in net.unified.parameters()) == 25418


# ---------------------------------------------------------------- eq. 10
def test_single_label_loss_is_cross_entropy_and_literal_adds_negative_terms():
    torch.manual_seed(0)
    logits, target = torch.randn(8, 5), torch.randint(0, 5, (8,))
    Y = F.one_hot(target, 5).float()
    torch.testing.assert_close(classification_loss(logits, Y), F.cross_entropy(logits, target))
    p = logits.softmax(1)
    literal = -(Y * p.log() + (1 - Y) * (1 - p).log()).sum(1).sum()
    torch.testing.assert_close(
        classification_loss(logits, Y, reduction="sum", single_label_loss="literal"), literal)


def test_multilabel_loss_weights_positives_and_splits():
    torch.manual_seed(0)
    logits, Y = torch.randn(6, 4), (torch.rand(6, 4) > 0.5).float()
    p = logits.sigmoid()
    expected = -(20 * Y * p.log() + (1 - Y) * (1 - p).log()).sum(1).mean()
    total = classification_loss(logits, Y, multilabel=True, positive_weight=20)
    torch.testing.assert_close(total, expected)
    pos, neg = classification_loss(logits, Y, multilabel=True, positive_weight=20, split=True)
    torch.testing.assert_close(pos + neg, total)
    torch.testing.assert_close(pos, -(20 * Y * p.log()).sum(1).mean())


# ----------------------------------------------------- learned optimiser
def _pools(n=40, d=6, C=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, C, (n,), generator=g)
    centres = torch.randn(C, d, generator=g) * 3
    X = centres[y] + torch.randn(n, d, generator=g)
    return X, F.one_hot(y, C).float()


def test_iterator_yields_equal_sized_batches_of_every_pool():
    Xa, Ya = _pools(50)
    Xb, Yb = _pools(7, seed=1)
    pools = ModalityPools({"image": (Xa, Ya), "text": (Xb, Yb)}, driver="image")
    batches = list(ModalityPoolIterator(pools, batch_size=16,
                                        generator=torch.Generator().manual_seed(0)))
    assert len(batches) == 4
    for batch, _ in batches:
        assert len(batch["image"]) == len(batch["text"]) == len(batch["text_labels"])
    seen = torch.cat([b["image"] for b, _ in batches])
    assert sorted(map(tuple, seen.tolist())) == sorted(map(tuple, Xa.tolist()))
    steps = ModalityPoolIterator(pools, batch_size=16, steps_per_epoch=3)
    assert len(list(steps)) == 3


def test_learned_optimizer_trains_phi_and_lowers_the_task_loss():
    torch.manual_seed(0)
    Xo, Yo = _pools(64, seed=0)
    Xn, Yn = _pools(64, seed=1)
    target = SequentialNet(6, 6, hidden_dim=16, common_dim=8, embedding_dim=8, n_classes=3,
                           dropout=0.0).requires_grad_(False)
    learner = MetaLearner(n_inputs=4, output_scale=0.1)
    phi0 = copy.deepcopy(learner.state_dict())
    theta0 = [p.clone() for p in target.unified.parameters()]
    pools = ModalityPools({"text": (Xo, Yo), "image": (Xn, Yn)}, driver="image")

    def task_loss():
        with torch.no_grad():
            logits = target(text=Xo, image=Xn)
            return float(F.cross_entropy(logits["text"], Yo.argmax(1))
                         + F.cross_entropy(logits["image"], Yn.argmax(1)))

    before = task_loss()
    net = LearnedOptimizerNet(learner, criterion=ClassificationLoss, optimizer=torch.optim.Adam,
                              lr=1e-2, max_epochs=30, batch_size=32, train_split=None,
                              iterator_train=ModalityPoolIterator, target=target,
                              old_modality="text", new_modality="image", l1_weight=1e-4,
                              verbose=0)
    net.fit(pools, None)
    assert any(not torch.equal(phi0[k], v) for k, v in learner.state_dict().items())
    assert any(not torch.equal(a, b) for a, b in zip(theta0, target.unified.parameters()))
    assert task_loss() < 0.8 * before
    history = net.history[-1, "batches"]
    assert {"old_loss", "new_loss", "update_l1"} <= set(history[0])


# -------------------------------------------------------------- estimator
def test_scml_beats_chance_by_a_wide_margin(data):
    X, y, X_te, y_te, d = data
    est = SequentialCrossModal(**{**FAST, "max_epochs": 15}, n_image_features=d).fit(X, y)
    chance = np.mean([np.mean(y_te == c) for c in y_te])  # expected AP of a random ranking
    assert est.score(X_te, y_te) > chance + 0.3
    assert set(est.nets_) == {"stage1", "stage2", "stage3", "stage4"}
    assert est.nets_["stage3"].target is not est.module_  # Stage III trains on a copy of S


def test_partial_fit_per_modality_equals_fit_and_keeps_only_the_memory(data, fast_model):
    X, y, X_te, _, d = data
    full = fast_model
    seq = SequentialCrossModal(**FAST, n_image_features=d)
    seq.partial_fit(X[:, d:-1], y, modality="text")
    assert seq.memory_["X"].shape == (60, X.shape[1] - 1 - d)
    assert seq.memory_["modality"] == "text"
    with pytest.raises(NotFittedError):
        seq.transform(X_te)
    with pytest.raises(ValueError, match="next modality"):
        seq.partial_fit(X[:, d:-1], y, modality="text")
    seq.partial_fit(X[:, :d], y, modality="image")
    np.testing.assert_array_equal(seq.transform(X_te), full.transform(X_te))
    assert seq.n_features_in_ == X.shape[1]
    # more images later: S is updated again by the learned optimiser (memory + new items)
    theta = [p.clone() for p in seq.module_.unified.parameters()]
    with pytest.raises(ValueError, match="next modality"):
        seq.partial_fit(X[:, d:-1], y, modality="text")
    seq.partial_fit(X[:50, :d], y[:50], modality="image")
    assert any(not torch.equal(a, b) for a, b in zip(theta, seq.module_.unified.parameters()))
    assert seq.n_modalities_seen_ == 3


def test_stage2_freezes_s_unless_joint(data):
    X, y, _, _, d = data
    first = SequentialCrossModal(**FAST, update_rule="none", n_image_features=d)
    first.partial_fit(X, y)
    theta = [p.clone() for p in first.module_.unified.parameters()]
    plug_only = copy.deepcopy(first).partial_fit(X, y)
    for a, b in zip(theta, plug_only.module_.unified.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    joint = copy.deepcopy(first).set_params(stage2_scope="joint").partial_fit(X, y)
    assert any(not torch.equal(a, b) for a, b in zip(theta, joint.module_.unified.parameters()))
    sgd = copy.deepcopy(first).set_params(update_rule="sgd").partial_fit(X, y)
    assert set(sgd.nets_) == {"stage1", "stage2", "stage4"}


def test_unseen_classes_in_the_second_modality_are_rejected(data):
    X, y, _, _, d = data
    est = SequentialCrossModal(**FAST, n_image_features=d).partial_fit(X[:, d:-1], y,
                                                                       modality="text")
    with pytest.raises(ValueError, match="not seen"):
        est.partial_fit(X[:, :d], y + 100, modality="image")


def test_pair_identifiers_as_labels_warn_and_categories_do_not(data):
    X, y, _, _, d = data
    small = {**FAST, "max_epochs": 1, "update_rule": "none"}
    with pytest.warns(UserWarning, match="pair identifiers.*at chance"):
        SequentialCrossModal(**small, n_image_features=d).fit(X[:40], np.arange(40))
    with pytest.warns(UserWarning, match="pair identifiers"):
        SequentialCrossModal(**small, n_image_features=d).partial_fit(
            X[:40, d:-1], np.arange(40) * 3, modality="text")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        SequentialCrossModal(**small, n_image_features=d).fit(X, y)   # recurring categories
        # one singleton class among recurring ones is no sign of pair identifiers
        SequentialCrossModal(**small, n_image_features=d).fit(X[:41], np.r_[y[:40], 99])


def test_binary_codes_rank_as_hamming_and_continuous_codes_work(data, no_update_model):
    X, y, X_te, y_te, d = data
    est = no_update_model
    Z = est.transform(X_te)
    K = est.embedding_dim_
    np.testing.assert_allclose(np.abs(Z), 1 / np.sqrt(K))
    zi, zt = Z[:, :K], Z[:, K:]
    hamming = mean_average_precision(zi, zt, y_te, y_te, similarity="hamming")
    dot = mean_average_precision(zi, zt, y_te, y_te)
    assert hamming == pytest.approx(dot, abs=1e-12)
    cont = copy.deepcopy(est).set_params(codes="continuous")
    Zc = cont.transform(X_te)
    assert not np.allclose(np.abs(Zc), 1 / np.sqrt(K))
    np.testing.assert_array_equal(np.sign(Zc), np.sign(Z))
    assert cont.score(X_te, y_te) > 0.3


def test_fused_codes_are_the_sign_of_the_summed_activations(data, no_update_model):
    X, y, X_te, y_te, d = data
    est = copy.deepcopy(no_update_model).set_params(codes="continuous")
    fused = est.transform_fused(X_te)
    h = est._hidden("image", X_te[:, :d]) + est._hidden("text", X_te[:, d:-1])
    np.testing.assert_array_equal(np.sign(fused), np.where(h >= 0, 1.0, -1.0))
    score = est.set_params(database_codes="fused").score(X_te, y_te)
    assert 0.3 < score <= 1


def test_parallel_paradigm_and_multilabel_disentangling(data):
    X, y, X_te, y_te, d = data
    pcml = SequentialCrossModal(**{**FAST, "max_epochs": 15}, paradigm="parallel",
                                n_image_features=d).fit(X, y)
    assert set(pcml.nets_) == {"parallel"} and pcml.score(X_te, y_te) > 0.3
    with pytest.raises(ValueError, match="parallel"):
        SequentialCrossModal(paradigm="parallel").partial_fit(X, y)
    Y = np.eye(8, dtype=int)[y % 8]
    Y[::3, 0] = 1
    ml = SequentialCrossModal(**FAST, meta_steps=3, meta_steps_unit="steps",
                              n_image_features=d).fit(X, Y)
    assert ml.multilabel_ and ml.meta_learner_.lstm.input_size == 16
    assert ml.nets_["stage3"].criterion_.positive_weight == 20
    assert len(ml.nets_["stage3"].history) == 3
    assert all(len(epoch["batches"]) == 1 for epoch in ml.nets_["stage3"].history)


def test_same_seed_gives_the_same_codes_and_class_probabilities_are_valid(data, fast_model):
    X, y, X_te, _, d = data
    a = fast_model  # the module's fit (other fits may have run since); b is fitted here
    b = SequentialCrossModal(**FAST, n_image_features=d).fit(X, y)
    np.testing.assert_array_equal(a.transform(X_te), b.transform(X_te))
    proba = a.class_probabilities(X_te[:, :d], "image")
    np.testing.assert_allclose(proba.sum(1), 1, rtol=1e-5)
    assert proba.shape == (len(X_te), len(a.classes_))
    with pytest.raises(ValueError, match="columns"):
        a.class_probabilities(X_te[:, :d], "text")
    with pytest.raises(ValueError, match="'modality'.*'audio'"):
        a.class_probabilities(X_te[:, :d], "audio")


@pytest.mark.parametrize("order", [("text", "text"), ("text",), "text image",
                                   ("text", "image", "text")])
def test_bad_modality_order_is_rejected(data, order):
    """A parameter constraint: refused by fit and by the first partial_fit alike, before
    any stage runs, in scikit-learn's parameter message."""
    X, y, _, _, _ = data
    match = "'modality_order' parameter .* a tuple or list holding 'image' and 'text' once"
    with pytest.raises(ValueError, match=match):
        SequentialCrossModal(modality_order=order).fit(X, y)
    with pytest.raises(ValueError, match=match):
        SequentialCrossModal(modality_order=order).partial_fit(X, y)


# ------------------------------------------------ entry points, interrupts, pickling
TINY = {**FAST, "max_epochs": 2, "meta_steps": 2, "meta_steps_unit": "steps"}


class _InterruptAt(Callback):
    """Raise KeyboardInterrupt at the end of the first epoch of the n-th stage net."""

    def __init__(self, stage):
        self.stage = stage
        self.started = 0

    def on_train_begin(self, net, **kwargs):
        self.started += 1

    def on_epoch_end(self, net, **kwargs):
        if self.started == self.stage:
            raise KeyboardInterrupt


def test_interrupt_stops_the_whole_sequence_and_warns(data):
    X, y, X_te, _, d = data
    est = SequentialCrossModal(**TINY, callbacks=[_InterruptAt(2)], n_image_features=d)
    with pytest.warns(TrainingInterruptedWarning, match="Stage II.*usable but partial"):
        est.fit(X, y)
    # Stages III and IV were not run; Stage II stopped after its first epoch
    assert list(est.nets_) == ["stage1", "stage2"] and len(est.nets_["stage2"].history) == 1
    assert est.meta_learner_ is None
    assert est.transform(X_te).shape == (len(X_te), 2 * est.embedding_dim_)
    first = SequentialCrossModal(**TINY, callbacks=[_InterruptAt(1)], n_image_features=d)
    with pytest.warns(TrainingInterruptedWarning, match="Stage I .*unfitted"):
        first.fit(X, y)
    assert list(first.nets_) == ["stage1"]
    with pytest.raises(NotFittedError):
        first.transform(X_te)


def test_pickle_keeps_only_inference_state_and_partial_fit_continues(data):
    X, y, X_te, _, d = data
    slim = SequentialCrossModal(**TINY, n_image_features=d).fit(X, y)
    full = SequentialCrossModal(**TINY, keep_training_state=True, n_image_features=d).fit(X, y)
    np.testing.assert_array_equal(slim.transform(X_te), full.transform(X_te))
    assert slim.nets_["stage4"].state_ is None and full.nets_["stage4"].state_ is not None
    n_theta = sum(p.numel() for p in slim.module_.unified.parameters())
    lstm_state = 2 * 2 * slim.lstm_layers * slim.lstm_hidden * n_theta * 4  # h, c of 2 nets
    assert len(pickle.dumps(full)) - len(pickle.dumps(slim)) > lstm_state
    back = pickle.loads(pickle.dumps(slim))
    np.testing.assert_array_equal(back.transform(X_te), slim.transform(X_te))
    np.testing.assert_array_equal(back.transform_fused(X_te), slim.transform_fused(X_te))
    # continuation after unpickling = continuation of the original
    back.partial_fit(X_te[:, :d], y[:len(X_te)], modality="image")
    slim.partial_fit(X_te[:, :d], y[:len(X_te)], modality="image")
    np.testing.assert_array_equal(back.transform(X_te), slim.transform(X_te))


def test_entry_points_validate_layout_and_labels(data):
    X, y, X_te, y_te, d = data
    # text block alone, then the full layout: the image block of X is used
    mixed = SequentialCrossModal(**TINY, n_image_features=d)
    mixed.partial_fit(X[:, d:-1], y, modality="text").partial_fit(X, y)
    full = SequentialCrossModal(**TINY, n_image_features=d).fit(X, y)
    np.testing.assert_array_equal(mixed.transform(X_te), full.transform(X_te))
    wrong = SequentialCrossModal(**TINY, n_image_features=d - 2)
    wrong.partial_fit(X[:, d:-1], y, modality="text")
    with pytest.raises(ValueError, match=f"{X.shape[1] - 1 - d} columns.*n_image_features"):
        wrong.partial_fit(X, y)
    with pytest.raises(ValueError, match="X_image has 3 columns"):
        full.partial_fit(X[:, :3], y, modality="image")
    # disentangle=True with single-label y: the negative parts are 0, training works
    dis = SequentialCrossModal(**TINY, disentangle=True, n_image_features=d).fit(X, y)
    assert dis.meta_learner_.lstm.input_size == 16
    assert np.isfinite(dis.nets_["stage3"].history[:, "train_loss"]).all()
    assert dis.score(X_te, y_te) > 0.17  # chance ~1/8
    labels = np.array([f"c{v}" for v in y], dtype=object)
    labels[[3, 7]] = None
    with pytest.raises(ValueError, match=r"y holds 2 missing label\(s\) \(None\)"):
        SequentialCrossModal(**TINY, n_image_features=d).fit(X, labels)
    with pytest.raises(ValueError, match="y holds 2 missing"):
        SequentialCrossModal(**TINY).partial_fit(X[:, d:-1], labels, modality="text")
    labels[[3, 7]] = 5
    with pytest.raises(TypeError, match="y mixes label types"):
        SequentialCrossModal(**TINY, n_image_features=d).fit(X, labels)


@pytest.mark.parametrize("factor, problem", [(1e39, "beyond float32's range"),
                                             (1e-300, "below float32's smallest normal")])
def test_features_outside_float32_are_rejected_at_every_entry_point(data, factor, problem):
    """S, the plugs and M run in float32: no overflow to inf (every row the same code) and
    no underflow to zero (identical codes) at fit, partial_fit or any transform."""
    X, y, X_te, _, d = data
    bad = X.copy()
    bad[:, :-1] *= factor
    quiet = {"action": "error", "category": RuntimeWarning}  # no cast warning gets through
    with warnings.catch_warnings():
        warnings.filterwarnings(**quiet)
        with pytest.raises(ValueError, match=f"X has .*{problem}"):
            SequentialCrossModal(**TINY, n_image_features=d).fit(bad, y)
        with pytest.raises(ValueError, match=f"X has .*{problem}"):
            SequentialCrossModal(**TINY, n_image_features=d).partial_fit(bad, y)
        with pytest.raises(ValueError, match=f"X_text has .*{problem}"):
            SequentialCrossModal(**TINY).partial_fit(bad[:, d:-1], y, modality="text")
    model = SequentialCrossModal(**TINY, n_image_features=d)
    model.partial_fit(X[:, d:-1], y, modality="text")
    with pytest.raises(ValueError, match=f"X_image has .*{problem}"):
        model.partial_fit(bad[:, :d], y, modality="image")
    model.partial_fit(X[:, :d], y, modality="image")
    bad_te = X_te.copy()
    bad_te[:, :-1] *= factor
    for call, name in [(lambda: model.transform(bad_te), "X"),
                       (lambda: model.transform_fused(bad_te), "X"),
                       (lambda: model.score(bad_te), "X"),
                       (lambda: model.transform_image(bad_te[:, :d]), "X_image"),
                       (lambda: model.transform_text(bad_te[:, d:-1]), "X_text"),
                       (lambda: model.class_probabilities(bad_te[:, :d], "image"), "X_image")]:
        with pytest.raises(ValueError, match=f"{name} has .*{problem}"):
            call()
