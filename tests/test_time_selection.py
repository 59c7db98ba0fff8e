"""use_time: time kept only where it beats the constant-time control on validation rows."""

import warnings

import numpy as np
import pytest
from _tiny import tiny

from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    TempXNetEmbedder,
)
from temporal_xmodal.comparison import with_constant_time
from temporal_xmodal.datasets import TEMPORAL_WORLDS, make_temporal_crossmodal
from temporal_xmodal.estimators._time_selection import TIME_MARGIN
from temporal_xmodal.time import time_use

N_IMG = 64


@pytest.fixture(scope="module")
def demo():
    """The demo world (meanings pass between categories at era boundaries, stable style)."""
    X, y = make_temporal_crossmodal(900, drift=0.0, random_state=0)
    return X, y


def _constant(X):
    return with_constant_time((X[:, :N_IMG], X[:, N_IMG:-1], X[:, -1]))


@pytest.mark.parametrize("cls", [DiachronicEmbedder, TempXNetEmbedder])
def test_auto_keeps_exactly_one_of_its_two_fits(demo, cls):
    X, y = demo
    auto = tiny(cls, n_image_features=N_IMG, max_epochs=3, validation_fraction=0.2,
                use_time="auto").fit(X, y)
    assert set(auto.time_scores_) == {"time", "control"}
    assert auto.time_gain_ == pytest.approx(auto.time_scores_["time"]
                                            - auto.time_scores_["control"])
    assert auto.time_kept_ == (auto.time_gain_ >= TIME_MARGIN)
    same = tiny(cls, n_image_features=N_IMG, max_epochs=3, validation_fraction=0.2,
                use_time=auto.time_kept_).fit(X, y)
    np.testing.assert_array_equal(auto.transform(X), same.transform(X))
    assert same.time_scores_ is None and np.isnan(same.time_gain_)


@pytest.mark.parametrize("cls", [DiachronicEmbedder, TempXNetEmbedder])
def test_the_control_is_the_estimator_on_a_constant_time_column(demo, cls):
    """use_time=False is the control a comparison fits on a constant time column: the
    same model, projecting every item at one instant whatever time it is asked for."""
    X, y = demo
    control = tiny(cls, n_image_features=N_IMG, use_time=False).fit(X, y)
    with warnings.catch_warnings():  # TempXNet: "every training item has the same time"
        warnings.simplefilter("ignore", UserWarning)
        constant = tiny(cls, n_image_features=N_IMG).fit(_constant(X), y)
    assert not control.time_kept_ and constant.time_kept_
    np.testing.assert_allclose(control.transform(X), constant.transform(_constant(X)),
                               atol=1e-6)
    text = X[:20, N_IMG:-1]
    np.testing.assert_array_equal(control.transform_text(text, time=1.0),
                                  control.transform_text(text, time=9.0))
    # a fitted model that kept its control uses no time: it needs none to project
    assert time_use(control) == "none" and time_use(constant) == time_use(cls)
    np.testing.assert_array_equal(control.transform_text(text),
                                  control.transform_text(text, time=1.0))


def test_auto_keeps_time_where_it_pays_and_drops_it_where_it_costs():
    """Figures.  Steady categories whose caption meanings move at era boundaries: one CCA
    per era (Binned, 3 bins = the eras) recovers what a single CCA cannot, and is kept
    (gain about 0.27).  A static world: per-bin CCAs only see a third of the rows each,
    so the control is kept (gain about -0.3)."""
    def binned():
        return BinnedProcrustesEmbedder(CCACrossModal(embedding_dim=8), bins=3,
                                        min_bin_size=50, random_state=0, n_image_features=N_IMG)

    X, y = make_temporal_crossmodal(900, drift=0.0, profiles="steady", random_state=0)
    moving = binned().fit(X, y)
    assert moving.time_kept_ and moving.time_gain_ > 0.15, moving.time_scores_
    X, y = make_temporal_crossmodal(900, random_state=0, **TEMPORAL_WORLDS["static"])
    static = binned().fit(X, y)
    assert not static.time_kept_ and static.n_bins_ == 1, static.time_scores_
    shifted = X.copy()
    shifted[:, -1] += 3.0  # projected at any time: the one static model
    np.testing.assert_array_equal(static.transform(X), static.transform(shifted))


def test_auto_drops_a_temporal_term_that_costs_category_map(demo):
    """TempXNet's recency term at weight 5 trades category mAP for time-window mAP on the
    demo world (docs/estimators/tempxnet.md): use_time='auto' keeps the control."""
    X, y = demo
    model = TempXNetEmbedder(temporal_weight=5.0, n_image_features=N_IMG, hidden_dim=64,
                             embedding_dim=32, max_epochs=4, validation_fraction=0.2,
                             random_state=0).fit(X, y)
    assert not model.time_kept_ and model.time_gain_ < -0.05, model.time_scores_
    assert model.temporal_weight_ == 0.0


def test_no_validation_rows_no_choice(demo):
    X, y = demo
    model = tiny(DiachronicEmbedder, n_image_features=N_IMG, validation_fraction=0.0,
                 use_time="auto").fit(X, y)
    assert model.time_kept_ and model.time_scores_ is None and np.isnan(model.time_gain_)


@pytest.mark.parametrize("random_state", [None, np.random.RandomState(3)])
def test_both_fits_share_one_seed_whatever_the_random_state(demo, random_state):
    X, y = demo
    model = tiny(TempXNetEmbedder, n_image_features=N_IMG, random_state=random_state,
                 validation_fraction=0.2, use_time="auto").fit(X, y)
    assert np.isfinite(model.time_gain_)
    assert model.random_state is random_state  # the caller's object, given back


def test_a_warm_start_keeps_the_choice(demo):
    X, y = demo
    model = tiny(DiachronicEmbedder, n_image_features=N_IMG, use_time=False,
                 warm_start=True).fit(X, y)
    model.set_params(use_time="auto").fit(X, y)
    assert not model.time_kept_ and len(model.net_.history) == 4


def test_binned_chooses_on_held_out_rows_and_refits_on_all(demo):
    X, y = demo
    auto = tiny(BinnedProcrustesEmbedder, n_image_features=N_IMG, min_bin_size=50,
                use_time="auto").fit(X, y)
    assert set(auto.time_scores_) == {"time", "control"}
    assert auto.time_kept_ == (auto.time_gain_ >= TIME_MARGIN)
    same = tiny(BinnedProcrustesEmbedder, n_image_features=N_IMG, min_bin_size=50,
                use_time=auto.time_kept_).fit(X, y)
    np.testing.assert_array_equal(auto.transform(X), same.transform(X))
    control = tiny(BinnedProcrustesEmbedder, n_image_features=N_IMG, use_time=False).fit(X, y)
    assert control.n_bins_ == 1 and not control.time_kept_
