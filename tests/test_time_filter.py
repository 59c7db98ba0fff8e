"""The date filter (metrics/_scan/_filter.py): every figure and search restricted to the
candidates within a distance of each query's date equals brute force over those candidates."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.metrics import average_precision_score

from temporal_xmodal import CCACrossModal
from temporal_xmodal.datasets import TEMPORAL_WORLDS, make_temporal_crossmodal
from temporal_xmodal.evaluation import time_period_inference
from temporal_xmodal.metrics import (cross_modal_scores, mean_average_precision,
                                     mean_reciprocal_rank, recall_at_k,
                                     retrieval_metrics_at_k)
from temporal_xmodal.scoring import SCORERS, make_retrieval_scorer
from temporal_xmodal.search import CrossModalIndex, cross_modal_search

WITHIN = 1.0


@pytest.fixture(scope="module")
def pairs():
    """Random embeddings, 4 classes, times on a 0.1 grid (many items on the window's edge)."""
    rng = np.random.default_rng(0)
    n = 240
    return (rng.standard_normal((n, 8)), rng.standard_normal((n, 8)), rng.integers(0, 4, n),
            rng.uniform(0, 10, n).round(1))


def _brute(Q, G, y, t, within=WITHIN):
    """Scores and same-class relevance over each query's candidates (others -inf / False)."""
    inside = np.abs(t[:, None] - t[None, :]) <= within
    return np.where(inside, Q @ G.T, -np.inf), (y[:, None] == y[None, :]) & inside, inside


def _ap_at_k(S, rel, k, min_k_total=False):
    """Brute AP@k, divided by the relevant items found (or by min(k, R))."""
    out = []
    for s, r in zip(S, rel):
        if not r.any():
            continue
        hit = r[np.argsort(-s, kind="stable")[:k]].astype(float)
        denom = min(k, r.sum()) if min_k_total else max(hit.sum(), 1)
        out.append((hit * np.cumsum(hit) / np.arange(1, len(hit) + 1)).sum() / denom)
    return np.mean(out)


def test_full_ranking_ap_equals_sklearn_over_the_candidates(pairs):
    Q, G, y, t = pairs
    S, rel, inside = _brute(Q, G, y, t)
    expected = np.mean([average_precision_score(r[c], s[c])
                        for s, r, c in zip(Q @ G.T, rel, inside) if r.any()])
    for working_memory in (None, 0.05):  # one block, and many blocks and slices
        got = mean_average_precision(Q, G, y, y, query_time=t, gallery_time=t,
                                     time_filter=WITHIN, working_memory=working_memory)
        assert got == pytest.approx(expected, abs=1e-12)
    # the edge is inside: |Δt| == within is a candidate (as the time window's relevance)
    assert (np.abs(t[:, None] - t[None, :]) == WITHIN).any()


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_at_k_figures_equal_brute_force_over_the_candidates(pairs, backend):
    """NumPy full rankings and the torch top-k scan give the brute-force figures."""
    Q, G, y, t = pairs
    S, rel, _ = _brute(Q, G, y, t)
    k = 10
    expected_map = _ap_at_k(S, rel, k)
    first = np.array([np.flatnonzero(r[np.argsort(-s, kind="stable")])[0] + 1
                      for s, r in zip(S, rel) if r.any()])
    expected_mrr = np.mean(1 / first)
    expected_recall = np.mean([r[np.argsort(-s, kind="stable")[:k]].sum() / r.sum()
                               for s, r in zip(S, rel) if r.any()])
    options = dict(query_time=t, gallery_time=t, time_filter=WITHIN)
    if backend == "numpy":
        got = {"map": mean_average_precision(Q, G, y, y, k=k, **options),
               "mrr": mean_reciprocal_rank(Q, G, y, y, **options),
               "recall": recall_at_k(Q, G, y, y, k=k, **options)}
    else:
        got = retrieval_metrics_at_k(torch.as_tensor(Q), torch.as_tensor(G), y, y, k=k,
                                     metrics=("map", "mrr", "recall"), working_memory=0.02,
                                     **options)
    assert got["map"] == pytest.approx(expected_map, abs=1e-12)
    assert got["mrr"] == pytest.approx(expected_mrr, abs=1e-12)
    assert got["recall"] == pytest.approx(expected_recall, abs=1e-12)


def test_filter_and_window_combine_and_the_filter_changes_the_figure(pairs):
    Q, G, y, t = pairs
    S, rel, inside = _brute(Q, G, y, t)
    rel_window = rel & (np.abs(t[:, None] - t[None, :]) <= 0.5)
    out = cross_modal_scores(Q, G, y, metrics="map", k=20, time=t, time_window=0.5,
                             time_filter=WITHIN)
    # a time-window figure divides by min(k, R) (its default)
    assert out["map_i2t"] == pytest.approx(_ap_at_k(S, rel_window, 20, min_k_total=True),
                                           abs=1e-12)
    unfiltered = cross_modal_scores(Q, G, y, metrics="map", k=20, time=t, time_window=0.5)
    assert out["map"] > unfiltered["map"] + 0.05  # random scores: the filter removes rivals


def test_filter_needs_times_and_counts_missing_ones(pairs):
    Q, G, y, t = pairs
    with pytest.raises(ValueError, match="time_filter needs both query_time and gallery_time"):
        mean_average_precision(Q, G, y, y, time_filter=1.0)
    with pytest.raises(ValueError, match="time_filter.*must be a float"):
        mean_average_precision(Q, G, y, y, query_time=t, gallery_time=t, time_filter=-1.0)
    t_nan = t.copy()
    t_nan[3] = np.nan
    with pytest.raises(ValueError, match="missing \\(NaN\\) label or time"):
        mean_average_precision(Q, G, y, y, query_time=t_nan, gallery_time=t, time_filter=1.0)


def test_a_static_model_with_the_filter_answers_the_steady_worlds_question():
    """Known structure: on the steady world only the date separates two items of a category,
    so the date filter alone takes a static model's time-window mAP@50 far up."""
    X, y, info = make_temporal_crossmodal(900, return_info=True, random_state=0,
                                          **TEMPORAL_WORLDS["steady"])
    cca = CCACrossModal(n_image_features=info.n_image_features).fit(X[:600])
    plain = time_period_inference(cca, X[600:], y[600:], window=0.5)["mean"]
    filtered = time_period_inference(cca, X[600:], y[600:], window=0.5, time_filter=True)
    assert filtered["mean"] > plain + 0.3
    scorer = SCORERS["tmap@50|filter"]
    window = 0.05 * np.ptp(X[600:, -1])
    assert scorer(cca, X[600:], y[600:]) == pytest.approx(time_period_inference(
        cca, X[600:], y[600:], window=window, time_filter=True)["mean"], abs=1e-12)
    assert make_retrieval_scorer("map", k=50, time_window=window, time_filter=window)(
        cca, X[600:], y[600:]) == pytest.approx(scorer(cca, X[600:], y[600:]), abs=1e-12)


# ------------------------------------------------------------------------ search(within=)
@pytest.fixture(scope="module")
def fitted():
    X, y, info = make_temporal_crossmodal(500, return_info=True, random_state=1)
    d = info.n_image_features
    return CCACrossModal(n_image_features=d).fit(X), X, d


@pytest.mark.parametrize("backend", ["torch", "faiss"])
def test_search_within_equals_brute_force_over_the_filtered_gallery(fitted, backend):
    if backend == "faiss":
        pytest.importorskip("faiss")
    est, X, d = fitted
    t = X[:, -1]
    queries = np.arange(0, 500, 7)
    index = CrossModalIndex(est, modality="text", time=t, backend=backend,
                            working_memory=0.01).fit(X[:, d:-1])
    np.testing.assert_array_equal(index.times_, t)
    got = index.search(X[queries, :d], k=8, time=t[queries], within=0.4, as_frame=False)
    S = est.transform_image(X[queries, :d]) @ est.transform_text(X[:, d:-1]).T
    S[np.abs(t[queries, None] - t[None, :]) > 0.4] = -np.inf
    expected = np.argsort(-S, axis=1, kind="stable")[:, :8]
    np.testing.assert_array_equal(got.indices, expected)
    np.testing.assert_allclose(got.scores, np.take_along_axis(S, expected, 1), atol=1e-5)
    # one date for all the queries, a duration string in the estimator's unit (years)
    one = index.search(X[queries, :d], k=8, time=5.0, within="146D", as_frame=False)
    assert np.all(np.abs(t[one.indices] - 5.0) <= 0.4)


def test_search_within_a_query_with_fewer_candidates_says_so(fitted):
    est, X, d = fitted
    t = X[:, -1]
    index = CrossModalIndex(est, modality="text", time=t).fit(X[:, d:-1])
    with pytest.warns(UserWarning, match="2 of 2 queries have fewer than 10 gallery items"):
        frame = index.search(X[:2, :d], k=10, time=t[:2], within=0.001)
    raw = index.search_embeddings(est.transform_image(X[:2, :d]), k=10)
    assert len(raw.indices[0]) == 10  # unfiltered: the full k
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arrays = index.search(X[:2, :d], k=10, time=t[:2], within=0.001, as_frame=False)
    found = arrays.indices >= 0
    assert len(frame) == found.sum() < 20
    assert np.all(arrays.scores[~found] == -np.inf)
    assert set(frame["index"]) <= set(np.flatnonzero(np.abs(t - t[0]) <= 0.001)) | set(
        np.flatnonzero(np.abs(t - t[1]) <= 0.001))


def test_search_within_refuses_without_dates(fitted):
    est, X, d = fitted
    index = CrossModalIndex(est, modality="text").fit(X[:, d:-1])
    assert index.times_ is None
    with pytest.raises(ValueError, match="no gallery dates: fit it with time="):
        index.search(X[:2, :d], k=3, time=1.0, within=0.5)
    dated = CrossModalIndex(est, modality="text", time=X[:, -1]).fit(X[:, d:-1])
    with pytest.raises(ValueError, match="within= needs the queries' dates"):
        dated.search(X[:2, :d], k=3, within=0.5)
    with pytest.raises(ValueError, match="time must be a scalar or have shape"):
        CrossModalIndex(est, modality="text", time=X[:3, -1]).fit(X[:, d:-1])
    result = cross_modal_search(est, X[:4, :d], X[:, d:-1], k=3, query_time=X[:4, -1],
                                gallery_time=X[:, -1], within=0.5, as_frame=False)
    assert np.all(np.abs(X[result.indices, -1] - X[:4, -1:]) <= 0.5)


def test_the_filters_bounds_are_the_windows_own_test_on_rounded_edges():
    """Each query's candidate run is found on the sorted gallery times and moved to the exact
    edge of |t_query - t| <= within as float64 computes it: 1.3 - 1.0 rounds above 0.3, so a
    bound t_query - within would drop the item at 0.3 that the window counts."""
    from temporal_xmodal.metrics._scan import TimeFilter

    rng = np.random.default_rng(3)
    grid = np.round(rng.uniform(0, 5, 400), 1)
    gallery = np.concatenate([grid, np.nextafter(grid, np.inf), np.nextafter(grid, -np.inf)])
    for within in (0.0, 0.1, 0.3, 1.0, 7.0):
        queries = np.concatenate([np.round(rng.uniform(-1, 6, 300), 1), [np.nan]])[:-1]
        time_filter = TimeFilter(queries, gallery, within)
        expected = np.abs(queries[:, None] - gallery[None, :]) > within
        np.testing.assert_array_equal(
            time_filter.outside(slice(None), slice(None)), expected)
        on_torch = time_filter.on(torch.device("cpu"))
        np.testing.assert_array_equal(
            on_torch.outside(torch.arange(len(queries)), slice(None)).numpy(), expected)
