"""The scan engine: one block loop, reducers as hooks, scikit-learn's working_memory, Relevance."""

import ast
from pathlib import Path

import numpy as np
import pytest
import sklearn
import torch

from temporal_xmodal.metrics import (
    counterpart_reciprocal_ranks,
    iter_score_blocks,
    mean_average_precision,
    reciprocal_rank_per_query,
)
from temporal_xmodal.metrics._scan import (
    Footprint,
    Reducer,
    Relevance,
    Scan,
    ScanPlan,
    scan_budget,
)

METRICS = Path(__file__).resolve().parents[1] / "temporal_xmodal" / "metrics"
#: The reducers: each folds products into its summary and holds no loop over blocks or chunks.
REDUCER_MODULES = ["_full_ranking.py", "_full_ranking_torch.py", "_at_k.py", "_counterpart.py",
                   "_scan/_topk.py"]


def _loops(path):
    """The ``for`` loops and comprehensions of a module that iterate over blocks or chunks."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)):
            source = ast.unparse(node.iter)
            if any(word in source for word in ("gen_batches", "products", "each_block",
                                               "plan.", "query_block", "gallery_chunk")):
                found.append(source)
    return found


def test_one_block_loop_and_no_loop_in_the_reducers():
    engine = (METRICS / "_scan" / "_engine.py").read_text()
    assert engine.count("gen_batches(self.n_query") == 1  # THE block loop (each_block)
    assert engine.count("gen_batches(self.n_gallery") == 1  # THE chunk loop (products)
    for name in REDUCER_MODULES:
        path = METRICS / name
        assert _loops(path) == [], f"{name} loops over blocks or chunks itself"
        assert "gen_batches" not in path.read_text(), name
    users = [p.name for p in METRICS.rglob("*.py") if "gen_batches" in p.read_text()]
    assert users == ["_engine.py"]


class _RowMax(Reducer):
    """Best score and its first column per query; revisits the queries in ``again``."""

    def __init__(self, n, again, revisit_at):
        self.best = np.full(n, -np.inf)
        self.arg = np.zeros(n, dtype=np.int64)
        self.again, self.revisit_at, self.seen_again = again, revisit_at, {}

    def reduce(self, state, rows, cols, S):
        block_best, block_arg = S.max(axis=1), S.argmax(axis=1) + cols.start
        better = block_best > self.best[rows]
        self.best[rows] = np.where(better, block_best, self.best[rows])
        self.arg[rows] = np.where(better, block_arg, self.arg[rows])

    def revisit(self, state, rows):
        return self.again[rows]

    def start_again(self, state, rows, picked):
        return {"rows": rows.start + picked, "parts": []}

    def reduce_again(self, state, cols, S):
        state["parts"].append(S.copy())

    def finish_again(self, state, rows, picked):
        for row, scores in zip(state["rows"], np.hstack(state["parts"])):
            self.seen_again[int(row)] = scores


@pytest.mark.parametrize("revisit_at", ["block", "end"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_reducer_sees_every_product_once_and_its_revisits_bit_identical(revisit_at, n_jobs):
    rng = np.random.default_rng(0)
    Q, G = rng.standard_normal((53, 7)), rng.standard_normal((301, 7))
    again = np.zeros(53, dtype=bool)
    again[[0, 17, 52]] = True
    scan = Scan(Q, G, Footprint(8), n_jobs=n_jobs)
    scan.plan = ScanPlan(8, 40)  # 7 query blocks x 8 gallery chunks
    reducer = scan.run(_RowMax(53, again, revisit_at))
    S = Q @ G.T
    np.testing.assert_array_equal(reducer.arg, S.argmax(axis=1))
    assert sorted(reducer.seen_again) == [0, 17, 52]
    for row, scores in reducer.seen_again.items():  # the second pass's products: the first's
        block = slice(row // 8 * 8, min(53, row // 8 * 8 + 8))
        first = np.hstack([Q[block] @ G[c:c + 40].T for c in range(0, 301, 40)])
        np.testing.assert_array_equal(scores, first[row - block.start])


def test_scikit_learn_working_memory_bounds_every_cpu_scan():
    assert scan_budget("cpu") == 64 * 2**20
    with sklearn.config_context(working_memory=8):
        assert scan_budget("cpu") == 8 * 2**20  # a lower scikit-learn limit wins
        assert scan_budget("cpu", working_memory=100) == 100 * 2**20  # an explicit one wins
    with sklearn.config_context(working_memory=4096):
        assert scan_budget("cpu") == 64 * 2**20  # the library's default is the upper bound
    rng = np.random.default_rng(1)
    Q, G = rng.standard_normal((400, 6)), rng.standard_normal((2000, 6))
    yq, yg = rng.integers(0, 4, 400), rng.integers(0, 4, 2000)
    blocks = len(list(iter_score_blocks(Q, G, yq, yg)))
    with sklearn.config_context(working_memory=1):
        small = len(list(iter_score_blocks(Q, G, yq, yg)))  # 1 MiB / (64 B x 2000) = 8 rows
        value = mean_average_precision(Q, G, yq, yg)
    assert (blocks, small) == (1, 50)
    assert value == mean_average_precision(Q, G, yq, yg)  # blocks never change a figure


def test_counterpart_ranks_count_ties_against_the_query_and_refuse_nan():
    rng = np.random.default_rng(2)
    scores = np.round(rng.standard_normal((300, 300)))  # many exact ties
    scores[5, :] = -np.inf
    rr_i2t, rr_t2i = counterpart_reciprocal_ranks(scores)
    gold = np.eye(300, dtype=bool)
    np.testing.assert_array_equal(rr_i2t, reciprocal_rank_per_query(scores, gold))
    np.testing.assert_array_equal(rr_t2i, reciprocal_rank_per_query(scores.T, gold))
    assert rr_i2t[5] == 1 / 300
    scores[3, 7] = np.nan
    with pytest.raises(ValueError, match="1 NaN value"):
        counterpart_reciprocal_ranks(scores)


@pytest.mark.parametrize("labels", ["counterpart", "classes", "strings", "one-hot",
                                    "multilabel"])
def test_relevance_gives_one_answer_as_numpy_blocks_and_torch_gains(labels):
    rng = np.random.default_rng(3)
    n = 40
    yq = yg = None
    if labels == "classes":
        yq, yg = rng.integers(0, 4, n), rng.integers(0, 4, n)
    elif labels == "strings":
        yq, yg = rng.choice(["a", "b", "c"], n), rng.choice(["b", "c", "d"], n)
    elif labels == "one-hot":
        yq, yg = np.eye(3)[rng.integers(0, 3, n)], np.eye(3)[rng.integers(0, 3, n)]
    elif labels == "multilabel":
        yq, yg = (rng.random((n, 4)) < 0.4).astype(int), (rng.random((n, 4)) < 0.4).astype(int)
    t = rng.uniform(1900, 1950, n)
    numpy_relevance, torch_relevance = (
        Relevance(yq, yg, t, t[::-1].copy(), 10.0, n_query=n, n_gallery=n, device=device)
        for device in (None, "cpu"))
    rows = slice(5, 25)
    block = numpy_relevance.block(rows)
    gains = torch_relevance.gains(torch.arange(5, 25), slice(0, n)).numpy()
    np.testing.assert_array_equal(gains, block.astype(np.float64))
    assert (block > 0).any() and not (block > 0).all()


def test_counterparts_with_omitted_items_are_the_metrics_of_the_items_left():
    """Counterpart relevance keeps each gallery item's own row when others are omitted."""
    from temporal_xmodal.metrics import cross_modal_scores, retrieval_metrics_at_k

    rng = np.random.default_rng(4)
    image, text = rng.standard_normal((60, 5)), rng.standard_normal((60, 5))
    t = rng.uniform(1900, 1950, 60)
    t[[3, 20, 41]] = np.nan
    kept = ~np.isnan(t)
    with pytest.warns(UserWarning, match="3 of 60 queries and 3 of 60 gallery items"):
        omitted = cross_modal_scores(image, text, time=t, time_window=5.0, nan_policy="omit",
                                     metrics=("map", "mrr", "recall"))
    subset = cross_modal_scores(image[kept], text[kept], time=t[kept], time_window=5.0,
                                metrics=("map", "mrr", "recall"))
    assert omitted == pytest.approx(subset, rel=0, abs=1e-15)
    with pytest.warns(UserWarning, match="have a missing"):
        at_k = retrieval_metrics_at_k(image, text, k=5, query_time=t, gallery_time=t,
                                      time_window=5.0, nan_policy="omit")
    expected = retrieval_metrics_at_k(image[kept], text[kept], k=5, query_time=t[kept],
                                      gallery_time=t[kept], time_window=5.0)
    assert at_k == pytest.approx(expected, rel=0, abs=1e-15)


def test_at_k_metrics_take_string_labels_with_missing_ones():
    from temporal_xmodal.metrics import mean_average_precision, retrieval_metrics_at_k

    rng = np.random.default_rng(5)
    Q, G = rng.standard_normal((50, 6)), rng.standard_normal((200, 6))
    yq = rng.choice(["press", "sport", "war"], 50).astype(object)
    yg = rng.choice(["press", "sport", "war"], 200).astype(object)
    yq[[1, 7]] = None
    yg[[0, 9, 100]] = None
    with pytest.warns(UserWarning, match="2 of 50 queries and 3 of 200 gallery items"):
        at_k, per_query = retrieval_metrics_at_k(Q, G, yq, yg, k=10, metrics="map",
                                                 nan_policy="omit", return_per_query=True)
    with pytest.warns(UserWarning, match="have a missing"):
        full = mean_average_precision(Q, G, yq, yg, k=10, nan_policy="omit")
    assert at_k["map"] == pytest.approx(full, rel=0, abs=1e-14)
    assert np.isnan(per_query["map"][[1, 7]]).all()


def test_at_k_chunk_loop_makes_no_host_sync(monkeypatch):
    """On a GPU plan the @k reducer syncs once per block (its revisit check), never per chunk."""
    from _device_guard import HostSyncs

    from temporal_xmodal.metrics import retrieval_metrics_at_k
    from temporal_xmodal.metrics._scan import _engine

    rng = np.random.default_rng(6)
    Q, G = torch.from_numpy(rng.standard_normal((200, 6))), torch.from_numpy(
        rng.standard_normal((3000, 6)))
    yq, yg = torch.from_numpy(rng.integers(0, 5, 200)), torch.from_numpy(rng.integers(0, 5, 3000))
    expected = retrieval_metrics_at_k(Q, G, yq, yg, k=20)
    monkeypatch.setattr(_engine, "planning_device", lambda A: torch.device("cuda"))
    monkeypatch.setattr(_engine, "plan_scan", lambda *a, **kw: ScanPlan(50, 300))
    with HostSyncs() as syncs:  # 4 query blocks x 10 gallery chunks
        figures = retrieval_metrics_at_k(Q, G, yq, yg, k=20)
    assert figures == pytest.approx(expected, rel=0, abs=1e-14)
    assert syncs.calls.count("aten._local_scalar_dense.default") == 4, syncs.calls
    assert len(syncs.calls) <= 8  # and a nonzero per block at most (its second pass)
