"""Tests of the temporal correlation functions f_t (Semedo, thesis, Eqs. 4.12-4.16)."""

import math
import pickle

import numpy as np
import pytest
import torch
from scipy.stats import gaussian_kde
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from temporal_xmodal.estimators.tempxnet import (
    CategoryKDECorrelation,
    RecencyCorrelation,
    TemporalCorrelation,
    WordTopicCorrelation,
)


def raw_kde(t, samples, h):
    """Eq 4.14 evaluated directly: 1/(n h) sum_k K((t - t_k)/h)."""
    u = (np.asarray(t)[:, None] - np.asarray(samples)[None, :]) / h
    return np.exp(-0.5 * u**2).sum(1) / (len(samples) * h * math.sqrt(2 * math.pi))


@pytest.fixture
def two_bursts():
    """Category 0 items all near t=2, category 1 items near t=8."""
    rng = np.random.default_rng(0)
    t0 = 2.0 + 0.1 * rng.standard_normal(60)
    t1 = 8.0 + 0.1 * rng.standard_normal(60)
    time = np.concatenate([t0, t1])
    labels = np.zeros((120, 2), dtype=bool)
    labels[:60, 0] = True
    labels[60:, 1] = True
    return time, labels


# ----------------------------------------------------------------------------- recency
def test_recency_exact_values():
    f = RecencyCorrelation(bandwidth=0.5).fit(np.array([0.0, 1.0]))
    F = f.batch_matrix(torch.tensor([0.0, 0.5, 1.5, 0.0]))
    assert F.shape == (4, 4) and F.dtype == torch.float32  # the default dtype
    assert F[0, 0].item() == pytest.approx(1.0)
    assert F[0, 3].item() == pytest.approx(1.0)  # Δt = 0
    assert F[0, 1].item() == pytest.approx(math.exp(-1.0), rel=1e-6)  # Δt = h
    assert F[0, 2].item() == pytest.approx(math.exp(-3.0), rel=1e-6)  # Δt = 3h


def test_recency_default_bandwidth_one_day_apart():
    F = RecencyCorrelation().fit(np.array([3.0, 4.0])).batch_matrix(torch.tensor([3.0, 4.0]))
    assert F[0, 1].item() == pytest.approx(math.exp(-1 / 0.3), rel=1e-6)  # ≈ 0.036 (thesis, Eq. 4.12)


def test_recency_symmetric_and_bounded():
    t = torch.rand(50, dtype=torch.float64) * 10
    F = RecencyCorrelation(0.3).fit(t.numpy()).batch_matrix(t, dtype=torch.float64)
    assert F.dtype == torch.float64
    assert torch.equal(F, F.T)
    assert float(F.min()) >= 0.0 and float(F.max()) <= 1.0
    assert torch.all(torch.diagonal(F) == 1.0)


def test_epoch_seconds_lose_no_precision():
    # times ~1.7e9 s, one second apart: float32 (spacing 128 s there) would make them equal
    rng = np.random.default_rng(7)
    t = 1.7e9 + rng.uniform(0, 30 * 86400, 300)
    t[1] = t[0] + 1.0
    F = RecencyCorrelation(bandwidth=1.0).fit(t).batch_matrix(torch.from_numpy(t[:2]))
    assert F[0, 1].item() == pytest.approx(math.exp(-1.0), rel=1e-6)
    # the density functions depend on differences only: epoch seconds == days from 0
    labels = np.eye(3)[rng.integers(3, size=300)]
    days = (t - 1.7e9) / 86400
    f_sec = CategoryKDECorrelation(bandwidth=86400.0).fit(t, labels)
    f_day = CategoryKDECorrelation(bandwidth=1.0).fit(days, labels)
    assert f_sec.time_origin_ == pytest.approx(1.7e9 + 86400 * f_day.time_origin_, abs=1e-3)
    lab = torch.from_numpy(labels[:50])
    torch.testing.assert_close(f_sec.batch_matrix(torch.from_numpy(t[:50]), lab),
                               f_day.batch_matrix(torch.from_numpy(days[:50]), lab))
    w_sec = WordTopicCorrelation(bandwidth=86400.0).fit(t, None, labels)
    w_day = WordTopicCorrelation(bandwidth=1.0).fit(days, None, labels)
    torch.testing.assert_close(w_sec.batch_matrix(torch.from_numpy(t[:50]), text=lab),
                               w_day.batch_matrix(torch.from_numpy(days[:50]), text=lab))


# ----------------------------------------------------------------------------- category KDE
def test_kde_same_burst_high_other_burst_small(two_bursts):
    time, labels = two_bursts
    f = CategoryKDECorrelation(bandwidth=1.0).fit(time, labels)
    lab = torch.tensor([[1, 0], [1, 0], [1, 0]], dtype=torch.float32)
    F = f.batch_matrix(torch.tensor([2.0, 2.0, 8.0]), lab)
    assert F[0, 1].item() == pytest.approx(1.0, abs=0.01)  # both at the category-0 peak
    # category-0 item at 2 with one at 8: p(8|0) = exp(-36/2 · ~1) ≈ 1.5e-8 after max-normalisation
    assert F[0, 2].item() < 0.05
    assert F[0, 2].item() < 1e-6


def test_kde_no_shared_category_is_exactly_zero(two_bursts):
    time, labels = two_bursts
    f = CategoryKDECorrelation().fit(time, labels)
    lab = torch.tensor([[True, False], [False, True], [False, False]])
    F = f.batch_matrix(torch.tensor([2.0, 2.0, 2.0]), lab)
    assert F[0, 1].item() == 0.0 and F[1, 0].item() == 0.0
    assert torch.all(F[2] == 0) and torch.all(F[:, 2] == 0)
    assert F[0, 0].item() > 0.99


def test_kde_multilabel_takes_max_over_shared(two_bursts):
    time, labels = two_bursts
    f = CategoryKDECorrelation().fit(time, labels)
    t = torch.tensor([8.0, 8.0, 8.0])
    lab = torch.tensor([[1.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    F = f.batch_matrix(t, lab)
    P = f.density(t)
    # item 0 and 1 share only category 0: small at t=8
    assert F[0, 1].item() == pytest.approx((P[0, 0] * P[1, 0]).item(), rel=1e-5)
    assert F[0, 1].item() < 1e-6
    # items 0 and 2 share both: the max, category 1, gives ≈ 1
    expected = max((P[0, 0] * P[2, 0]).item(), (P[0, 1] * P[2, 1]).item())
    assert F[0, 2].item() == pytest.approx(expected, rel=1e-5)
    assert F[0, 2].item() == pytest.approx(1.0, abs=0.01)
    assert torch.allclose(F, F.T)


def test_kde_grid_matches_direct_kde():
    rng = np.random.default_rng(1)
    time = np.concatenate([rng.normal(3, 1.5, 200), rng.normal(7, 0.7, 100), rng.uniform(0, 10, 100)])
    labels = np.zeros((400, 3), dtype=bool)
    labels[:200, 0] = True
    labels[200:300, 1] = True
    labels[300:, 2] = True
    labels[::7, 1] = True  # multi-label rows
    h = 0.8
    f = CategoryKDECorrelation(bandwidth=h, normalisation="none").fit(time, labels)
    t = rng.uniform(time.min(), time.max(), 500)
    P = f.density(torch.from_numpy(t)).numpy()
    for c in range(3):
        exact = raw_kde(t, time[labels[:, c]], h)
        # scipy's gaussian_kde with kernel std h is the same estimator
        samples = time[labels[:, c]]
        scipy_kde = gaussian_kde(samples, bw_method=h / samples.std(ddof=1))(t)
        np.testing.assert_allclose(exact, scipy_kde, rtol=1e-10)
        # error <= 1e-3 relative to the curve's peak everywhere (the scale of max-normalised f_t) ...
        peak = f.density_[c].max()
        assert np.max(np.abs(P[:, c] - exact)) / peak < 1e-3
        # ... and <= 1e-3 pointwise relative wherever the density is >= 10 % of its peak
        # (in far tails linear interpolation of a Gaussian has a larger *relative* error)
        body = exact >= 0.1 * peak
        assert body.sum() > 100
        assert np.max(np.abs(P[body, c] - exact[body]) / exact[body]) < 1e-3
    # max-normalised grid values are the same curves divided by the grid peak
    g = CategoryKDECorrelation(bandwidth=h).fit(time, labels)
    Pm = g.density(torch.from_numpy(t)).numpy()
    np.testing.assert_allclose(Pm * f.density_.max(1), P, rtol=1e-10)
    assert g.density_.max(1) == pytest.approx([1.0, 1.0, 1.0])


def test_kde_none_normalisation_is_raw_eq_4_14(two_bursts):
    time, labels = two_bursts
    f = CategoryKDECorrelation(bandwidth=1.0, normalisation="none").fit(time, labels)
    t = np.array([1.5, 2.0, 2.7, 8.0])
    lab = torch.ones(4, 2)
    F = f.batch_matrix(torch.from_numpy(t), lab).double().numpy()
    p0 = raw_kde(t, time[:60], 1.0)
    p1 = raw_kde(t, time[60:], 1.0)
    expected = np.maximum(np.outer(p0, p0), np.outer(p1, p1))
    np.testing.assert_allclose(F, expected, rtol=1e-3, atol=1e-6)
    assert F.max() <= 1 / (2 * math.pi) + 1e-6  # raw density peak 0.399² ≈ 0.16


def test_kde_sum_normalisation_and_outside_grid(two_bursts):
    time, labels = two_bursts
    f = CategoryKDECorrelation(normalisation="sum", n_grid=300).fit(time, labels)
    assert f.density_.sum(1) == pytest.approx([1.0, 1.0])
    assert f.grid_[0] == pytest.approx(time.min() - 3.0)
    assert f.grid_[-1] == pytest.approx(time.max() + 3.0)
    # times beyond training range + 3 h have density 0
    P = f.density(torch.tensor([time.min() - 3.5, time.max() + 3.5]))
    assert torch.all(P == 0)


@pytest.mark.parametrize("max_labels", [2, None])  # few labels per item, and many
def test_kde_values_in_unit_interval_and_vectorised_large_batch(max_labels):
    rng = np.random.default_rng(2)
    time = rng.uniform(0, 30, 1000)
    labels = rng.random((1000, 20)) < 0.15
    f = CategoryKDECorrelation().fit(time, labels)
    tb = torch.from_numpy(rng.uniform(0, 30, 300)).float()
    lb = rng.random((300, 20)) < 0.15
    if max_labels is not None:
        lb &= np.cumsum(lb, axis=1) <= max_labels
        lb[:5] = False  # items without any label
    lb = torch.from_numpy(lb)
    F = f.batch_matrix(tb, lb)
    assert F.shape == (300, 300)
    assert float(F.min()) >= 0 and float(F.max()) <= 1
    share = (lb.float() @ lb.float().T) > 0
    assert torch.all(F[~share] == 0)
    # reference computed pairwise
    P = f.density(tb).float() * lb.float()
    ref = (P[:, None, :] * P[None, :, :]).amax(-1)
    torch.testing.assert_close(F, ref)


def test_kde_shape_errors(two_bursts):
    time, labels = two_bursts
    f = CategoryKDECorrelation().fit(time, labels)
    with pytest.raises(ValueError, match="2 category columns"):
        f.batch_matrix(torch.zeros(3), torch.ones(3, 5))
    with pytest.raises(ValueError, match="needs labels"):
        f.batch_matrix(torch.zeros(3))
    with pytest.raises(ValueError, match="needs labels"):
        CategoryKDECorrelation().fit(time)
    with pytest.raises(ValueError, match="rows"):
        CategoryKDECorrelation().fit(time, labels[:10])
    with pytest.raises(ValueError, match="2D array"):
        CategoryKDECorrelation().fit(time, labels[:, 0])
    with pytest.raises(ValueError, match="NaN"):
        CategoryKDECorrelation().fit(np.array([1.0, np.nan]), np.ones((2, 1)))


# ----------------------------------------------------------------------------- word / topic
@pytest.fixture
def word_data():
    """Word 0 used only early (t≈0..2), word 1 used at all times, word 2 only late, word 3 never."""
    rng = np.random.default_rng(3)
    time = rng.uniform(0, 20, 400)
    X = np.zeros((400, 4))
    X[:, 1] = 1.0
    X[time < 2, 0] = 1.0
    X[time > 18, 2] = 1.0
    return time, X


def test_topic_early_word_high_early_low_late(word_data):
    time, X = word_data
    f = WordTopicCorrelation(bandwidth=1.0).fit(time, None, X)
    text = torch.tensor([[1.0, 0, 0, 0]] * 3)
    F = f.batch_matrix(torch.tensor([1.0, 10.0, 19.0]), text=text)
    assert F[0, 0].item() > 0.8  # early word at an early time
    assert F[0, 1].item() < 1e-6  # early word at a mid time
    assert F[0, 2].item() < 1e-6  # early word at a late time
    assert torch.allclose(F[0], F[1]) and torch.allclose(F[0], F[2])  # rows depend on the text only


def test_topic_is_asymmetric(word_data):
    time, X = word_data
    f = WordTopicCorrelation().fit(time, None, X)
    assert f.symmetric is False
    # i: early-only word, at an early time; j: all-times word, at a late time
    text = torch.tensor([[1.0, 0, 0, 0], [0, 1.0, 0, 0]])
    F = f.batch_matrix(torch.tensor([1.0, 19.0]), text=text)
    assert F[0, 1].item() < 1e-6  # p(t_j = 19 | early word)
    assert F[1, 0].item() > 0.5  # p(t_i = 1 | all-times word)
    assert F[0, 1].item() != F[1, 0].item()


def test_topic_product_vs_geometric_mean(word_data):
    time, X = word_data
    prod = WordTopicCorrelation(aggregation="product").fit(time, None, X)
    geo = WordTopicCorrelation(aggregation="geometric_mean").fit(time, None, X)
    rng = np.random.default_rng(4)
    text = torch.from_numpy((rng.random((30, 4)) < 0.6).astype(np.float32))
    t = torch.from_numpy(rng.uniform(0, 20, 30))
    Fp = prod.batch_matrix(t, text=text)
    Fg = geo.batch_matrix(t, text=text)
    assert torch.all(Fp <= Fg + 1e-6)
    for F in (Fp, Fg):
        assert float(F.min()) >= 0 and float(F.max()) <= 1
    # single-word text: both agree with phi_w(t_j)
    one = torch.tensor([[0.0, 1.0, 0, 0]] * 2)
    tt = torch.tensor([5.0, 12.0])
    phi = prod.density(tt)[:, 1].float()
    torch.testing.assert_close(prod.batch_matrix(tt, text=one)[0], phi, rtol=2e-3, atol=1e-4)
    torch.testing.assert_close(geo.batch_matrix(tt, text=one), prod.batch_matrix(tt, text=one))
    # two words: product = phi_a * phi_b, geometric mean = sqrt(phi_a * phi_b)
    two = torch.tensor([[1.0, 1.0, 0, 0]])
    t1 = torch.tensor([1.5])
    phi = prod.density(t1)[0]
    pa, pb = phi[0].item(), phi[1].item()
    assert prod.batch_matrix(t1, text=two).item() == pytest.approx(pa * pb, rel=0.02)
    assert geo.batch_matrix(t1, text=two).item() == pytest.approx(math.sqrt(pa * pb), rel=0.02)


def test_topic_unknown_words_skipped_and_empty_text(word_data):
    time, X = word_data
    f = WordTopicCorrelation().fit(time, None, X)
    t = torch.tensor([1.0, 10.0])
    base = f.batch_matrix(t, text=torch.tensor([[1.0, 0, 0, 0], [1.0, 0, 0, 0]]))
    with_unknown = f.batch_matrix(t, text=torch.tensor([[1.0, 0, 0, 5.0], [1.0, 0, 0, 5.0]]))
    torch.testing.assert_close(base, with_unknown)
    empty = f.batch_matrix(t, text=torch.zeros(2, 4))
    assert torch.all(empty == 1.0)  # empty product
    # negative entries count as absent
    neg = f.batch_matrix(t, text=torch.tensor([[1.0, -3.0, 0, 0], [1.0, -3.0, 0, 0]]))
    torch.testing.assert_close(base, neg)


def test_topic_normalisations(word_data):
    time, X = word_data
    fm = WordTopicCorrelation(normalisation="max").fit(time, None, X)
    fs = WordTopicCorrelation(normalisation="sum").fit(time, None, X)
    fn = WordTopicCorrelation(normalisation="none").fit(time, None, X)
    known = fm.word_weights_ > 0
    assert known.tolist() == [True, True, True, False]
    assert fm.density_[known].max(1) == pytest.approx([1.0] * 3)
    assert fs.density_[known].sum(1) == pytest.approx([1.0] * 3)
    # "none" is the raw (weighted) KDE of the word's usage times
    t = np.array([0.5, 1.0, 1.5])
    phi = fn.density(torch.from_numpy(t)).numpy()[:, 0]
    np.testing.assert_allclose(phi, raw_kde(t, time[X[:, 0] > 0], 1.0), rtol=2e-3)
    F = fn.batch_matrix(torch.from_numpy(t), text=torch.tensor([[1.0, 1, 0, 0]] * 3))
    assert float(F.max()) <= 1


def test_topic_shape_errors(word_data):
    time, X = word_data
    f = WordTopicCorrelation().fit(time, None, X)
    with pytest.raises(ValueError, match="4 feature columns"):
        f.batch_matrix(torch.zeros(2), text=torch.ones(2, 7))
    with pytest.raises(ValueError, match="needs text"):
        f.batch_matrix(torch.zeros(2))
    with pytest.raises(ValueError, match="X_text"):
        WordTopicCorrelation().fit(time, None, None)
    with pytest.raises(ValueError, match="rows"):
        WordTopicCorrelation().fit(time, None, X[:5])


# ----------------------------------------------------------------------------- scikit-learn objects
def test_defaults_and_sklearn_protocol(two_bursts):
    time, labels = two_bursts
    r, c, w = RecencyCorrelation(), CategoryKDECorrelation(), WordTopicCorrelation()
    assert r.get_params() == {"bandwidth": 0.3}  # the thesis' bandwidths
    assert c.get_params() == {"bandwidth": 1.0, "normalisation": "max", "n_grid": 512}
    assert w.get_params() == {"bandwidth": 1.0, "aggregation": "product", "normalisation": "max",
                              "n_grid": 256}
    assert all(isinstance(f, TemporalCorrelation) for f in (r, c, w))
    assert repr(CategoryKDECorrelation(0.5)) == "CategoryKDECorrelation(bandwidth=0.5)"
    fitted = CategoryKDECorrelation(0.5).fit(time, labels)
    fresh = clone(fitted)
    assert fresh.get_params() == fitted.get_params() and not hasattr(fresh, "density_")
    assert fitted.set_params(n_grid=64) is fitted and fitted.n_grid == 64


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: RecencyCorrelation(bandwidth=0), "'bandwidth' parameter"),
        (lambda: RecencyCorrelation(bandwidth=-1.0), "'bandwidth' parameter"),
        (lambda: RecencyCorrelation(bandwidth=float("nan")), "'bandwidth' parameter"),
        (lambda: RecencyCorrelation(bandwidth="1"), "'bandwidth' parameter"),
        (lambda: CategoryKDECorrelation(normalisation="l2"), "'normalisation' parameter"),
        (lambda: CategoryKDECorrelation(n_grid=1), "'n_grid' parameter"),
        (lambda: WordTopicCorrelation(aggregation="mean"), "'aggregation' parameter"),
        (lambda: WordTopicCorrelation(normalisation=None), "'normalisation' parameter"),
    ],
)
def test_bad_params_raise_at_fit(build, match, word_data):
    time, X = word_data
    f = build()  # scikit-learn style: __init__ stores, fit validates
    with pytest.raises(ValueError, match=match):
        f.fit(time, (X > 0).astype(float), X)


def test_not_fitted_raises():
    with pytest.raises(NotFittedError, match="fit"):
        CategoryKDECorrelation().batch_matrix(torch.zeros(2), torch.ones(2, 1))
    with pytest.raises(NotFittedError, match="fit"):
        WordTopicCorrelation().batch_matrix(torch.zeros(2), text=torch.ones(2, 1))
    with pytest.raises(NotFittedError, match="fit"):
        RecencyCorrelation().batch_matrix(torch.zeros(2))
    with pytest.raises(NotFittedError, match="fit"):
        CategoryKDECorrelation().density(torch.zeros(2))


def test_pickle_round_trip(two_bursts, word_data):
    time, labels = two_bursts
    tw, X = word_data
    rng = np.random.default_rng(5)
    cases = [
        (RecencyCorrelation(0.7).fit(time), torch.from_numpy(time[:40]), None, None),
        (CategoryKDECorrelation(0.5).fit(time, labels), torch.from_numpy(time[::3]),
         torch.from_numpy(labels[::3]), None),
        (WordTopicCorrelation(aggregation="geometric_mean").fit(tw, None, X), torch.from_numpy(tw[:50]),
         None, torch.from_numpy(rng.random((50, 4)))),
    ]
    for f, t, lab, text in cases:
        before = f.batch_matrix(t, lab, text)
        g = pickle.loads(pickle.dumps(f))
        assert repr(g) == repr(f)
        assert torch.equal(g.batch_matrix(t, lab, text), before)


def test_output_has_no_grad_and_follows_device():
    t = torch.tensor([0.0, 1.0], requires_grad=True)
    F = RecencyCorrelation().fit(np.array([0.0, 1.0])).batch_matrix(t)
    assert not F.requires_grad and F.device == t.device


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_matches_cpu(two_bursts, word_data):
    time, labels = two_bursts
    tw, X = word_data
    c = CategoryKDECorrelation().fit(time, labels)
    w = WordTopicCorrelation().fit(tw, None, X)
    t = torch.from_numpy(time[::4]).float()
    lab = torch.from_numpy(labels[::4])
    Fc = c.batch_matrix(t.cuda(), lab.cuda())
    assert Fc.is_cuda
    torch.testing.assert_close(Fc.cpu(), c.batch_matrix(t, lab))
    text = torch.from_numpy(X[:30]).float()
    tt = torch.from_numpy(tw[:30]).float()
    Fw = w.batch_matrix(tt.cuda(), text=text.cuda())
    assert Fw.is_cuda
    torch.testing.assert_close(Fw.cpu(), w.batch_matrix(tt, text=text))
    r = RecencyCorrelation().fit(tw)
    torch.testing.assert_close(r.batch_matrix(tt.cuda()).cpu(), r.batch_matrix(tt))
