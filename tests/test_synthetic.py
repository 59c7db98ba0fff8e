"""Tests of the synthetic generator ``make_temporal_crossmodal``.

The tests check the documented ground truth with figures (time spreads,
regression R^2 across time, cosine similarities within and across bursts,
label-noise rates), not only shapes.
"""

import doctest

import numpy as np
import pytest
from sklearn.metrics import r2_score
from sklearn.utils._param_validation import InvalidParameterError

import temporal_xmodal.datasets._synthetic as synthetic_module
from temporal_xmodal.datasets import make_temporal_crossmodal


def _split(X, info):
    d = info.n_image_features
    return X[:, :d], X[:, d:-1], X[:, -1]


# --------------------------------------------------------------------------
# Layout, shapes, determinism
# --------------------------------------------------------------------------


def test_shapes_dtypes_and_time_column():
    X, y, info = make_temporal_crossmodal(
        n_samples=500,
        n_categories=5,
        n_image_features=20,
        n_text_features=12,
        time_range=(1990.0, 2000.0),
        return_info=True,
        random_state=0,
    )
    assert X.shape == (500, 20 + 12 + 1)
    assert X.dtype == np.float64 and np.isfinite(X).all()
    assert y.shape == (500,) and np.issubdtype(y.dtype, np.integer)
    assert set(np.unique(y)) == set(range(5))
    assert info.n_image_features == 20 and info.n_text_features == 12
    np.testing.assert_array_equal(X[:, -1], info.time)
    assert info.time.min() >= 1990.0 and info.time.max() <= 2000.0
    # Continuous timestamps, not a handful of integer instants.
    assert np.unique(info.time).size == 500
    assert info.latent.shape == (500, 16)
    assert info.category.shape == info.event.shape == (500,)
    assert info.profiles == ["spike", "recurrent", "steady", "spike", "recurrent"]
    # Balanced categories: counts differ by at most one.
    counts = np.bincount(info.category, minlength=5)
    assert counts.max() - counts.min() <= 1


def test_two_element_return_and_feature_scales():
    out = make_temporal_crossmodal(n_samples=400, random_state=1)
    assert len(out) == 2
    X, y = out
    X_img, X_txt = X[:, :64], X[:, 64:-1]
    # Both modalities: unit-RMS signal + noise 0.5 -> RMS sqrt(1.25) ~ 1.118.
    for block in (X_img, X_txt):
        rms = np.sqrt(np.mean(block**2))
        assert abs(rms - np.sqrt(1.25)) < 0.05


def test_multilabel_indicator():
    X, Y, info = make_temporal_crossmodal(
        n_samples=2000,
        n_categories=6,
        multilabel=True,
        label_noise=0.0,
        second_label_rate=0.3,
        return_info=True,
        random_state=0,
    )
    assert Y.shape == (2000, 6)
    assert set(np.unique(Y)) == {0, 1}
    assert (Y.sum(axis=1) >= 1).all() and (Y.sum(axis=1) <= 2).all()
    # Without label noise the primary category is always on.
    assert (Y[np.arange(2000), info.category] == 1).all()
    # About 30% of items carry a second label (binomial std ~1%).
    assert abs((Y.sum(axis=1) == 2).mean() - 0.3) < 0.04
    two = info.secondary >= 0
    assert (Y[np.flatnonzero(two), info.secondary[two]] == 1).all()


def test_multilabel_with_label_noise_keeps_a_label():
    for n_categories in (2, 5):
        _, Y, info = make_temporal_crossmodal(
            n_samples=600,
            n_categories=n_categories,
            multilabel=True,
            label_noise=0.5,
            second_label_rate=0.5,
            return_info=True,
            random_state=3,
        )
        assert (Y.sum(axis=1) >= 1).all()
        primary_off = Y[np.arange(600), info.category] == 0
        np.testing.assert_array_equal(primary_off, info.label_noise_mask)
        assert primary_off.sum() == 300


def test_same_seed_same_output_different_seed_different():
    kwargs = dict(n_samples=300, multilabel=True, return_info=True)
    X1, y1, i1 = make_temporal_crossmodal(random_state=7, **kwargs)
    X2, y2, i2 = make_temporal_crossmodal(random_state=7, **kwargs)
    X3, y3, _ = make_temporal_crossmodal(random_state=8, **kwargs)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(i1.event, i2.event)
    np.testing.assert_array_equal(i1.latent, i2.latent)
    assert not np.allclose(X1, X3)
    # A RandomState instance is accepted too.
    X4, _ = make_temporal_crossmodal(
        n_samples=300, random_state=np.random.RandomState(7)
    )
    X5, _ = make_temporal_crossmodal(n_samples=300, random_state=7)
    np.testing.assert_array_equal(X4, X5)


# --------------------------------------------------------------------------
# Temporal profiles
# --------------------------------------------------------------------------


def test_profiles_time_spread_and_modes():
    X, y, info = make_temporal_crossmodal(
        n_samples=2400, n_categories=6, return_info=True, random_state=0
    )
    profiles = np.array(info.profiles)
    std = np.array([info.time[info.category == c].std() for c in range(6)])
    # Spike std = burst_width * span = 0.2, steady std = 10 / sqrt(12) = 2.89:
    # assert at least a factor 5 between every spike and every steady category.
    assert std[profiles == "spike"].max() * 5 < std[profiles == "steady"].min()
    assert np.allclose(std[profiles == "spike"], info.burst_std, rtol=0.25)

    # Recurrent: n_recurrences = 5 separated modes -> exactly 4 gaps wider than
    # 5% of the range between sorted timestamps; steady and spike: none.
    for c in range(6):
        t = np.sort(info.time[info.category == c])
        n_big_gaps = int((np.diff(t) > 0.5).sum())
        if profiles[c] == "recurrent":
            assert n_big_gaps == 4
            assert np.unique(info.event[info.category == c]).size == 5
        else:
            assert n_big_gaps == 0
        if profiles[c] == "steady":
            assert (info.event[info.category == c] == -1).all()
        if profiles[c] == "spike":
            assert np.unique(info.event[info.category == c]).size == 1

    # Every burst item lies within 5 burst std of its burst centre.
    in_burst = info.event >= 0
    dev = np.abs(info.time[in_burst] - info.event_center[info.event[in_burst]])
    assert dev.max() < 5 * info.burst_std


def test_profile_names_list_and_single_name():
    _, _, info = make_temporal_crossmodal(
        n_samples=100,
        n_categories=3,
        profiles=["steady", "steady", "recurrent"],
        return_info=True,
        random_state=0,
    )
    assert info.profiles == ["steady", "steady", "recurrent"]
    assert np.all(info.event_category == 2)
    _, _, info = make_temporal_crossmodal(
        n_samples=100, n_categories=3, profiles="spike", return_info=True,
        random_state=0,
    )
    assert info.profiles == ["spike"] * 3
    assert info.event_category.tolist() == [0, 1, 2]


# --------------------------------------------------------------------------
# Wording drift
# --------------------------------------------------------------------------


def _early_late_r2(drift, profiles, seed, n_samples=3000):
    """R^2 of an image->text least-squares map fitted on the first fifth.

    ``meaning_shift=0``: these tests isolate the wording rotation; the era
    meaning shifts (tested below) would break the map on their own.
    """
    X, _, info = make_temporal_crossmodal(
        n_samples=n_samples, drift=drift, profiles=profiles, meaning_shift=0.0,
        return_info=True, random_state=seed,
    )
    X_img, X_txt, t = _split(X, info)
    early = np.flatnonzero(t < 2.0)
    late = np.flatnonzero(t >= 8.0)
    train, held_out = early[::2], early[1::2]
    A = np.column_stack([X_img, np.ones(len(X_img))])
    W, *_ = np.linalg.lstsq(A[train], X_txt[train], rcond=None)
    return (
        r2_score(X_txt[held_out], A[held_out] @ W),
        r2_score(X_txt[late], A[late] @ W),
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_drift_breaks_a_static_image_to_text_map(seed):
    # Steady categories so that both fifths have the same latent distribution
    # and only the wording differs.  Over 20 seeds: early >= 0.53, late <= -0.43.
    r_early, r_late = _early_late_r2(1.0, "steady", seed)
    assert r_early > 0.5
    assert r_late < 0.1
    assert r_early - r_late > 0.5
    # Static data: the map transfers (|difference| <= 0.025 over 20 seeds).
    r_early0, r_late0 = _early_late_r2(0.0, "steady", seed)
    assert r_early0 > 0.5
    assert abs(r_early0 - r_late0) < 0.05


def test_drift_with_mixed_profiles():
    # With mixed profiles the two fifths hold different categories, so even
    # static data lose some R^2 (covariate shift); drift still costs > 0.5 more.
    _, r_late_drift = _early_late_r2(1.0, "mixed", 0)
    _, r_late_static = _early_late_r2(0.0, "mixed", 0)
    assert r_late_static - r_late_drift > 0.5


def test_drift_angle_and_image_stability():
    _, _, info = make_temporal_crossmodal(
        n_samples=500, drift=1.0, return_info=True, random_state=0
    )
    expected = (np.pi / 2) * (info.time - 0.0) / 10.0
    np.testing.assert_allclose(info.theta, expected)
    _, _, info0 = make_temporal_crossmodal(
        n_samples=500, drift=0.0, return_info=True, random_state=0
    )
    assert np.all(info0.theta == 0)


def test_topic_drift_moves_text_but_not_image():
    def shift(topic_drift):
        X, _, info = make_temporal_crossmodal(
            n_samples=3000, n_categories=3, profiles="steady", drift=0.0,
            meaning_shift=0.0, topic_drift=topic_drift, return_info=True, random_state=0,
        )
        X_img, X_txt, t = _split(X, info)
        c0 = info.category == 0
        early, late = c0 & (t < 3), c0 & (t > 7)
        return (
            np.linalg.norm(X_img[early].mean(0) - X_img[late].mean(0)),
            np.linalg.norm(X_txt[early].mean(0) - X_txt[late].mean(0)),
        )

    img0, txt0 = shift(0.0)
    img1, txt1 = shift(1.0)
    assert txt1 > 3 * txt0
    assert abs(img1 - img0) < 0.05


# --------------------------------------------------------------------------
# Eras: caption wording moves between categories
# --------------------------------------------------------------------------


@pytest.mark.parametrize("meaning_shift, n_moving", [(1.0, 8), (0.5, 4), (0.1, 2), (0.0, 0)])
def test_eras_and_wordings_ground_truth(meaning_shift, n_moving):
    _, _, info = make_temporal_crossmodal(
        n_samples=900, n_eras=4, meaning_shift=meaning_shift, time_range=(1900.0, 1940.0),
        return_info=True, random_state=0,
    )
    np.testing.assert_allclose(info.era_edges, [1900, 1910, 1920, 1930, 1940])
    np.testing.assert_array_equal(info.era, np.searchsorted(info.era_edges[1:-1], info.time,
                                                            side="right"))
    assert info.wording.shape == info.meaning_moved.shape == (4, 8)
    assert info.wording[0].tolist() == list(range(8)) and not info.meaning_moved[0].any()
    for e in range(1, 4):
        assert sorted(info.wording[e]) == list(range(8))  # a permutation of the wordings
        moved = info.wording[e] != info.wording[e - 1]
        np.testing.assert_array_equal(moved, info.meaning_moved[e])
        assert moved.sum() == n_moving  # one cycle: every member of it moves
    np.testing.assert_array_equal(info.text_category, info.wording[info.era, info.category])


def test_a_moved_wording_is_the_other_category_s_old_caption():
    # Noiseless, no events, no rotation: a caption is exactly its wording's
    # first-era caption, while pictures stay with their own category.
    X, _, info = make_temporal_crossmodal(
        n_samples=600, n_categories=4, profiles="steady", noise=0.0, latent_noise=0.0,
        event_strength=0.0, drift=0.0, return_info=True, random_state=0,
    )
    X_img, X_txt, _ = _split(X, info)
    first = info.era == 0
    moved = info.text_category != info.category
    assert moved.mean() > 0.5  # eras 1 and 2 of 3, every wording moved
    for i in np.flatnonzero(moved)[:50]:
        ref = np.flatnonzero(first & (info.category == info.text_category[i]))[0]
        np.testing.assert_allclose(X_txt[i], X_txt[ref], atol=1e-10)
        same_cat = np.flatnonzero(first & (info.category == info.category[i]))[0]
        np.testing.assert_allclose(X_img[i], X_img[same_cat], atol=1e-10)


def _probe_gain(seed, **kwargs):
    """Held-out accuracy of per-era text->category probes minus one static probe.

    Returns the gain over all items and over the routine (steady) captions.
    """
    from sklearn.linear_model import LogisticRegression

    n = 2000
    X, _, info = make_temporal_crossmodal(
        n_samples=n, label_noise=0.0, return_info=True, random_state=seed, **kwargs
    )
    X_txt, c = _split(X, info)[1], info.category
    train, test = np.arange(n) % 2 == 0, np.arange(n) % 2 == 1
    static = LogisticRegression(max_iter=1000).fit(X_txt[train], c[train]).predict(X_txt) == c
    per_era = np.zeros(n, dtype=bool)
    for e in range(info.era.max() + 1):
        era = info.era == e
        fit = LogisticRegression(max_iter=1000).fit(X_txt[train & era], c[train & era])
        per_era[era] = fit.predict(X_txt[era]) == c[era]
    steady = np.array(info.profiles)[c] == "steady"
    return (per_era[test].mean() - static[test].mean(),
            per_era[test & steady].mean() - static[test & steady].mean())


def test_per_era_probe_beats_a_static_one_only_when_meanings_move():
    seed = 0  # one seed keeps the test fast; the ranges below are over seeds 0-5
    # Default world: per-era probes are right ~100% of the time; a static
    # probe loses 0.085-0.126 of accuracy over 6 seeds (0.14-0.22 on routine
    # captions, which have no event words to give the event away).
    gain, gain_routine = _probe_gain(seed)
    assert gain > 0.05 and gain_routine > 0.1, (gain, gain_routine)
    # Static world: time buys nothing (|gain| <= 0.004 over 6 seeds).
    gain0, gain0_routine = _probe_gain(seed, drift=0.0, meaning_shift=0.0)
    assert abs(gain0) < 0.02 and abs(gain0_routine) < 0.02, (gain0, gain0_routine)


# --------------------------------------------------------------------------
# Events: same burst -> more similar
# --------------------------------------------------------------------------


def _close_far_cosine(event_strength, seed=0):
    X, _, info = make_temporal_crossmodal(
        n_samples=2000, event_strength=event_strength, return_info=True,
        random_state=seed,
    )
    X_img = _split(X, info)[0]
    Xn = X_img / np.linalg.norm(X_img, axis=1, keepdims=True)
    close, far = [], []
    for c, profile in enumerate(info.profiles):
        if profile != "recurrent":
            continue
        idx = np.flatnonzero(info.category == c)
        sim = Xn[idx] @ Xn[idx].T
        dt = np.abs(info.time[idx, None] - info.time[None, idx])
        iu = np.triu_indices(len(idx), 1)
        close.append(sim[iu][dt[iu] < 0.5])
        far.append(sim[iu][dt[iu] > 1.0])
    return np.concatenate(close).mean(), np.concatenate(far).mean()


@pytest.mark.parametrize("seed", [0, 1])
def test_events_make_close_pairs_more_similar(seed):
    # Recurrent categories: pairs within one burst (|dt| < 0.5) vs pairs from
    # different bursts (|dt| > 1).  Gap 0.10-0.19 over 20 seeds with strength 1.
    close, far = _close_far_cosine(1.0, seed)
    assert close - far > 0.08
    # No event offsets: time distance says nothing (gap < 0.005 over 20 seeds).
    close0, far0 = _close_far_cosine(0.0, seed)
    assert abs(close0 - far0) < 0.02


def test_event_offsets_are_shared_within_a_burst():
    _, _, info = make_temporal_crossmodal(
        n_samples=1000, latent_noise=0.0, return_info=True, random_state=0
    )
    # With no latent scatter, z - mu_c is exactly the burst offset.
    residual = info.latent - info.prototypes[info.category]
    in_burst = info.event >= 0
    np.testing.assert_allclose(
        residual[in_burst], info.event_offset[info.event[in_burst]], atol=1e-12
    )
    np.testing.assert_allclose(residual[~in_burst], 0.0, atol=1e-12)


# --------------------------------------------------------------------------
# Content drift: each category's content turns, in both modalities
# --------------------------------------------------------------------------


def test_content_drift_zero_reproduces_the_output_from_before_it_existed():
    # Recorded with the generator before content_drift was added.
    X, y = make_temporal_crossmodal(n_samples=60, n_categories=4, random_state=0)
    np.testing.assert_allclose(X[:2, :3], [[-0.478303, -1.328346, -0.206167],
                                           [-0.789481, -0.297744, -0.845492]], atol=1e-6)
    np.testing.assert_allclose(X[:2, 64:67], [[-0.285133, 0.182588, -1.152752],
                                              [-0.383793, 0.831522, 1.261276]], atol=1e-6)
    assert y[:8].tolist() == [1, 0, 1, 3, 0, 0, 1, 0]
    assert X.sum() == pytest.approx(369.734118, abs=1e-5)
    X, Y = make_temporal_crossmodal(n_samples=60, n_categories=4, multilabel=True,
                                    random_state=1)
    np.testing.assert_allclose(X[:2, :3], [[-0.958487, 0.683441, 0.351886],
                                           [1.534129, 0.334781, 0.603557]], atol=1e-6)
    assert X.sum() == pytest.approx(485.330748, abs=1e-5) and Y.sum() == 81
    # The explicit default is the same call.
    X0, y0, info = make_temporal_crossmodal(n_samples=60, n_categories=4, content_drift=0.0,
                                            return_info=True, random_state=0)
    np.testing.assert_array_equal(X0, make_temporal_crossmodal(60, n_categories=4,
                                                               random_state=0)[0])
    assert info.content_directions is None and np.all(info.content_angle == 0)


def test_content_drift_draws_last_and_keeps_every_other_draw():
    kwargs = dict(n_samples=300, multilabel=True, return_info=True, random_state=3)
    X0, y0, info0 = make_temporal_crossmodal(**kwargs)
    X1, y1, info1 = make_temporal_crossmodal(content_drift=0.8, **kwargs)
    np.testing.assert_array_equal(y0, y1)
    for field in ("time", "category", "secondary", "event", "event_offset", "prototypes"):
        np.testing.assert_array_equal(info0[field], info1[field])
    assert not np.allclose(X0[:, :-1], X1[:, :-1])


def test_content_drift_turns_each_prototype_by_the_documented_angle():
    gamma = 0.6
    X, _, info = make_temporal_crossmodal(
        n_samples=300, n_categories=4, profiles="steady", latent_noise=0.0, event_strength=0.0,
        content_drift=gamma, time_range=(1900.0, 1920.0), return_info=True, random_state=0)
    np.testing.assert_allclose(info.content_angle,
                               gamma * (np.pi / 2) * (info.time - 1900.0) / 20.0)
    mu, nu = info.prototypes, info.content_directions
    np.testing.assert_allclose(np.sum(mu * nu, axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(nu, axis=1), np.linalg.norm(mu, axis=1))
    # Noiseless latent = mu_c(t): same norm as mu_c, cosine with it = cos(phi(t)).
    z, mu_i = info.latent, mu[info.category]
    np.testing.assert_allclose(np.linalg.norm(z, axis=1), np.linalg.norm(mu_i, axis=1))
    cosine = np.sum(z * mu_i, axis=1) / np.linalg.norm(z, axis=1) / np.linalg.norm(mu_i, axis=1)
    np.testing.assert_allclose(cosine, np.cos(info.content_angle), atol=1e-12)


def test_content_drift_moves_a_category_in_both_modalities():
    def early_late_gap(content_drift):
        X, _, info = make_temporal_crossmodal(
            n_samples=1200, n_categories=3, profiles="steady", drift=0.0, meaning_shift=0.0,
            n_eras=1, content_drift=content_drift, return_info=True, random_state=0)
        X_img, X_txt, t = _split(X, info)
        c0 = info.category == 0
        early, late = c0 & (t < 2), c0 & (t > 8)
        return [np.linalg.norm(block[early].mean(0) - block[late].mean(0))
                / np.linalg.norm(block[c0].mean(0)) for block in (X_img, X_txt)]

    static, drifting = early_late_gap(0.0), early_late_gap(1.0)
    # Relative gap, seeds 0-5: static 0.07-0.15 (sampling noise), a quarter turn 1.04-1.50.
    assert max(static) < 0.25
    assert min(drifting) > 4 * max(static)


def test_content_drift_keeps_the_picture_caption_relation():
    # Noiseless, static wording: captions are a fixed linear function of the
    # pictures at every date, however far the content has turned.
    X, _, info = make_temporal_crossmodal(
        n_samples=400, drift=0.0, meaning_shift=0.0, noise=0.0, content_drift=2.0,
        return_info=True, random_state=0)
    X_img, X_txt, t = _split(X, info)
    early, late = t < 3, t > 7
    W, *_ = np.linalg.lstsq(X_img[early], X_txt[early], rcond=None)
    np.testing.assert_allclose(X_img[late] @ W, X_txt[late], atol=1e-8)


def test_content_drift_needs_two_latent_dimensions():
    with pytest.raises(ValueError, match="needs n_latent >= 2"):
        make_temporal_crossmodal(n_samples=50, n_latent=1, content_drift=0.5)
    make_temporal_crossmodal(n_samples=50, n_latent=1)  # fine without content drift
    with pytest.raises(InvalidParameterError, match="'content_drift' parameter"):
        make_temporal_crossmodal(n_samples=50, content_drift=-0.5)


# --------------------------------------------------------------------------
# Label noise
# --------------------------------------------------------------------------


@pytest.mark.parametrize("label_noise", [0.0, 0.05, 0.3])
def test_label_noise_fraction(label_noise):
    n = 2000
    _, y, info = make_temporal_crossmodal(
        n_samples=n, label_noise=label_noise, return_info=True, random_state=0
    )
    wrong = y != info.category
    # Exactly round(label_noise * n) items are corrupted, always to another class.
    assert wrong.sum() == round(label_noise * n)
    np.testing.assert_array_equal(wrong, info.label_noise_mask)
    if label_noise:
        # Features still come from the true category: the latent vector of a
        # corrupted item is nearer its true prototype than its label's one.
        z = info.latent[wrong]
        d_true = np.linalg.norm(z - info.prototypes[info.category[wrong]], axis=1)
        d_label = np.linalg.norm(z - info.prototypes[y[wrong]], axis=1)
        assert (d_true < d_label).mean() > 0.95


def test_label_noise_spreads_over_other_categories():
    _, y, info = make_temporal_crossmodal(
        n_samples=4000, n_categories=4, label_noise=0.5, return_info=True,
        random_state=0,
    )
    shift = (y - info.category) % 4
    wrong_shift = shift[info.label_noise_mask]
    # Uniform over the 3 other categories: each shift ~1/3 (std ~0.013).
    freq = np.bincount(wrong_shift, minlength=4)[1:] / wrong_shift.size
    assert np.all(np.abs(freq - 1 / 3) < 0.05)


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(n_samples=5, n_categories=8), ValueError,
         "n_samples must be >= n_categories"),
        (dict(n_categories=1), ValueError, "'n_categories' parameter"),
        (dict(n_samples=10.5), TypeError, "'n_samples' parameter"),
        (dict(n_categories=True), TypeError, "'n_categories' parameter"),
        (dict(n_image_features=0), ValueError, "'n_image_features' parameter"),
        (dict(n_text_features=-3), ValueError, "'n_text_features' parameter"),
        (dict(n_latent=0), ValueError, "'n_latent' parameter"),
        (dict(n_recurrences=1), ValueError, "'n_recurrences' parameter"),
        (dict(time_range=(5.0, 5.0)), ValueError, "time_range must be increasing"),
        (dict(time_range=(10.0, 0.0)), ValueError, "time_range must be increasing"),
        (dict(time_range=(0.0, 1.0, 2.0)), TypeError, "time_range must be a pair"),
        (dict(time_range=5.0), TypeError, "'time_range' parameter"),
        (dict(time_range=(0.0, np.inf)), ValueError,
         r"'time_range\[1\]' parameter"),
        (dict(time_range=("a", 1.0)), TypeError, r"'time_range\[0\]' parameter"),
        (dict(profiles="bursty"), ValueError, "'profiles' parameter"),
        (dict(profiles=["spike", "weird"], n_categories=2), ValueError,
         "Unknown profile"),
        (dict(profiles=["spike", "steady"]), ValueError, "one entry per category"),
        (dict(profiles=3), TypeError, "'profiles' parameter"),
        (dict(noise=-0.1), ValueError, r"'noise' parameter .* range \[0.0, inf\)"),
        (dict(noise="high"), TypeError, "'noise' parameter"),
        (dict(drift=-1.0), ValueError, "'drift' parameter"),
        (dict(drift=np.nan), ValueError, "'drift' parameter"),
        (dict(event_strength=-0.5), ValueError, "'event_strength' parameter"),
        (dict(latent_noise=-1), ValueError, "'latent_noise' parameter"),
        (dict(topic_drift=-1), ValueError, "'topic_drift' parameter"),
        (dict(label_noise=1.0), ValueError, r"'label_noise' parameter .* range \[0.0, 1.0\)"),
        (dict(label_noise=-0.01), ValueError, "'label_noise' parameter"),
        (dict(burst_width=0.0), ValueError, r"'burst_width' parameter .* range \(0.0, 0.5\]"),
        (dict(burst_width=0.7), ValueError, "'burst_width' parameter"),
        (dict(second_label_rate=1.5), ValueError, "'second_label_rate' parameter"),
        (dict(n_eras=0), ValueError, "'n_eras' parameter"),
        (dict(n_eras=2.5), TypeError, "'n_eras' parameter"),
        (dict(meaning_shift=1.5), ValueError, r"'meaning_shift' parameter .* range \[0.0, 1.0\]"),
        (dict(meaning_shift=-0.1), ValueError, "'meaning_shift' parameter"),
        (dict(content_drift=-0.1), ValueError, r"'content_drift' parameter .* range \[0.0, inf\)"),
        (dict(content_drift="fast"), TypeError, "'content_drift' parameter"),
        (dict(multilabel="yes"), TypeError, "'multilabel' parameter"),
        (dict(return_info=1), TypeError, "'return_info' parameter"),
        (dict(random_state="seed"), ValueError, "'random_state' parameter"),
    ],
)
def test_bad_parameters_raise(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        make_temporal_crossmodal(**kwargs)


def test_docstring_example_runs():
    result = doctest.testmod(synthetic_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
