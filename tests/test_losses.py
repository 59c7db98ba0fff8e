"""Losses: masked batch formulas equal explicit per-triplet definitions."""

import math

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from temporal_xmodal import TempXNetEmbedder
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.estimators.diachronic import DiachronicRankingLoss
from temporal_xmodal.estimators.sam import (
    SAMLoss,
    SemanticDistance,
    category_distance_matrix,
    margin_schedule,
)
from temporal_xmodal.estimators.tempxnet import (
    RecencyCorrelation,
    TempXNetLoss,
    cross_modality_similarity,
    temporal_soft_constraint,
)
from temporal_xmodal.losses import bidirectional_triplet_loss, negative_mask, shared_label_mask


def _batch(B=12, D=5, C=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    zi = F.normalize(torch.randn(B, D, generator=g), dim=1).requires_grad_()
    zt = F.normalize(torch.randn(B, D, generator=g), dim=1).requires_grad_()
    labels = F.one_hot(torch.arange(B) % C, C).float()
    return zi, zt, labels


def _loop_triplet(zi, zt, labels, margin):
    S = (zi @ zt.T).detach().numpy()
    y = labels.argmax(1).numpy()
    total = 0.0
    for a in range(len(S)):
        for n in range(len(S)):
            if y[a] == y[n]:
                continue
            m = margin if np.isscalar(margin) else margin[a, n]
            total += max(0.0, m - S[a, a] + S[a, n])  # image anchor a, negative text n
            total += max(0.0, m - S[a, a] + S[n, a])  # text anchor a, negative image n
    return total


@pytest.mark.parametrize("margin", [1.0, 0.3])
def test_triplet_loss_equals_loop(margin):
    zi, zt, labels = _batch()
    loss = bidirectional_triplet_loss(zi, zt, margin, negative_mask(labels), "sum")
    assert loss.item() == pytest.approx(_loop_triplet(zi, zt, labels, margin), rel=1e-5)
    per_anchor = bidirectional_triplet_loss(zi, zt, margin, negative_mask(labels))
    assert per_anchor.item() == pytest.approx(loss.item() / 12, rel=1e-6)


def test_negative_masks():
    labels = torch.tensor([[1, 0], [1, 0], [0, 1], [1, 1]], dtype=torch.float)
    diff = negative_mask(labels)
    assert diff.tolist() == [[False, False, True, False], [False, False, True, False],
                             [True, True, False, False], [False, False, False, False]]
    assert negative_mask(labels, "all_non_matching").sum() == 12
    with pytest.raises(ValueError, match="'mode' parameter of negative_mask"):
        negative_mask(labels, "hard")


@pytest.mark.parametrize("fa, expected", [
    (0.0, [0.500, 0.881, 0.982, 0.998, 1.000, 1.000, 1.000]),
    (0.4, [0.018, 0.119, 0.500, 0.881, 0.982, 0.993, 0.998]),
    (0.9, [0.0001, 0.0009, 0.007, 0.047, 0.269, 0.500, 0.731]),
])
def test_alpha_schedule_matches_spec_table(fa, expected):
    got = [margin_schedule(t, 0.1, fa, 100) for t in (0, 20, 40, 60, 80, 90, 100)]
    np.testing.assert_allclose(got, expected, atol=6e-4)


def test_sam_margins():
    zi, zt, labels = _batch(B=9)
    rng = np.random.default_rng(0)
    Xi, Xt = rng.standard_normal((50, 6)), rng.standard_normal((50, 4))
    semantic = SemanticDistance().fit(Xi, Xt)
    image, text = torch.tensor(Xi[:9], dtype=torch.float), torch.tensor(Xt[:9], dtype=torch.float)
    loss = SAMLoss(adaptive_weight=0.3, semantic=semantic, schedule="fixed")
    assert torch.all(loss.margins(labels, image, text) == 1.0)  # alpha = 0: static margin
    loss = SAMLoss(adaptive_weight=0.3, semantic=semantic, schedule="always")
    P_img, P_txt = torch.randn(3, 5), torch.randn(3, 5)
    loss.refresh(10, P_img, P_txt)
    fmc = loss.category_distances
    assert torch.allclose(fmc, fmc.T) and torch.all(fmc.diagonal() == 0)
    assert fmc.min() >= 0 and fmc.max() <= 1
    m = loss.margins(labels, image, text)
    fms = semantic(image, text)
    y = labels.argmax(1)
    expected = 0.3 * fms + 0.7 * fmc[y][:, y]  # alpha = 1 (eq. 3.8)
    assert torch.allclose(m, expected, atol=1e-6)
    assert m.min() >= 0 and m.max() <= 1
    # eq. 3.9 by hand for one pair, per-modality min-max normalisation
    lo_i, hi_i, lo_t, hi_t = semantic.stats_
    d_i = np.linalg.norm(Xi[0] - Xi[1]); d_t = np.linalg.norm(Xt[0] - Xt[1])
    by_hand = (np.clip((d_i - lo_i) / (hi_i - lo_i), 0, 1)
               + np.clip((d_t - lo_t) / (hi_t - lo_t), 0, 1)) / 2
    assert fms[0, 1].item() == pytest.approx(by_hand, rel=1e-5)


def test_sam_margins_carry_no_gradient():
    zi, zt, labels = _batch(B=6)
    loss = SAMLoss(adaptive_weight=0.0, schedule="always")
    labels = labels[:, :3]
    loss.refresh(0, labels.T @ zi, labels.T @ zt)  # prototypes built from tensors with grad
    batch = {"image": torch.randn(6, 4), "text": torch.randn(6, 4)}
    value = loss((zi, zt), labels, batch)
    value.backward()
    assert zi.grad is not None and torch.isfinite(zi.grad).all()
    assert loss.margins(labels, batch["image"], batch["text"]).grad_fn is None


def test_category_distance_uses_half_cosine_distance():
    P = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    D = category_distance_matrix(P, P)
    np.testing.assert_allclose(D.numpy(), [[0, 1, 0.5], [1, 0, 0.5], [0.5, 0.5, 0]], atol=1e-6)


def test_cross_modality_similarity_is_harmonic_mean():
    zi, zt, _ = _batch(B=4)
    S = (zi @ zt.T).detach()
    fs = cross_modality_similarity(zi, zt, eps=0.0, mode="literal").detach()
    a, b = S[1, 2], S[2, 1]
    assert fs[1, 2].item() == pytest.approx((2 * a * b / (a + b)).item(), rel=1e-5)
    clamped = cross_modality_similarity(zi, zt, mode="clamp")
    assert torch.isfinite(clamped).all() and clamped.min() >= 0


def test_temporal_soft_constraint_by_hand():
    f_t = torch.tensor([[1.0, 0.2], [0.2, 1.0]])
    f_s = torch.tensor([[0.9, 0.6], [0.6, 0.8]])
    P = torch.ones(2, 2, dtype=torch.bool)
    # mean_j [f_t (1 - f_s) + (1 - f_t) f_s] summed over i (eqs. 4.6-4.10)
    row0 = (1.0 * 0.1 + 0.0 + 0.2 * 0.4 + 0.8 * 0.6) / 2
    row1 = (0.2 * 0.4 + 0.8 * 0.6 + 1.0 * 0.2 + 0.0) / 2
    assert temporal_soft_constraint(f_t, f_s, P).item() == pytest.approx(row0 + row1)


def test_tempxnet_loss_reduces_to_triplet_with_zero_weight():
    zi, zt, labels = _batch()
    batch = {"time": torch.arange(12.0), "text": torch.randn(12, 3)}
    recency = RecencyCorrelation().fit(np.arange(12.0))
    static = TempXNetLoss(recency, temporal_weight=0.0)((zi, zt), labels, batch)
    triplet = bidirectional_triplet_loss(zi, zt, 1.0, negative_mask(labels))
    assert static.item() == pytest.approx(triplet.item())
    temporal = TempXNetLoss(recency, temporal_weight=1.0)((zi, zt), labels, batch)
    assert temporal.item() > static.item()
    assert math.isfinite(temporal.item())


def _loop_tempxnet_terms(zi, zt, labels, f_t, margin=1.0, eps=1e-6):
    """Eqs. 4.4, 4.6-4.11 by explicit loops: (Σ hinges, L_temp, number of active triplets)."""
    S = (zi @ zt.T).detach().double().numpy()
    Y = labels.numpy() > 0
    B = len(S)
    hinges, active, l_temp = 0.0, 0, 0.0
    for a in range(B):
        positives = [j for j in range(B) if (Y[a] & Y[j]).any()]
        for n in range(B):
            if n in positives:
                continue
            for h in (margin - S[a, a] + S[a, n], margin - S[a, a] + S[n, a]):
                hinges += max(h, 0.0)
                active += h > 0
        terms = []
        for j in positives:
            s1, s2 = min(max(S[a, j], eps), 1.0), min(max(S[j, a], eps), 1.0)  # "clamp" mode
            fs = 2.0 / (1.0 / (s1 + eps) + 1.0 / (s2 + eps))
            ft = float(f_t[a, j])
            terms.append(ft * (1 - fs) + (1 - ft) * fs)
        l_temp += np.mean(terms)
    return hinges, l_temp, active


def _tempxnet_batch(B=64, C=8, seed=0):
    zi, zt, _ = _batch(B=B, D=16, C=C, seed=seed)
    labels = F.one_hot(torch.arange(B) % C, C).float()
    time = torch.linspace(0.0, 10.0, B, dtype=torch.float64)
    recency = RecencyCorrelation(bandwidth=1.0).fit(time.numpy())
    return zi, zt, labels, {"time": time}, recency


def test_tempxnet_literal_normalisation_is_eq_4_18_and_the_previous_loss():
    zi, zt, labels, batch, recency = _tempxnet_batch()
    B, lam = 64, 0.7
    literal = TempXNetLoss(recency, temporal_weight=lam, temporal_normalisation="literal")
    value = literal((zi, zt), labels, batch)
    # the loss before temporal_normalisation existed, expression for expression
    f_t = recency.batch_matrix(batch["time"])
    previous = (bidirectional_triplet_loss(zi, zt, 1.0, negative_mask(labels))
                + lam * temporal_soft_constraint(f_t, cross_modality_similarity(zi, zt),
                                                 shared_label_mask(labels)) / B)
    assert torch.equal(value, previous)
    hinges, l_temp, _ = _loop_tempxnet_terms(zi, zt, labels, f_t)
    assert value.item() == pytest.approx((hinges + lam * l_temp) / B, rel=1e-5)  # eq. 4.18
    summed = TempXNetLoss(recency, temporal_weight=lam, temporal_normalisation="literal",
                          reduction="sum")((zi, zt), labels, batch)
    assert summed.item() == pytest.approx(hinges + lam * l_temp, rel=1e-5)


def test_tempxnet_normalised_term_is_on_the_triplet_scale():
    zi, zt, labels, batch, recency = _tempxnet_batch()
    B = 64
    f_t = recency.batch_matrix(batch["time"])
    hinges, l_temp, active = _loop_tempxnet_terms(zi, zt, labels, f_t)
    n_triplets = 2 * int(negative_mask(labels).sum())
    ratios = {}
    for mode, kappa in (("literal", 1.0), ("active_triplets", active / B),
                        ("triplets", n_triplets / B)):
        triplet, temporal = TempXNetLoss(recency, temporal_normalisation=mode).terms(
            (zi, zt), labels, batch)
        assert triplet.item() == pytest.approx(hinges / B, rel=1e-5)  # the same triplet term
        assert temporal.item() == pytest.approx(kappa * l_temp / B, rel=1e-5)
        ratios[mode] = triplet.item() / temporal.item()
    # averaged triplet term: the temporal term is the mean over anchors of their means
    triplet, temporal = TempXNetLoss(recency, reduction="mean_active").terms((zi, zt), labels, batch)
    assert triplet.item() == pytest.approx(hinges / active, rel=1e-5)
    assert temporal.item() == pytest.approx(l_temp / B, rel=1e-5)
    # eq. 4.18 as printed: the summed triplet term dwarfs the averaged temporal term
    assert ratios["literal"] > 50
    # normalised: one temporal pair term weighs as much as one (active) triplet
    assert 0.1 < ratios["active_triplets"] < 10
    assert 0.1 < ratios["triplets"] < 10


def test_tempxnet_terms_stay_comparable_after_training():
    # a few epochs of a small model: the active-triplet normalisation keeps the
    # temporal term on the triplet term's scale (ratio ~0.6 here) while the literal
    # one stays more than ten times smaller (~24 here; ~500 at initialisation)
    X, y, info = make_temporal_crossmodal(400, n_categories=8, return_info=True, random_state=0)
    model = TempXNetEmbedder(hidden_dim=32, embedding_dim=16, max_epochs=3, random_state=0,
                             validation_fraction=0, n_image_features=info.n_image_features)
    model.fit(X, y)
    d = info.n_image_features
    rows = np.arange(64)
    zi = torch.from_numpy(model.transform_image(X[rows, :d])).float()
    zt = torch.from_numpy(model.transform_text(X[rows, d:-1])).float()
    labels = F.one_hot(torch.from_numpy(y[rows]), 8).float()
    batch = {"time": torch.from_numpy(X[rows, -1])}
    ratio = {}
    for mode in ("literal", "active_triplets"):
        loss = TempXNetLoss(model.correlation_, temporal_normalisation=mode)
        triplet, temporal = loss.terms((zi, zt), labels, batch)
        ratio[mode] = triplet.item() / temporal.item()
    assert ratio["literal"] > 10, ratio
    assert 0.1 < ratio["active_triplets"] < 10, ratio


def test_diachronic_loss_equals_branch_definition():
    zi, zt, labels = _batch(B=10, C=2)
    time = torch.tensor([0.0, 1, 2, 3, 10, 11, 20, 25, 30, 31])
    batch = {"time": time}
    loss = DiachronicRankingLoss(window=4.0, decay=0.1, intra_margin=0.5)
    S = (zi @ zt.T).detach().numpy()
    y = labels.argmax(1).numpy()
    t = time.numpy()
    expected = 0.0
    for a in range(10):
        for j in range(10):
            for gap in (S[a, j] - S[a, a], S[j, a] - S[a, a]):  # I->T, T->I
                if y[a] != y[j]:  # L_inter (eq. 11)
                    expected += max(0.0, 1.0 + gap)
                elif abs(t[a] - t[j]) > 4:  # L_intra outside the window (eq. 10)
                    rho = 1 - np.exp(-0.1 * abs(t[a] - t[j]))
                    expected += rho * max(0.0, 0.5 + gap)
    assert loss((zi, zt), labels, batch).item() == pytest.approx(expected, rel=1e-5)


def test_diachronic_loss_reduces_to_static_within_window():
    zi, zt, labels = _batch(B=8)
    batch = {"time": torch.zeros(8)}
    dcm = DiachronicRankingLoss(reduction="sum")((zi, zt), labels, batch)
    static = bidirectional_triplet_loss(zi, zt, 1.0, negative_mask(labels), "sum")
    assert dcm.item() == pytest.approx(static.item(), rel=1e-6)


def test_diachronic_loss_with_same_time_scores_replaces_the_anchors_comparisons():
    zi, zt, labels = _batch(B=10, C=3)
    batch = {"time": torch.arange(10.0)}
    loss = DiachronicRankingLoss(window=2.0, decay=0.5, intra_margin=0.5,
                                 reduction="sum_per_anchor")
    own = loss((zi, zt), labels, batch).item()
    # every anchor, same-time scores equal to the own-time ones: the same loss
    S = zi @ zt.T
    assert loss((zi, zt, S, S.T), labels, batch).item() == pytest.approx(own, rel=1e-6)
    # otherwise the first K anchors' hinges use them, the others' the own-time scores
    g = torch.Generator().manual_seed(0)
    s_it, s_ti = torch.rand(4, 10, generator=g), torch.rand(4, 10, generator=g)
    y, t = labels.argmax(1).numpy(), np.arange(10.0)
    positive = (zi * zt).sum(1).detach().numpy()
    S = S.detach().numpy()
    expected = 0.0
    for a in range(10):
        for j in range(10):
            if y[a] != y[j]:
                w, m = 1.0, 1.0
            elif abs(t[a] - t[j]) > 2:
                w, m = 1 - np.exp(-0.5 * abs(t[a] - t[j])), 0.5
            else:
                continue
            pair = (s_it[a, j].item(), s_ti[a, j].item()) if a < 4 else (S[a, j], S[j, a])
            for s in pair:
                expected += w * max(0.0, m - positive[a] + s)
    got = loss((zi, zt, s_it, s_ti), labels, batch).item()
    assert got == pytest.approx(expected / 10, rel=1e-5)
    assert got != pytest.approx(own, rel=1e-3)
