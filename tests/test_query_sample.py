"""The query sample of large evaluations: cross_modal_scores(query_sample=...), the standard
error beside each figure, evaluate_estimator above QUERY_SAMPLE test items and the table."""

import numpy as np
import pytest

from temporal_xmodal import CCACrossModal
from temporal_xmodal.comparison.report import COLUMNS, format_table
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.evaluation import evaluate_estimator
from temporal_xmodal.metrics import (cross_modal_scores, mean_average_precision,
                                     reciprocal_rank_per_query, sample_standard_error)
from temporal_xmodal.metrics._retrieval import sample_queries


def _world(n, d=8, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 6, n)
    centres = rng.normal(size=(6, d))
    Zi = centres[y] + 1.5 * rng.normal(size=(n, d))
    Zt = centres[y] + 1.5 * rng.normal(size=(n, d))
    return Zi, Zt, y, rng.uniform(0, 10, n)


def test_a_sample_at_least_n_is_the_exact_figure_with_zero_error():
    Zi, Zt, y, t = _world(300)
    exact = cross_modal_scores(Zi, Zt, y, metrics=("map", "mrr"))
    full = cross_modal_scores(Zi, Zt, y, metrics=("map", "mrr"), query_sample=300)
    for key in exact:
        assert full[key] == pytest.approx(exact[key], abs=1e-12)
    assert full["map_se"] == full["mrr_se"] == 0.0 and full["n_queries"] == 300


def test_sampled_figures_are_the_exact_per_query_values_of_the_sampled_items():
    Zi, Zt, y, t = _world(600)
    rows = sample_queries(600, 150, random_state=3)
    assert len(rows) == 150 and np.all(np.diff(rows) > 0)
    ap_i2t = mean_average_precision(Zi, Zt, y, y, return_per_query=True)[1]
    ap_t2i = mean_average_precision(Zt, Zi, y, y, return_per_query=True)[1]
    got = cross_modal_scores(Zi, Zt, y, metrics=("map", "mrr"), query_sample=150,
                             random_state=3)
    assert got["n_queries"] == 150
    assert got["map_i2t"] == pytest.approx(ap_i2t[rows].mean(), abs=1e-12)
    assert got["map_t2i"] == pytest.approx(ap_t2i[rows].mean(), abs=1e-12)
    assert got["map_se"] == pytest.approx(
        sample_standard_error(0.5 * (ap_i2t[rows] + ap_t2i[rows]), 600), abs=1e-12)
    # counterpart MRR: each sampled item's own counterpart among all n candidates
    rr = reciprocal_rank_per_query(Zi[rows] @ Zt.T,
                                   np.arange(600)[rows, None] == np.arange(600))
    pairs = cross_modal_scores(Zi, Zt, None, metrics=("mrr",), query_sample=150,
                               random_state=3)
    assert pairs["mrr_i2t"] == pytest.approx(rr.mean(), abs=1e-12)


def test_the_time_window_figure_samples_its_queries_against_every_candidate():
    Zi, Zt, y, t = _world(500)
    rows = sample_queries(500, 100, random_state=0)
    ap = mean_average_precision(Zi, Zt, y, y, k=50, time_window=1.0, query_time=t,
                                gallery_time=t, return_per_query=True)[1]
    got = cross_modal_scores(Zi, Zt, y, metrics=("map",), k=50, time=t, time_window=1.0,
                             query_sample=100)
    assert got["map_i2t"] == pytest.approx(np.nanmean(ap[rows]), abs=1e-12)


def test_the_standard_error_matches_the_spread_of_the_estimate_over_samples():
    Zi, Zt, y, t = _world(1000, seed=1)
    exact = cross_modal_scores(Zi, Zt, y, metrics=("map",))["map"]
    draws = [cross_modal_scores(Zi, Zt, y, metrics=("map",), query_sample=100, random_state=s)
             for s in range(60)]
    estimates = np.array([d["map"] for d in draws])
    se = np.mean([d["map_se"] for d in draws])
    assert abs(estimates.mean() - exact) < 3 * se / np.sqrt(len(draws))  # unbiased
    assert 0.7 < estimates.std(ddof=1) / se < 1.4  # the error printed is the error made


def test_sample_standard_error_finite_population():
    values = np.array([0.0, 1.0, 0.5, np.nan, 0.25])
    s = np.std([0.0, 1.0, 0.5, 0.25], ddof=1)
    assert sample_standard_error(values, 10) == pytest.approx(
        s / 2 * np.sqrt(6 / 9))
    assert sample_standard_error(values[:3], 3) == 0.0  # the whole population
    assert np.isnan(sample_standard_error([0.5], 10))


def test_query_sample_is_validated():
    Zi, Zt, y, t = _world(50)
    with pytest.raises(ValueError, match="query_sample"):
        cross_modal_scores(Zi, Zt, y, query_sample=1)


@pytest.fixture(scope="module")
def fitted():
    X, y, info = make_temporal_crossmodal(900, n_image_features=12, n_text_features=10,
                                          return_info=True, random_state=0)
    cca = CCACrossModal(embedding_dim=6, n_image_features=info.n_image_features)
    return cca.fit(X[:400]), X[400:], y[400:]


def test_evaluate_estimator_samples_above_query_sample_and_says_so(fitted):
    cca, X, y = fitted
    exact = evaluate_estimator(cca, X, y, time_window=1.0, query_sample=None)
    assert "n_queries" not in exact and "map_se" not in exact
    full = evaluate_estimator(cca, X, y, time_window=1.0, query_sample=len(X))
    assert full["map"] == pytest.approx(exact["map"], abs=1e-12)
    assert full["map_se"] == 0.0 and full["n_queries"] == len(X)
    sampled = evaluate_estimator(cca, X, y, time_window=1.0, query_sample=200)
    assert sampled["n_queries"] == 200
    for key in ("map", "mrr", "tmap50", "tmap50_filter"):
        se = sampled[f"{key}_se"]
        assert 0 < se < 0.05
        assert abs(sampled[key] - exact[key]) < 5 * se
    table = format_table([{"name": "CCA", **sampled, "fit_seconds": 1.0, "delta_time": 0.0}],
                         COLUMNS)
    assert f"{sampled['map_i2t']:.3f}±{sampled['map_i2t_se']:.3f}" in table
    assert f"{sampled['tmap50']:.3f}±{sampled['tmap50_se']:.3f}" in table
    assert "±" not in format_table([{"name": "CCA", **full, "fit_seconds": 1.0}], COLUMNS)


def test_the_undated_breakdown_reads_the_sampled_queries(fitted):
    cca, X, y = fitted
    sampled = evaluate_estimator(cca, X, y, time_window=None, query_sample=200)
    assert sum(sampled["per_category"]["count"]) == 200
