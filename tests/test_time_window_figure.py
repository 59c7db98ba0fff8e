"""The time-window figure (t-mAP@k) is sound: a date filter can never lower it, and a
ranking that finds only each query's own counterpart does not top it (issue 54 §5).

Relevant = same category and ``|Δt| <= window``.  With AP@k divided by min(k, R), R the
relevant items, every relevant item lies inside the window, so restricting the candidates
to the window only removes non-relevant items: no relevant item's rank rises.  Divided by
the relevant items found in the top k (the normaliser of the figures published before), a
ranking that finds one relevant item and nothing else scores 1, and the filter, which
brings more relevant items into the top k at a lower precision, can lower the figure.
"""

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from temporal_xmodal import CCACrossModal  # noqa: E402
from temporal_xmodal.datasets import make_temporal_crossmodal  # noqa: E402
from temporal_xmodal.evaluation import (  # noqa: E402
    evaluate_estimator,
    local_alignment,
    time_period_inference,
)
from temporal_xmodal.evaluation.report import TEMPORAL_KEYS  # noqa: E402
from temporal_xmodal.metrics import (  # noqa: E402
    cross_modal_scores,
    mean_average_precision,
    retrieval_metrics_at_k,
)
from temporal_xmodal.scoring import SCORERS, make_retrieval_scorer  # noqa: E402


@st.composite
def rankings(draw):
    """Random embeddings (often tied scores), labels, times on a grid and a window."""
    n = draw(st.integers(2, 24))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    dim = draw(st.integers(1, 3))
    tied = draw(st.booleans())  # small integer embeddings: many tied scores
    Z_image, Z_text = ((rng.integers(-1, 2, (n, dim)) if tied else rng.standard_normal((n, dim)))
                       .astype(float) for _ in range(2))
    labels = rng.integers(0, draw(st.integers(1, 3)), n)
    time = rng.integers(0, draw(st.integers(1, 12)), n) * 0.25  # many items on the edge
    window = draw(st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.5]))
    return Z_image, Z_text, labels, time, window, draw(st.integers(1, 6))


#: Image 0 ranks the texts: relevant, non-relevant in the window, non-relevant outside it
#: (t=5), relevant; k=3, window 1.  Divided by the relevant items found in the top 3, its AP
#: falls from 1 to (1 + 2/3) / 2 with the filter (test_the_old_normaliser_... below).
LOWERED_BY_THE_FILTER = (np.array([[1.0], [-1.0], [0.5], [0.2]]),
                         np.array([[4.0], [3.0], [2.0], [1.0]]), np.array([0, 1, 1, 0]),
                         np.array([0.0, 0.0, 5.0, 0.0]), 1.0, 3)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rankings())
@example(LOWERED_BY_THE_FILTER)
def test_the_date_filter_never_lowers_the_time_window_figure(case):
    """Any ranking, labels, times and window: the filtered t-mAP@k (default normaliser of a
    time-window figure) >= the unfiltered one, per query and in the mean, on the full-ranking
    functions and the chunked top-k."""
    Z_image, Z_text, labels, time, window, k = case
    options = dict(metrics="map", k=k, time=time, time_window=window)
    plain = cross_modal_scores(Z_image, Z_text, labels, **options)
    filtered = cross_modal_scores(Z_image, Z_text, labels, **options, time_filter=window)
    for key in ("map_i2t", "map_t2i", "map"):
        assert filtered[key] >= plain[key] - 1e-12
    pair = dict(query_time=time, gallery_time=time, time_window=window, k=k)
    _, before = mean_average_precision(Z_image, Z_text, labels, labels, **pair,
                                       return_per_query=True)
    _, after = mean_average_precision(Z_image, Z_text, labels, labels, **pair,
                                      return_per_query=True, time_filter=window)
    np.testing.assert_array_equal(np.isnan(before), np.isnan(after))  # the same relevant sets
    assert np.all(after[~np.isnan(after)] >= before[~np.isnan(before)] - 1e-12)
    at_k = retrieval_metrics_at_k(Z_image, Z_text, labels, labels, **pair, metrics="map",
                                  time_filter=window)
    assert at_k["map"] == pytest.approx(np.nanmean(after), abs=1e-12)


def _counterexample():
    """One query (label 0, t=0), four candidates in the order: relevant, non-relevant in the
    window, non-relevant outside it (t=5), relevant; k=3, window 1."""
    return dict(query=[[1.0]], gallery=[[4.0], [3.0], [2.0], [1.0]], query_labels=[0],
                gallery_labels=[0, 1, 1, 0], query_time=[0.0], gallery_time=[0.0, 0.0, 5.0, 0.0],
                time_window=1.0, k=3)


def test_the_old_normaliser_is_lowered_by_the_filter_and_the_sound_one_is_not():
    case = _counterexample()
    old = dict(ap_at_k_normaliser="relevant_in_topk")
    # unfiltered top 3: relevant, non, non -> 1/1; filtered: relevant, non, relevant
    assert mean_average_precision(**case, **old) == pytest.approx(1.0)
    assert mean_average_precision(**case, **old, time_filter=1.0) == pytest.approx(
        (1 + 2 / 3) / 2)  # lower: the filter "hurts" a figure it can only help
    # min(k, R) = 2: 1/2 without the filter, (1 + 2/3)/2 with it; the default of the window
    assert mean_average_precision(**case) == pytest.approx(0.5)
    assert mean_average_precision(**case, time_filter=1.0) == pytest.approx((1 + 2 / 3) / 2)
    assert mean_average_precision(**case, ap_at_k_normaliser="min_k_total") == pytest.approx(0.5)


def _categories(n_per_class=10, n_classes=6, seed=0):
    """Items of ``n_classes`` categories, all dated within one window (t in [0, 1])."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(n_classes), n_per_class)
    return labels, rng.uniform(0, 1, labels.size), rng


def test_finding_only_the_counterpart_does_not_top_the_figure():
    """One-hot per item: each query finds its own counterpart first and ties the 59 other
    items after it (outside the top 50).  Old normaliser: 1.0, above a good (noisy) category
    ranking; sound one: 1 / min(50, R) = 1/10, far below it."""
    labels, time, rng = _categories()
    n, window = labels.size, 1.0
    counterpart_only = np.eye(n)
    category = np.eye(labels.max() + 1)[labels] + 0.4 * rng.standard_normal((n, 6))
    options = dict(metrics="map", k=50, time=time, time_window=window)
    sound = {name: cross_modal_scores(Z, Z, labels, **options)["map"]
             for name, Z in (("counterpart", counterpart_only), ("category", category))}
    old = {name: cross_modal_scores(Z, Z, labels, **options,
                                    ap_at_k_normaliser="relevant_in_topk")["map"]
           for name, Z in (("counterpart", counterpart_only), ("category", category))}
    assert old["counterpart"] == pytest.approx(1.0) and old["category"] < 1.0  # the flaw
    assert sound["counterpart"] == pytest.approx(1 / 10)  # R = 10 in the window, k = 50
    assert sound["category"] > 0.5 > sound["counterpart"]
    # the date filter cannot rescue the counterpart-only ranking (no item is outside the window)
    assert cross_modal_scores(counterpart_only, counterpart_only, labels, **options,
                              time_filter=window)["map"] == pytest.approx(1 / 10)


@pytest.fixture(scope="module")
def fitted():
    X, y, info = make_temporal_crossmodal(900, return_info=True, random_state=0)
    cca = CCACrossModal(embedding_dim=8, n_image_features=info.n_image_features).fit(X[:400])
    return cca, X[400:], y[400:]  # about 60 items a category: R > the relevant items found


def test_scorers_use_the_sound_normaliser(fitted):
    cca, X, y = fitted
    window = 0.05 * np.ptp(X[:, -1])
    for key, within in (("tmap@50", None), ("tmap@50|filter", window)):
        sound, old = (make_retrieval_scorer("map", k=50, time_window=window, time_filter=within,
                                            ap_at_k_normaliser=norm)(cca, X, y)
                      for norm in ("min_k_total", "relevant_in_topk"))
        assert SCORERS[key](cca, X, y) == pytest.approx(sound, abs=1e-12)
        assert sound != pytest.approx(old)
        # a time-window scorer without an explicit normaliser reads min(k, R) too
        assert make_retrieval_scorer("map", k=50, time_window=window, time_filter=within)(
            cca, X, y) == pytest.approx(sound, abs=1e-12)
    assert SCORERS["tmap@50|filter"](cca, X, y) >= SCORERS["tmap@50"](cca, X, y) - 1e-12
    assert SCORERS["period@50"].metric_params == {"ap_at_k_normaliser": "min_k_total"}
    assert "ap_at_k_normaliser='min_k_total'" in repr(SCORERS["tmap@50"])
    # the category mAP@50 keeps the papers' normaliser (no time window)
    assert SCORERS["map@50"](cca, X, y) == pytest.approx(make_retrieval_scorer(
        "map", k=50, ap_at_k_normaliser="relevant_in_topk")(cca, X, y), abs=1e-12)


def test_time_period_inference_defaults_to_the_sound_normaliser(fitted):
    cca, X, y = fitted
    for time_filter in (False, True):
        got = time_period_inference(cca, X, y, window=0.5, time_filter=time_filter)
        expected = time_period_inference(cca, X, y, window=0.5, time_filter=time_filter,
                                         ap_at_k_normaliser="min_k_total")
        assert got == pytest.approx(expected, abs=1e-12)
    with pytest.raises(ValueError, match="ap_at_k_normaliser"):
        time_period_inference(cca, X, y, window=0.5, ap_at_k_normaliser="auto")


def test_evaluate_estimator_returns_both_normalisers_and_local_directions(fitted):
    cca, X, y = fitted
    window = 0.5
    figures = evaluate_estimator(cca, X, y, time_window=window, n_bins=4, random_state=0)
    assert set(TEMPORAL_KEYS) <= set(figures)
    for key, time_filter, norm in (("tmap50", False, "min_k_total"),
                                   ("tmap50_filter", True, "min_k_total"),
                                   ("tmap50_topk", False, "relevant_in_topk"),
                                   ("tmap50_filter_topk", True, "relevant_in_topk")):
        assert figures[key] == pytest.approx(time_period_inference(
            cca, X, y, window=window, time_filter=time_filter,
            ap_at_k_normaliser=norm)["mean"], abs=1e-12), key
    assert figures["tmap50_filter"] >= figures["tmap50"]
    assert figures["tmap50"] < figures["tmap50_topk"]  # the old one counts only what it found
    local = local_alignment(cca, X, y, bins=4, random_state=0)
    assert (figures["local_map10_i2t"], figures["local_map10_t2i"], figures["local_map10"]) \
        == pytest.approx((local["i2t"], local["t2i"], local["mean"]))
    undated = evaluate_estimator(cca, X, y, time_window=None)
    assert all(np.isnan(undated[key]) for key in TEMPORAL_KEYS)
