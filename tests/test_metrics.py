"""Retrieval metrics: exact agreement with scikit-learn and hand-computed cases."""

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, ndcg_score

from temporal_xmodal.scoring import SCORERS, make_retrieval_scorer
from temporal_xmodal.metrics import (
    average_precision_per_query,
    cross_modal_scores,
    iter_score_blocks,
    mean_average_precision,
    mean_reciprocal_rank,
    ndcg_at_k,
    ndcg_per_query,
    recall_at_k,
    recall_per_query,
    reciprocal_rank_per_query,
    retrieval_metrics_at_k,
)


def _multilabel(rng, n, n_labels=5, p=0.3):
    Y = rng.random((n, n_labels)) < p
    Y[np.arange(n), rng.integers(0, n_labels, n)] = True
    return Y


@pytest.mark.parametrize("tied", [False, True])
def test_map_equals_sklearn_loop_multilabel(tied):
    rng = np.random.default_rng(0)
    Q, G = rng.standard_normal((120, 8)), rng.standard_normal((700, 8))
    Yq, Yg = _multilabel(rng, 120), _multilabel(rng, 700)
    if tied:  # coarse embeddings -> many exactly tied scores
        Q, G = np.round(Q), np.round(G)
    per_query = mean_average_precision(Q, G, Yq, Yg, return_per_query=True,
                                       working_memory=0.1)[1]
    scores = Q @ G.T
    relevant = (Yq.astype(int) @ Yg.T.astype(int)) > 0
    reference = [average_precision_score(relevant[i], scores[i]) for i in range(len(Q))]
    np.testing.assert_allclose(per_query, reference, rtol=0, atol=1e-9)
    if tied:
        assert len(np.unique(scores[0])) < scores.shape[1] / 5  # ties really occur


def test_one_hot_indicators_rank_as_class_labels():
    """One label per row: the indicator path takes the class-label shortcut, same figures;
    a row without labels (or with two) keeps the shared-label counts."""
    rng = np.random.default_rng(3)
    Q, G = rng.standard_normal((50, 6)), rng.standard_normal((200, 6))
    yq, yg = rng.integers(0, 4, 50), rng.integers(0, 4, 200)
    Yq, Yg = np.eye(4, dtype=bool)[yq], np.eye(4, dtype=int)[yg]
    for metric in (mean_average_precision, ndcg_at_k):
        assert metric(Q, G, Yq, Yg) == metric(Q, G, yq, yg)
    Yq[0] = False  # a query without labels: nothing is relevant to it
    Yg[1, (yg[1] + 1) % 4] = 1  # items with two labels
    Yq[2] = Yg[1]
    gains = Yq.astype(int) @ Yg.T
    assert gains.max() == 2  # graded gains: the shared-label counts
    scores = Q @ G.T
    reference = np.mean([ndcg_score(gains[i:i + 1], scores[i:i + 1]) for i in range(1, 50)])
    assert abs(ndcg_at_k(Q, G, Yq, Yg, k=None, discount="standard") - reference) < 1e-12


def test_chunking_and_threads_do_not_change_results():
    rng = np.random.default_rng(1)
    Q, G = rng.standard_normal((300, 16)), rng.standard_normal((400, 16))
    yq, yg = rng.integers(0, 4, 300), rng.integers(0, 4, 400)
    full = mean_average_precision(Q, G, yq, yg, return_per_query=True)[1]
    tiny = mean_average_precision(Q, G, yq, yg, return_per_query=True, working_memory=0.01)[1]
    threaded = mean_average_precision(Q, G, yq, yg, return_per_query=True, n_jobs=2,
                                      working_memory=0.05)[1]
    np.testing.assert_array_equal(full, tiny)
    np.testing.assert_array_equal(full, threaded)


def test_hand_computed_ranking():
    # one query, gallery scores 0.9 0.8 0.7 0.6 0.5 with relevance 1 0 1 0 1
    scores = np.array([[0.9, 0.8, 0.7, 0.6, 0.5]])
    rel = np.array([[1, 0, 1, 0, 1]], dtype=bool)
    ap = (1 / 1 + 2 / 3 + 3 / 5) / 3
    assert average_precision_per_query(scores, rel)[0] == pytest.approx(ap)
    # AP@3: relevant in top 3 at ranks 1 and 3 -> (1 + 2/3) / 2 (relevant_in_topk)
    assert average_precision_per_query(scores, rel, k=3)[0] == pytest.approx((1 + 2 / 3) / 2)
    # min(k, R) normaliser: min(3, 3) = 3
    assert average_precision_per_query(
        scores, rel, k=3, ap_at_k_normaliser="min_k_total")[0] == pytest.approx((1 + 2 / 3) / 3)
    assert reciprocal_rank_per_query(scores[:, ::-1], rel[:, ::-1])[0] == 1.0
    assert reciprocal_rank_per_query(-scores, rel)[0] == pytest.approx(1 / 1)  # item 5 first
    assert reciprocal_rank_per_query(-scores, ~rel)[0] == pytest.approx(1 / 2)


def test_ties_count_against_the_query():
    scores = np.array([[1.0, 1.0, 0.0]])
    rel = np.array([[False, True, False]])
    # tied pair: rank of the relevant item is 2 (sklearn convention)
    assert reciprocal_rank_per_query(scores, rel)[0] == 0.5
    assert average_precision_per_query(scores, rel)[0] == 0.5
    assert average_precision_per_query(scores, rel, k=1)[0] == 0.0


def _next_up(x, steps=1):
    for _ in range(steps):
        x = np.nextafter(x, np.inf)
    return x


def _near_tied_scores(rng, case, n_q=40, n=300):
    """Scores that float32 merges but float64 orders (or ties), for the exact re-ranking."""
    s = rng.standard_normal((n_q, n))
    if case == "few_buckets":  # a few 1-ulp neighbours and exact ties per query
        for row in s:
            cols = rng.choice(n, 5, replace=False)
            v = row[cols[0]]
            row[cols] = [v, v, _next_up(v), _next_up(v, 2), v * (1 + 1e-12)]
    elif case == "long_bucket":  # one long run of equal scores, in half of the queries
        s[::2, :12] = s[::2, :1]
        s[1::2, 1] = _next_up(s[1::2, 0])
    elif case == "many_buckets":  # every score shares its float32 with others
        s = 0.5 + rng.integers(0, 6, (n_q, n)) * 1e-13
    elif case == "last_bit":  # pairs that differ in the last float64 bit only
        s[:, 1::2] = _next_up(s[:, 0::2])
    elif case == "zeros_and_extremes":  # -0.0 == +0.0; values beyond float32's range
        s[:, :3] = rng.choice([1e300, -1e300, 3.5e38, _next_up(3.5e38)], (n_q, 3))
        s[:, 3:8] = rng.choice([0.0, -0.0, 1e-50, -1e-50, 1e-320], (n_q, 5))
    return s


@pytest.mark.parametrize("case", ["few_buckets", "long_bucket", "many_buckets", "last_bit",
                                  "zeros_and_extremes"])
def test_scores_beyond_float32_precision_rank_as_sklearn(case):
    # The ranking sorts float32 keys (see metrics/_exact_ranks.py); scores it
    # merges must still rank by their float64 values, ties as sklearn does.
    rng = np.random.default_rng(5)
    scores = _near_tied_scores(rng, case)
    rel = rng.random(scores.shape) < 0.3
    rel[:, :2] = True
    ours = average_precision_per_query(scores, rel)
    reference = [average_precision_score(r, s) for r, s in zip(rel, scores)]
    np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-12)
    rank = (scores[:, None, :] >= scores[:, :, None]).sum(-1)  # brute force, ties count
    rr = [1 / rank[i][rel[i]].min() for i in range(len(scores))]
    np.testing.assert_allclose(reciprocal_rank_per_query(scores, rel), rr, rtol=0, atol=1e-15)
    recall = [np.mean(rank[i][rel[i]] <= 50) for i in range(len(scores))]
    np.testing.assert_allclose(recall_per_query(scores, rel, k=50), recall, rtol=0, atol=1e-15)


@pytest.mark.parametrize("layout", ["fortran", "transposed_view", "strided"])
def test_score_blocks_of_any_memory_layout_rank_alike(layout):
    # score blocks arrive as transposes (text->image) and slices: the flat
    # positions of the sorted keys must not depend on the input's layout
    rng = np.random.default_rng(3)
    scores = np.round(rng.standard_normal((30, 80)), 1)  # with ties
    rel = rng.random(scores.shape) < 0.2
    rel[:, 0] = True
    block = {"fortran": np.asfortranarray(scores),
             "transposed_view": np.ascontiguousarray(scores.T).T,
             "strided": np.repeat(scores, 2, axis=1)[:, ::2]}[layout]
    rel_block = np.asfortranarray(rel) if layout != "strided" else rel
    for func in (average_precision_per_query, reciprocal_rank_per_query):
        np.testing.assert_array_equal(func(block, rel_block), func(scores, rel))


def test_queries_without_relevant_items_are_skipped():
    scores = np.array([[0.3, 0.2], [0.1, 0.9]])
    rel = np.array([[False, False], [False, True]])
    ap = average_precision_per_query(scores, rel)
    assert np.isnan(ap[0]) and ap[1] == 1.0


@pytest.mark.parametrize("k", [5, 20, None])
def test_ndcg_standard_discount_equals_sklearn(k):
    rng = np.random.default_rng(2)
    scores = np.round(rng.standard_normal((40, 60)), 1)  # with ties
    gains = rng.integers(0, 4, (40, 60))
    ours = ndcg_per_query(scores, gains, k=k, discount="standard")
    ref = [ndcg_score(gains[i:i + 1], scores[i:i + 1], k=k) for i in range(40)]
    np.testing.assert_allclose(ours, ref, atol=1e-12)


def test_ndcg_jarvelin_hand_computed():
    # eq. 2.20: DCG = rel1 + sum_{i>=2} rel_i / log2(i); ranked gains 2, 0, 1, 3
    scores = np.array([[4.0, 3.0, 2.0, 1.0]])
    gains = np.array([[2, 0, 1, 3]])
    dcg = 2 + 0 / np.log2(2) + 1 / np.log2(3) + 3 / np.log2(4)
    idcg = 3 + 2 / np.log2(2) + 1 / np.log2(3) + 0
    assert ndcg_per_query(scores, gains)[0] == pytest.approx(dcg / idcg)
    exp = ndcg_per_query(scores, gains, gain="exponential")[0]
    assert exp == pytest.approx((3 + 1 / np.log2(3) + 7 / 2) / (7 + 3 + 1 / np.log2(3)))


def test_embedding_level_functions_on_known_structure():
    # queries equal to their counterparts: perfect retrieval
    rng = np.random.default_rng(3)
    E = rng.standard_normal((50, 10))
    assert mean_reciprocal_rank(E, E, similarity="cosine") == 1.0
    assert recall_at_k(E, E, k=1, similarity="cosine") == 1.0
    y = np.repeat(np.arange(5), 10)
    centroids = rng.standard_normal((5, 10)) * 10
    Z = centroids[y] + rng.standard_normal((50, 10)) * 0.01
    assert mean_average_precision(Z, Z, y, y) == pytest.approx(1.0)
    assert ndcg_at_k(Z, Z, y, y, k=10) == pytest.approx(1.0)
    # random embeddings: mAP close to the class prior
    R = rng.standard_normal((2000, 10))
    yr = rng.integers(0, 10, 2000)
    assert abs(mean_average_precision(R, R[::-1], yr, yr[::-1]) - 0.1) < 0.02


def test_time_window_relevance():
    # two items of the same class, far apart in time: relevant without a window,
    # not relevant with it
    # A (class 0, t=0), B (class 0, t=10), C (class 1, t=0); A's ranking: A, C, B
    Z = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.1]])
    y = np.array([0, 0, 1])
    t = np.array([0.0, 10.0, 0.0])
    s = cross_modal_scores(Z, Z, y, metrics=("map",), similarity="cosine")
    s_win = cross_modal_scores(Z, Z, y, metrics=("map",), time=t, time_window=1.0,
                               similarity="cosine")
    assert s["map"] == pytest.approx((2 * (1 + 2 / 3) / 2 + 1) / 3)
    assert s_win["map"] == 1.0  # only the item itself remains relevant, ranked first


def test_hamming_similarity_ranks_sign_codes():
    codes = np.array([[1, 1, 1, 1], [1, 1, 1, -1], [-1, -1, -1, -1]], dtype=float)
    q = np.array([[0.5, 0.2, 0.1, 0.3]])  # sign code 1111
    _, scores, _ = next(iter_score_blocks(q, codes, [0], [0, 0, 1], similarity="hamming"))
    np.testing.assert_array_equal(scores, [[4.0, 2.0, -4.0]])


def test_scorers_work_in_grid_search_style():
    from temporal_xmodal import CCACrossModal
    from temporal_xmodal.datasets import make_temporal_crossmodal

    X, y, info = make_temporal_crossmodal(400, return_info=True, random_state=0)
    est = CCACrossModal(n_image_features=info.n_image_features).fit(X)
    assert SCORERS["map"](est, X, y) == pytest.approx(est.score(X, y))
    i2t = make_retrieval_scorer("map", direction="i2t")(est, X, y)
    t2i = make_retrieval_scorer("map", direction="t2i")(est, X, y)
    assert (i2t + t2i) / 2 == pytest.approx(est.score(X, y))
    windowed = make_retrieval_scorer("map", k=50, time_window=0.5)(est, X, y)
    assert 0 < windowed <= 1


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(k=0), "'k' parameter"),
        (dict(ap_at_k_normaliser="bad", k=3), "ap_at_k_normaliser"),
        (dict(similarity="euclid"), "'similarity' parameter"),
        (dict(time_window=1.0), "needs both query_time and gallery_time"),
    ],
)
def test_bad_arguments(kwargs, match):
    Z, y = np.eye(3), np.array([0, 1, 1])
    with pytest.raises(ValueError, match=match):
        mean_average_precision(Z, Z, y, y, **kwargs)


def test_bad_inputs():
    Z = np.eye(3)
    with pytest.raises(ValueError, match="NaN or infinity"):
        mean_average_precision(np.full((3, 3), np.nan), Z)
    with pytest.raises(ValueError, match="differ in dimension"):
        mean_average_precision(Z, np.eye(4))
    with pytest.raises(ValueError, match="counterpart"):
        mean_reciprocal_rank(Z, np.eye(5, 3))
    with pytest.raises(ValueError, match="both be 1-D"):
        mean_average_precision(Z, Z, [0, 1, 1], np.eye(3))


# --------------------------------------------------------------------------
# @k metrics from a chunked top-k
# --------------------------------------------------------------------------


@pytest.mark.parametrize("labels, tied, k", [
    ("single", True, 1), ("single", True, 6), ("single", False, 40),
    ("multilabel", True, 1), ("multilabel", True, 40), ("multilabel", False, 6),
    ("counterpart", True, 6), ("counterpart", False, 1),
])
def test_topk_metrics_equal_full_ranking(labels, tied, k):
    rng = np.random.default_rng(10 + k)
    n_q, n_g = (60, 60) if labels == "counterpart" else (50, 230)
    Q, G = rng.standard_normal((n_q, 6)), rng.standard_normal((n_g, 6))
    if tied:  # integer embeddings: many exactly tied scores, tie groups across position k
        Q, G = np.round(Q), np.round(G)
    yq = yg = None
    if labels == "single":
        yq, yg = rng.integers(0, 5, n_q), rng.integers(0, 5, n_g)
    elif labels == "multilabel":
        yq, yg = _multilabel(rng, n_q, 4), _multilabel(rng, n_g, 4)
    for opts in (dict(gain="linear", discount="jarvelin", ap_at_k_normaliser="relevant_in_topk"),
                 dict(gain="exponential", discount="standard", ap_at_k_normaliser="min_k_total")):
        # a tiny working memory forces many gallery chunks and query blocks
        ours, per_query = retrieval_metrics_at_k(Q, G, yq, yg, k=k, working_memory=0.05,
                                                 return_per_query=True, **opts)
        reference = {
            "map": mean_average_precision(Q, G, yq, yg, k=k, return_per_query=True,
                                          ap_at_k_normaliser=opts["ap_at_k_normaliser"])[1],
            "recall": _per_query_of(recall_per_query, Q, G, yq, yg, k=k),
            "mrr": _per_query_of(reciprocal_rank_per_query, Q, G, yq, yg),
            "ndcg": _per_query_of(ndcg_per_query, Q, G, yq, yg, k=k, gain=opts["gain"],
                                  discount=opts["discount"]),
        }
        for name, ref in reference.items():
            np.testing.assert_allclose(per_query[name], ref, rtol=0, atol=1e-12,
                                       err_msg=f"{name} {opts}")
        assert ours["ndcg"] == pytest.approx(ndcg_at_k(Q, G, yq, yg, k=k, gain=opts["gain"],
                                                       discount=opts["discount"]), abs=1e-12)
        assert ours["mrr"] == pytest.approx(mean_reciprocal_rank(Q, G, yq, yg), abs=1e-12)
    if tied:  # the tie handling is really exercised: groups straddle position k
        scores = np.sort(Q @ G.T, axis=1)[:, ::-1]
        kk = min(k, n_g - 1)
        assert np.any(scores[:, kk - 1] == scores[:, kk])


def _per_query_of(func, Q, G, yq, yg, **kwargs):
    """Per-query values of a _ranking function over the whole score matrix."""
    scores = Q @ G.T
    if yq is None:
        gains = np.eye(len(Q), len(G), dtype=bool)
    elif np.ndim(yq) == 1:
        gains = np.asarray(yq)[:, None] == np.asarray(yg)[None, :]
    else:
        gains = np.asarray(yq, dtype=np.int64) @ np.asarray(yg, dtype=np.int64).T
    return func(scores, gains, **kwargs)


def test_topk_metrics_time_window_and_single_metric_string():
    rng = np.random.default_rng(4)
    Q, G = rng.standard_normal((40, 5)), rng.standard_normal((300, 5))
    yq, yg = rng.integers(0, 3, 40), rng.integers(0, 3, 300)
    tq, tg = rng.uniform(0, 10, 40), rng.uniform(0, 10, 300)
    ours = retrieval_metrics_at_k(Q, G, yq, yg, k=10, metrics="map", query_time=tq,
                                  gallery_time=tg, time_window=2.0)
    assert set(ours) == {"map"}
    ref = mean_average_precision(Q, G, yq, yg, k=10, query_time=tq, gallery_time=tg,
                                 time_window=2.0)
    assert ours["map"] == pytest.approx(ref, abs=1e-12)
    without = retrieval_metrics_at_k(Q, G, yq, yg, k=10, metrics="map")
    assert without["map"] != pytest.approx(ours["map"], abs=1e-3)  # the window matters
    with pytest.raises(ValueError, match=r"Unknown metrics \['top1'\]"):
        retrieval_metrics_at_k(Q, G, yq, yg, metrics="top1")


def test_topk_metrics_memory_is_bounded_by_the_block_not_the_gallery():
    """A 2,000 x 100,000 evaluation (200 M pairs, 1.6 GB as float64 scores) in 16 MiB blocks."""
    import tracemalloc

    import torch

    rng = np.random.default_rng(5)
    Q, G = rng.standard_normal((2000, 8)), rng.standard_normal((100_000, 8))
    yq, yg = rng.integers(0, 10, 2000), rng.integers(0, 10, 100_000)
    torch.set_num_threads(1)
    tracemalloc.start()
    ours = retrieval_metrics_at_k(Q[:200], G, yq[:200], yg, k=20, metrics=("map", "recall"),
                                  working_memory=16)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 64 * 2**20  # numpy allocations (torch's are not traced; see benchmark)
    assert 0 < ours["recall"] < 0.01  # random data: 20 of ~10,000 relevant items found


@pytest.mark.parametrize("labels, tied, k", [
    ("single", True, 40), ("multilabel", True, 7), ("counterpart", True, 6),
    ("single", False, 1), ("multilabel", False, 40),
])
def test_topk_metrics_gpu_plan_and_tensors_give_the_cpu_figures(monkeypatch, labels, tied, k):
    """The GPU plan (large blocks), run on the CPU, and tensor inputs: the same figures."""
    import torch

    from temporal_xmodal.metrics._scan import _engine

    rng = np.random.default_rng(20 + k)
    n_q, n_g = (60, 60) if labels == "counterpart" else (150, 700)
    Q, G = rng.standard_normal((n_q, 6)), rng.standard_normal((n_g, 6))
    if tied:
        Q, G = np.round(Q), np.round(G)
    yq = yg = None
    if labels == "single":
        yq, yg = rng.integers(0, 5, n_q), rng.integers(0, 5, n_g)
    elif labels == "multilabel":
        yq, yg = _multilabel(rng, n_q, 4), _multilabel(rng, n_g, 4)
    opts = dict(k=k, gain="exponential", return_per_query=True)
    _, cpu = retrieval_metrics_at_k(Q, G, yq, yg, working_memory=0.05, **opts)
    as_t = lambda a: None if a is None else torch.as_tensor(a)  # noqa: E731
    _, tensors = retrieval_metrics_at_k(as_t(Q), as_t(G), as_t(yq), as_t(yg), device="cpu",
                                        **opts)
    monkeypatch.setattr(_engine, "planning_device", lambda A: torch.device("cuda"))
    assert _at_k_plan(n_q, n_g, None, "cuda", k + 1)[0] == n_q  # one block of all queries
    gpu = [retrieval_metrics_at_k(Q, G, yq, yg, working_memory=wm, **opts)[1]
           for wm in (None, 0.05)]
    for other in (tensors, *gpu):
        for name, values in cpu.items():
            # equal but for the summation order of tied items (their order in a top list)
            np.testing.assert_allclose(other[name], values, rtol=0, atol=1e-14, err_msg=name)


@pytest.mark.parametrize("similarity", ["dot", "cosine", "hamming"])
def test_topk_metrics_torch_preparation_matches_numpy(similarity):
    """The steps GPU tensors take instead of the NumPy path: same checks, same scores."""
    import torch

    from temporal_xmodal._input import check_embedding
    from temporal_xmodal.metrics._scan import prepare_similarity as _similarity

    _similarity_torch = _similarity  # one function for arrays and tensors

    def _as_device_embeddings(T, name, device):  # the checks GPU tensors go through
        return check_embedding(T, name, kind="torch", dtype=torch.float64, device=device)

    rng = np.random.default_rng(30)
    Q, G = rng.standard_normal((20, 5)), rng.standard_normal((40, 5))
    Qt = _as_device_embeddings(torch.from_numpy(Q.astype(np.float32)), "query", "cpu")
    assert Qt.dtype == torch.float64  # tensors are scored in float64, as on the CPU path
    Qt, Gt = _similarity_torch(Qt, torch.from_numpy(G), similarity)
    Qn, Gn = _similarity(Q.astype(np.float32).astype(np.float64), G, similarity)
    np.testing.assert_allclose(Qt.numpy(), Qn, rtol=0, atol=1e-15)
    np.testing.assert_allclose(Gt.numpy(), Gn, rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="query contains NaN or infinity in 1 of its 20 rows"):
        _as_device_embeddings(torch.from_numpy(np.where(Q == Q[3, 2], np.inf, Q)), "query",
                              "cpu")
    with pytest.raises(ValueError, match="must be 2-D"):
        _as_device_embeddings(torch.zeros(3), "query", "cpu")
    with pytest.raises(ValueError, match="'similarity' parameter"):
        retrieval_metrics_at_k(Q, G, similarity="manhattan")


def test_topk_metrics_on_cuda_equal_cpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    rng = np.random.default_rng(31)
    Q, G = np.round(rng.standard_normal((300, 6))), np.round(rng.standard_normal((2000, 6)))
    yq, yg = _multilabel(rng, 300, 4), _multilabel(rng, 2000, 4)
    _, cpu = retrieval_metrics_at_k(Q, G, yq, yg, k=20, return_per_query=True)
    _, gpu = retrieval_metrics_at_k(torch.from_numpy(Q).cuda(), torch.from_numpy(G).cuda(),
                                    torch.from_numpy(yq).cuda(), torch.from_numpy(yg).cuda(),
                                    k=20, return_per_query=True)
    for name, values in cpu.items():
        np.testing.assert_allclose(gpu[name], values, rtol=0, atol=1e-12, err_msg=name)


def _at_k_plan(n_query, n_gallery, working_memory, device, width=1):
    """The scan plan of retrieval_metrics_at_k with top lists of ``width`` items."""
    from temporal_xmodal.metrics._at_k import _FOOTPRINT
    from temporal_xmodal.metrics._scan import plan_scan

    return tuple(plan_scan(_FOOTPRINT._replace(bytes_per_query=24 * width**2), n_query,
                           n_gallery, working_memory, device))


def test_topk_metrics_plans_by_device():
    _plan = _at_k_plan
    assert _plan(10_000, 10**6, None, "cpu") == (128, 2048)  # cache-sized, as before
    assert _plan(10_000, 10**6, 16, "cpu") == (128, 2048)
    assert _plan(100, 10**6, 0.05, "cpu") == (100, 10)
    q_block, g_chunk = _plan(10_000, 10**6, 8192, "cuda", 101)
    assert q_block == 1024 and g_chunk == 8192 * 2**20 // 48 // 1024
    assert _plan(100, 5000, None, "cuda", 11) == (100, 5000)
    # the (k + 1)^2 comparisons of the top lists bound the block
    assert _plan(10_000, 10**6, 1024, "cuda", 2001)[0] == 2**30 // (24 * 2001**2)


# --------------------------------------------------------------------------
# nan_policy and metric names
# --------------------------------------------------------------------------


def test_nan_labels_and_times_raise_by_default_and_omit_with_a_count():
    rng = np.random.default_rng(6)
    Z = rng.standard_normal((30, 4))
    y = rng.integers(0, 3, 30).astype(float)
    y[[2, 5]] = np.nan
    with pytest.raises(ValueError, match=r"2 of 30 queries and 2 of 30 gallery items have a "
                                         r"missing \(NaN\) label"):
        mean_average_precision(Z, Z, y, y)
    with pytest.warns(UserWarning, match="2 of 30 queries"):
        value, per_query = mean_average_precision(Z, Z, y, y, nan_policy="omit",
                                                  return_per_query=True)
    assert np.isnan(per_query[[2, 5]]).all() and not np.isnan(np.delete(per_query, [2, 5])).any()
    keep = ~np.isnan(y)
    assert value == pytest.approx(mean_average_precision(Z[keep], Z[keep], y[keep], y[keep]))
    # a NaN time only matters under a time window
    t = rng.uniform(0, 5, 30)
    t[7] = np.nan
    yi = rng.integers(0, 3, 30)
    assert np.isfinite(cross_modal_scores(Z, Z, yi, metrics="map", time=t)["map"])
    with pytest.raises(ValueError, match=r"1 of 30 queries .* label or time"):
        cross_modal_scores(Z, Z, yi, metrics="map", time=t, time_window=1.0)
    with pytest.warns(UserWarning, match="1 of 30 queries"):
        omitted = cross_modal_scores(Z, Z, yi, metrics="map", time=t, time_window=1.0,
                                     nan_policy="omit")
    keep = np.isfinite(t)
    assert omitted["map"] == pytest.approx(cross_modal_scores(
        Z[keep], Z[keep], yi[keep], metrics="map", time=t[keep], time_window=1.0)["map"])
    with pytest.raises(ValueError, match="2 of 30 queries"):
        retrieval_metrics_at_k(Z, Z, y, y, k=3)
    with pytest.raises(ValueError, match="'nan_policy' parameter"):
        mean_average_precision(Z, Z, yi, yi, nan_policy="ignore")


def test_single_metric_string_is_one_metric():
    Z, y = np.eye(4), np.array([0, 0, 1, 1])
    out = cross_modal_scores(Z, Z, y, metrics="map")
    assert set(out) == {"map", "map_i2t", "map_t2i"}
    with pytest.raises(ValueError, match=r"Unknown metrics \['top1'\]"):
        cross_modal_scores(Z, Z, y, metrics="top1")


@pytest.mark.parametrize("scorer", [SCORERS["map"], make_retrieval_scorer("mrr", k=5)])
def test_retrieval_scorer_on_a_classifier_pipeline_names_the_final_step(scorer):
    """A retrieval scorer needs a pipeline ending in a cross-modal embedder; a classifier
    there gets a clear TypeError naming its class, not an AttributeError on a private
    method."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 6)), np.arange(40) % 2
    pipe = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    with pytest.raises(TypeError, match=r"needs a cross-modal embedder .* Pipeline's final "
                       r"step \('logisticregression'\) is LogisticRegression"):
        scorer(pipe, X, y)
    with pytest.raises(TypeError, match=r"cross-modal embedder .*got LogisticRegression"):
        scorer(pipe[-1], X, y)
