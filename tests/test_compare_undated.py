"""The undated-caption protocol (TICRC): scores, reciprocal ranks, references, split."""

import numpy as np
import pytest

from temporal_xmodal import CCACrossModal, DiachronicEmbedder, stack_modalities
from temporal_xmodal.evaluation import evaluate_undated
from temporal_xmodal.datasets._ticrc_features import ticrc_holdout_split
from temporal_xmodal.estimators import date_prior_scores, query_time_scores
from temporal_xmodal.metrics import counterpart_reciprocal_ranks, random_mrr

#: Fits here set Diachronic's window at the default decay=0, where it shapes nothing (L_intra
#: is off); what they test is elsewhere.  tests/test_diachronic.py tests that warning.
pytestmark = pytest.mark.filterwarnings(
    "ignore:DiachronicEmbedder. .* no effect. L_intra, the same-category time term:UserWarning")


@pytest.fixture(scope="module")
def dated_pairs():
    rng = np.random.default_rng(0)
    n = 60
    image, text = rng.normal(size=(n, 6)), rng.normal(size=(n, 5))
    time = np.sort(rng.uniform(1900, 1910, n))
    return stack_modalities(image, text, time)


@pytest.fixture(scope="module")
def diachronic(dated_pairs):
    return DiachronicEmbedder(hidden_dim=8, time_dim=4, embedding_dim=4, max_epochs=1,
                              window=2.0, n_image_features=6, random_state=0,
                              validation_fraction=0).fit(dated_pairs, np.arange(60))


def test_query_time_scores_project_captions_at_the_query_date(dated_pairs, diachronic):
    Xi, Xt, t = dated_pairs[:, :6], dated_pairs[:, 6:-1], dated_pairs[:, -1]
    scores = query_time_scores(diachronic, Xi, Xt, t, calibrate=False)  # the raw cosines
    for i in (0, 17, 59):
        expected = (diachronic.transform_image(Xi[i:i + 1], time=t[i])
                    @ diachronic.transform_text(Xt, time=t[i]).T)
        np.testing.assert_allclose(scores[i], expected[0], atol=1e-6)  # float32 nets
    # not the captions' own dates (that would leak the answer's date)
    own = diachronic.transform(dated_pairs)
    assert not np.allclose(scores[0], own[0, :4] @ own[:, 4:].T)


def test_static_estimator_date_gain_is_zero(dated_pairs, diachronic):
    cca = CCACrossModal(n_image_features=6).fit(dated_pairs)
    figures = evaluate_undated(cca, dated_pairs)
    assert figures["date_gain"] == 0 and figures["mrr"] == figures["map_i2t"]
    dated = evaluate_undated(diachronic, dated_pairs, period=5)
    assert dated["per_period"]["start"] == [1900.0, 1905.0]
    assert sum(dated["per_period"]["count"]) == 60
    counts = np.array(dated["per_period"]["count"])
    assert np.average(dated["per_period"]["mrr"], weights=counts) == pytest.approx(dated["mrr"])


def test_counterpart_reciprocal_ranks_both_directions_ties_against():
    scores = np.array([[0.9, 0.1, 0.0],
                       [0.8, 0.5, 0.5],
                       [0.0, 0.2, 0.1]])
    rr_i2t, rr_t2i = counterpart_reciprocal_ranks(scores)
    np.testing.assert_allclose(rr_i2t, [1, 1 / 3, 1 / 2])  # row 1: 0.5 tied with 0.5
    np.testing.assert_allclose(rr_t2i, [1, 1, 1 / 2])
    with pytest.raises(ValueError, match="square"):
        counterpart_reciprocal_ranks(scores[:2])


def test_random_mrr():
    assert random_mrr(1) == 1 and random_mrr(2) == 0.75
    rng = np.random.default_rng(0)
    simulated = np.mean([counterpart_reciprocal_ranks(rng.random((50, 50)))[0].mean()
                         for _ in range(40)])
    assert simulated == pytest.approx(random_mrr(50), rel=0.1)
    with pytest.raises(ValueError, match="n_candidates"):
        random_mrr(0)


def test_date_prior_ranks_by_the_words_date_not_the_answer():
    # word 0 is used in 1850, word 1 in 1900; word 2 never seen in training
    reference = np.array([[1, 0, 0]] * 5 + [[0, 1, 0]] * 5, dtype=float)
    ref_time = np.array([1850.0] * 5 + [1900.0] * 5)
    candidates = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], dtype=float)
    query_time = np.array([1850.0, 1900.0])
    scores = date_prior_scores(reference, ref_time, candidates, query_time, n_neighbors=5,
                               bandwidth=2.0)
    assert scores.shape == (2, 3)
    assert scores[0].argmax() == 1 and scores[1].argmax() == 0
    # an unseen caption gets the global prior: half the mass at each date
    np.testing.assert_allclose(scores[:, 2], 0.5 + 0.5 * np.exp(-0.5 * 25 ** 2))
    with pytest.raises(ValueError, match="n_neighbors"):
        date_prior_scores(reference, ref_time, candidates, query_time, n_neighbors=11)
    with pytest.raises(ValueError, match="bandwidth"):
        date_prior_scores(reference, ref_time, candidates, query_time, bandwidth=-1.0)
    with pytest.raises(ValueError, match="estimator"):
        query_time_scores("CCA", reference, candidates, query_time)


def test_ticrc_holdout_split():
    fit, held = ticrc_holdout_split(675, 2054)
    assert (len(fit), len(held)) == (2318, 411)
    assert np.all(held >= 675) and not np.intersect1d(fit, held).size
    np.testing.assert_array_equal(fit[:675], np.arange(675))
    again = ticrc_holdout_split(675, 2054)
    np.testing.assert_array_equal(again[1], held)
    small_fit, small_held = ticrc_holdout_split(675, 2054, n_samples=100)
    assert (len(small_fit), len(small_held)) == (85, 15)
    assert np.isin(small_fit, fit).all() and np.isin(small_held, held).all()
    with pytest.raises(ValueError, match="holdout_fraction"):
        ticrc_holdout_split(10, 10, holdout_fraction=1.0)
