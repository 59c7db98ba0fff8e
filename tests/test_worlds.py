"""Tests of ``TEMPORAL_WORLDS``, the named worlds of ``make_temporal_crossmodal``.

Each world is checked on its ground truth: what changes with time in it, and
that the picture-caption relation is time-independent where the world says so.
"""

import numpy as np
import pytest

from temporal_xmodal.datasets import TEMPORAL_WORLDS, make_temporal_crossmodal


def _world(name, n_samples=400, seed=0, **extra):
    return make_temporal_crossmodal(n_samples, return_info=True, random_state=seed,
                                    **{**TEMPORAL_WORLDS[name], **extra})


def test_the_worlds_and_their_settings():
    assert list(TEMPORAL_WORLDS) == ["meaning shift", "content drift", "recurring events",
                                     "static", "steady", "wording drift"]
    for name, world in TEMPORAL_WORLDS.items():
        assert isinstance(world, dict), name
        # No world fixes what the caller chooses.
        assert not {"n_samples", "random_state", "return_info"} & set(world), name
        # the writing style dates a caption in the wording-drift world only
        assert world.get("drift") == (4.0 if name == "wording drift" else 0.0), name


def test_the_wording_drifts_continuously_and_meanings_stay():
    """The wording-drift world: the text map turns a full turn (θ from 0 to 2π over the
    span), no era boundaries, no meaning shift; a static linear text->latent read is lost."""
    X, y, info = _world("wording drift", n_samples=600)
    span = X[:, -1].max() - X[:, -1].min()
    np.testing.assert_allclose(info.theta, 4.0 * np.pi / 2 * (info.time - 0.0) / 10.0)
    assert info.theta.max() > 1.9 * np.pi and span > 9
    assert len(np.unique(info.era)) == 1


@pytest.mark.parametrize("name", list(TEMPORAL_WORLDS))
def test_every_world_generates(name):
    X, y, info = _world(name, n_samples=200)
    assert X.shape == (200, info.n_image_features + info.n_text_features + 1)
    assert np.isfinite(X).all() and y.shape == (200,)
    if TEMPORAL_WORLDS[name].get("drift"):
        assert np.ptp(info.theta) > 0  # the wording turns with time
    else:
        assert np.all(info.theta == 0)


@pytest.mark.parametrize("name, fixed", [("meaning shift", False), ("content drift", True),
                                         ("recurring events", True), ("static", True),
                                         ("steady", True)])
def test_picture_caption_relation_is_time_independent_unless_meanings_move(name, fixed):
    # Noiseless features: where the relation is fixed, a linear image->text map
    # fitted on the first third reproduces the captions of the last third.
    X, _, info = _world(name, noise=0.0)
    d = info.n_image_features
    X_img, X_txt, t = X[:, :d], X[:, d:-1], X[:, -1]
    early, late = t < 10 / 3, t > 20 / 3
    W, *_ = np.linalg.lstsq(X_img[early], X_txt[early], rcond=None)
    error = np.abs(X_img[late] @ W - X_txt[late]).max()
    if fixed:
        assert error < 1e-8
    else:
        assert error > 0.5
        assert (info.text_category != info.category).mean() > 0.5


def test_static_world_time_says_nothing_about_items():
    _, _, info = _world("static")
    assert np.all(info.event_offset == 0) and np.all(info.content_angle == 0)
    assert np.all(info.era == 0) and np.all(info.text_category == info.category)
    assert info.content_directions is None
    # The latent vector is the prototype plus time-free scatter.
    residual = info.latent - info.prototypes[info.category]
    np.testing.assert_allclose(residual.std(), 0.3, rtol=0.05)  # latent_noise, nothing else
    early, late = info.time < 5, info.time >= 5
    assert abs(residual[early].std() - residual[late].std()) < 0.02


def test_content_drift_world_turns_each_category_half_a_turn():
    _, _, info = _world("content drift")
    np.testing.assert_allclose(info.content_angle, np.pi * info.time / 10.0)
    # At t1 a category's content is the opposite of its content at t0.
    mu, nu = info.prototypes, info.content_directions
    at_t1 = np.cos(np.pi) * mu + np.sin(np.pi) * nu
    np.testing.assert_allclose(at_t1, -mu, atol=1e-12)
    assert np.all(info.era == 0) and np.all(info.text_category == info.category)


def test_recurring_events_world_structure_lies_in_the_events():
    X, _, info = _world("recurring events", n_samples=800)
    assert set(info.profiles) == {"recurrent"}
    assert (info.event >= 0).all()  # every item belongs to a burst
    assert len(info.event_center) == 8 * 5
    assert np.all(info.text_category == info.category) and info.content_directions is None
    # Strong offsets (std 1 per latent dimension, as large as the prototypes):
    # same-category pictures are much closer within a burst than across bursts.
    np.testing.assert_allclose(info.event_offset.std(), 1.0, rtol=0.1)
    F = X[:, :info.n_image_features]
    F = F / np.linalg.norm(F, axis=1, keepdims=True)
    within, across = [], []
    for c in range(8):
        idx = np.flatnonzero(info.category == c)
        sim = F[idx] @ F[idx].T
        same = info.event[idx, None] == info.event[None, idx]
        iu = np.triu_indices(len(idx), 1)
        within.append(sim[iu][same[iu]])
        across.append(sim[iu][~same[iu]])
    assert np.concatenate(within).mean() - np.concatenate(across).mean() > 0.2


def test_steady_world_only_the_date_separates_items_of_a_category():
    X, _, info = _world("steady", n_samples=1600)
    assert set(info.profiles) == {"steady"}
    assert np.all(info.event_offset == 0) and np.all(info.era == 0)
    assert np.all(info.text_category == info.category) and info.content_directions is None
    for c in range(8):  # every category covers the whole range, evenly
        t = np.sort(info.time[info.category == c])
        assert t[0] < 1.0 and t[-1] > 9.0 and np.diff(t).max() < 1.5
    # Nothing in the features dates an item: the early and the late items of a category lie
    # as close to each other as to items of their own period.
    F = X[:, :info.n_image_features]
    F = F / np.linalg.norm(F, axis=1, keepdims=True)
    idx = np.flatnonzero(info.category == 0)
    sim, dt = F[idx] @ F[idx].T, np.abs(info.time[idx, None] - info.time[None, idx])
    off = ~np.eye(len(idx), dtype=bool)
    assert abs(sim[off & (dt <= 0.5)].mean() - sim[off & (dt > 5)].mean()) < 0.02
