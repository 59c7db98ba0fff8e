"""Scaling: fits that copy nothing of size n × d, threads per worker, the Dask backend."""

import threading

import numpy as np
import pytest
import torch
from skorch.callbacks import Callback
from joblib import Parallel, delayed, parallel_config
from sklearn.model_selection import GridSearchCV
from threadpoolctl import threadpool_info

from _tiny import tiny
from temporal_xmodal import BinnedProcrustesEmbedder, CCACrossModal, DiachronicEmbedder
from temporal_xmodal._device import limit_worker_threads, worker_threads
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.metrics import cross_modal_scores, mean_average_precision
from temporal_xmodal.training import BatchIterator, RetrievalScoring, make_dataset

CPU = dict(device="cpu")  # on top of the tiny settings: thread counts are the CPU's
#: The grids here vary Diachronic's window at the default decay=0, where it shapes nothing
#: (tests/test_diachronic.py tests that warning): the scores must still match, bit for bit.
pytestmark = pytest.mark.filterwarnings(
    "ignore:DiachronicEmbedder. .* no effect. L_intra, the same-category time term:UserWarning")


@pytest.fixture(scope="module")
def data():
    X, y, info = make_temporal_crossmodal(240, n_image_features=12, n_text_features=10,
                                          return_info=True, random_state=0)
    return X, y, info.n_image_features


# ------------------------------------------------------------------- memory
def test_datasets_index_the_shared_features_without_copying():
    rng = np.random.default_rng(0)
    X_img = rng.standard_normal((50, 6), dtype=np.float32)
    X_txt = rng.standard_normal((50, 4), dtype=np.float32)
    Y = np.eye(3, dtype=bool)[rng.integers(3, size=50)]
    rows = np.array([3, 7, 8, 20, 41])
    data = make_dataset(X_img, X_txt, Y, {"time": np.arange(50.0)}, rows=rows)
    assert len(data) == 5
    assert data.X["image"].data_ptr() == X_img.ctypes.data  # shared, not copied
    batches = list(BatchIterator(data, batch_size=2))
    assert [len(b[1]) for b in batches] == [2, 2, 1]
    np.testing.assert_array_equal(torch.cat([b[0]["image"] for b in batches]), X_img[rows])
    np.testing.assert_array_equal(torch.cat([b[0]["time"] for b in batches]), rows)
    assert batches[0][1].dtype == torch.float32
    np.testing.assert_array_equal(torch.cat([b[1] for b in batches]), Y[rows])
    shuffled = list(BatchIterator(data, batch_size=2, shuffle=True,
                                  generator=torch.Generator().manual_seed(0)))
    assert sorted(torch.cat([b[0]["time"] for b in shuffled]).tolist()) == rows.tolist()


def test_fit_trains_on_the_callers_float32_features_without_a_copy(data):
    """Training and validation datasets are row indices into the caller's X.

    (Before: the training and validation rows were copied, 1 × the features,
    and the label indicator was float32, n × C × 4 bytes.)
    """
    X, y, n_img = data
    X = np.ascontiguousarray(X, dtype=np.float32)
    seen = {}

    class Inspect(Callback):
        def on_epoch_begin(self, net, dataset_train=None, dataset_valid=None, **kwargs):
            seen.update(train=dataset_train, valid=dataset_valid)

    tiny(DiachronicEmbedder, max_epochs=1, validation_fraction=0.25, n_image_features=n_img,
         callbacks=[Inspect()], **CPU).fit(X, y)
    train, valid = seen["train"], seen["valid"]
    for dataset in (train, valid):
        assert np.shares_memory(dataset.X["image"].numpy(), X)
        assert np.shares_memory(dataset.X["text"].numpy(), X)
        assert dataset.y.dtype == torch.bool
    assert train.X["image"] is valid.X["image"]
    rows = np.concatenate([train.rows.numpy(), valid.rows.numpy()])
    assert len(valid) == 60 and np.array_equal(np.sort(rows), np.arange(len(X)))


def test_validation_map_on_a_query_sample():
    rng = np.random.default_rng(1)
    n = 300
    labels = np.eye(4, dtype=bool)[rng.integers(4, size=n)]
    data = make_dataset(rng.standard_normal((n, 5), dtype=np.float32),
                        rng.standard_normal((n, 5), dtype=np.float32), labels,
                        rows=np.arange(0, n, 2))

    class Identity(torch.nn.Module):
        def embed_image(self, x):
            return x

        def embed_text(self, x):
            return x

    class Net:
        module_, device, use_caching = Identity(), "cpu", "auto"

        def __init__(self):
            self.recorded = []
            self.history = self

        def record(self, key, value):
            self.recorded.append(value)

    def validation_epoch(scoring):
        """An epoch as skorch's loop hands it to the callback: the validation batches'
        outputs (the module's (z_image, z_text)) are cached, then scored at the epoch's end."""
        scoring.on_epoch_begin(net, dataset_train=None, dataset_valid=data)
        for batch in BatchIterator(data, batch_size=64):
            outputs = (batch[0]["image"], batch[0]["text"])
            scoring.on_batch_end(net, batch, outputs, training=False)
        scoring.on_epoch_end(net, dataset_valid=data)

    z_img = data.X["image"].numpy()[::2]
    z_txt = data.X["text"].numpy()[::2]
    lab = labels[::2]
    net = Net()
    exact = RetrievalScoring(max_queries=None)
    exact.on_train_begin(net)
    validation_epoch(exact)
    assert net.recorded[0] == pytest.approx(
        cross_modal_scores(z_img, z_txt, lab, metrics=("map",))["map"], abs=1e-12)
    sampled = RetrievalScoring(max_queries=40, random_state=3)
    sampled.on_train_begin(net)
    validation_epoch(sampled)
    validation_epoch(sampled)
    q = sampled.queries_
    assert len(q) == 40 and len(set(q.tolist())) == 40
    expected = 0.5 * (mean_average_precision(z_img[q], z_txt, lab[q], lab)
                      + mean_average_precision(z_txt[q], z_img, lab[q], lab))
    assert net.recorded[1] == pytest.approx(expected, abs=1e-12)
    assert net.recorded[2] == net.recorded[1]  # the same queries every epoch
    assert net.recorded[1] != net.recorded[0]


# ------------------------------------------------------------------ threads
def _pools():
    """Threads of every loaded pool, by library file (two OpenBLAS can be loaded at once)."""
    return {pool["filepath"]: pool["num_threads"] for pool in threadpool_info()}


def test_no_limit_outside_a_worker():
    assert worker_threads() is None
    before = torch.get_num_threads()
    with limit_worker_threads():
        assert torch.get_num_threads() == before


def test_fits_in_threading_workers_run_single_threaded_and_restore(data):
    X, y, n_img = data
    original = torch.get_num_threads()
    torch.set_num_threads(2)
    seen = []
    lock = threading.Lock()
    both_inside = threading.Barrier(2)

    def fit(seed):
        est = tiny(DiachronicEmbedder, max_epochs=1, validation_fraction=0,
                   n_image_features=n_img, random_state=seed, **CPU)
        net_config = est._net_config  # runs inside the fit's thread limit

        def recording(*args, **kwargs):
            both_inside.wait(timeout=60)  # two fits at once: the second enters at depth 1
            with lock:
                seen.append((torch.get_num_threads(), _pools()))
            return net_config(*args, **kwargs)

        est._net_config = recording
        return est.fit(X, y)

    try:  # faiss brings an OpenBLAS on OpenMP, whose limit is per thread
        import faiss  # noqa: F401
    except ImportError:
        pass
    loaded = set(_pools())
    try:
        with parallel_config(backend="threading"):
            Parallel(n_jobs=2)(delayed(fit)(seed) for seed in range(4))
        assert len(seen) == 4
        assert all(threads == 1 for threads, _ in seen)
        # the pools loaded before the fits are limited (threadpoolctl cannot limit a
        # library that a fit loads for the first time)
        assert all(pools[lib] == 1 for _, pools in seen for lib in loaded if lib in pools), (
            loaded, seen)
        assert torch.get_num_threads() == 2  # restored after the last concurrent fit
    finally:
        torch.set_num_threads(original)


@pytest.mark.filterwarnings("ignore::temporal_xmodal.time.TimeBinWarning")  # one empty bin
def test_gridsearch_on_threads_is_reproducible(data):
    """Concurrent fits in threads draw dropout and time dropout from their own generators and
    initialise one at a time, so threading gives the sequential scores, bit for bit."""
    X, y, n_img = data
    est = tiny(DiachronicEmbedder, max_epochs=2, validation_fraction=0, n_image_features=n_img,
               dropout=0.3, time_dropout=0.5, **CPU)
    grid = {"window": [0.5, 3.0], "lr": [5e-3, 2e-2]}
    with limit_worker_threads(1):  # the workers' thread count: same arithmetic
        reference = GridSearchCV(est, grid, cv=2, n_jobs=1).fit(X, y)
    for _ in range(2):
        with parallel_config(backend="threading"):
            threads = GridSearchCV(est, grid, cv=2, n_jobs=2).fit(X, y)
        np.testing.assert_array_equal(threads.cv_results_["mean_test_score"],
                                      reference.cv_results_["mean_test_score"])


def test_explicit_thread_count_and_restore():
    original = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with limit_worker_threads(1):
            assert torch.get_num_threads() == 1
            assert set(_pools().values()) == {1}
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(original)


# --------------------------------------------------------------------- Dask
@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def test_gridsearch_on_dask_matches_sequential(data, dask_client):
    X, y, n_img = data
    est = tiny(DiachronicEmbedder, max_epochs=2, validation_fraction=0, n_image_features=n_img,
               **CPU)
    grid = {"window": [0.5, 3.0], "lr": [5e-3, 2e-2]}
    with limit_worker_threads(1):  # the workers' thread count: same arithmetic
        reference = GridSearchCV(est, grid, cv=2, n_jobs=1).fit(X, y)
    with parallel_config(backend="dask"):
        on_dask = GridSearchCV(est, grid, cv=2, n_jobs=2).fit(X, y)
    assert on_dask.best_params_ == reference.best_params_
    np.testing.assert_allclose(on_dask.cv_results_["mean_test_score"],
                               reference.cv_results_["mean_test_score"], rtol=0, atol=1e-6)
    assert len(dask_client.scheduler_info()["workers"]) == 2


def test_binned_per_bin_fits_on_dask_match_sequential(data, dask_client):
    X, y, n_img = data
    kwargs = dict(base_estimator=tiny(CCACrossModal, embedding_dim=4), bins=3, min_bin_size=40,
                  n_image_features=n_img)
    sequential = tiny(BinnedProcrustesEmbedder, **kwargs).fit(X, y)
    with parallel_config(backend="dask"):
        on_dask = tiny(BinnedProcrustesEmbedder, n_jobs=2, **kwargs).fit(X, y)
    np.testing.assert_allclose(on_dask.transform(X), sequential.transform(X), atol=1e-10)
