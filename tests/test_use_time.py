"""use_time: the method with its times (the default, one fit) or its constant-time control;
choosing between them is a model selection on a time-aware scorer."""

import warnings

import numpy as np
import pytest
from _tiny import tiny
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.utils._param_validation import InvalidParameterError

from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    TempXNetEmbedder,
)
from temporal_xmodal.comparison.settings import with_constant_time
from temporal_xmodal.training import CrossModalNet
from temporal_xmodal.datasets import TEMPORAL_WORLDS, make_temporal_crossmodal
from temporal_xmodal.metrics import cross_modal_scores
from temporal_xmodal.scoring import SCORERS, make_retrieval_scorer
from temporal_xmodal.time import time_role


N_IMG = 64
TIME_AWARE = [TempXNetEmbedder, DiachronicEmbedder, BinnedProcrustesEmbedder]


@pytest.fixture(scope="module")
def demo():
    """The demo world (meanings pass between categories at era boundaries, stable style)."""
    X, y = make_temporal_crossmodal(900, drift=0.0, random_state=0)
    return X, y


def _constant(X):
    return with_constant_time((X[:, :N_IMG], X[:, N_IMG:-1], X[:, -1]))


@pytest.mark.parametrize("cls", TIME_AWARE)
def test_time_is_used_by_default(cls):
    assert cls().use_time is True


@pytest.mark.parametrize("cls", [DiachronicEmbedder, TempXNetEmbedder])
def test_a_default_fit_is_one_fit(demo, cls, monkeypatch):
    """No hidden second fit: the network is trained once, for max_epochs epochs."""
    X, y = demo
    calls = []
    original = CrossModalNet.partial_fit
    monkeypatch.setattr(CrossModalNet, "partial_fit",
                        lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    model = tiny(cls, n_image_features=N_IMG, max_epochs=3).set_params(use_time=True).fit(X, y)
    assert len(calls) == 1 and len(model.net_.history) == 3 and model.uses_time_


@pytest.mark.parametrize("cls", TIME_AWARE)
def test_auto_is_gone_with_the_recipe_in_its_error(cls):
    with pytest.raises(InvalidParameterError, match=r"GridSearchCV\(estimator, \{\"use_time\""):
        tiny(cls, n_image_features=N_IMG, use_time="auto").fit(
            *make_temporal_crossmodal(60, random_state=0))
    with pytest.raises(InvalidParameterError, match="must be a bool"):
        tiny(cls, n_image_features=N_IMG, use_time=1).fit(
            *make_temporal_crossmodal(60, random_state=0))


@pytest.mark.parametrize("cls", [DiachronicEmbedder, TempXNetEmbedder])
def test_the_control_is_the_estimator_on_a_constant_time_column(demo, cls):
    """use_time=False is the control a comparison fits on a constant time column: the
    same model, projecting every item at one instant whatever time it is asked for."""
    X, y = demo
    control = tiny(cls, n_image_features=N_IMG, use_time=False).fit(X, y)
    with warnings.catch_warnings():  # TempXNet: "every training item has the same time"
        warnings.simplefilter("ignore", UserWarning)
        constant = tiny(cls, n_image_features=N_IMG).fit(_constant(X), y)
    assert not control.uses_time_ and constant.uses_time_
    np.testing.assert_allclose(control.transform(X), constant.transform(_constant(X)),
                               atol=1e-6)
    text = X[:20, N_IMG:-1]
    np.testing.assert_array_equal(control.transform_text(text, time=1.0),
                                  control.transform_text(text, time=9.0))
    # a fitted control uses no time: it needs none to project
    assert time_role(control) == "none" and time_role(constant) == time_role(cls)
    np.testing.assert_array_equal(control.transform_text(text),
                                  control.transform_text(text, time=1.0))


def test_binned_control_is_one_bin_of_its_base_as_its_own_control(demo):
    """Binned's control fits its base once, on every row, as the base's own control: a
    TempXNet base hears no 'every training item has the same time' (the user's data is
    dated and the user asked for the control)."""
    X, y = demo
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*same time")
        control = BinnedProcrustesEmbedder(
            tiny(TempXNetEmbedder), use_time=False, random_state=0,
            n_image_features=N_IMG).fit(X, y)
    assert control.n_bins_ == 1 and not control.uses_time_
    assert control.bin_estimators_[0].use_time is False
    shifted = X.copy()
    shifted[:, -1] += 3.0  # projected at any time: the one static model
    np.testing.assert_array_equal(control.transform(X), control.transform(shifted))


def test_a_warm_start_keeps_the_first_fits_setting(demo):
    X, y = demo
    model = tiny(DiachronicEmbedder, n_image_features=N_IMG, use_time=False,
                 warm_start=True).fit(X, y)
    model.set_params(use_time=True).fit(X, y)
    assert not model.uses_time_ and len(model.net_.history) == 4


def _search(X, y, scoring):
    binned = BinnedProcrustesEmbedder(CCACrossModal(embedding_dim=8), bins=3, min_bin_size=50,
                                      random_state=0, n_image_features=N_IMG)
    return GridSearchCV(binned, {"use_time": [True, False]}, scoring=scoring,
                        cv=KFold(3, shuffle=True, random_state=0)).fit(X, y)


def test_the_recipe_keeps_time_where_it_pays_and_drops_it_where_it_costs():
    """Figures.  Steady categories whose caption meanings move at era boundaries: one CCA
    per era (Binned, 3 bins = the eras) answers the time-window question far better than
    one CCA, and the search keeps time (t-mAP@50 gain > 0.1).  A static world: per-bin CCAs
    only see a third of the rows each, and the search keeps the control."""
    X, y = make_temporal_crossmodal(900, drift=0.0, profiles="steady", random_state=0)
    moving = _search(X, y, SCORERS["tmap@50"])
    scores = moving.cv_results_["mean_test_score"]
    assert moving.best_params_ == {"use_time": True} and scores[0] - scores[1] > 0.1, scores
    assert moving.best_estimator_.uses_time_ and moving.best_estimator_.n_bins_ == 3
    X, y = make_temporal_crossmodal(900, random_state=0, **TEMPORAL_WORLDS["static"])
    static = _search(X, y, SCORERS["tmap@50"])
    assert static.best_params_ == {"use_time": False}, static.cv_results_["mean_test_score"]
    assert static.best_estimator_.n_bins_ == 1


def test_tmap_scorer_window_is_a_share_of_the_scored_span(demo):
    X, y = demo
    cca = CCACrossModal(embedding_dim=8, n_image_features=N_IMG).fit(X, y)
    span = float(np.ptp(X[:, -1]))
    assert SCORERS["tmap@50"](cca, X, y) == pytest.approx(
        make_retrieval_scorer("map", k=50, time_window=0.05 * span)(cca, X, y))
    # all rows at one time: a zero window, i.e. category mAP@50 (divided by min(50, R), as
    # every time-window figure)
    assert SCORERS["tmap@50"](cca, _constant(X), y) == pytest.approx(make_retrieval_scorer(
        "map", k=50, ap_at_k_normaliser="min_k_total")(cca, _constant(X), y))
    for bad in ("5 %%", "0%", "150%", "x%"):
        with pytest.raises(ValueError, match="share of the time span"):
            make_retrieval_scorer("map", time_window=bad)


def test_date_mrr_ranks_each_pictures_caption_read_at_its_date(demo):
    from temporal_xmodal.estimators import query_time_scores
    from temporal_xmodal.metrics import counterpart_reciprocal_ranks

    X, y = demo
    model = tiny(DiachronicEmbedder, n_image_features=N_IMG).fit(X[:600], y[:600])
    test = X[600:]
    expected = counterpart_reciprocal_ranks(query_time_scores(
        model, test[:, :N_IMG], test[:, N_IMG:-1], test[:, -1]))[0].mean()
    assert SCORERS["date_mrr"](model, test) == pytest.approx(expected)
    with pytest.raises(TypeError, match="cross-modal embedder"):
        SCORERS["date_mrr"](object(), test)


@pytest.mark.parametrize("cls", [DiachronicEmbedder, TempXNetEmbedder])
def test_valid_tmap_selects_the_checkpoint_on_the_time_window_question(demo, cls):
    X, y = demo
    model = tiny(cls, n_image_features=N_IMG, max_epochs=4, validation_fraction=0.2,
                 selection_metric="valid_tmap").fit(X, y)
    tmap = model.net_.history[:, "valid_tmap"]
    assert len(tmap) == 4 and all(0 <= v <= 1 for v in tmap)
    assert model.best_epoch_ == 1 + int(np.argmax(tmap))
    assert model.convergence_["metric"] == "valid_tmap"
    # the constant-time control trains at one instant but is judged on the same question:
    # relevance read at the validation rows' real times, window 5 % of their span
    control = tiny(cls, n_image_features=N_IMG, max_epochs=1, validation_fraction=0.2,
                   selection_metric="valid_tmap", use_time=False).fit(X, y)
    rows = control.net_.train_split.keywords["valid_ds"].rows.numpy()
    Z = control.transform(X[rows])
    d = Z.shape[1] // 2
    expected = cross_modal_scores(Z[:, :d], Z[:, d:], y[rows], metrics=("map",), k=50,
                                  time=X[rows, -1], time_window=0.05 * np.ptp(X[:, -1]))
    assert control.net_.history[0, "valid_tmap"] == pytest.approx(expected["map"], abs=1e-5)
    same_instant = cross_modal_scores(Z[:, :d], Z[:, d:], y[rows], metrics=("map",), k=50)
    assert abs(expected["map"] - same_instant["map"]) > 0.05  # not category mAP@50
