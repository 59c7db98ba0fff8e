"""Diachronic evaluation protocols (spec diachronic_and_binned.md §8) on hand-built cases.

Every exact value below is worked out by hand from a fake time-conditioned
estimator: an item's feature is an angle, and its embedding at time t is the
unit 2-D vector at angle ``feature + speed * t`` (both modalities alike).  So
cosine similarities are cosines of angle differences, and projecting a query
at another instant rotates it.
"""

from numbers import Integral, Real
from unittest import mock

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from temporal_xmodal import CCACrossModal
from temporal_xmodal.base import CrossModalEmbedder
from temporal_xmodal.time import TimeBins
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.evaluation import (
    EmbeddedSplit,
    ResultTable,
    coarse_alignment,
    cross_modal_evolution,
    embed_split,
    local_alignment,
    plot_dispersion,
    plot_per_bin_map,
    semantic_dispersion,
    temporally_bounded_retrieval,
    time_period_inference,
)

PI = np.pi


class RotatingEmbedder(CrossModalEmbedder):
    """Embeds the angle feature a at time t as (cos(a + speed t), sin(a + speed t))."""

    time_role = "inference"
    _requires_labels = False
    _parameter_constraints = {"speed": [Real], "n_image_features": [Integral, None]}

    def __init__(self, speed=0.0, n_image_features=None):
        self.speed = speed
        self.n_image_features = n_image_features

    def _fit(self, X_image, X_text, time, labels):
        self.embedding_dim_ = 2

    def _angle_vectors(self, A, time):
        angle = A[:, 0] + self.speed * time
        return np.column_stack([np.cos(angle), np.sin(angle)])

    def _embed(self, modality, A, time):
        return self._angle_vectors(A, time)


def _data(image_angle, text_angle=None, time=None):
    image_angle = np.asarray(image_angle, dtype=float)
    text_angle = image_angle if text_angle is None else np.asarray(text_angle, dtype=float)
    time = np.zeros_like(image_angle) if time is None else np.asarray(time, dtype=float)
    return np.column_stack([image_angle, text_angle, time])


def _fitted(X, speed=0.0):
    return RotatingEmbedder(speed=speed, n_image_features=1).fit(X)  # one angle per block


# ------------------------------------------------------------- §8.1 coarse
def test_coarse_alignment_perfect_separation_is_one():
    X = _data([0.0, 0.1, PI, PI + 0.1], time=[0, 1, 2, 3])
    y = [0, 0, 1, 1]
    est = _fitted(X, speed=0.3)  # rotation at own time is shared by both modalities
    assert coarse_alignment(est, X, y) == {"i2t": 1.0, "t2i": 1.0, "mean": 1.0}


def test_coarse_alignment_known_fraction():
    # angles 0, 0.2 (label 0) and 0.1 (label 1): image 0 ranks t0, t2, t1 ->
    # AP = (1 + 2/3) / 2 = 5/6, same for item 1; item 2 finds itself first -> 1.
    X = _data([0.0, 0.2, 0.1])
    scores = coarse_alignment(_fitted(X), X, ["a", "a", "b"])
    for key in ("i2t", "t2i", "mean"):
        assert scores[key] == pytest.approx(8 / 9)


def test_coarse_alignment_multilabel_relevance_is_shared_label():
    X = _data([0.0, 0.2, 0.1])
    Y = np.array([[1, 0], [1, 0], [0, 1]])
    assert coarse_alignment(_fitted(X), X, Y)["mean"] == pytest.approx(8 / 9)
    # item 2 now also carries label 0: everything is relevant to items 0 and 1
    Y2 = np.array([[1, 0], [1, 0], [1, 1]])
    assert coarse_alignment(_fitted(X), X, Y2)["mean"] == pytest.approx(1.0)


# ------------------------------------------------------------ §8.2 local
def test_local_alignment_empty_pairs_count_as_zero():
    # speed 1: embedding angle = feature + t.  Items at the bin centres 0.5 / 1.5.
    # category 0: angle 0 at t=0.5 and t=1.5; category 1: angle pi at t=0.5.
    # Every (query, bin) pair ranks its relevant item first (AP 1), except
    # query 2 in bin 1 whose pool has no item of category 1.
    X = _data([0.0, 0.0, PI], time=[0.5, 1.5, 0.5])
    y = [0, 0, 1]
    est = _fitted(X, speed=1.0)
    bins = np.array([0.0, 1.0, 2.0])
    scores, details = local_alignment(est, X, y, bins=bins, return_details=True)
    assert scores == pytest.approx({"i2t": 5 / 6, "t2i": 5 / 6, "mean": 5 / 6})
    np.testing.assert_array_equal(details["query_index"], [0, 1, 2])
    np.testing.assert_allclose(details["bin_centers"], [0.5, 1.5])
    expected = np.array([[1.0, 1.0], [1.0, 1.0], [1.0, np.nan]])
    np.testing.assert_allclose(details["ap_i2t"], expected)
    np.testing.assert_allclose(details["ap_t2i"], expected)
    skipped = local_alignment(est, X, y, bins=bins, include_empty=False)
    assert skipped == pytest.approx({"i2t": 1.0, "t2i": 1.0, "mean": 1.0})


def test_local_alignment_query_projected_at_the_instant_vs_own_time():
    # category 0: angle 0 at t=0.5 and t=1.5 (embedded at 0.5 and 1.5);
    # category 1: feature -1 at t=1.5 (embedded at 0.5).
    # "instant": query 0 moved to 1.5 in bin 1 finds item 1 first -> all AP 1.
    # "own": query 0 stays at 0.5, so in bin 1 item 2 (wrong category) comes
    # first and AP@10 = 1/2; the other four non-empty pairs are 1 -> 4.5 / 5.
    X = _data([0.0, 0.0, -1.0], time=[0.5, 1.5, 1.5])
    y = [0, 0, 1]
    est = _fitted(X, speed=1.0)
    bins = TimeBins(np.array([0.0, 1.0, 2.0])).fit(X[:, -1])
    instant = local_alignment(est, X, y, bins=bins, include_empty=False)
    own = local_alignment(est, X, y, bins=bins, include_empty=False, query_time="own")
    assert instant == pytest.approx({"i2t": 1.0, "t2i": 1.0, "mean": 1.0})
    assert own == pytest.approx({"i2t": 0.9, "t2i": 0.9, "mean": 0.9})
    # the spec §8.3 names are aliases
    assert local_alignment(est, X, y, bins=bins, include_empty=False,
                           query_time="own_bin") == own
    assert local_alignment(est, X, y, bins=bins, include_empty=False,
                           query_time="target_bin") == instant
    # include_empty: query 2 has no category-1 item in bin 0 -> one zero in 6
    assert local_alignment(est, X, y, bins=bins)["mean"] == pytest.approx(5 / 6)


def test_local_alignment_samples_queries_per_category():
    rng = np.random.default_rng(0)
    X = _data(rng.uniform(0, 2 * PI, 40), time=rng.uniform(0, 4, 40))
    y = np.repeat([0, 1, 2, 3], 10)
    est = _fitted(X, speed=0.5)
    _, details = local_alignment(est, X, y, bins=4, queries_per_category=3, random_state=0,
                                 return_details=True)
    q = details["query_index"]
    assert q.size == 12 and np.array_equal(np.bincount(y[q]), [3, 3, 3, 3])
    _, again = local_alignment(est, X, y, bins=4, queries_per_category=3, random_state=0,
                               return_details=True)
    np.testing.assert_array_equal(q, again["query_index"])
    assert details["ap_i2t"].shape == (12, 4)


# ------------------------------------------------- §8.4 temporally bounded
def test_temporally_bounded_retrieval_per_bin_exact_values():
    # bin 0: the 8/9 case of the coarse test; bin 1: two items of different
    # labels at opposite angles (AP 1 each; the label-0 item of bin 1 only sees
    # its own counterpart as relevant, bin 0 is out of reach).
    X = _data([0.0, 0.2, 0.1, 0.05, PI], time=[0.1, 0.2, 0.3, 1.5, 1.6])
    y = [0, 0, 1, 0, 1]
    est = _fitted(X)
    bins = TimeBins(np.array([0.0, 1.0, 2.0, 3.0])).fit([0.5, 1.5, 2.5])  # bin 2 stays empty
    scores, table = temporally_bounded_retrieval(est, X, y, bins=bins)
    assert isinstance(table, ResultTable)
    np.testing.assert_array_equal(table["bin"], [0, 1, 2])
    np.testing.assert_array_equal(table["n_items"], [3, 2, 0])
    np.testing.assert_allclose(table["center"], [0.5, 1.5, 2.5])
    np.testing.assert_allclose(table["map_i2t"], [8 / 9, 1.0, np.nan])
    np.testing.assert_allclose(table["map_t2i"], [8 / 9, 1.0, np.nan])
    np.testing.assert_allclose(table["map_mean"], [8 / 9, 1.0, np.nan])
    # micro: pooled queries (3 * 8/9 + 2) / 5; macro: mean of non-empty bins
    assert scores == pytest.approx({"i2t": 14 / 15, "t2i": 14 / 15, "mean": 14 / 15})
    macro, _ = temporally_bounded_retrieval(est, X, y, bins=bins, aggregate="macro")
    assert macro["mean"] == pytest.approx(17 / 18)
    frame = table.to_frame()
    assert list(frame.columns) == table.columns and len(frame) == 3


def test_temporally_bounded_one_bin_equals_coarse_alignment():
    X = _data([0.0, 0.2, 0.1], time=[0.0, 1.0, 2.0])
    est = _fitted(X, speed=0.7)
    scores, table = temporally_bounded_retrieval(est, X, [0, 0, 1], bins=1)
    assert scores == pytest.approx(coarse_alignment(est, X, [0, 0, 1]))
    assert table.n_rows == 1


# ------------------------------------------------------ §8.5 time period
def test_time_period_inference_window_changes_relevance():
    # item 0 (label 0, t=0): image 0.0, text 0.2; item 1 (label 0, t=5):
    # image 0.1, text 0.07; item 2 (label 1, t=0) at pi.  With window 1,
    # item 1 is no longer relevant to item 0 but ranks first for it in both
    # directions, so item 0 gets AP 1/2 -> mAP (1/2 + 1 + 1) / 3 = 5/6.
    X = _data([0.0, 0.1, PI], [0.2, 0.07, PI], time=[0.0, 5.0, 0.0])
    y = [0, 0, 1]
    est = _fitted(X)
    assert time_period_inference(est, X, y, window=10.0) == pytest.approx(
        {"i2t": 1.0, "t2i": 1.0, "mean": 1.0})
    assert time_period_inference(est, X, y, window=1.0) == pytest.approx(
        {"i2t": 5 / 6, "t2i": 5 / 6, "mean": 5 / 6})
    # inclusive boundary |dt| <= window (spec A4)
    assert time_period_inference(est, X, y, window=5.0)["mean"] == pytest.approx(1.0)
    # k=1 truncation: item 0 has no relevant item in its top 1 -> AP 0
    assert time_period_inference(est, X, y, window=1.0, k=1)["mean"] == pytest.approx(2 / 3)


# -------------------------------------------------------- §8.6 dispersion
def _three_bin_case():
    # bin 0: angles 0, pi/2, pi; bin 1: angle pi/3; bin 2: empty.
    X = _data([0.0, PI / 2, PI, PI / 3], time=[0.2, 0.4, 0.6, 1.5])
    bins = TimeBins(np.array([0.0, 1.0, 2.0, 3.0])).fit([0.5, 1.5, 2.5])
    return X, bins


def test_semantic_dispersion_exact_topk_means_and_empty_bins():
    X, bins = _three_bin_case()
    est = _fitted(X)
    disp, centers = semantic_dispersion(est, X, 0, bins=bins, k=2)
    np.testing.assert_allclose(centers, [0.5, 1.5, 2.5])
    # bin 0: sims 1, 0, -1 -> top 2 mean 0.5; bin 1: only 0.5 available; bin 2 NaN
    np.testing.assert_allclose(disp, [0.5, 0.5, np.nan], atol=1e-12)
    disp3, _ = semantic_dispersion(est, X, 0, bins=bins, k=3)
    np.testing.assert_allclose(disp3, [0.0, 0.5, np.nan], atol=1e-12)
    both, _ = semantic_dispersion(est, X, [0, 3], bins=bins, k=2, direction="t2i")
    assert both.shape == (2, 3)
    np.testing.assert_allclose(both[1], [(np.cos(PI / 6) + 0.5) / 2, 1.0, np.nan])
    no_self, _ = semantic_dispersion(est, X, 0, bins=bins, k=2, exclude_self=True)
    np.testing.assert_allclose(no_self, [-0.5, 0.5, np.nan], atol=1e-12)


def test_semantic_dispersion_uses_own_time_projection():
    # speed 1: item 1 is embedded at 0 + 1 = 1 = item 0's angle 1 + 0.
    X = _data([1.0, 0.0], time=[0.0, 1.0])
    disp, _ = semantic_dispersion(_fitted(X, speed=1.0), X, 0, bins=np.array([-0.5, 0.5, 1.5]))
    np.testing.assert_allclose(disp, [1.0, 1.0])


# --------------------------------------------------------- §8.7 evolution
def test_cross_modal_evolution_picks_bins_of_most_similar_items():
    X, bins = _three_bin_case()
    est = _fitted(X)
    table = cross_modal_evolution(est, X, 0, bins=bins)
    assert isinstance(table, ResultTable)
    np.testing.assert_array_equal(table["bin"], [0, 1])  # empty bin 2 never listed
    np.testing.assert_array_equal(table["item"], [0, 3])
    np.testing.assert_allclose(table["similarity"], [1.0, 0.5])
    np.testing.assert_array_equal(table["is_query_bin"], [True, False])
    # without its own counterpart the query's best item is in bin 1
    table = cross_modal_evolution(est, X, 0, bins=bins, exclude_self=True)
    np.testing.assert_array_equal(table["bin"], [1, 0])
    np.testing.assert_array_equal(table["item"], [3, 1])
    np.testing.assert_allclose(table["similarity"], [0.5, 0.0], atol=1e-12)
    tables = cross_modal_evolution(est, X, [2, 3], bins=bins, top_bins=1, direction="t2i")
    assert [t.n_rows for t in tables] == [1, 1]
    assert tables[0].records() == [{"bin": 0, "center": 0.5, "item": 2, "similarity": 1.0,
                                    "is_query_bin": True}]


# ----------------------------------------------------------- embed once
def _all_protocols(est, X, y):
    """Every protocol's output on one evaluation set (X may be an EmbeddedSplit)."""
    bins = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    local = local_alignment(est, X, y, bins=bins, queries_per_category=3, random_state=0,
                            return_details=True)
    own = local_alignment(est, X, y, bins=bins, queries_per_category=3, random_state=0,
                          query_time="own")
    bounded, table = temporally_bounded_retrieval(est, X, y, bins=bins)
    disp, centers = semantic_dispersion(est, X, [0, 7], bins=bins, k=3, exclude_self=True)
    evolution = cross_modal_evolution(est, X, [1, 8], bins=bins, top_bins=3, direction="t2i")
    return {
        "coarse": coarse_alignment(est, X, y),
        "local": local[0], "local_ap_i2t": local[1]["ap_i2t"], "local_own": own,
        "bounded": bounded, "per_bin": dict(table),
        "tmap": time_period_inference(est, X, y, window=0.5, k=5),
        "dispersion": disp, "centers": centers,
        "evolution": [t.records() for t in evolution],
    }


def _assert_same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], dict):
            for col in a[key]:
                np.testing.assert_array_equal(a[key][col], b[key][col], err_msg=key)
        elif isinstance(a[key], np.ndarray):
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
        else:
            assert a[key] == b[key], key


@pytest.fixture
def rotating_case():
    rng = np.random.default_rng(3)
    X = _data(rng.uniform(0, 2 * PI, 30), rng.uniform(0, 2 * PI, 30),
              time=rng.uniform(0, 4, 30))
    y = np.repeat([0, 1, 2], 10)
    return _fitted(X, speed=0.8), X, y


def test_embedded_split_gives_identical_results_and_embeds_once(rotating_case):
    est, X, y = rotating_case
    original = RotatingEmbedder._embed_rows
    with mock.patch.object(RotatingEmbedder, "_embed_rows", autospec=True,
                           side_effect=original) as embed_rows:
        direct = _all_protocols(est, X, y)
        assert embed_rows.call_count == 7  # each of the 7 protocol calls embeds X again
        embed_rows.reset_mock()
        split = embed_split(est, X, y)
        assert embed_rows.call_count == 1
        from_split = _all_protocols(est, split, None)  # y from the split
        assert embed_rows.call_count == 1  # ... and never again
        assert _all_protocols(None, split, None).keys() == from_split.keys()
        assert embed_rows.call_count == 1
    _assert_same(direct, from_split)
    # the local protocol really projected queries at the instants (speed 0.8)
    assert direct["local"] != direct["local_own"]
    assert isinstance(split, EmbeddedSplit) and split.n_samples == 30
    np.testing.assert_allclose(split.time, X[:, -1])
    np.testing.assert_allclose(np.hstack([split.Z_image, split.Z_text]), est.transform(X))
    with pytest.raises(ValueError, match="read-only"):
        split.Z_image[0, 0] = 0.0


def test_embedded_split_labels_and_estimator_checks(rotating_case):
    est, X, y = rotating_case
    unlabelled = embed_split(est, X)
    with pytest.raises(ValueError, match="y is required"):
        coarse_alignment(None, unlabelled)
    # a y given to the protocol replaces the split's labels
    assert coarse_alignment(None, unlabelled, y) == coarse_alignment(est, X, y)
    shuffled = np.roll(y, 1)
    assert coarse_alignment(est, embed_split(est, X, y), shuffled) == \
        coarse_alignment(est, X, shuffled)
    with pytest.raises(ValueError, match="different RotatingEmbedder"):
        coarse_alignment(_fitted(X), embed_split(est, X, y))
    with pytest.raises(ValueError, match="rows"):
        embed_split(est, X, y[:-1])
    with pytest.raises(ValueError, match="estimator is None"):
        coarse_alignment(None, X, y)


def test_protocols_on_a_pipeline_read_the_final_estimators_layout(rotating_case):
    # the pipeline's first step turns every angle feature a into a + 0.3 (time untouched):
    # every protocol on the pipeline equals the bare estimator on the shifted X, and
    # local alignment projects the *preprocessed* blocks at the instants.
    est, X, y = rotating_case
    shift = np.array([0.3, 0.3, 0.0])
    pipe = make_pipeline(FunctionTransformer(lambda A: A + shift),
                         RotatingEmbedder(speed=0.8, n_image_features=1))
    pipe.fit(X)
    _assert_same(_all_protocols(pipe, X, y), _all_protocols(pipe[-1], X + shift, y))
    split = embed_split(pipe, X, y)
    assert split.estimator is pipe[-1]
    np.testing.assert_allclose(split.X_image[:, 0], X[:, 0] + 0.3)
    assert coarse_alignment(pipe, split) == coarse_alignment(pipe, X, y)


def test_instants_and_windows_as_durations_and_dates():
    pd = pytest.importorskip("pandas")
    # the time-period case above, shifted to years 2000 / 2005 (time_unit="years")
    X = _data([0.0, 0.1, PI], [0.2, 0.07, PI], time=[2000.0, 2005.0, 2000.0])
    y = [0, 0, 1]
    est = _fitted(X)
    one_year = time_period_inference(est, X, y, window=1.0)
    assert one_year["mean"] == pytest.approx(5 / 6)
    for window in ("365.25D", "12M", "1Y", pd.Timedelta(days=365.25),
                   np.timedelta64(1, "Y")):
        assert time_period_inference(est, X, y, window=window) == one_year, window
    assert time_period_inference(est, X, y, window="5Y")["mean"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="window"):
        time_period_inference(est, X, y, window="5 fortnights")

    rng = np.random.default_rng(1)
    years = 2000.0 + rng.uniform(0, 3, 24)
    X = _data(rng.uniform(0, 2 * PI, 24), time=years)
    y = np.repeat([0, 1], 12)
    est = _fitted(X, speed=0.5)
    numeric, table = temporally_bounded_retrieval(est, X, y, bins=np.array([2000.0, 2001.0,
                                                                            2002.0, 2003.0]))
    dated_edges = np.array(["2000-01-01", "2001-01-01", "2002-01-01", "2003-01-01"],
                           dtype="datetime64[D]")
    dated, dated_table = temporally_bounded_retrieval(est, X, y, bins=dated_edges)
    assert dated == numeric
    np.testing.assert_allclose(dated_table["start"], [2000.0, 2001.0, 2002.0])
    # a bin width as a duration equals the same width in years
    by_width = local_alignment(est, X, y, bins=0.5, random_state=0, return_details=True)
    by_duration = local_alignment(est, X, y, bins="6M", random_state=0, return_details=True)
    assert by_duration[0] == by_width[0]
    np.testing.assert_array_equal(by_duration[1]["bin_centers"], by_width[1]["bin_centers"])
    assert len(by_width[1]["bin_centers"]) == 6
    disp_w, _ = semantic_dispersion(est, X, 0, bins=pd.Timedelta(days=365.25 / 2))
    np.testing.assert_array_equal(disp_w, semantic_dispersion(est, X, 0, bins=0.5)[0])
    with pytest.raises(ValueError, match="bins"):
        temporally_bounded_retrieval(est, X, y, bins="0D")


# ------------------------------------------------------------- validation
def test_validation_errors():
    X = _data([0.0, 0.2, 0.1], time=[0.0, 1.0, 2.0])
    est = _fitted(X)
    with pytest.raises(ValueError, match="rows"):
        coarse_alignment(est, X, [0, 1])
    with pytest.raises(ValueError, match="y is required"):
        coarse_alignment(est, X, None)
    with pytest.raises(ValueError, match="'k' parameter"):
        local_alignment(est, X, [0, 0, 1], k=0)
    with pytest.raises(ValueError, match="'k' parameter"):
        time_period_inference(est, X, [0, 0, 1], window=1.0, k=2.5)
    with pytest.raises(ValueError, match="'k' parameter"):
        semantic_dispersion(est, X, 0, k=True)
    for bad in (-1.0, np.nan, np.inf, "1"):
        with pytest.raises(ValueError, match="window"):
            time_period_inference(est, X, [0, 0, 1], window=bad)
    with pytest.raises(ValueError, match="out of range"):
        semantic_dispersion(est, X, 3)
    with pytest.raises(ValueError, match="out of range"):
        cross_modal_evolution(est, X, [0, -1])
    with pytest.raises(ValueError, match="query_index"):
        cross_modal_evolution(est, X, [0.5])
    with pytest.raises(ValueError, match="direction"):
        semantic_dispersion(est, X, 0, direction="both")
    with pytest.raises(ValueError, match="query_time"):
        local_alignment(est, X, [0, 0, 1], query_time="later")
    with pytest.raises(ValueError, match="aggregate"):
        temporally_bounded_retrieval(est, X, [0, 0, 1], aggregate="median")
    with pytest.raises(ValueError, match="top_bins"):
        cross_modal_evolution(est, X, 0, top_bins=0)
    with pytest.raises(NotFittedError):
        coarse_alignment(RotatingEmbedder(), X, [0, 0, 1])
    with pytest.raises(NotFittedError):
        semantic_dispersion(CCACrossModal(), X, 0)


# ---------------------------------------------------- real estimator sanity
@pytest.fixture(scope="module")
def cca_case():
    X, y, info = make_temporal_crossmodal(300, n_categories=4, n_image_features=20,
                                          n_text_features=16, return_info=True,
                                          random_state=0)
    cca = CCACrossModal(embedding_dim=6, n_image_features=info.n_image_features).fit(X)
    return cca, X, y


def test_all_protocols_on_cca(cca_case):
    cca, X, y = cca_case

    def check_scores(scores):
        assert set(scores) == {"i2t", "t2i", "mean"}
        assert all(0.0 <= v <= 1.0 for v in scores.values())
        assert scores["mean"] == pytest.approx((scores["i2t"] + scores["t2i"]) / 2)

    check_scores(coarse_alignment(cca, X, y))
    local, details = local_alignment(cca, X, y, bins=5, queries_per_category=10,
                                     random_state=0, return_details=True)
    check_scores(local)
    assert details["ap_i2t"].shape == (40, 5)
    # a static model ignores time: "own" and "instant" agree
    assert local_alignment(cca, X, y, bins=5, queries_per_category=10, random_state=0,
                           query_time="own") == local
    scores, table = temporally_bounded_retrieval(cca, X, y, bins=5)
    check_scores(scores)
    assert table.n_rows == 5 and table["n_items"].sum() == len(X)
    check_scores(time_period_inference(cca, X, y, window=1.0))
    disp, centers = semantic_dispersion(cca, X, [0, 1, 2], bins=5)
    assert disp.shape == (3, 5) and centers.shape == (5,)
    assert np.all((disp >= -1 - 1e-9) & (disp <= 1 + 1e-9))
    evolution = cross_modal_evolution(cca, X, [0, 5], bins=5, top_bins=3)
    assert len(evolution) == 2 and all(t.n_rows == 3 for t in evolution)
    assert np.all(np.diff(evolution[0]["similarity"]) <= 0)
    # a DataFrame X works the same
    pd = pytest.importorskip("pandas")
    assert coarse_alignment(cca, pd.DataFrame(X), y) == coarse_alignment(cca, X, y)


def test_plotting_smoke(cca_case, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cca, X, y = cca_case
    result = temporally_bounded_retrieval(cca, X, y, bins=5)
    ax = plot_per_bin_map({"CCA": result, "CCA (frame)": result[1].to_frame()})
    assert len(ax.get_lines()) == 2
    ax = plot_per_bin_map(result[1], direction="i2t")
    disp, centers = semantic_dispersion(cca, X, [0, 1], bins=5)
    fig, axes = plt.subplots(1, 2)
    plot_per_bin_map(result, ax=axes[0])
    ax = plot_dispersion(centers, disp, labels=["q0", "q1"], ax=axes[1])
    assert ax.get_ylim() == (-1.0, 1.0)
    path = tmp_path / "protocols.png"
    fig.savefig(path)
    assert path.stat().st_size > 0
    plt.close("all")
    with pytest.raises(ValueError, match="labels"):
        plot_dispersion(centers, disp, labels=["only one"])
    with pytest.raises(ValueError, match="per-bin"):
        plot_per_bin_map({"x": [1, 2]})


def test_undated_query_time_scores_take_dates():
    from temporal_xmodal.estimators import query_time_scores

    X = _data([0.0, 0.5, 1.0], time=[2000.0, 2001.0, 2002.0])
    est = _fitted(X, speed=0.5)
    dates = np.array(["2000-01-01", "2001-01-01", "2002-01-01"], dtype="datetime64[D]")
    numeric = query_time_scores(est, X[:, :1], X[:, 1:2], [2000.0, 2001.0, 2002.0],
                                calibrate=False)  # the raw cosines
    np.testing.assert_allclose(query_time_scores(est, X[:, :1], X[:, 1:2], dates,
                                                 calibrate=False), numeric)
    # captions are projected at the query's date: the diagonal is the own-time match
    np.testing.assert_allclose(np.diag(numeric), 1.0)
    assert numeric[0, 2] == pytest.approx(np.cos(1.0))


def test_the_per_category_breakdown_is_the_dense_reading_without_its_matrices():
    """Undated labelled data: the per-category mAP comes from the chunked scan (issue 55, 2:
    it built n × n float64 scores and a boolean relevance matrix, 17 GB at 30,000 test rows)
    and equals the dense per-query AP averaged per class."""
    from temporal_xmodal.evaluation.report import _per_category_map
    from temporal_xmodal.metrics import average_precision_per_query

    rng = np.random.default_rng(0)
    Z_image, Z_text, y = rng.normal(size=(300, 8)), rng.normal(size=(300, 8)), \
        rng.integers(0, 5, 300)
    scores, relevance = Z_image @ Z_text.T, y[:, None] == y[None, :]
    ap = 0.5 * (average_precision_per_query(scores, relevance)
                + average_precision_per_query(scores.T, relevance))
    dense = np.bincount(y, weights=ap) / np.bincount(y)
    np.testing.assert_allclose(_per_category_map(Z_image, Z_text, y)["map_mean"], dense,
                               rtol=1e-12)
