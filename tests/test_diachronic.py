"""DiachronicEmbedder: time-conditioned projection, learned time dependence, grid search."""

import pickle
import re
import warnings

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.model_selection import GridSearchCV

from _tiny import tiny
from temporal_xmodal import (
    DiachronicEmbedder,
    TempXNetEmbedder,
    TimeRangeWarning,
    TimeUnitWarning,
    paper_settings,
    stack_modalities,
)
from temporal_xmodal.datasets import make_temporal_crossmodal

#: Fits here set Diachronic's window at the default decay=0, where it shapes nothing (L_intra
#: is off); what they test is elsewhere.  test_knobs_that_cannot_act_at_decay_0_
#: say_so_once_per_fit tests that warning.
pytestmark = pytest.mark.filterwarnings(
    "ignore:DiachronicEmbedder. .* no effect. L_intra, the same-category time term:UserWarning")


def _meaning_flips_with_time(n=800, seed=0):
    """Text word k means category k before t = 5 and category k + 1 afterwards.

    No static model can align such texts (the same text means different
    things at different times); a time-conditioned one can.
    """
    rng = np.random.default_rng(seed)
    C = 4
    c = rng.integers(0, C, n)
    t = rng.uniform(0, 10, n)
    image = np.eye(C)[c] + 0.1 * rng.standard_normal((n, C))
    word = (c + (t >= 5)) % C
    text = np.eye(C)[word] + 0.1 * rng.standard_normal((n, C))
    return stack_modalities(image, text, t), c


def test_time_conditioning_resolves_meaning_that_changes_over_time():
    X, y = _meaning_flips_with_time()
    kw = dict(random_state=0, n_image_features=4, hidden_dim=64, embedding_dim=16,
              max_epochs=20, loss_reduction="sum_per_anchor", optimizer="adam", lr=1e-3)
    # L_intra off (decay=0, the default): only the time conditioning differs
    dcm = DiachronicEmbedder(time_dim=16, **kw).fit(X[:600], y[:600])
    static = TempXNetEmbedder(temporal_weight=0.0, **kw).fit(X[:600], y[:600])
    s_dcm, s_static = dcm.score(X[600:], y[600:]), static.score(X[600:], y[600:])
    # static stays near 0.58 (each text has two meanings), as does DCM with use_time=False
    # (0.55); DCM reaches 1.0 in these 20 epochs (0.87 in 10, 1.0 in 40)
    assert s_dcm > 0.75 and s_dcm > s_static + 0.2, (s_dcm, s_static)
    assert dcm.uses_time_  # the default: the method with its times


@pytest.fixture(scope="module")
def fitted():
    X, y, info = make_temporal_crossmodal(500, return_info=True, random_state=0)
    model = tiny(DiachronicEmbedder, window=0.5, decay=1.0,
                 n_image_features=info.n_image_features).fit(X, y)
    return model, X, y, info.n_image_features


def test_projection_at_any_instant(fitted):
    model, X, _, n_img = fitted
    Z = model.transform(X[:20])
    np.testing.assert_allclose(Z[:, :model.embedding_dim],
                               model.transform_image(X[:20, :n_img], time=X[:20, -1]), atol=1e-6)
    early = model.transform_text(X[:20, n_img:-1], time=1.0)
    late = model.transform_text(X[:20, n_img:-1], time=9.0)
    assert not np.allclose(early, late)
    np.testing.assert_allclose(np.linalg.norm(late, axis=1), 1, atol=1e-6)
    with pytest.raises(ValueError, match="pass time="):
        model.transform_image(X[:5, :n_img])


def test_time_outside_training_range_warns_and_projects(fitted):
    model, X, _, n_img = fitted
    with pytest.warns(TimeRangeWarning, match="outside the training time range"):
        Z = model.transform_image(X[:5, :n_img], time=25.0)
    assert np.all(np.isfinite(Z))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.transform_image(X[:5, :n_img], time=5.0)  # inside: no warning


def test_determinism_and_pickle(fitted):
    model, X, y, n_img = fitted
    again = tiny(DiachronicEmbedder, window=0.5, decay=1.0, n_image_features=n_img).fit(X, y)
    np.testing.assert_array_equal(model.transform(X), again.transform(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).transform(X),
                                  model.transform(X))


@pytest.mark.parametrize("encoding", ["zscore", "raw", "onehot"])
def test_time_encodings(encoding, fitted):
    _, X, y, n_img = fitted
    model = tiny(DiachronicEmbedder, time_encoding=encoding, n_image_features=n_img).fit(X, y)
    assert model.transform(X).shape == (len(X), 2 * model.embedding_dim)


def test_grid_search_window_decay_margin(fitted):
    _, X, y, n_img = fitted
    grid = {"window": ["2M", 1.0], "decay": ["0.1/M", 1.0], "margin": [0.5, 1.0]}
    # two fits at a time on threads: joblib's default worker processes spent seconds starting
    # and importing torch for these 17 fits of a tenth of a second (searches on worker
    # processes: tests/test_scaling.py's Dask cluster)
    with parallel_config(backend="threading"):
        search = GridSearchCV(
            tiny(DiachronicEmbedder, n_image_features=n_img),
            grid, cv=2, n_jobs=2).fit(X, y)
    assert len(search.cv_results_["params"]) == 8
    assert set(search.best_params_) == set(grid)


@pytest.mark.parametrize("unit, per_month", [("years", 12.0), ("months", 1.0),
                                              ("days", 12.0 / 365.25)])
def test_paper_window_and_decay_are_the_papers_in_any_time_unit(unit, per_month):
    """paper_settings gives w = 4 months and λ = 0.1 per month (Semedo & Magalhães 2019) on
    every time axis."""
    X, y = make_temporal_crossmodal(120, random_state=0)  # times in [0, 10] years
    X[:, -1] *= 12 / per_month  # the same dates on this axis
    model = tiny(DiachronicEmbedder, n_image_features=64, max_epochs=1, time_unit=unit,
                 **paper_settings(DiachronicEmbedder)).fit(X, y)
    assert model.window_ == pytest.approx(4 / per_month)  # resolved once, at fit
    assert model.decay_ == pytest.approx(0.1 * per_month)
    assert model.net_.criterion_.window == model.window_
    assert model.net_.criterion_.decay == model.decay_


@pytest.mark.parametrize("unit, per_year", [("years", 1.0), ("months", 12.0),
                                            ("days", 365.25)])
def test_default_window_and_decay_follow_the_span_on_any_axis(unit, per_year):
    """Shares of the training times' span: the default window 5 % of it, and ρ's half-life
    ``decay="5%"`` 5 % of it (ρ = 0.5 at the window's edge), whatever the axis and the span;
    the default decay is 0 (L_intra off)."""
    assert DiachronicEmbedder().decay == 0.0
    X, y = make_temporal_crossmodal(120, random_state=0)  # times in [0, 10] years
    for stretch in (1.0, 3.0):
        A = X.copy()
        A[:, -1] = A[:, -1] * stretch * per_year
        span = np.ptp(A[:, -1])
        model = tiny(DiachronicEmbedder, n_image_features=64, max_epochs=1, decay="5%",
                     time_unit=unit).fit(A, y)
        assert model.net_.criterion_.window == pytest.approx(0.05 * span)
        assert model.net_.criterion_.decay == pytest.approx(np.log(2) / (0.05 * span))
        rho = 1 - np.exp(-model.net_.criterion_.decay * model.net_.criterion_.window)
        assert rho == pytest.approx(0.5)
        assert (model.window_, model.decay_) == (model.net_.criterion_.window,
                                                 model.net_.criterion_.decay)


def _shifted(X, times):
    out = X.copy()
    out[:, -1] = times
    return out


@pytest.mark.parametrize("encoding, effect", [
    ("minmax", r"'minmax' encoding maps them to [\d.]+ to [\d.]+, against \[-?0(\.\d+)?, 1"),
    ("onehot", r"'onehot' encoding puts them in its first or last bin"),
])
def test_warm_start_on_shifted_times_says_they_are_extrapolated_and_keeps_warning(
        encoding, effect):
    """A warm start cannot refit the time encoding under trained weights: the refit says
    that times outside the range it was fitted for are extrapolated, and projections at
    such times keep warning although ``time_range_`` (the training times) widened."""
    X, y = _meaning_flips_with_time(200)
    model = tiny(DiachronicEmbedder, window=0.5, n_image_features=4, warm_start=True,
                 time_encoding=encoding, max_epochs=1)
    model.fit(X, y)
    lo, hi = model.time_range_
    X_new = _shifted(X, np.linspace(100, 105, len(X)))
    with pytest.warns(TimeRangeWarning, match=r"continuing training on 200 of 200 row\(s\) "
                      r"outside the time range its time encoding was fitted for") as record:
        model.fit(X_new, y)
    message = " ".join(str(w.message) for w in record)
    assert re.search(effect, message), message
    assert "extrapolated" in message and "keep warning" in message
    assert model.time_range_ == (lo, 105.0)  # the training range widens; the encoding stays
    assert model.time_axis_.encoding_range_ == (lo, hi)
    A = X[:3, :4]
    for m in (model, pickle.loads(pickle.dumps(model))):
        with pytest.warns(TimeRangeWarning, match=r"projecting 3 of 3 row\(s\) outside the "
                          r"time range its time encoding was fitted for.*a warm start trained "
                          r"the model on \[.*, 105\] years.*extrapolated") as record:
            m.transform_image(A, time=105.0)
        assert record[0].filename == __file__
        with warnings.catch_warnings():
            warnings.simplefilter("error", TimeRangeWarning)
            m.transform_image(A, time=(lo + hi) / 2)  # inside the first range: silent
    if encoding == "minmax":  # the figure: 105 encodes far outside [0, 1]
        t = model.time_axis_.centre(np.array([105.0]))
        assert model.time_encoding_.transform(t)[0, 0] > 10


def test_transform_warning_on_valid_models_is_unchanged(fitted):
    model, X, _, n_img = fitted
    with pytest.warns(TimeRangeWarning) as record:
        model.transform_image(X[:5, :n_img], time=25.0)
    assert str(record[0].message).startswith(
        "DiachronicEmbedder: projecting 5 of 5 row(s) outside the training time range [")
    assert "encoding" not in str(record[0].message)


def test_intra_term_buys_only_what_a_date_filter_gives_where_only_the_date_separates():
    """The steady world: every category spread over the span, nothing in an item dates it.
    L_intra (``decay="5%"`` with the defaults of before: no time dropout, the time-window
    checkpoint) buys time-window mAP@50 over the defaults (L_intra off), but a date filter
    gives the defaults the same figure: the term adds nothing beyond the filter, which is why
    it is off by default (measured here: 0.40 against 0.22 unfiltered, 0.89 against 0.89
    with the filter; at full size benchmarks/run.py demo_time)."""
    from temporal_xmodal.comparison.settings import synthetic_split
    from temporal_xmodal.datasets import TEMPORAL_WORLDS
    from temporal_xmodal.scoring import SCORERS

    X, y, X_test, y_test, n_img, _ = synthetic_split(1500, random_state=0,
                                                     **TEMPORAL_WORLDS["steady"])
    small = dict(n_image_features=n_img, hidden_dim=256, embedding_dim=32, time_dim=32,
                 random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # still improving at the last epoch
        on = DiachronicEmbedder(decay="5%", time_dropout=0.0, selection_metric="valid_tmap",
                                **small).fit(X, y)
        defaults = DiachronicEmbedder(**small).fit(X, y)
    tmap = [SCORERS["tmap@50"](m, X_test, y_test) for m in (on, defaults)]
    filtered = [SCORERS["tmap@50|filter"](m, X_test, y_test) for m in (on, defaults)]
    assert tmap[0] >= tmap[1] + 0.08
    assert filtered[1] >= filtered[0] - 0.01
    assert min(filtered) > max(tmap)
    assert defaults.score(X_test, y_test) >= on.score(X_test, y_test) - 0.02


def test_intra_balance_without_l_intra_says_it_does_nothing():
    """L_intra is off by default (decay=0): a weight for it would be ignored without a word."""
    X, y = make_temporal_crossmodal(120, random_state=0)
    with pytest.warns(UserWarning, match="intra_balance=1.0 has no effect: L_intra, .* is "
                                         "off"):
        tiny(DiachronicEmbedder, n_image_features=64, max_epochs=1, intra_balance=1.0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        tiny(DiachronicEmbedder, n_image_features=64, max_epochs=1, intra_balance=1.0,
             decay="5%").fit(X, y)



def test_knobs_that_cannot_act_at_decay_0_say_so_once_per_fit():
    """Issue 57, 11: at decay=0 (the default) window and intra_margin shape nothing; a grid
    over them scored the same figure twice without a word, and a window at least the span
    advised "pass one shorter", which cannot help there."""
    X, y = make_temporal_crossmodal(120, random_state=0)
    small = dict(n_image_features=64, max_epochs=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tiny(DiachronicEmbedder, window="1%", intra_margin=0.5, **small).fit(X, y)
    idle = [str(w.message) for w in caught if "no effect" in str(w.message)]
    assert len(idle) == 1, idle
    assert "window='1%', intra_margin=0.5 have no effect" in idle[0] and "decay" in idle[0]
    # a window longer than the span: the same one warning, no advice on its length
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tiny(DiachronicEmbedder, window=50.0, **small).fit(X, y)
    messages = [str(w.message) for w in caught]
    assert any("window=50.0 has no effect" in m for m in messages), messages
    assert not any("at least the training span" in m for m in messages), messages
    # with L_intra on, the window acts: no idle warning, and the span check holds again
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tiny(DiachronicEmbedder, window=50.0, decay="5%", intra_margin=0.5, **small).fit(X, y)
    messages = [str(w.message) for w in caught]
    assert not any("no effect" in m for m in messages), messages
    assert any("at least the training span" in m for m in messages), messages
    # the defaults say nothing
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tiny(DiachronicEmbedder, **small).fit(X, y)
    assert not any("no effect" in str(w.message) for w in caught)
