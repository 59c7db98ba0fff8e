"""Sparse X end to end (issue 55, "Sparse text end to end"): what takes a scipy sparse X gives
what the dense ``X.toarray()`` gives; what does not refuses it by name.

The text block is bag-of-words-like (10% stored), the image block dense; stacked as one CSR
(a ColumnTransformer's output), the image block is read densely and the text block stays
sparse to the towers' first layer.
"""

import sys
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from _tiny import NET
from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    SemanticMatchingCrossModal,
    SequentialCrossModal,
    TempXNetEmbedder,
)
from temporal_xmodal._input import check_features
from temporal_xmodal._input._checks import _CHUNK_BYTES
from temporal_xmodal.estimators import _cca
from temporal_xmodal.features import TfidfTextFeatures
from temporal_xmodal.search import CrossModalIndex, cross_modal_search
from temporal_xmodal.training import SparseRows, make_dataset
from temporal_xmodal.training._data import BatchIterator

N_IMAGE, N_TEXT = 6, 40
NEURAL = {"SAM": SAMEmbedder, "TempXNet": TempXNetEmbedder, "Diachronic": DiachronicEmbedder}


def _data(n=160, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    image = rng.normal(size=(n, N_IMAGE)) + y[:, None]
    text = sp.random(n, N_TEXT, density=0.1, random_state=seed, format="csr").toarray()
    text[np.arange(n), y] += 1.0  # a term per class
    X = np.hstack([image, text, rng.uniform(2000, 2010, (n, 1))])
    return X, y


def _neural(name, **params):
    extra = {"time_dim": 4} if name == "Diachronic" else {}
    return NEURAL[name](**{**NET, "device": "cpu", "n_image_features": N_IMAGE, **extra,
                           **params})


# ------------------------------------------------------------------ validation, layout
def test_check_features_reads_sparse_and_refuses_nan_in_its_values_naming_x():
    A = sp.random(20, 8, density=0.3, random_state=0, format="coo")
    out = check_features(A, float32=True)
    assert sp.issparse(out) and out.format == "csr"
    bad = out.copy()
    bad.data[3] = np.nan
    with pytest.raises(ValueError, match=r"X contains NaN or infinity: 1 value\(s\)"):
        check_features(bad)
    big = out.copy()
    big.data[0] = 1e300
    with pytest.raises(ValueError, match="beyond float32's range"):
        check_features(big, float32=True)


def test_check_features_scans_a_wide_array_within_its_byte_budget():
    A = np.ones((8000, 5000), dtype=np.float32)  # 160 MB; 440 MB of temporaries before
    tracemalloc.start()
    try:
        check_features(A, float32=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 1.5 * _CHUNK_BYTES, peak / _CHUNK_BYTES


def test_a_sparse_time_column_reads_implicit_zeros_as_zero_and_finds_nan_time():
    X, _ = _data()
    X[:5, -1] = 0.0
    S = sp.csr_matrix(X)
    S.eliminate_zeros()
    cca = CCACrossModal(2, n_image_features=N_IMAGE, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cca.fit(S).time_range_ == CCACrossModal(
            2, n_image_features=N_IMAGE, device="cpu").fit(X).time_range_
    X[3, -1] = np.nan
    with pytest.raises(ValueError, match="time"):
        cca.fit(sp.csr_matrix(X))


# ------------------------------------------------------------------ features
def test_tfidf_sparse_output_equals_the_dense_output():
    docs = ["a red car", "a blue car", "red tea", "blue tea cup", "a cup of tea"]
    dense = TfidfTextFeatures(min_df=1).fit(docs).transform(docs)
    csr = TfidfTextFeatures(min_df=1, sparse_output=True).fit(docs).transform(docs)
    assert sp.issparse(csr) and csr.format == "csr" and csr.dtype == np.float32
    np.testing.assert_array_equal(csr.toarray(), dense)


# ------------------------------------------------------------------ the estimators
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_cca_on_sparse_x_equals_cca_on_the_dense_x(fmt):
    X, _ = _data()
    dense = CCACrossModal(4, n_image_features=N_IMAGE, device="cpu").fit(X)
    S = sp.csr_matrix(X).asformat(fmt)
    fitted = CCACrossModal(4, n_image_features=N_IMAGE, device="cpu").fit(S)
    np.testing.assert_allclose(fitted.canonical_correlations_,
                               dense.canonical_correlations_, atol=1e-10)
    np.testing.assert_allclose(fitted.transform(S), dense.transform(X), atol=1e-10)
    text = sp.csr_matrix(X[:, N_IMAGE:-1])
    np.testing.assert_allclose(fitted.transform_text(text), dense.transform_text(X[:, N_IMAGE:-1]),
                               atol=1e-10)
    assert fitted.score(S) == pytest.approx(dense.score(X))


def test_cca_covariances_equal_a_float64_reference_from_float32_blocks(monkeypatch):
    monkeypatch.setattr(_cca, "_BLOCK_BYTES", 4096)  # many row blocks
    rng = np.random.default_rng(1)
    A = (rng.normal(size=(300, 5)) * 3 + 10).astype(np.float32)
    B = sp.random(300, 7, density=0.3, random_state=1, format="csr", dtype=np.float32)
    Cxx, Cyy, Cxy, mx, my = _cca.covariances(A, B)
    Ac, Bc = A.astype(np.float64) - A.mean(0, dtype=np.float64), B.toarray().astype(np.float64)
    Bc -= Bc.mean(0)
    np.testing.assert_allclose(Cxx, Ac.T @ Ac / 299, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(Cyy, Bc.T @ Bc / 299, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(Cxy, Ac.T @ Bc / 299, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(my, B.toarray().mean(0), rtol=1e-6)


def test_cca_fit_holds_less_than_its_float32_input_beyond_it():
    rng = np.random.default_rng(0)
    X = np.hstack([rng.normal(size=(20000, 512)), rng.uniform(0, 10, (20000, 1))]).astype(
        np.float32)
    tracemalloc.start()
    try:
        CCACrossModal(8, n_image_features=256, device="cpu").fit(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 1.0 * X.nbytes, peak / X.nbytes  # 5x before (float64 and centred copies)


@pytest.mark.parametrize("params, atol", [
    ({"use_time": True, "standardize": False}, 1e-8),
    ({"use_time": False}, 2e-2),  # the same optimum, reached by L-BFGS to its tolerance
])
def test_semantic_matching_on_sparse_x_equals_the_dense_fit(params, atol):
    X, y = _data(240)
    dense = SemanticMatchingCrossModal(n_image_features=N_IMAGE, **params).fit(X, y)
    fitted = SemanticMatchingCrossModal(n_image_features=N_IMAGE, **params).fit(
        sp.csr_matrix(X), y)
    np.testing.assert_allclose(fitted.transform(sp.csr_matrix(X)), dense.transform(X), atol=atol)
    # a model fitted on dense X embeds a sparse block as its dense form
    np.testing.assert_allclose(dense.transform(sp.csr_matrix(X)), dense.transform(X),
                               atol=1e-12)


@pytest.mark.parametrize("name", NEURAL)
@pytest.mark.parametrize("standardize", [True, False])
def test_a_network_on_sparse_x_equals_the_network_on_the_dense_x(name, standardize):
    X, y = _data()
    S = sp.csr_matrix(X)
    dense = _neural(name, standardize=standardize).fit(X, y)
    fitted = _neural(name, standardize=standardize).fit(S, y)
    assert isinstance(fitted.net_.history[-1]["train_loss"], float)
    np.testing.assert_allclose(fitted.transform(S), dense.transform(X), atol=1e-5)
    text = S[:, N_IMAGE:-1]
    time = X[:, -1] if name == "Diachronic" else None
    np.testing.assert_allclose(fitted.transform_text(text, time=time),
                               dense.transform_text(X[:, N_IMAGE:-1], time=time), atol=1e-5)


def test_the_staged_placement_gathers_sparse_rows_as_the_host_does():
    X, y = _data(40)
    dataset = make_dataset(X[:, :N_IMAGE], sp.csr_matrix(X[:, N_IMAGE:-1]),
                           np.eye(3)[y], rows=np.arange(5, 40))
    assert isinstance(dataset.X["text"], SparseRows)
    host = list(BatchIterator(dataset, batch_size=8))
    staged = list(BatchIterator(dataset, batch_size=8, device="cpu", placement="staged"))
    assert len(host) == len(staged) == 5
    for (a, _), (b, _) in zip(host, staged):
        assert torch.equal(a["text"]["index"], b["text"]["index"])
        assert torch.equal(a["text"]["value"], b["text"]["value"])
    rows = torch.arange(5, 13)
    dense = torch.zeros(8, N_TEXT).scatter_add_(1, host[0][0]["text"]["index"],
                                                host[0][0]["text"]["value"])
    np.testing.assert_allclose(dense.numpy(), X[rows.numpy(), N_IMAGE:-1].astype(np.float32))


def test_a_sparse_training_step_adds_at_most_eight_kernels_to_the_dense_one():
    sys.path.insert(0, "tests")
    from test_training_step import _CountThirdStep

    X, y = _data(530)
    counts = []
    for A in (X, sp.csr_matrix(X)):
        counter = _CountThirdStep()
        SAMEmbedder(n_image_features=N_IMAGE, hidden_dim=8, embedding_dim=4, batch_size=100,
                    random_state=0, max_epochs=1, validation_fraction=0, compile_step=False,
                    callbacks=[("count", counter)]).fit(A, y)
        counts.append(sum(counter.result.kernels.values()))
        assert counter.result.syncs == 0
    assert counts[0] < counts[1] <= counts[0] + 8, counts


def test_a_compiled_sparse_step_is_one_graph_and_equals_eager():
    X, y = _data(230)
    S = sp.csr_matrix(X)
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)

    torch._dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        compiled = _neural("TempXNet", batch_size=100, compile_step={"backend": backend}).fit(S, y)
    assert compiled.net_.compiled_step.failed_ is None and 1 <= len(graphs) <= 2
    eager = _neural("TempXNet", batch_size=100, compile_step=False).fit(S, y)
    np.testing.assert_allclose(compiled.transform(S), eager.transform(S), atol=1e-6)


# ------------------------------------------------------------------ search
def test_search_with_sparse_query_and_gallery_blocks_equals_the_dense_search():
    X, _ = _data()
    cca = CCACrossModal(4, n_image_features=N_IMAGE, device="cpu").fit(sp.csr_matrix(X))
    image, text = X[:, :N_IMAGE], X[:, N_IMAGE:-1]
    dense = cross_modal_search(cca, image, text, k=5, as_frame=False)
    csr = cross_modal_search(cca, image, sp.csr_matrix(text), k=5, as_frame=False)
    np.testing.assert_array_equal(csr.indices, dense.indices)
    index = CrossModalIndex(cca, modality="image").fit(image)
    np.testing.assert_array_equal(index.search(sp.csr_array(text), k=3, as_frame=False).indices,
                                  index.search(text, k=3, as_frame=False).indices)


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("make", [
    lambda: BinnedProcrustesEmbedder(CCACrossModal(2), bins=2, n_image_features=N_IMAGE),
    lambda: SequentialCrossModal(**NET, n_image_features=N_IMAGE),
], ids=["Binned", "SCML"])
def test_estimators_off_the_sparse_paths_refuse_sparse_x_by_name(make):
    X, y = _data()
    estimator = make()
    with pytest.raises(TypeError, match=rf"{type(estimator).__name__} does not accept sparse "
                                        r"input.*toarray\(\).*TruncatedSVD"):
        estimator.fit(sp.csr_matrix(X), y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(X, y)
    with pytest.raises(TypeError, match="X_text is a scipy sparse matrix"):
        estimator.transform_text(sp.csr_matrix(X[:, N_IMAGE:-1]), time=2005.0)


def test_tempxnet_topic_correlation_refuses_sparse_text_naming_the_alternatives():
    X, y = _data()
    with pytest.raises(TypeError, match="correlation='topic'.*toarray"):
        _neural("TempXNet", correlation="topic").fit(sp.csr_matrix(X), y)


def test_a_network_fitted_on_sparse_x_pickles_with_its_training_state():
    import pickle

    X, y = _data()
    S = sp.csr_matrix(X)
    fitted = _neural("SAM", keep_training_state=True).fit(S, y)
    loaded = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(loaded.transform(S), fitted.transform(S))
    loaded.set_params(warm_start=True, max_epochs=1).fit(S, y)  # continues on sparse rows


# ------------------------------------------------------------------ X read in place
def _hstacked(n=160, seed=0, image_share=1.0):
    """A float32 CSR X = [dense image | sparse text | time], as a ColumnTransformer stacks
    it, and its dense form; ``image_share``: the image entries stored (the rest are 0)."""
    X, y = _data(n, seed)
    X = X.astype(np.float32)
    if image_share < 1.0:
        rng = np.random.default_rng(seed + 1)
        X[:, :N_IMAGE][rng.random((n, N_IMAGE)) > image_share] = 0.0
    return sp.csr_matrix(X), X, y


def test_splitting_a_csr_x_copies_no_stored_value_and_checks_it_in_place():
    from temporal_xmodal._input import split_blocks, split_time_column
    from temporal_xmodal._sparse_input import CSRWindow

    S, X, _ = _hstacked()
    features, time = split_time_column(S)
    assert isinstance(features, CSRWindow) and features.X is S
    np.testing.assert_array_equal(time, X[:, -1])
    checked = check_features(features, float32=True)
    assert checked is features  # float32: nothing converted, nothing copied
    image, text = split_blocks(checked, N_IMAGE, N_TEXT)
    assert image.X is S and text.X is S and image.is_dense and not text.is_dense
    np.testing.assert_array_equal(image.toarray(), X[:, :N_IMAGE])
    np.testing.assert_array_equal(text.toarray(), X[:, N_IMAGE:-1])
    np.testing.assert_array_equal(text[[3, 0]].toarray(), X[[3, 0], N_IMAGE:-1])
    # a NaN among the features is named by its column in X; one in the time is the time's
    bad = S.copy()
    bad.data[bad.indptr[2] + N_IMAGE] = np.nan  # row 2's first text entry
    column = bad.indices[bad.indptr[2] + N_IMAGE]
    with pytest.raises(ValueError, match=rf"1 value\(s\) in 1 column\(s\) \(first: column "
                                         rf"{column}\)"):
        check_features(split_time_column(bad)[0])
    bad = S.copy()
    bad.data[bad.indptr[1] - 1] = np.nan  # row 0's time
    check_features(split_time_column(bad)[0])


def test_csr_x_with_unsorted_indices_is_read_as_the_sorted_one():
    S, X, _ = _hstacked(40)
    shuffled = S.copy()
    for r in range(S.shape[0]):  # each row's entries in reverse order
        a, b = shuffled.indptr[r], shuffled.indptr[r + 1]
        shuffled.indices[a:b] = shuffled.indices[a:b][::-1].copy()
        shuffled.data[a:b] = shuffled.data[a:b][::-1].copy()
    shuffled.has_sorted_indices = False
    from temporal_xmodal._sparse_input import split_sparse

    features, time = split_sparse(shuffled)
    np.testing.assert_array_equal(features.toarray(), X[:, :-1])
    np.testing.assert_array_equal(time, X[:, -1])


def test_the_training_data_shares_x_and_gathers_dense_batches_from_the_image_window():
    from temporal_xmodal._device import move, nbytes
    from temporal_xmodal._input import split_blocks, split_time_column

    S, X, y = _hstacked(image_share=0.7)  # a partly stored image block, still dense
    image, text = split_blocks(split_time_column(S)[0], N_IMAGE, N_TEXT)
    dataset = make_dataset(image, text, np.eye(3)[y], rows=np.arange(10, 160))
    rows_image, rows_text = dataset.X["image"], dataset.X["text"]
    assert rows_image.dense and not rows_text.dense
    # X's arrays, shared by both blocks: no copy of a stored value
    assert rows_image.data is rows_text.data and rows_image.indices is rows_text.indices
    assert np.shares_memory(rows_image.data.numpy(), S.data)
    assert np.shares_memory(rows_image.indices.numpy(), S.indices)
    assert nbytes(dataset.X) < S.data.nbytes + S.indices.nbytes + 2 * 16 * S.shape[0] + 2048
    moved = move(dataset.X, "cpu")
    assert moved["image"].data is moved["text"].data  # moved (and placed) once
    for (batch, _), index in zip(BatchIterator(dataset, batch_size=64),
                                 (np.arange(10, 74), np.arange(74, 138), np.arange(138, 160))):
        assert torch.is_tensor(batch["image"]) and batch["image"].shape == (len(index), N_IMAGE)
        np.testing.assert_array_equal(batch["image"].numpy(), X[index, :N_IMAGE])
        dense = torch.zeros(len(index), N_TEXT).scatter_add_(1, batch["text"]["index"],
                                                             batch["text"]["value"])
        np.testing.assert_array_equal(dense.numpy(), X[index, N_IMAGE:-1])


@pytest.mark.parametrize("name", NEURAL)
def test_csr_x_with_a_dense_image_block_embeds_as_its_dense_form(name, monkeypatch):
    from temporal_xmodal.training import _net

    S, X, y = _hstacked(image_share=0.7)
    dense = _neural(name).fit(X, y)
    fitted = _neural(name).fit(S, y)
    np.testing.assert_allclose(fitted.net_.history[:, "train_loss"],
                               dense.net_.history[:, "train_loss"], rtol=1e-5)
    monkeypatch.setattr(_net, "_SPARSE_BATCH_BYTES", 1)  # 64-row chunks
    np.testing.assert_allclose(fitted.transform(S), dense.transform(X), atol=1e-5)
    time = X[:, -1] if name == "Diachronic" else None
    np.testing.assert_allclose(fitted.transform_image(S[:, :N_IMAGE], time=time),
                               dense.transform_image(X[:, :N_IMAGE], time=time), atol=1e-5)


def _peak_rss():
    """A context measuring this process's peak resident set (bytes) within it: VmHWM
    after resetting it (``/proc/self/clear_refs``), else a thread sampling VmRSS."""
    import contextlib
    import threading

    def status(field):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
        raise KeyError(field)

    @contextlib.contextmanager
    def measure():
        result = {"before": status("VmRSS")}
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            stop = None
        except OSError:
            stop, peak = threading.Event(), [result["before"]]

            def sample():
                while not stop.wait(0.002):
                    peak[0] = max(peak[0], status("VmRSS"))
            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
        try:
            yield result
        finally:
            if stop is None:
                result["peak"] = status("VmHWM")
            else:
                stop.set()
                sampler.join()
                result["peak"] = max(peak[0], status("VmRSS"))
    try:
        status("VmRSS")
    except (OSError, KeyError):
        pytest.skip("no /proc/self/status here: the peak resident set cannot be read")
    return measure


def _paper_like_csr(n, d_image, d_text, terms, seed=0):
    """A float32 CSR [dense image | text of ``terms`` terms a row | time] built from its
    arrays (no dense copy), and labels."""
    rng = np.random.default_rng(seed)
    per_row = d_image + terms + 1
    y = rng.integers(0, 10, n)
    indices = np.empty((n, per_row), dtype=np.int32)
    data = np.empty((n, per_row), dtype=np.float32)
    indices[:, :d_image] = np.arange(d_image)
    data[:, :d_image] = rng.standard_normal((n, d_image), dtype=np.float32) + 0.3 * y[:, None]
    words = np.sort(rng.integers(0, d_text - terms + 1, (n, terms)), axis=1) + np.arange(terms)
    indices[:, d_image:-1] = d_image + words
    data[:, d_image:-1] = rng.random((n, terms), dtype=np.float32)
    indices[:, -1] = d_image + d_text
    data[:, -1] = rng.uniform(0, 10, n)
    indptr = np.arange(n + 1, dtype=np.int32) * per_row
    return sp.csr_matrix((data.ravel(), indices.ravel(), indptr),
                         shape=(n, d_image + d_text + 1)), y


def test_a_fit_on_a_paper_like_csr_x_holds_a_small_fraction_of_x_beyond_it(monkeypatch):
    """Issue 55, "the paper's setting, run": a CSR X of dense image features and a sparse
    text block is fitted without a copy of X, of its image block densely, or of its
    stored values: what the fit holds beyond X is its chunks, the model and the batches.
    The chunk budgets are lowered to 4 MiB, so that the fit's fixed part is its model (a
    few MiB) and a dense copy of the image block (31 MB; X: 66 MB) would show."""
    import gc

    from temporal_xmodal import _sparse_input
    from temporal_xmodal._input import _checks as _validation

    measure = _peak_rss()
    for module in (_sparse_input, _validation):
        monkeypatch.setattr(module, "CHUNK_BYTES" if module is _sparse_input
                            else "_CHUNK_BYTES", 4 * 2 ** 20)
    params = dict(max_epochs=1, hidden_dim=64, embedding_dim=16, device="cpu",
                  n_image_features=256, random_state=0)
    warm, y_warm = _paper_like_csr(2000, 256, 5000, 20, seed=1)
    DiachronicEmbedder(**params).fit(warm, y_warm)  # the imports and first allocations
    del warm
    X, y = _paper_like_csr(30000, 256, 5000, 20)
    x_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    gc.collect()
    with measure() as rss:
        fitted = DiachronicEmbedder(**params).fit(X, y)
    beyond = rss["peak"] - rss["before"]
    assert beyond <= 0.3 * x_bytes, (beyond / 2 ** 20, x_bytes / 2 ** 20)  # 10 MiB of 64
    assert isinstance(fitted.net_.history[-1]["train_loss"], float)
