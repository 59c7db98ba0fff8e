"""The scan engine: one block loop, loop-free reducers, scikit-learn's working_memory, relevance."""

import ast
from pathlib import Path

import numpy as np
import pytest
import sklearn
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from temporal_xmodal.metrics import (
    counterpart_reciprocal_ranks,
    iter_score_blocks,
    mean_average_precision,
    reciprocal_rank_per_query,
)
from temporal_xmodal.metrics._scan import (
    Footprint,
    NumpyRelevance,
    Reducer,
    Scan,
    ScanPlan,
    TorchRelevance,
    make_relevance,
    scan_budget,
)

METRICS = Path(__file__).resolve().parents[1] / "temporal_xmodal" / "metrics"
#: Per-block code outside the reducer modules: what the reducers call on every product.
PER_BLOCK_HELPERS = {"_scan/_relevance.py": {"NumpyRelevance", "TorchRelevance"},
                     "_scan/_keys.py": {"sortable_keys"}}
#: The loop statements and expressions; ``map`` / ``filter`` are loops without the keyword.
_LOOP_NODES = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp,
               ast.GeneratorExp)


def per_block_loops(source, roots=()):
    """``(name, line, loop)`` of every loop in the per-block code of a module's ``source``.

    Per-block code is each class deriving from ``Reducer`` (directly, or from a
    reducer class of the same module), each module-level definition in
    ``roots``, and, transitively, every module-level function and class that
    their code names (helpers such as ``_RunningTopk`` or ``_block_metrics``).
    A loop is a ``for`` or ``while`` statement, a comprehension or generator
    expression, or a call of ``map`` / ``filter``, whatever it iterates over:
    per-block code is straight-line array code, and every repetition over
    queries, blocks, chunks or candidates belongs to the engine.  Allowed:
    loops anywhere else in the module (a public function's preparation, once
    per call), and iterating calls with no Python code per item
    (``torch.cat(parts)``, ``tuple(d.values())``).  Not followed: callables
    passed in (the per-query functions a ``_PerQuery`` is given) and imported
    names (their modules are checked on their own through ``roots``).

    Returns
    -------
    loops : list of tuple, and the set of per-block names (as the second item)
    """
    tree = ast.parse(source)
    defs = {node.name: node for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    reducers, grown = {"Reducer"}, True
    while grown:  # subclasses of Reducer, or of a reducer class of this module
        found = {name for name, node in defs.items() if isinstance(node, ast.ClassDef)
                 and any(isinstance(b, ast.Name) and b.id in reducers for b in node.bases)}
        grown = not found <= reducers
        reducers |= found
    todo, per_block = [*(reducers - {"Reducer"}), *roots], set()
    while todo:
        name = todo.pop()
        if name in per_block or name not in defs:
            continue
        per_block.add(name)
        todo.extend(node.id for node in ast.walk(defs[name]) if isinstance(node, ast.Name))
    loops = []
    for name in sorted(per_block):
        for node in ast.walk(defs[name]):
            is_call = (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                       and node.func.id in ("map", "filter"))
            if is_call or isinstance(node, _LOOP_NODES):
                loops.append((name, node.lineno, ast.unparse(node).splitlines()[0]))
    return loops, per_block


def test_no_loop_in_the_reducers_and_one_block_loop():
    engine = (METRICS / "_scan" / "_engine.py").read_text()
    assert engine.count("gen_batches(self.n_query") == 1  # THE block loop (each_block)
    assert engine.count("gen_batches(self.n_gallery") == 1  # THE chunk loop (products)
    users = [p.name for p in METRICS.rglob("*.py") if "gen_batches" in p.read_text()]
    assert users == ["_engine.py"]
    checked = set()
    for path in sorted(METRICS.rglob("*.py")):
        name = path.relative_to(METRICS).as_posix()
        if name == "_scan/_engine.py":  # the engine owns the loops
            continue
        loops, per_block = per_block_loops(path.read_text(), PER_BLOCK_HELPERS.get(name, ()))
        assert loops == [], f"{name} loops in per-block code: {loops}"
        checked |= per_block
    # the discovery finds every reducer and the helpers they call (it cannot pass empty)
    assert {"_PerQuery", "_AveragePrecision", "_average_precision_block", "_AtK", "_Recount",
            "_block_metrics", "_merge_top", "_CounterpartRanks", "_PrunedTopk", "_DenseTopk",
            "_RunningTopk", "_candidates", "_places", "NumpyRelevance", "TorchRelevance",
            "sortable_keys"} <= checked
    assert "retrieval_metrics_at_k" not in checked and "topk" not in checked


_CLEAN = """
def prepare(arrays):
    return [a.copy() for a in arrays]  # once per call, outside the per-block code


class _Fine(Reducer):
    def reduce(self, state, rows, cols, S):
        self.out[rows] += torch.cat((S.sum(1), _helper(S)))


def _helper(S):
    return S.max(1)
"""
#: One loop planted in per-block code: where, and the loop as found.
_PLANTED = [
    ("for over a range in a hook", """
class _Bad(Reducer):
    def reduce(self, state, rows, cols, S):
        for s in range(0, S.shape[0], 8):
            self.out[s] += S[s:s + 8].sum()
""", ("_Bad", "for s in range(0, S.shape[0], 8):")),
    ("while in a helper a hook calls", """
def _shrink(S):
    while S.shape[0] > 1:
        S = S[::2]
    return S


class _Bad(Reducer):
    def finish(self, state, rows):
        self.out[rows] = _shrink(state)
""", ("_shrink", "while S.shape[0] > 1:")),
    ("comprehension in a subclass of a reducer", """
class _Base(Reducer):
    pass


class _Bad(_Base):
    def finish(self, state, rows):
        self.out[rows] = torch.stack([v for v in state.values()])
""", ("_Bad", "[v for v in state.values()]")),
    ("map in a helper class of a root", """
class _Pending:
    def merge(self):
        return torch.cat(list(map(torch.ravel, self.parts)))


def sortable_keys(S):
    return _Pending()
""", ("_Pending", "map(torch.ravel, self.parts)")),
]


@pytest.mark.parametrize("where, source, expected", _PLANTED, ids=[p[0] for p in _PLANTED])
def test_per_block_loops_finds_a_planted_loop(where, source, expected):
    assert per_block_loops(_CLEAN, ())[0] == []  # loops outside per-block code are allowed
    loops, _ = per_block_loops(_CLEAN + source, roots=("sortable_keys",))
    assert [(name, loop) for name, _, loop in loops] == [expected], where


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
        return self.again[rows], _Collect(self.seen_again)


class _Collect(Reducer):
    """A second pass: the whole-gallery scores of the picked queries, by query row."""

    def __init__(self, seen):
        self.seen = seen

    def start(self, rows):
        return []

    def reduce(self, parts, rows, cols, S):
        parts.append(S.copy())

    def finish(self, parts, rows):
        self.seen.update(zip(rows.tolist(), np.hstack(parts)))


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


def _labels(kind, rng, n):
    """Query and gallery labels of ``kind`` (None for counterparts)."""
    if kind == "classes":
        return rng.integers(0, 4, n), rng.integers(0, 4, n)
    if kind == "strings":
        return rng.choice(["a", "b", "c"], n), rng.choice(["b", "c", "d"], n)
    if kind == "one-hot":
        return np.eye(3)[rng.integers(0, 3, n)], np.eye(3)[rng.integers(0, 3, n)]
    if kind == "multilabel":
        return (rng.random((n, 4)) < 0.4).astype(int), (rng.random((n, 4)) < 0.4).astype(int)
    return None, None


@pytest.mark.parametrize("labels", ["counterpart", "classes", "strings", "one-hot",
                                    "multilabel"])
def test_make_relevance_gives_one_answer_on_both_backends(labels):
    rng = np.random.default_rng(3)
    n = 40
    yq, yg = _labels(labels, rng, n)
    t = rng.uniform(1900, 1950, n)
    numpy_relevance, torch_relevance = (
        make_relevance(yq, yg, t, t[::-1].copy(), 10.0, n_query=n, n_gallery=n, device=device)
        for device in (None, "cpu"))
    assert isinstance(numpy_relevance, NumpyRelevance)
    assert isinstance(torch_relevance, TorchRelevance)
    rows, cols = slice(5, 25), slice(3, 31)
    block = numpy_relevance.block(rows)
    assert (block > 0).any() and not (block > 0).all()
    # every method answers for every kind, for index tensors and slices alike
    gains = torch_relevance.gains(torch.arange(5, 25), cols)
    assert gains.dtype == torch.float64
    np.testing.assert_array_equal(gains.numpy(), block[:, cols].astype(np.float64))
    np.testing.assert_array_equal(torch_relevance.gains(rows).numpy(), block)
    np.testing.assert_array_equal(torch_relevance.relevant(rows).numpy(), block > 0)
    np.testing.assert_array_equal(torch_relevance.relevant(torch.arange(5, 25), cols).numpy(),
                                  block[:, cols] > 0)


@pytest.mark.parametrize("labels", ["classes", "one-hot", "multilabel"])
def test_make_relevance_of_device_tensors_answers_gains_and_relevant(labels):
    """Tensor labels (no NaN pass): indicators as non-zero = has it; both methods oriented right."""
    rng = np.random.default_rng(4)
    n = 40
    yq, yg = _labels(labels, rng, n)
    reference = make_relevance(yq, yg, n_query=n, n_gallery=n).block(slice(0, n))
    if labels == "multilabel":  # counts as labels: non-zero = has the label
        yq, yg = yq * 3, yg * 2
    relevance = make_relevance(torch.as_tensor(yq), torch.as_tensor(yg), n_query=n, n_gallery=n,
                               nan_policy=None)
    assert isinstance(relevance, TorchRelevance) and relevance.device == torch.device("cpu")
    rows, cols = slice(5, 25), slice(3, 31)
    np.testing.assert_array_equal(relevance.relevant(rows).numpy(), reference[rows] > 0)
    np.testing.assert_array_equal(relevance.gains(torch.arange(5, 25), cols).numpy(),
                                  reference[rows, cols].astype(np.float64))
    with pytest.raises(ValueError, match="one row per item"):
        make_relevance(torch.as_tensor(yq[:3]), torch.as_tensor(yg), n_query=n, n_gallery=n,
                       nan_policy=None)


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


class _HostTraffic(TorchDispatchMode):
    """Host synchronisations and device-to-host copies of meta tensors, faked (no data).

    ``.item()`` answers False; a copy to the CPU answers zeros of its shape.
    """

    def __init__(self):
        super().__init__()
        self.syncs, self.copies = [], []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(func)
        if name.startswith("aten._local_scalar_dense"):
            self.syncs.append(name)
            return False
        if name.startswith(("aten.nonzero", "aten.masked_select", "aten.item")):
            self.syncs.append(name)
        if (func is torch.ops.aten._to_copy.default and args[0].device.type == "meta"
                and kwargs.get("device") == torch.device("cpu")):
            self.copies.append(tuple(args[0].shape))
            return torch.zeros(args[0].shape, dtype=kwargs.get("dtype") or args[0].dtype)
        return func(*args, **kwargs)


def test_at_k_copies_each_blocks_figures_to_the_host_once():
    """On a device the @k reducer makes per block one sync (its revisit check) and one copy.

    Meta tensors stand for a GPU's: every copy to the host is seen (on the
    CPU ``.cpu()`` is no op at all), so a copy per figure would count 4 per block.
    """
    from temporal_xmodal.metrics._at_k import _FOOTPRINT, TOPK_METRICS, _AtK

    rng = np.random.default_rng(7)
    Q, G = (torch.empty((n, 6), dtype=torch.float64, device="meta") for n in (200, 3000))
    relevance = make_relevance(rng.integers(0, 5, 200), rng.integers(0, 5, 3000), n_query=200,
                               n_gallery=3000, device="meta")
    scan = Scan(Q, G, _FOOTPRINT)
    scan.plan = ScanPlan(50, 300)  # 4 query blocks x 10 gallery chunks
    opts = {"metrics": TOPK_METRICS, "ap_at_k_normaliser": "min_k_total", "gain": "exponential",
            "discount": "standard"}
    with _HostTraffic() as traffic:
        figures = scan.run(_AtK(relevance, 20, 200, 3000, opts, Q.device)).figures
    assert traffic.syncs == ["aten._local_scalar_dense.default"] * 4
    assert traffic.copies == [(4, 50)] * 4  # the four figures of a block's 50 queries at once
    assert figures.shape == (4, 200) and not figures.any()  # the (faked) copies, all rows


def test_running_topk_merges_on_one_thread_of_the_caller_only(monkeypatch):
    """The search's merges run on one intra-op thread, and change no process-wide setting.

    The thread count inside a merge is 1 for the merging thread (also a fresh
    one, whose first torch call sets it up) and unchanged for any other;
    ``torch.set_num_threads`` is never called.
    """
    import threading

    from temporal_xmodal.metrics._scan import _topk

    seen, merge = [], _topk._RunningTopk._merge

    def recording(self):
        other = []
        probe = threading.Thread(target=lambda: other.append(torch.get_num_threads()))
        probe.start()
        probe.join()
        seen.append((torch.get_num_threads(), other[0]))
        merge(self)

    def refuse(n):
        raise AssertionError(f"torch.set_num_threads({n}) called")

    rng = np.random.default_rng(8)
    Q, G = (torch.from_numpy(rng.standard_normal((n, 8))) for n in (30, 5000))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        monkeypatch.setattr(_topk._RunningTopk, "_merge", recording)
        monkeypatch.setattr(torch, "set_num_threads", refuse)
        found = []
        fresh = threading.Thread(target=lambda: found.append(_topk.topk(Q, G, 5)))
        fresh.start()
        fresh.join()
        found.append(_topk.topk(Q, G, 5))
        assert torch.get_num_threads() == 2
    finally:
        monkeypatch.undo()
        torch.set_num_threads(before)
    assert len(found) == 2 and len(seen) >= 2
    assert set(seen) == {(1, 2)}
    expected = np.argsort(-(Q @ G.T).numpy(), axis=1, kind="stable")[:, :5]
    for scores, indices in found:
        np.testing.assert_array_equal(indices, expected)


def test_a_full_ranking_scan_runs_on_one_native_thread_without_rescanning_the_libraries(
        monkeypatch):
    """mAP's cache-sized NumPy blocks run with one BLAS / OpenMP thread (threads spinning
    between small products made them several times slower); the thread-pool controller is
    built once, not per call: building it scans the loaded libraries (4.5 ms of CPU per
    mAP call of 200 items at 06304ac, 0.9 ms with one controller)."""
    import threadpoolctl

    from temporal_xmodal import _device
    from temporal_xmodal.metrics import mean_average_precision

    seen, built = [], []
    real_limit = threadpoolctl.ThreadpoolController.limit

    def limit(self, *, limits=None, user_api=None):
        seen.append((limits, user_api))
        return real_limit(self, limits=limits, user_api=user_api)

    real_init = threadpoolctl.ThreadpoolController.__init__

    def init(self):
        built.append(1)
        real_init(self)

    monkeypatch.setattr(threadpoolctl.ThreadpoolController, "limit", limit)
    monkeypatch.setattr(threadpoolctl.ThreadpoolController, "__init__", init)
    monkeypatch.setitem(_device._controller, "modules", -1)  # as after a new import
    rng = np.random.default_rng(0)
    A, B, y = rng.normal(size=(50, 4)), rng.normal(size=(50, 4)), rng.integers(0, 3, 50)
    first = mean_average_precision(A, B, y, y)
    for _ in range(5):
        assert mean_average_precision(A, B, y, y) == first
    assert seen == [(1, None)] * 6 and len(built) == 1
