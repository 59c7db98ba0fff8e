"""Top-k search, the cross-modal index, exploration over time, and the search benchmark."""

import builtins
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from _device_guard import HostSyncs
from _tiny import tiny
from temporal_xmodal import CCACrossModal, DiachronicEmbedder
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.search import (
    CrossModalIndex,
    SearchResult,
    cross_modal_search,
    neighbourhood_over_time,
    neighbourhood_shift,
    plot_neighbourhood_over_time,
    plot_neighbourhood_shift,
    search_embeddings,
)

pd = pytest.importorskip("pandas")
BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_search.py"


def _brute(Q, G, k):
    S = Q @ G.T
    order = np.lexsort((np.broadcast_to(np.arange(G.shape[0]), S.shape), -S), axis=1)[:, :k]
    return np.take_along_axis(S, order, 1), order


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("working_memory", [0.5, None])  # 0.5 MiB: 7 gallery chunks
def test_search_embeddings_equals_brute_force(dtype, working_memory):
    rng = np.random.default_rng(0)
    Q = rng.standard_normal((70, 12)).astype(dtype)
    G = rng.standard_normal((3001, 12)).astype(dtype)
    scores, idx = search_embeddings(Q, G, k=15, working_memory=working_memory)
    ref_s, ref_i = _brute(Q.astype(np.float64), G.astype(np.float64), 15)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_allclose(scores, ref_s, atol=1e-5 if dtype == np.float32 else 1e-12)
    assert scores.dtype == dtype and idx.dtype == np.int64


def test_ties_are_ordered_by_index_and_k_is_capped():
    G = np.array([[1.0, 0], [0, 1], [1, 0], [1, 0]])
    scores, idx = search_embeddings(np.array([[1.0, 0.0]]), G, k=10, working_memory=1e-5)
    assert idx.tolist() == [[0, 2, 3, 1]]  # 3 tied at 1.0 by increasing index; k capped at 4
    assert scores.tolist() == [[1.0, 1.0, 1.0, 0.0]]


# --------------------------------------------------------------------------
# GPU plan (large blocks, one topk per block and chunk, no host sync), run on the CPU
# --------------------------------------------------------------------------


def _gpu_plan(monkeypatch):
    """Make every scan plan as on a CUDA device while the tensors stay on the CPU."""
    from temporal_xmodal.metrics._scan import _engine

    monkeypatch.setattr(_engine, "planning_device", lambda A: torch.device("cuda"))


def _tied_galleries(kind, dtype, rng):
    """Query and gallery whose products are exact in float32 (any summation order)."""
    if kind == "integers":  # many exact ties, tie groups across chunk and k boundaries
        Q, G = rng.integers(-1, 2, (45, 6)), rng.integers(-1, 2, (900, 6))
    elif kind == "dyadic":  # mostly distinct scores, multiples of 1/32
        Q, G = rng.integers(-4, 5, (45, 6)) / 4, rng.integers(-8, 9, (900, 6)) / 8
    elif kind == "duplicates":  # every gallery item three times
        Q, G = rng.integers(-4, 5, (45, 6)) / 4, np.repeat(rng.integers(-8, 9, (300, 6)) / 8, 3, 0)
    else:  # all scores 0: the k smallest indices
        Q, G = rng.integers(-4, 5, (45, 6)), np.zeros((900, 6))
    return Q.astype(dtype), G.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["integers", "dyadic", "duplicates", "zeros"])
@pytest.mark.parametrize("k", [1, 37, 900, 2000])  # 2000 > n_gallery: capped at 900
@pytest.mark.parametrize("working_memory", [0.003, None])  # 0.003 MiB: chunks of < k rows
def test_gpu_plan_gives_the_cpu_results(monkeypatch, dtype, kind, k, working_memory):
    rng = np.random.default_rng(7)
    Q, G = _tied_galleries(kind, dtype, rng)
    cpu = search_embeddings(Q, G, k=k, working_memory=working_memory)
    _gpu_plan(monkeypatch)
    gpu = search_embeddings(Q, G, k=k, working_memory=working_memory)
    ref_s, ref_i = _brute(Q.astype(np.float64), G.astype(np.float64), min(k, len(G)))
    for scores, idx in (cpu, gpu):
        np.testing.assert_array_equal(idx, ref_i)
        np.testing.assert_array_equal(scores, ref_s.astype(dtype))
        assert scores.dtype == dtype and idx.dtype == np.int64


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gpu_plan_equals_brute_force_on_continuous_scores(monkeypatch, dtype):
    rng = np.random.default_rng(8)
    Q = rng.standard_normal((70, 12)).astype(dtype)
    G = rng.standard_normal((3001, 12)).astype(dtype)
    _gpu_plan(monkeypatch)
    for working_memory in (0.5, None):  # 0.5 MiB: several query blocks and gallery chunks
        scores, idx = search_embeddings(Q, G, k=15, working_memory=working_memory)
        ref_s, ref_i = _brute(Q.astype(np.float64), G.astype(np.float64), 15)
        np.testing.assert_array_equal(idx, ref_i)
        np.testing.assert_allclose(scores, ref_s, atol=1e-5 if dtype == np.float32 else 1e-12)


def test_search_plans_by_device():
    from temporal_xmodal.metrics._scan import plan_scan, topk_footprint

    def plan(n_q, n_g, itemsize, wm, device):
        return tuple(plan_scan(topk_footprint(itemsize), n_q, n_g, wm, device))

    # CPU: cache-sized blocks (threshold pruning)
    assert plan(10_000, 10**6, 4, None, "cpu") == (1024, 4096)
    # GPU: 1,024+ queries, the whole gallery when the budget holds it
    assert plan(10_000, 10**6, 4, 8192, "cuda") == (8192 * 2**20 // 8 // 10**6, 10**6)
    assert plan(10_000, 20_000, 4, 8192, "cuda") == (4096, 20_000)
    q_block, g_chunk = plan(10_000, 10**6, 8, 1024, "cuda")
    assert q_block == 1024 and g_chunk == 2**30 // 16 // 1024
    assert plan(5, 7, 4, None, "cuda") == (5, 7)


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_gpu_plan_scan_makes_one_host_sync(device):
    # meta tensors hold no data: nonzero or .item() anywhere but the final check would fail
    from temporal_xmodal.metrics._scan import Scan, ScanPlan, topk_footprint
    from temporal_xmodal.metrics._scan._topk import _DenseTopk

    Q = torch.randn(300, 8).to(device)
    G = torch.randn(1000, 8).to(device)
    scan = Scan(Q, G, topk_footprint(4))
    scan.plan = ScanPlan(64, 300)  # 5 query blocks x 4 gallery chunks
    with HostSyncs(fake=False if device == "meta" else None) as syncs:
        top = scan.run(_DenseTopk(torch.empty((300, 10), dtype=Q.dtype, device=device),
                                  torch.empty((300, 10), dtype=torch.int64, device=device)))
    assert syncs.calls == ["aten._local_scalar_dense.default"]  # the final tie check
    scores, idx = top.scores, top.indices
    assert scores.shape == idx.shape == (300, 10)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_search_on_cuda_equals_cpu():
    rng = np.random.default_rng(9)
    for kind in ("integers", "dyadic", "zeros"):
        Q, G = _tied_galleries(kind, np.float32, rng)
        cpu = search_embeddings(Q, G, k=37)
        gpu = search_embeddings(torch.from_numpy(Q).cuda(), torch.from_numpy(G).cuda(), k=37)
        np.testing.assert_array_equal(gpu[1], cpu[1])
        np.testing.assert_array_equal(gpu[0], cpu[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["increasing", "tied", "few_chunk_rows"])
def test_threshold_pruning_keeps_the_exact_topk(dtype, order):
    # The running k-th best score prunes each chunk (metrics/_scan/_topk.py); these
    # galleries defeat it: the best items come last (every chunk beats the
    # threshold), or many integer scores tie at the k-th score across chunks
    # (the k with the smallest indices must win), or chunks smaller than k.
    rng = np.random.default_rng(3)
    if order == "increasing":
        direction = rng.standard_normal(16)
        G = np.linspace(0.1, 1.0, 4000)[:, None] * direction
        G += 1e-3 * rng.standard_normal(G.shape)
        Q = direction + 0.1 * rng.standard_normal((30, 16))
    else:
        G = rng.integers(-1, 2, (4000, 16)).astype(float)
        Q = rng.integers(-1, 2, (30, 16)).astype(float)
    Q, G = Q.astype(dtype), G.astype(dtype)
    k = 50
    working_memory = 0.002 if order == "few_chunk_rows" else 0.05  # float32 chunks: 8 / 218 rows
    scores, idx = search_embeddings(Q, G, k=k, working_memory=working_memory)
    ref_s, ref_i = _brute(Q.astype(np.float64), G.astype(np.float64), k)
    if order == "increasing":
        assert (idx >= 3000).all()  # the best items really are in the last chunks
    else:
        assert (ref_s[:, -1:] == ref_s[:, -2:-1]).any()  # ties at the k-th score occur
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_allclose(scores, ref_s, atol=1e-5 if dtype == np.float32 else 1e-12)


def test_cosine_similarity_and_bad_arguments():
    rng = np.random.default_rng(1)
    Q, G = rng.standard_normal((5, 4)), rng.standard_normal((50, 4)) * rng.uniform(0.1, 9, (50, 1))
    _, idx = search_embeddings(Q, G, k=3, similarity="cosine")
    Gn = G / np.linalg.norm(G, axis=1, keepdims=True)
    np.testing.assert_array_equal(idx, _brute(Q, Gn, 3)[1])
    with pytest.raises(ValueError, match="'k' parameter"):
        search_embeddings(Q, G, k=0)
    with pytest.raises(ValueError, match="differ in dimension: 4 vs 3"):
        search_embeddings(Q, G[:, :3])
    with pytest.raises(ValueError, match="gallery contains NaN or infinity in 1 of its 50 rows"):
        search_embeddings(Q, np.where(np.arange(50)[:, None] == 7, np.nan, G))
    with pytest.raises(ValueError, match="'backend' parameter"):
        search_embeddings(Q, G, backend="annoy")


def test_faiss_backend_gives_the_same_topk():
    pytest.importorskip("faiss")
    rng = np.random.default_rng(2)
    Q = rng.standard_normal((40, 16)).astype(np.float32)
    G = rng.standard_normal((2000, 16)).astype(np.float32)
    s_t, i_t = search_embeddings(Q, G, k=20)
    s_f, i_f = search_embeddings(Q, G, k=20, backend="faiss")
    np.testing.assert_array_equal(i_t, i_f)
    np.testing.assert_allclose(s_t, s_f, atol=1e-5)


def test_missing_faiss_gives_an_actionable_import_error(monkeypatch):
    real_import = builtins.__import__

    def no_faiss(name, *args, **kwargs):
        if name == "faiss":
            raise ImportError("No module named 'faiss'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_faiss)
    with pytest.raises(ImportError, match=r"pip install temporal-xmodal\[faiss\]"):
        search_embeddings(np.eye(3), np.eye(3), k=1, backend="faiss")


@pytest.fixture(scope="module")
def cca_data():
    X, y, info = make_temporal_crossmodal(300, return_info=True, random_state=0)
    est = CCACrossModal(n_image_features=info.n_image_features).fit(X)
    n_img = info.n_image_features
    return est, X[:, :n_img], X[:, n_img:-1], X[:, -1]


def test_index_search_matches_brute_force_with_payload(cca_data):
    est, X_img, X_txt, _ = cca_data
    captions = pd.Series([f"caption {i}" for i in range(len(X_txt))], name="caption")
    index = CrossModalIndex(est, modality="text").fit(X_txt, payload=captions)
    frame = index.search(X_img[:4], k=5)
    assert list(frame.columns) == ["query", "rank", "index", "score", "caption"]
    assert len(frame) == 20 and frame["rank"].tolist()[:5] == [1, 2, 3, 4, 5]
    Zi, Zt = est.transform_image(X_img[:4]), est.transform_text(X_txt)
    ref_s, ref_i = _brute(Zi, Zt, 5)
    np.testing.assert_array_equal(frame["index"].to_numpy().reshape(4, 5), ref_i)
    np.testing.assert_allclose(frame["score"].to_numpy().reshape(4, 5), ref_s, atol=1e-12)
    assert (frame["caption"] == [f"caption {i}" for i in frame["index"]]).all()
    arrays = index.search(X_img[:4], k=5, as_frame=False)
    assert isinstance(arrays, SearchResult) and arrays.payload_of().shape == (4, 5)
    # the one-shot function gives the same, text -> image too
    once = cross_modal_search(est, X_img[:4], X_txt, k=5, payload=captions, as_frame=False)
    np.testing.assert_array_equal(once.indices, arrays.indices)
    t2i = cross_modal_search(est, X_txt[:3], X_img, k=2, direction="t2i", as_frame=False)
    np.testing.assert_array_equal(t2i.indices, _brute(est.transform_text(X_txt[:3]),
                                                      est.transform_image(X_img), 2)[1])


def test_query_and_gallery_ids_are_the_callers(cca_data):
    est, X_img, X_txt, _ = cca_data
    captions = [f"c{i}" for i in range(len(X_txt))]
    index = CrossModalIndex(est, modality="text").fit(X_txt, payload=captions)
    rows = [5, 42, 77]
    plain = index.search(X_img[rows], k=3)
    # arrays: ids= gives the query column; nothing else changes
    frame = index.search(X_img[rows], k=3, ids=rows)
    assert frame["query"].tolist() == [5, 5, 5, 42, 42, 42, 77, 77, 77]
    assert plain["query"].tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    pd.testing.assert_frame_equal(frame.drop(columns="query"), plain.drop(columns="query"))
    assert "gallery_id" not in frame  # an array gallery has no ids
    # DataFrames: their index on both sides; `index` stays the gallery row
    queries = pd.DataFrame(X_img, index=[f"img{i}" for i in range(len(X_img))]).iloc[rows]
    gallery = pd.DataFrame(X_txt, index=[f"txt{i}" for i in range(len(X_txt))])
    framed = CrossModalIndex(est, modality="text").fit(gallery).search(queries, k=3)
    assert list(framed.columns) == ["query", "rank", "index", "gallery_id", "score"]
    assert framed["query"].tolist() == ["img5"] * 3 + ["img42"] * 3 + ["img77"] * 3
    assert framed["index"].tolist() == plain["index"].tolist()
    assert framed["gallery_id"].tolist() == [f"txt{i}" for i in plain["index"]]
    # ids= wins over the index; the arrays keep them; the one-shot function names them
    arrays = index.search(queries, k=3, ids=["a", "b", "c"], as_frame=False)
    assert arrays.query_ids.tolist() == ["a", "b", "c"]
    assert arrays.to_frame()["query"].tolist()[::3] == ["a", "b", "c"]
    once = cross_modal_search(est, X_img[rows], X_txt, k=3, query_ids=rows,
                              gallery_ids=np.arange(len(X_txt)) + 1000)
    assert once["query"].tolist()[::3] == rows
    assert (once["gallery_id"] == once["index"] + 1000).all()
    # the exploration's items too
    shift = neighbourhood_shift(est, gallery.iloc[:60], (0.0, 1.0), k=4)
    assert set(shift["item"]) == {f"txt{i}" for i in range(60)}
    shift = neighbourhood_shift(est, X_txt[:60], (0.0, 1.0), k=4, ids=np.arange(60) * 2)
    assert set(shift["item"]) == set(range(0, 120, 2))


def test_ids_of_the_wrong_length_are_refused_naming_the_parameter(cca_data):
    est, X_img, X_txt, _ = cca_data
    index = CrossModalIndex(est, modality="text").fit(X_txt)
    with pytest.raises(ValueError, match=r"^ids has 2 entries but there are 3 queries"):
        index.search(X_img[:3], k=2, ids=[1, 2])
    with pytest.raises(ValueError, match=r"^ids has 3 entries but there are 300 gallery items"):
        CrossModalIndex(est).fit(X_txt, ids=[1, 2, 3])
    with pytest.raises(ValueError, match=r"^query_ids has 1 entries but there are 3 queries"):
        cross_modal_search(est, X_img[:3], X_txt, k=2, query_ids=[1])
    with pytest.raises(ValueError, match=r"^gallery_ids has 2 entries but there are 300"):
        cross_modal_search(est, X_img[:3], X_txt, k=2, gallery_ids=[1, 2])
    with pytest.raises(ValueError, match=r"^ids has 5 entries but there are 60 items"):
        neighbourhood_shift(est, X_txt[:60], (0.0, 1.0), k=4, ids=range(5))
    with pytest.raises(ValueError, match="'ids' parameter"):
        index.search(X_img[:3], k=2, ids=7)


def test_index_validation(cca_data):
    est, X_img, X_txt, _ = cca_data
    with pytest.raises(ValueError, match="payload has 3 entries but the gallery has 300"):
        CrossModalIndex(est).fit(X_txt, payload=["a", "b", "c"])
    with pytest.raises(ValueError, match="modality"):
        CrossModalIndex(est, modality="audio").fit(X_txt)
    with pytest.raises(ValueError, match="'k' parameter"):
        CrossModalIndex(est).fit(X_txt).search(X_img[:2], k=0)


def test_a_parameter_changed_after_fit_asks_for_a_refit(cca_data):
    """Issue 56: set_params(backend="faiss") on a fitted index, then a search, was
    "AttributeError: 'CrossModalIndex' object has no attribute 'faiss_index_'"; a changed
    modality, time or estimator searched the old gallery without a word."""
    pytest.importorskip("faiss")
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError

    est, X_img, X_txt, _ = cca_data
    index = CrossModalIndex(est, time=1.0).fit(X_txt)
    expected = index.search(X_img[:3], k=4, as_frame=False)
    index.set_params(backend="faiss")
    with pytest.raises(NotFittedError, match=r"fitted with other parameters \(backend='torch' "
                                             r"at fit, 'faiss' now\).*Refit the index "
                                             r"\(index\.fit\(X_gallery\)\) after changing "
                                             r"backend\.$"):
        index.search(X_img[:3], k=4)
    with pytest.raises(NotFittedError, match="after changing backend"):
        index.search_embeddings(index.embeddings_[:2], k=4)
    refit = index.fit(X_txt).search(X_img[:3], k=4, as_frame=False)
    np.testing.assert_array_equal(refit.indices, expected.indices)  # faiss: the same top-k
    index.set_params(backend="torch")
    with pytest.raises(NotFittedError, match="backend='faiss' at fit, 'torch' now"):
        index.search(X_img[:3], k=4)
    assert not hasattr(index.fit(X_txt), "faiss_index_")  # no stale faiss structure kept
    for change in [{"modality": "image"}, {"time": 2.0}, {"estimator": clone(est).fit(
            np.hstack([X_img, X_txt, np.zeros((len(X_txt), 1))]))}]:
        index = CrossModalIndex(est, time=1.0).fit(X_txt).set_params(**change)
        (name,) = change
        with pytest.raises(NotFittedError, match=f"after changing {name}\\.$"):
            index.search(X_img[:3], k=4)
    # an equal value, or a parameter read at each search, needs no refit
    index = CrossModalIndex(est, time=np.ones(len(X_txt))).fit(X_txt)
    index.set_params(time=np.ones(len(X_txt)), working_memory=0.5, query_modality="image")
    np.testing.assert_array_equal(index.search(X_img[:3], k=4, as_frame=False).indices,
                                  expected.indices)


@pytest.fixture(scope="module")
def diachronic_data():
    """A tiny Diachronic trained 3 epochs on the demo world, whose captions change meaning
    from era to era (window and decay in years, explicit: their defaults may move)."""
    X, y, info = make_temporal_crossmodal(300, return_info=True, random_state=1)
    est = tiny(DiachronicEmbedder, n_image_features=info.n_image_features, max_epochs=3,
               lr=1e-2, time_dropout=0.0, window=0.5, decay=0.1)
    with torch.random.fork_rng():
        est.fit(X, y)
    n_img = info.n_image_features
    return est, X[:, :n_img], X[:, n_img:-1], X[:, -1]


def test_queries_and_gallery_are_projected_at_their_own_instants(diachronic_data):
    est, X_img, X_txt, t = diachronic_data
    t0, t1 = float(np.quantile(t, 0.1)), float(np.quantile(t, 0.9))
    index = CrossModalIndex(est, modality="text", time=t0).fit(X_txt)
    res = index.search(X_img[:6], k=4, time=t1, as_frame=False)
    ref = _brute(est.transform_image(X_img[:6], time=t1), est.transform_text(X_txt, time=t0), 4)
    np.testing.assert_array_equal(res.indices, ref[1])
    # per-row query times are passed through unchanged
    rows = np.linspace(t0, t1, 6)
    res_rows = index.search(X_img[:6], k=4, time=rows, as_frame=False)
    ref_rows = _brute(est.transform_image(X_img[:6], time=rows),
                      est.transform_text(X_txt, time=t0), 4)
    np.testing.assert_array_equal(res_rows.indices, ref_rows[1])
    with pytest.raises(ValueError, match="projects items at an instant"):
        index.search(X_img[:2], k=2)


def test_neighbourhood_over_time_table_and_plot(diachronic_data, tmp_path):
    est, X_img, X_txt, t = diachronic_data
    times = [float(np.quantile(t, q)) for q in (0.0, 0.5, 1.0)]
    payload = [f"c{i}" for i in range(len(X_txt))]
    table = neighbourhood_over_time(est, X_img[0], X_txt, times, k=5, payload=payload)
    assert list(table.columns) == ["instant", "rank", "neighbour", "score", "status", "payload"]
    change = table.attrs["time_change"]
    sets = [set(table[(table["instant"] == u) & (table["status"] != "left")]["neighbour"])
            for u in times]
    expected = np.mean([1 - len(a & b) / len(a | b) for a, b in zip(sets, sets[1:])])
    assert change["neighbourhood_change"] == pytest.approx(expected)
    assert change["time_role"] == "inference"
    for i, instant in enumerate(times):
        rows = table[table["instant"] == instant]
        ranked = rows[rows["status"] != "left"]
        ref_s, ref_i = _brute(est.transform_image(X_img[:1], time=instant),
                              est.transform_text(X_txt, time=instant), 5)
        assert ranked["neighbour"].tolist() == ref_i[0].tolist()
        np.testing.assert_allclose(ranked["score"], ref_s[0], atol=1e-6)
        if i == 0:
            assert set(rows["status"]) == {"initial"}
        else:  # entered/left against the previous instant's top 5
            prev = set(table[(table["instant"] == times[i - 1])
                             & (table["status"] != "left")]["neighbour"])
            now = set(ranked["neighbour"])
            assert set(ranked[ranked["status"] == "entered"]["neighbour"]) == now - prev
            assert set(rows[rows["status"] == "left"]["neighbour"]) == prev - now
            assert rows[rows["status"] == "left"]["rank"].isna().all()
    assert (table["payload"] == [f"c{j}" for j in table["neighbour"]]).all()
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = plot_neighbourhood_over_time(table)
    assert len(ax.lines) == table[table["status"] != "left"]["neighbour"].nunique()
    assert ax.get_title().startswith("neighbourhood over time\n")
    assert f"Δ = {change['neighbourhood_change']:.2f}" in ax.get_title()
    ax.figure.savefig(tmp_path / "nb.png")


def test_neighbourhood_shift_measures(diachronic_data, cca_data):
    est, X_img, X_txt, t = diachronic_data
    t1, t2 = float(t.min()), float(t.max())
    table = neighbourhood_shift(est, X_txt[:120], (t1, t2), k=6)
    assert list(table.columns) == ["item", "neighbourhood_shift", "displacement", "shared"]
    assert table["neighbourhood_shift"].is_monotonic_decreasing
    # recompute one item's figures by hand
    row = table.iloc[0]
    item = int(row["item"])
    sets = []
    for tt in (t1, t2):
        Z = est.transform_text(X_txt[:120], time=tt)
        s = Z @ Z[item]
        s[item] = -np.inf  # its own row is left out
        sets.append(set(np.argsort(-s)[:6]))
    shared = len(sets[0] & sets[1])
    assert row["shared"] == shared
    assert row["neighbourhood_shift"] == pytest.approx(1 - shared / (12 - shared))
    e1 = est.transform_text(X_txt[item:item + 1], time=t1)[0]
    e2 = est.transform_text(X_txt[item:item + 1], time=t2)[0]
    assert row["displacement"] == pytest.approx(1 - e1 @ e2, abs=1e-6)
    assert table["displacement"].max() > 1e-4  # a time-conditioned model moves items
    # a static model: nothing shifts
    cca, _, X_txt_c, _ = cca_data
    static = neighbourhood_shift(cca, X_txt_c[:100], (0.0, 1.0), k=5, X_gallery=X_txt_c[:80],
                                 gallery_modality="text")
    assert (static["neighbourhood_shift"] == 0).all() and static["displacement"].max() < 1e-9
    assert static.attrs["time_change"]["neighbourhood_change"] == 0
    assert static.attrs["time_change"]["barely_changes"]
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax_bar, ax_all = plot_neighbourhood_shift(table, n=5)
    assert len(ax_bar.patches) == 5
    with pytest.raises(ValueError, match="exactly two instants"):
        neighbourhood_shift(est, X_txt[:50], (t1,), k=3)


def test_benchmark_quick_run(tmp_path, capsys):
    """``bench_search.py --quick`` end to end, in this process (its ``main`` takes the
    command line; a fresh interpreter would spend seconds importing torch): the thread
    counts it sets (torch, BLAS, faiss) are restored afterwards."""
    import importlib.util

    from threadpoolctl import threadpool_limits

    sys.path.insert(0, str(BENCHMARK.parent))  # its sibling _common, as `python` would
    try:
        spec = importlib.util.spec_from_file_location("bench_search", BENCHMARK)
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
        try:
            import faiss
        except ImportError:
            faiss = None
        threads = torch.get_num_threads(), faiss and faiss.omp_get_max_threads()
        try:
            with threadpool_limits(limits=None):  # restores BLAS' thread counts on exit
                bench.main(["--quick", "--output-dir", str(tmp_path)])
        finally:
            torch.set_num_threads(threads[0])
            if faiss is not None:
                faiss.omp_set_num_threads(threads[1])
    finally:
        sys.path.remove(str(BENCHMARK.parent))
    stdout = capsys.readouterr().out
    data = json.loads((tmp_path / "bench_search.json").read_text())
    assert data["quick"] is True and data["parameters"]["k"] == 100
    search = data["results"]["search"]
    assert search["sklearn_agreement"]["differences_not_ties"] == 0
    if "faiss_agreement" in search:
        assert search["faiss_agreement"]["differences_not_ties"] == 0
    assert data["targets"]["search_memory"]["passed"]
    assert set(data["results"]["metrics"]["scores"]) == {"map", "recall", "mrr", "ndcg"}
    assert "throughput ratio ours / sklearn" in stdout


def test_estimator_device_reads_every_estimator_family():
    """Search computes where the estimator does: a net's device, SCML's ``device_``, a
    binned model's first bin model; the CPU for CCA."""
    from types import SimpleNamespace

    from temporal_xmodal.search._index import estimator_device

    neural = SimpleNamespace(net_=SimpleNamespace(device="meta"))
    assert estimator_device(neural) == torch.device("meta")
    assert estimator_device(SimpleNamespace(device_="meta")) == torch.device("meta")
    assert estimator_device(SimpleNamespace(bin_estimators_=[neural])) == torch.device("meta")
    assert estimator_device(SimpleNamespace()) == torch.device("cpu")


# --------------------------------------------------------------------------
# Saying when a model barely moves across time
# --------------------------------------------------------------------------


def test_a_static_model_says_its_neighbourhoods_cannot_change(cca_data, tmp_path):
    est, X_img, X_txt, t = cca_data
    table = neighbourhood_over_time(est, X_img[0], X_txt, [1.0, 5.0, 9.0], k=5)
    change = table.attrs["time_change"]
    assert change["neighbourhood_change"] == 0 and change["displacement"] == 0
    assert change["barely_changes"] and change["time_role"] == "none"
    assert "time_role='none'" in change["message"]
    assert "cannot change with time" in change["message"]
    shift = neighbourhood_shift(est, X_txt[:80], (1.0, 9.0), k=5)
    assert shift.attrs["time_change"]["barely_changes"]
    assert "cannot change with time" in shift.attrs["time_change"]["message"]
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = plot_neighbourhood_over_time(table, title="picture 0")
    title = ax.get_title().replace("\n", " ")
    assert title.startswith("picture 0 ") and "cannot change with time" in title
    assert ax.title.get_color() == "tab:red"
    ax_bar, _ = plot_neighbourhood_shift(shift, n=5)
    assert "cannot change with time" in ax_bar.get_title().replace("\n", " ")
    # a table that lost its attrs: Δ recomputed from the rows
    table.attrs.clear()
    ax = plot_neighbourhood_over_time(table)
    assert "barely change" in ax.get_title().replace("\n", " ")
    matplotlib.pyplot.close("all")


def test_a_time_conditioned_model_moves_its_neighbourhoods(diachronic_data):
    est, X_img, X_txt, _ = diachronic_data
    # eight years apart on the demo world: 0.44 measured (0.39-0.82 over 3 worlds x 2 seeds)
    shift = neighbourhood_shift(est, X_txt, (1.0, 9.0), k=10)
    change = shift.attrs["time_change"]
    assert change["neighbourhood_change"] > 0.3 and not change["barely_changes"]
    assert change["neighbourhood_change"] == pytest.approx(shift["neighbourhood_shift"].mean())
    assert change["message"].startswith(f"Mean neighbourhood change Δ = "
                                        f"{change['neighbourhood_change']:.2f}")
    table = neighbourhood_over_time(est, X_img[0], X_txt, [1.0, 5.0, 9.0], k=10)
    assert table.attrs["time_change"]["neighbourhood_change"] > 0.3  # 0.52 (0.32-0.94)
    assert table.attrs["time_change"]["displacement"] > 1e-3
    # the same model a thousandth of a year apart: the neighbourhoods do not move
    close = neighbourhood_over_time(est, X_img[0], X_txt, [5.0, 5.001, 5.002], k=10)
    change = close.attrs["time_change"]
    assert change["neighbourhood_change"] < 0.05 and change["barely_changes"]
    assert change["time_role"] == "inference"
    assert change["message"].startswith("The neighbourhoods barely change across these "
                                        "instants: the model uses time little")


def test_ids_must_be_ordered_and_one_per_row(cca_data):
    """A set has no order (ids={5, 42, 77} labelled the queries [42, 5, 77]); ragged ids
    raised NumPy's 'inhomogeneous shape' without naming ids."""
    est, X_img, X_txt, _ = cca_data
    index = CrossModalIndex(est, modality="text").fit(X_txt)
    with pytest.raises(TypeError, match=r"^ids is a set, whose order is arbitrary.*row order"):
        index.search(X_img[[5, 42, 77]], k=2, ids={5, 42, 77})
    with pytest.raises(TypeError, match=r"^ids is a frozenset"):
        CrossModalIndex(est).fit(X_txt[:3], ids=frozenset({1, 2, 3}))
    with pytest.raises(TypeError, match=r"^query_ids is a dict_keys"):
        cross_modal_search(est, X_img[:3], X_txt, k=2, query_ids={5: 0, 42: 1, 77: 2}.keys())
    with pytest.raises(ValueError, match=r"^ids must hold one id per row .* entry 0 is list"):
        index.search(X_img[:3], k=2, ids=[[1, 2], [3], [4]])
    with pytest.raises(ValueError, match=r"^ids must be 1-D, one id per row; got .* \(3, 2\)"):
        index.search(X_img[:3], k=2, ids=np.arange(6).reshape(3, 2))
    # tuples stay ids (several keys per row), as do a list in row order
    assert index.search(X_img[:2], k=1, ids=[(1, "a"), (2, "b")])["query"].tolist() == [
        (1, "a"), (2, "b")]
    assert index.search(X_img[[77, 5]], k=1, ids=[77, 5])["query"].tolist() == [77, 5]


def _readme_frame(n=400):
    """The README's DataFrame: img_*, txt_* columns, a datetime64 `date` (and labels)."""
    X, y, info = make_temporal_crossmodal(n, return_info=True, random_state=0)
    d = info.n_image_features
    df = pd.DataFrame(X[:, :-1], columns=[f"img_{i}" for i in range(d)]
                      + [f"txt_{i}" for i in range(X.shape[1] - 1 - d)])
    df["date"] = pd.Timestamp("1880-01-01") + pd.to_timedelta(X[:, -1] * 365.25, unit="D")
    return df, y


@pytest.fixture(scope="module")
def readme_pipeline():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from temporal_xmodal import make_crossmodal_transformer

    df, y = _readme_frame()
    # the scalers matter: images are standardised (mean 0) before the embedder
    df[[c for c in df if c.startswith("img_")]] += 3.0
    pipe = make_pipeline(
        make_crossmodal_transformer("img_", "txt_", "date", image_transformer=StandardScaler(),
                                    text_transformer=StandardScaler()),
        tiny(DiachronicEmbedder, n_image_features="auto", max_epochs=2))
    with torch.random.fork_rng():
        pipe.fit(df, y)
    return pipe, df


def test_search_over_the_readme_pipeline_equals_the_manual_route(readme_pipeline):
    """CrossModalIndex(pipe) refused the Pipeline the docs teach; pipe[-1] skipped the scalers
    without a word. Now the Pipeline's preprocessing runs (whole rows, or a block's own
    columns), giving the neighbours of pipe[0].transform + the embedder; pipe[-1] with the raw
    columns is refused, saying to pass the Pipeline."""
    pipe, df = readme_pipeline
    when = pd.Timestamp("1882-06-01")
    Z = pipe[0].transform(df)  # the manual route
    G = pipe[-1].transform_text(Z.filter(like="text__"), time=when)
    Q = pipe[-1].transform_image(Z.filter(like="image__").iloc[[305, 17]], time=when)
    expected = search_embeddings(Q, G, 3)[1]
    rows = df.iloc[[305, 17]]
    for gallery, queries in [(df, rows), (df.filter(like="txt_"), rows.filter(like="img_"))]:
        index = CrossModalIndex(pipe, modality="text", time=when).fit(gallery)
        found = index.search(queries, k=3, time=when)
        assert found["query"].tolist() == [305] * 3 + [17] * 3
        np.testing.assert_array_equal(found["index"].to_numpy().reshape(2, 3), expected)
    once = cross_modal_search(pipe, rows, df, k=3, query_time=when, gallery_time=when,
                              as_frame=False)
    np.testing.assert_array_equal(once.indices, expected)
    # whole rows without time=: each row at its own date, as transform reads them
    own = CrossModalIndex(pipe, modality="text").fit(df).embeddings_.cpu().numpy()
    np.testing.assert_allclose(own, pipe.transform(df)[:, G.shape[1]:], atol=1e-6)
    # pipe[-1] on the raw columns: a clear error, not other neighbours
    with pytest.raises(ValueError, match=r"fitted inside a Pipeline .* raw columns 'txt_0'.*"
                                         r"Pass the Pipeline itself, not pipe\[-1\]"):
        CrossModalIndex(pipe[-1], modality="text", time=when).fit(df.filter(like="txt_"))
    with pytest.raises(ValueError, match=r"Pass the Pipeline itself, not pipe\[-1\]"):
        CrossModalIndex(pipe[-1], modality="text", time=when).fit(
            Z.filter(like="text__")).search(rows.filter(like="img_"), k=3, time=when)
    # columns the preprocessing cannot read: say what it takes
    with pytest.raises(ValueError, match=r"^X has 5 columns .* give whole rows as pipe.fit "
                                         r"took them \(113 columns.*or the text block's own"):
        CrossModalIndex(pipe, modality="text", time=when).fit(df.iloc[:, :5])


def test_exploration_and_protocols_take_the_pipeline(readme_pipeline):
    from temporal_xmodal.evaluation import time_period_inference

    pipe, df = readme_pipeline
    y = np.arange(len(df)) % 5
    instants = [pd.Timestamp("1881-01-01"), pd.Timestamp("1885-01-01")]
    table = neighbourhood_over_time(pipe, df.loc[305], df, instants, k=3)
    Z = pipe[0].transform(df)
    manual = neighbourhood_over_time(pipe[-1], Z.filter(like="image__").iloc[305],
                                     Z.filter(like="text__"), instants, k=3)
    pd.testing.assert_frame_equal(table, manual)
    shift = neighbourhood_shift(pipe, df, instants, k=3)
    assert shift.attrs["time_change"]["time_role"] == "inference"
    assert "between 1881-01-01 and 1885-01-01" in shift.attrs["time_change"]["message"]
    assert time_period_inference(pipe, df, y, window=0.5) == time_period_inference(
        pipe[-1], Z, y, window=0.5)
    with pytest.raises(ValueError, match=r"Pass the Pipeline itself, not pipe\[-1\]"):
        time_period_inference(pipe[-1], df, y, window=0.5)


def test_the_neighbourhood_plot_names_each_neighbour_once_with_readable_dates(readme_pipeline):
    """Ten legend entries all named "crime" with repeated colours, and tick labels like
    "1881-01-01 00:00:00"."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    pipe, df = readme_pipeline
    category = pd.Series(np.where(np.arange(len(df)) % 2, "crime", "sport"), name="category")
    instants = [pd.Timestamp(f"{year}-01-01") for year in (1881, 1884, 1887)]
    table = neighbourhood_over_time(pipe, df.loc[305], df, instants, k=10, payload=category)
    ax = plot_neighbourhood_over_time(table)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1881-01-01", "1884-01-01",
                                                           "1887-01-01"]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    shown = table[table["status"] != "left"]["neighbour"].unique()
    assert labels == [f"#{n} {c}" for n, c in zip(shown, category.to_numpy()[shown])]
    styles = [(line.get_color(), line.get_marker(), line.get_linestyle())
              for line in ax.get_legend().get_lines()]
    assert len(set(styles)) == len(styles) == len(shown) >= 10
    import matplotlib.pyplot as plt

    plt.close(ax.figure)


def test_search_embeddings_reads_device_through_the_one_resolver(monkeypatch):
    """device="auto" raised torch's "Expected one of cpu, cuda..." and device="cuda" without
    a GPU "Torch not compiled with CUDA enabled"."""
    import torch

    from temporal_xmodal.search import search_embeddings

    G = np.eye(4)
    scores, idx = search_embeddings(G[:2], G, k=1, device="auto" if not
                                    torch.cuda.is_available() else "cpu")
    np.testing.assert_array_equal(idx, [[0], [1]])
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="(?i)cuda.*gpu|gpu.*cuda"):
        search_embeddings(G[:2], G, k=1, device="cuda")
