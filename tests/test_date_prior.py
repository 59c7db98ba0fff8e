"""Date-prior fusion for undated captions: the prior is a density, beta is chosen honestly,
and fusion turns the date signal into a gain when captions' words carry their era."""

import json
from unittest import mock

import numpy as np
import pytest
from sklearn.base import clone

from temporal_xmodal import CCACrossModal, LayoutWarning, stack_modalities
from temporal_xmodal.estimators import CaptionDatePrior, DatePriorRetrieval, query_time_scores
from temporal_xmodal.metrics import counterpart_reciprocal_ranks


def _era_captions(n=600, seed=0):
    """Pictures weakly tied to their captions; each caption carries era words (its decade)."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(1850, 1950, n)
    era = ((t - 1850) // 10).astype(int)
    content = rng.standard_normal((n, 8))
    image = content + 1.5 * rng.standard_normal((n, 8))
    era_words = np.eye(10)[era] * 4.0 + 0.3 * rng.standard_normal((n, 10))
    text = np.hstack([content + 1.5 * rng.standard_normal((n, 8)), era_words])
    return image, text, t


def test_prior_is_a_normalised_density_peaking_at_the_caption_era():
    image, text, t = _era_captions()
    prior = CaptionDatePrior(n_neighbors=20, bandwidth="5Y").fit(text[:500], t[:500])
    grid = np.linspace(1800, 2000, 2001)
    log_p = prior.log_density(text[500:510], grid)
    mass = np.exp(log_p).sum(axis=0) * (grid[1] - grid[0])
    np.testing.assert_allclose(mass, 1.0, atol=0.02)
    peak = grid[np.argmax(log_p, axis=0)]
    assert np.mean(np.abs(peak - t[500:510]) < 10) >= 0.8


def test_prior_works_in_bounded_blocks_with_the_same_result():
    """Neighbours and densities are computed a block at a time (memory bounded for 10^6
    captions); tiny blocks give the one-block result."""
    image, text, t = _era_captions()
    prior = CaptionDatePrior(n_neighbors=7, bandwidth="3Y").fit(text[:500], t[:500])
    whole = prior.log_density(text[500:], t[500:])
    prior.BLOCK = 600  # one caption x 500 references, 1 date x 100 captions x 7 neighbours
    np.testing.assert_allclose(prior.log_density(text[500:], t[500:]), whole, rtol=1e-12)
    sim = text[500:] @ text[:500].T / np.outer(np.linalg.norm(text[500:], axis=1),
                                               np.linalg.norm(text[:500], axis=1))
    nearest, _, seen = CaptionDatePrior(n_neighbors=7).fit(text[:500], t[:500])._neighbours(
        text[500:] / np.linalg.norm(text[500:], axis=1, keepdims=True))
    assert seen.all()
    np.testing.assert_array_equal(np.sort(nearest, axis=1),
                                  np.sort(np.argsort(-sim, axis=1)[:, :7], axis=1))


def test_caption_sharing_nothing_with_training_gets_the_global_density():
    reference = np.array([[1.0, 0, 0]] * 4 + [[0, 1.0, 0]] * 4)
    dates = np.array([1850.0] * 4 + [1900.0] * 4)
    grid = np.array([1850.0, 1875.0, 1900.0])
    prior = CaptionDatePrior(n_neighbors=4, bandwidth=5.0, floor=0.3).fit(reference, dates)
    log_p = prior.log_density(np.array([[0, 0, 1.0], [1.0, 0, 0]]), grid)
    kernel = np.exp(-0.5 * ((grid[:, None] - dates[None]) / 5.0) ** 2) / (5.0 * np.sqrt(2 * np.pi))
    np.testing.assert_allclose(np.exp(log_p[:, 0]), kernel.mean(1))  # unseen: global density
    np.testing.assert_allclose(np.exp(log_p[:, 1]),
                               0.7 * kernel[:, :4].mean(1) + 0.3 * kernel.mean(1))


def test_fusion_beats_content_alone_and_keeps_it_when_dates_carry_nothing():
    image, text, t = _era_captions()
    X = stack_modalities(image, text, t)
    fit, test = slice(0, 450), slice(450, None)
    model = DatePriorRetrieval(CCACrossModal(embedding_dim=8), n_image_features=8,
                               prior=CaptionDatePrior(bandwidth=5.0)).fit(X[fit], np.arange(450))
    content = query_time_scores(model.estimator_, image[test], text[test], t[test])
    fused = model.scores(image[test], text[test], t[test])
    mrr_content = counterpart_reciprocal_ranks(content)[0].mean()
    mrr_fused = counterpart_reciprocal_ranks(fused)[0].mean()
    assert model.weight_ > 0 and mrr_fused > mrr_content + 0.05, (mrr_content, mrr_fused)
    # shuffled dates: the prior carries nothing, beta falls back to (near) zero
    rng = np.random.default_rng(1)
    X_shuffled = X.copy()
    X_shuffled[:, -1] = rng.permutation(t)
    null = DatePriorRetrieval(CCACrossModal(embedding_dim=8), n_image_features=8,
                              prior=CaptionDatePrior(bandwidth=5.0)).fit(X_shuffled[fit],
                                                                         np.arange(450))
    t_test = X_shuffled[test, -1]
    null_content = counterpart_reciprocal_ranks(query_time_scores(
        null.estimator_, image[test], text[test], t_test))[0].mean()
    null_fused = counterpart_reciprocal_ranks(null.scores(image[test], text[test],
                                                          t_test))[0].mean()
    assert null.weight_ <= 0.05 and abs(null_fused - null_content) < 0.02, (
        null.weight_, null_content, null_fused)


class _ScaledByDate:
    """A time-conditioned projection whose similarities are scaled by the date (at date t
    every text embedding is multiplied by t): raw columns rank pictures by date, not content."""

    time_role = "inference"
    time_unit = "years"

    def __init__(self, image, text):
        self.image, self.text = image, text

    def transform_image(self, X, time=None):
        return np.asarray(X, dtype=float)

    def transform_text(self, X, time=None):
        return np.asarray(X, dtype=float) * float(time)


def test_query_date_calibration_compares_pictures_of_different_dates():
    rng = np.random.default_rng(0)
    n = 200
    content = rng.standard_normal((n, 6))
    image, text = content + 0.3 * rng.standard_normal((n, 6)), content
    t = rng.integers(1, 20, n).astype(float)  # 19 dates, scales 1..19
    model = _ScaledByDate(image, text)
    raw = query_time_scores(model, image, text, t, calibrate=False)
    calibrated = query_time_scores(model, image, text, t)
    i2t_raw, t2i_raw = counterpart_reciprocal_ranks(raw)
    i2t, t2i = counterpart_reciprocal_ranks(calibrated)
    np.testing.assert_array_equal(i2t, i2t_raw)  # each picture's ranking of captions kept
    ideal = counterpart_reciprocal_ranks(image @ text.T)[1].mean()  # no date scale at all
    assert t2i.mean() > t2i_raw.mean() + 0.15, (t2i_raw.mean(), t2i.mean())  # 0.28 -> 0.46
    assert t2i.mean() > ideal - 0.02, (t2i.mean(), ideal)  # recovers the undistorted ranking
    # one date: a single affine map, nothing changes in either direction
    same = np.full(n, 5.0)
    for a, b in zip(counterpart_reciprocal_ranks(query_time_scores(model, image, text, same)),
                    counterpart_reciprocal_ranks(query_time_scores(model, image, text, same,
                                                                   calibrate=False))):
        np.testing.assert_array_equal(a, b)


@pytest.mark.filterwarnings("ignore::temporal_xmodal.time.TimeBinWarning")  # one bin: expected
@pytest.mark.filterwarnings("ignore::temporal_xmodal.TimeRangeWarning")  # validation rows at the edges
def test_constant_content_time_fuses_the_constant_time_control_with_the_dated_prior():
    from temporal_xmodal import BinnedProcrustesEmbedder

    image, text, t = _era_captions(400)
    X = stack_modalities(image, text, t)
    binned = BinnedProcrustesEmbedder(CCACrossModal(embedding_dim=4), bins=2, min_bin_size=20,
                                      use_time=True)
    dated = DatePriorRetrieval(binned, n_image_features=8).fit(X, np.arange(400))
    control = DatePriorRetrieval(binned, n_image_features=8, content_time="constant").fit(
        X, np.arange(400))
    assert dated.estimator_.n_bins_ == 2 and control.estimator_.n_bins_ == 1
    # the control's content model never saw a date; the prior did
    reference = clone(binned).set_params(n_image_features=8).fit(
        stack_modalities(image, text, 0.0), np.arange(400))
    expected = (query_time_scores(reference, image[:50], text[:50], np.zeros(50))
                + control.weight_ * control.prior_.log_density(text[:50], t[:50]))
    np.testing.assert_allclose(control.scores(image[:50], text[:50], t[:50]), expected,
                               atol=1e-10)
    np.testing.assert_array_equal(control.prior_.reference_time_, t)
    with pytest.raises(ValueError, match="content_time"):
        DatePriorRetrieval(binned, n_image_features=8, content_time="zero").fit(X, np.arange(400))


@pytest.mark.parametrize("params, match", [
    ({"n_neighbors": 0}, "n_neighbors"),
    ({"floor": 1.5}, "floor"),
    ({"bandwidth": -2.0}, "bandwidth"),
    ({"bandwidth": "0Y"}, "'bandwidth' parameter of CaptionDatePrior must be .* a positive "
                          "duration"),
    ({"bandwidth": True}, "'bandwidth' parameter"),
    ({"n_neighbors": True}, r"'n_neighbors' parameter .* an int \(not a bool\)"),
    ({"time_unit": "fortnights"}, "time_unit"),
])
def test_prior_rejects_bad_parameters_by_name(params, match):
    image, text, t = _era_captions(100)
    with pytest.raises(ValueError, match=match):
        CaptionDatePrior(**params).fit(text, t)


@pytest.mark.parametrize("params, match", [
    ({"weights": ()}, "'weights' parameter .* a non-empty sequence of numbers"),
    ({"weights": (0, -1)}, "'weights' parameter .* a non-empty sequence of numbers"),
    ({"weights": (0, np.inf)}, "'weights' parameter"),
    ({"weights": (0, True)}, r"'weights' parameter .* \(not a bool\)"),
    ({"validation_fraction": 1.0}, "validation_fraction"),
    ({"n_image_features": True}, r"'n_image_features' parameter .* \(not a bool\)"),
    ({"n_image_features": 26}, "n_image_features=26 is out of range"),
    ({"estimator": "CCA"}, "estimator"),
])
def test_fusion_rejects_bad_parameters_by_name(params, match):
    image, text, t = _era_captions(100)
    kwargs = {"estimator": CCACrossModal(embedding_dim=4), "n_image_features": 8, **params}
    with pytest.raises(ValueError, match=match):
        DatePriorRetrieval(**kwargs).fit(stack_modalities(image, text, t), np.arange(100))
    with pytest.raises(ValueError, match="100 rows but y has 99"):
        DatePriorRetrieval(CCACrossModal(embedding_dim=4), n_image_features=8).fit(
            stack_modalities(image, text, t), np.arange(99))


def test_fusion_fits_at_its_defaults_on_a_numpy_x():
    """``n_image_features=None`` (the default) is the estimator's own: the half split of a
    NumPy X, with its LayoutWarning, or the estimator's int.  It was refused
    (InvalidParameterError: None outside the fusion's own constraint)."""
    image, text, t = _era_captions(100)
    X = stack_modalities(image, text[:, :6], t)  # 8 + 6 columns: the half split is 7 + 7
    with pytest.warns(LayoutWarning, match="split X's 14 feature columns in half"):
        model = DatePriorRetrieval(CCACrossModal()).fit(X, np.arange(100))
    assert model.n_image_features_ == 7 and model.estimator_.n_image_features_ == 7
    assert 0 < model.score(X) <= 1
    own = DatePriorRetrieval(CCACrossModal(n_image_features=8)).fit(X, np.arange(100))
    assert own.n_image_features_ == 8 and own.estimator_.n_text_features_ == 6


def test_score_is_the_fused_mrr_and_grid_search_tunes_the_prior():
    from sklearn.model_selection import GridSearchCV, KFold

    image, text, t = _era_captions()
    X = stack_modalities(image, text, t)
    model = DatePriorRetrieval(CCACrossModal(embedding_dim=8), n_image_features=8,
                               prior=CaptionDatePrior()).fit(X[:450], np.arange(450))
    fused = model.scores(image[450:], text[450:], t[450:])
    assert model.score(X[450:]) == pytest.approx(counterpart_reciprocal_ranks(fused)[0].mean())
    search = GridSearchCV(model, {"prior__bandwidth": [5.0, 500.0]}, cv=KFold(3)).fit(
        X[:450], np.arange(450))
    # the captions' words give their decade; a 500-year kernel is flat over the century
    assert search.best_params_ == {"prior__bandwidth": 5.0}
    mean = search.cv_results_["mean_test_score"]
    assert mean[0] > mean[1] + 0.05, mean


def test_prior_parameters_are_chosen_with_beta_on_the_held_out_pairs():
    image, text, t = _era_captions()
    X = stack_modalities(image, text, t)
    weights = (0, 0.1, 1)
    searched = DatePriorRetrieval(CCACrossModal(embedding_dim=8), n_image_features=8,
                                  weights=weights, prior_grid={"bandwidth": [5.0, 500.0]}
                                  ).fit(X, np.arange(600))
    assert len(searched.validation_results_) == 2 * len(weights)
    best = max(searched.validation_results_, key=lambda row: row["mrr"])
    # a kernel flat over the century carries no date: the decade-wide one is chosen
    assert searched.prior_params_ == {"bandwidth": 5.0} == best["prior_params"]
    assert searched.prior_.bandwidth == 5.0 and searched.weight_ == best["weight"] > 0
    # "auto" searches the default prior's grid, and leaves a prior the user gave as it is
    auto = DatePriorRetrieval(CCACrossModal(embedding_dim=8), n_image_features=8,
                              weights=weights).fit(X, np.arange(600))
    assert len(auto.validation_results_) == 9 * len(weights)
    assert auto.prior_params_["bandwidth"] in DatePriorRetrieval.AUTO_PRIOR_GRID["bandwidth"]
    given = DatePriorRetrieval(CCACrossModal(embedding_dim=8), n_image_features=8,
                               weights=weights, prior=CaptionDatePrior(bandwidth=7.0)
                               ).fit(X, np.arange(600))
    assert given.prior_params_ == {} and given.prior_.bandwidth == 7.0


def test_prior_reads_time_on_the_estimators_axis():
    image, text, t = _era_captions(200)
    days = (t - 1850) * 365.25  # the same dates, counted in days
    X = stack_modalities(image, text, days)
    model = DatePriorRetrieval(CCACrossModal(embedding_dim=4, time_unit="days"),
                               n_image_features=8, prior_grid={"bandwidth": ["5Y"]}).fit(
        X, np.arange(200))
    assert model.prior_.time_unit == "days"
    in_years = DatePriorRetrieval(CCACrossModal(embedding_dim=4), n_image_features=8,
                                  prior_grid={"bandwidth": ["5Y"]}).fit(
        stack_modalities(image, text, t), np.arange(200))
    # one density, whatever the axis: p(t) per day = p(t) per year / 365.25
    np.testing.assert_allclose(
        model.prior_.log_density(text[:5], days[:5]),
        in_years.prior_.log_density(text[:5], t[:5]) - np.log(365.25), atol=1e-6)
    with pytest.raises(ValueError, match="prior reads time in 'years'"):
        DatePriorRetrieval(CCACrossModal(embedding_dim=4, time_unit="days"), n_image_features=8,
                           prior=CaptionDatePrior()).fit(X, np.arange(200))


#: scikit-learn's API checks that do not depend on the checks' data (which holds too few
#: rows and columns for a prior of 25 neighbours, a held-out split and two blocks).
API_CHECKS = ["check_no_attributes_set_in_init", "check_estimator_cloneable",
              "check_estimator_repr", "check_get_params_invariance", "check_set_params",
              "check_param_validation", "check_estimator_tags_renamed",
              "check_valid_tag_types"]


@pytest.mark.parametrize("check", API_CHECKS)
@pytest.mark.parametrize("make", [lambda: CaptionDatePrior(),
                                  lambda: DatePriorRetrieval(CCACrossModal())],
                         ids=["CaptionDatePrior", "DatePriorRetrieval"])
def test_the_priors_pass_the_api_checks(make, check):
    """The two public estimators outside the registry (they are not CrossModalEmbedders:
    no transform, CaptionDatePrior fits captions and dates) under scikit-learn's API checks,
    parameter validation included (every invalid value of every constraint refused)."""
    from sklearn.utils import estimator_checks

    estimator = make()
    getattr(estimator_checks, check)(type(estimator).__name__, estimator)


def test_caption_prior_refuses_times_that_do_not_match_its_captions():
    """60 captions with 120 times were accepted; 119 times raised an IndexError in
    log_density and a (120, 1) column a broadcast error."""
    from temporal_xmodal.estimators import CaptionDatePrior

    rng = np.random.default_rng(0)
    text, time = rng.standard_normal((120, 5)), rng.uniform(0, 10, 120)
    for captions, times in ((text[:60], time), (text, time[:119])):
        with pytest.raises(ValueError, match="time must hold one time per caption"):
            CaptionDatePrior().fit(captions, times)
    column = CaptionDatePrior().fit(text, time[:, None])
    np.testing.assert_array_equal(column.reference_time_, time)
    np.testing.assert_allclose(column.log_density(text[:3], time[:4, None]),
                               column.log_density(text[:3], time[:4]))


def test_date_prior_retrieval_says_when_its_validation_cannot_choose():
    """One held-out pair made every (β, prior) score MRR 1.0 and β = 0 won by the tie without
    a word; validation_fraction=0.001 raised scikit-learn's "0 sample(s)", y=None a
    TypeError."""
    from temporal_xmodal.datasets import make_temporal_crossmodal

    X, _, info = make_temporal_crossmodal(120, return_info=True, random_state=0)
    d, pairs = info.n_image_features, np.arange(120)
    cca = CCACrossModal(embedding_dim=4)
    for fraction in (0.001, 0.01):  # 0 and 1 held-out pairs
        with pytest.raises(ValueError, match=rf"validation_fraction={fraction!r} holds out"):
            DatePriorRetrieval(cca, n_image_features=d, validation_fraction=fraction).fit(
                X, pairs)
    with pytest.raises(ValueError, match="needs y"):
        DatePriorRetrieval(cca, n_image_features=d).fit(X, None)
    # held-out pairs that rank every candidate alike (here: every pair found first)
    import temporal_xmodal.estimators._date_prior as date_prior

    ranks = date_prior.counterpart_reciprocal_ranks
    with mock.patch.object(date_prior, "counterpart_reciprocal_ranks",
                           lambda S: (np.ones(len(S)),) + tuple(ranks(S)[1:])):
        with pytest.warns(UserWarning, match="cannot choose β"):
            fitted = DatePriorRetrieval(cca, n_image_features=d, weights=(0, 0.1)).fit(X, pairs)
    assert fitted.weight_ == 0


@pytest.mark.filterwarnings("ignore:DatePriorRetrieval. every weight")  # the flat kernel's folds
def test_grid_search_tunes_the_default_prior_by_name():
    """Issue 48, 9: ``GridSearchCV(DatePriorRetrieval(est), {"prior__bandwidth": ...})`` with
    the default ``prior=None`` (what ``score``'s docstring invites) raised "'NoneType' object
    has no attribute 'set_params'"; the default prior is made a given one, on the
    estimator's time axis, with the searched value."""
    from sklearn.model_selection import GridSearchCV, KFold

    image, text, t = _era_captions(300)
    X = stack_modalities(image, text, t)
    search = GridSearchCV(DatePriorRetrieval(CCACrossModal(embedding_dim=8), n_image_features=8),
                          {"prior__bandwidth": [5.0, 500.0]}, cv=KFold(2)).fit(X, np.arange(300))
    assert search.best_params_ == {"prior__bandwidth": 5.0}  # the decade, not a flat kernel
    best = search.best_estimator_
    assert isinstance(best.prior, CaptionDatePrior) and best.prior_.bandwidth == 5.0
    assert best.prior_params_ == {}  # a given prior: used as it is, not searched again
    model = DatePriorRetrieval(CCACrossModal(time_unit="days"))
    assert model.set_params(prior__bandwidth="90D").prior.get_params() == {
        **CaptionDatePrior().get_params(), "bandwidth": "90D", "time_unit": "days"}
    assert DatePriorRetrieval(CCACrossModal()).get_params()["prior"] is None  # default kept


_CHILD = r"""
import json, sys, time, warnings
import numpy as np
from skorch.callbacks import Callback
from temporal_xmodal import SAMEmbedder, stack_modalities
from temporal_xmodal.estimators import DatePriorRetrieval

FITS, SLOW = [], {1, 3}  # fits 1 and 3 are slow (one each to interrupt); 2 is quick

class Beat(Callback):
    def on_train_begin(self, net, **kwargs):
        FITS.append(1)
        print("FIT", len(FITS), flush=True)
    def on_epoch_begin(self, net, **kwargs):
        # slow after the first epoch, whose end sends the Ctrl-C: the signal lands in the next
        if len(FITS) in SLOW and len(net.history) > 1:
            time.sleep(0.3)
    def on_epoch_end(self, net, **kwargs):
        print("EPOCH", len(FITS), flush=True)

rng = np.random.default_rng(0)
X = stack_modalities(rng.normal(size=(80, 6)), rng.normal(size=(80, 5)),
                     np.linspace(1900, 1950, 80))
out = {}
for case, epochs in (("held_out", 200), ("final", 3)):
    sam = SAMEmbedder(hidden_dim=8, embedding_dim=4, batch_size=32, max_epochs=epochs,
                      validation_fraction=0, random_state=0, device="cpu",
                      callbacks=[("beat", Beat())])
    model = DatePriorRetrieval(sam, n_image_features=6, prior_grid=None)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model.fit(X, np.arange(80))
    out[case] = {"fits": len(FITS),
                 "fitted": hasattr(model, "estimator_"),
                 "weight": getattr(model, "weight_", None),
                 "interrupted": getattr(model, "training_interrupted_", None),
                 "scores": (bool(np.isfinite(model.score(X)))
                            if hasattr(model, "estimator_") else None),
                 "warnings": [str(w.message) for w in record
                              if "interrupted" in str(w.message)]}
    print("DONE", case, flush=True)
print("RESULT " + json.dumps(out), flush=True)
"""


def test_one_ctrl_c_stops_the_whole_fit_in_a_real_process(tmp_path):
    """Issue 48, 6: a Ctrl-C in ``DatePriorRetrieval.fit`` stopped only the estimator's
    held-out fit ("usable but partial"); β was then chosen on that partial model and the fit
    on all rows started.  A real SIGINT to a child process: during the held-out fit, the
    fit stops there (no second fit starts) and the model is left unfitted; during the fit on
    all rows, β is kept and the partial estimator with it.  Each says so once, naming
    DatePriorRetrieval (the estimator's own warning, which advises a warm start, is not
    repeated)."""
    import os
    import signal
    import subprocess
    import sys

    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    # one thread per fit: beside pytest -n 2's other worker, a second one made each epoch of
    # 80 rows take up to a second
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line.strip())
            # the first epoch of fit 1 (held-out fit of the first model) and of fit 3 (the
            # fit on all rows of the second; its held-out fit, fit 2, ran through)
            if line.strip() in ("EPOCH 1", "EPOCH 3") and lines.count(line.strip()) == 1:
                proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, proc.stderr.read()[-2000:]
    result = json.loads(next(x for x in lines if x.startswith("RESULT "))[len("RESULT "):])
    held_out, final = result["held_out"], result["final"]
    # one Ctrl-C in the held-out fit: no further fit started, nothing chosen, unfitted
    assert held_out["fits"] == 1 and not held_out["fitted"] and held_out["weight"] is None
    assert len(held_out["warnings"]) == 1
    assert held_out["warnings"][0].startswith("DatePriorRetrieval: training was interrupted "
                                              "(Ctrl-C) during the held-out fit")
    assert "left unfitted" in held_out["warnings"][0]
    # one Ctrl-C in the fit on all rows: β kept, the partial estimator usable, and said
    assert final["fits"] == 3 and final["fitted"] and final["interrupted"] is True
    assert final["weight"] is not None and final["scores"] is True
    assert len(final["warnings"]) == 1 and "usable but partial" in final["warnings"][0]
    assert "DatePriorRetrieval" in final["warnings"][0]


@pytest.mark.parametrize("where", ["fit", "log_density"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_caption_prior_refuses_non_finite_caption_features(where, bad):
    """Issue 57, 13: NaN caption features gave finite densities without a word."""
    from temporal_xmodal.estimators import CaptionDatePrior
    rng = np.random.default_rng(0)
    text, times = rng.random((40, 6)), np.linspace(1880, 1890, 40)
    broken = text.copy()
    broken[3, 2] = bad
    prior = CaptionDatePrior(n_neighbors=5)
    with pytest.raises(ValueError, match=r"text .*(NaN|infinit)"):
        if where == "fit":
            prior.fit(broken, times)
        else:
            prior.fit(text, times).log_density(broken[:5], times[:5])
    with pytest.raises(ValueError, match="fitted on 6"):
        prior.fit(text, times).log_density(text[:5, :4], times[:5])
