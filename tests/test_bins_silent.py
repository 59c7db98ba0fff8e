"""Nothing silent about time bins (DESIGN.md "Bad input"): edges and the merge of empty bins.

The rule: *fitting* bins never clips.  Explicit edges must be finite, strictly
increasing and cover every time they are fitted on (the binned estimator's
training rows, a protocol's evaluation rows); otherwise ``fit`` raises a
``ValueError`` naming how many rows lie outside and where.  *Applying* fitted
bins to other times (``transform``, a protocol given a fitted ``TimeBins``)
puts them in the nearest end bin and warns with a ``TimeRangeWarning``.
"""

import signal
import threading
import time as time_module
import warnings
from contextlib import contextmanager

import numpy as np
import pandas as pd
import pytest

from temporal_xmodal import (BinnedProcrustesEmbedder, CCACrossModal, TimeRangeWarning,
                             stack_modalities)
from temporal_xmodal.base import CrossModalEmbedder
from temporal_xmodal.evaluation import local_alignment, temporally_bounded_retrieval
from temporal_xmodal.time import TimeBins, TimeBinWarning

N_IMG, N_TXT = 4, 3


def _data(n=120, t_max=10.0, seed=0):
    rng = np.random.default_rng(seed)
    time = np.sort(rng.uniform(0.0, t_max, n))
    X = stack_modalities(rng.standard_normal((n, N_IMG)), rng.standard_normal((n, N_TXT)), time)
    return X, time


def _binned(bins, min_bin_size=10):
    return BinnedProcrustesEmbedder(CCACrossModal(embedding_dim=2), bins=bins,
                                    min_bin_size=min_bin_size, n_image_features=N_IMG,
                                    use_time=True)


# ------------------------------------------------------- edges that leave rows out
@pytest.mark.parametrize("edges", [[100.0, 200.0, 300.0], [0.0, 1.0, 2.0], [3.0, 4.0, 5.0, 6.0]])
def test_binned_edges_not_covering_the_training_times_raise(edges):
    X, time = _data()
    below, above = int((time < edges[0]).sum()), int((time > edges[-1]).sum())
    with pytest.raises(ValueError, match="bins") as info:
        _binned(edges).fit(X)
    message = str(info.value)
    assert f"leave {below + above} of the 120 times outside" in message
    if below:
        assert f"{below} below the first edge" in message
    if above:
        assert f"{above} above the last edge" in message
    assert "clipped" in message and "extend the edges" in message


def test_binned_edges_covering_the_times_report_the_rows_used():
    X, time = _data()
    # the end edges are inclusive: the earliest and the latest time themselves
    edges = [time.min(), 2.5, 5.0, 7.5, time.max()]
    model = _binned(edges).fit(X)
    np.testing.assert_array_equal(model.bins_.edges_, edges)
    used = np.bincount(model.bins_.transform(time), minlength=model.n_bins_)
    np.testing.assert_array_equal(model.bins_.counts_, used)
    assert model.bins_.counts_.sum() == len(X)


def test_binned_date_edges_equal_the_same_edges_on_the_axis():
    X, _ = _data(t_max=3.0)
    X[:, -1] += 2000.0
    dated = np.array(["2000-01-01", "2001-01-01", "2002-01-01", "2003-01-01"],
                     dtype="datetime64[D]")
    numeric = _binned([2000.0, 2001.0, 2002.0, 2003.0]).fit(X)
    by_date = _binned(dated).fit(X)
    np.testing.assert_allclose(by_date.bins_.edges_, numeric.bins_.edges_)
    np.testing.assert_array_equal(by_date.bins_.counts_, numeric.bins_.counts_)


@pytest.mark.parametrize("edges, keyword", [
    ([0.0, np.nan, 10.0], "finite"),
    ([0.0, 5.0, np.inf], "finite"),
    ([-np.inf, 5.0, 10.0], "finite"),
    ([0.0, 6.0, 4.0, 10.0], "out of order"),
    ([0.0, 5.0, 5.0, 10.0], "repeated"),
    ([[0.0, 5.0, 10.0]], "1-D"),
    ([0.0], "at least 2"),
    (["a", "b"], "numbers"),
])
def test_bad_edges_raise_naming_the_problem(edges, keyword):
    X, time = _data()
    with pytest.raises(ValueError, match=keyword):
        _binned(edges).fit(X)
    with pytest.raises(ValueError, match=keyword):
        TimeBins(edges).fit(time)


@pytest.mark.parametrize("width", [np.inf, np.nan, 0.0, -1.0, "0D", "-6M"])
def test_bad_width_raises(width):
    with pytest.raises(ValueError, match="bins"):
        TimeBins(width).fit(np.arange(5.0))


def test_width_below_the_axis_resolution_raises():
    with pytest.raises(ValueError, match="resolution"):
        TimeBins(1e-14).fit(1990.0 + np.array([0.0, 0.5, 1.0]))


# ----------------------------------------------- one reading of bins everywhere
_DATED_EDGES = np.array(["2000-01-01", "2001-01-01", "2002-01-01", "2003-01-01"],
                        dtype="datetime64[D]")


@pytest.mark.parametrize("bins", [4, 0.5, "6M", pd.Timedelta(days=365.25 / 4),
                                  np.timedelta64(4, "M"), _DATED_EDGES,
                                  [2000.0, 2001.5, 2003.0]])
def test_evaluation_and_estimator_read_bins_alike(bins):
    """The same ``bins`` gives the same edges to the estimator, the protocols and TimeBins."""
    X, _ = _data(n=240, t_max=3.0)
    X[:, -1] += 2000.0
    time = X[:, -1]
    y = np.arange(len(X)) % 3
    direct = TimeBins(bins).fit(time)
    model = _binned(bins, min_bin_size=2).fit(X)
    _, table = temporally_bounded_retrieval(_Still(N_IMG).fit(X), X, y, bins=bins)
    assert direct.n_bins_ > 1
    np.testing.assert_array_equal(model.bins_.edges_, direct.edges_)
    np.testing.assert_array_equal(table["start"], direct.edges_[:-1])
    np.testing.assert_array_equal(table["end"], direct.edges_[1:])


def test_bins_are_read_in_the_time_unit():
    days = np.arange(0.0, 60.0)
    assert TimeBins("10D", time_unit="days").fit(days).n_bins_ == 6
    np.testing.assert_array_equal(TimeBins("10D", time_unit="days").fit(days).edges_,
                                  TimeBins(10.0).fit(days).edges_)


# ------------------------------------------------------------------ protocols
class _Still(CrossModalEmbedder):
    """A static embedder: the first column of each block as an angle."""

    _requires_labels = False
    _parameter_constraints = {}

    def __init__(self, n_image_features=None):
        self.n_image_features = n_image_features

    def _fit(self, X_image, X_text, time, labels):
        self.embedding_dim_ = 2

    def _embed(self, modality, A, time):
        return np.column_stack([np.cos(A[:, 0]), np.sin(A[:, 0])])


def _evaluation_set():
    X, time = _data()
    y = np.arange(len(X)) % 3
    return _Still(N_IMG).fit(X), X, y, time


@pytest.mark.parametrize("edges", [[0.0, 1.0], [100.0, 200.0, 300.0]])
def test_protocol_edges_not_covering_the_evaluation_rows_raise(edges):
    est, X, y, time = _evaluation_set()
    outside = int(((time < edges[0]) | (time > edges[-1])).sum())
    with pytest.raises(ValueError, match=f"leave {outside} of the 120 times outside"):
        temporally_bounded_retrieval(est, X, y, bins=edges)
    with pytest.raises(ValueError, match="outside"):
        local_alignment(est, X, y, bins=np.array(edges))
    with pytest.raises(ValueError, match="finite"):
        temporally_bounded_retrieval(est, X, y, bins=[0.0, np.nan, 10.0])


def test_protocol_table_counts_every_row_in_the_bin_that_holds_it():
    est, X, y, time = _evaluation_set()
    _, table = temporally_bounded_retrieval(est, X, y, bins=[0.0, 5.0, 10.0])
    assert table["n_items"].sum() == len(X)
    for start, end, n_items in zip(table["start"], table["end"], table["n_items"]):
        inside = (time >= start) & ((time < end) | ((end == 10.0) & (time == end)))
        assert n_items == inside.sum()


def test_protocol_with_fitted_bins_warns_about_rows_outside_their_edges():
    est, X, y, time = _evaluation_set()
    fitted = TimeBins([2.0, 5.0, 8.0]).fit(time[(time >= 2.0) & (time <= 8.0)])
    below, above = int((time < 2.0).sum()), int((time > 8.0).sum())
    with pytest.warns(TimeRangeWarning, match=f"{below + above} of the 120 evaluation") as rec:
        _, table = temporally_bounded_retrieval(est, X, y, bins=fitted)
    message = str(rec[0].message)
    assert f"{below} below the first edge" in message and "first bin" in message
    assert f"{above} above the last edge" in message and "last bin" in message
    assert table["n_items"].sum() == len(X)
    with warnings.catch_warnings():  # rows inside the edges: no warning
        warnings.simplefilter("error")
        inside = (time >= 2.0) & (time <= 8.0)
        temporally_bounded_retrieval(est, X[inside], y[inside], bins=fitted)


# ------------------------------------------------------------ merging is fast
@contextmanager
def _deadline(seconds):
    """Fail with TimeoutError after ``seconds`` (where SIGALRM exists), so a slow merge fails."""
    main = threading.current_thread() is threading.main_thread()
    if not hasattr(signal, "setitimer") or not main:
        yield
        return

    def stop(signum, frame):
        raise TimeoutError(f"did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("min_bin_size", [1, 100])
def test_fine_width_over_a_long_range_merges_in_linear_time(min_bin_size):
    # 1e5 times over 10 years, width 1e-6: 1e7 initial bins, almost all empty
    # (under 2 s on an idle core; the bound is generous for loaded CI machines)
    time = 2000.0 + np.random.default_rng(0).uniform(0.0, 10.0, 100_000)
    start = time_module.perf_counter()
    with _deadline(30), pytest.warns(TimeBinWarning, match="merged"):
        bins = TimeBins(1e-6, min_bin_size=min_bin_size).fit(time)
    assert time_module.perf_counter() - start < 10.0
    assert bins.counts_.sum() == time.size and bins.counts_.min() >= min_bin_size
    np.testing.assert_array_equal(np.bincount(bins.transform(time)), bins.counts_)
    assert np.all(np.diff(bins.edges_) > 0)


def test_issue_case_fine_width_on_few_items_is_instant():
    # the issue's case: 120 times over 9 years, width 1e-4 (89,443 empty bins) took 33 s
    time = 1990.0 + np.sort(np.random.default_rng(0).uniform(0.0, 9.0, 120))
    start = time_module.perf_counter()
    with _deadline(20), pytest.warns(TimeBinWarning, match="empty"):
        bins = TimeBins(1e-4).fit(time)
    assert time_module.perf_counter() - start < 2.0
    assert bins.n_bins_ == 120 and bins.counts_.sum() == 120


def _reference_fit(t, edges, min_size):
    """The merge as specified, one bin at a time (quadratic): the first smallest bin goes
    into its smaller neighbour, the left one on ties."""
    counts = np.histogram(t, edges)[0]
    while len(counts) > 1 and counts.min() < min_size:
        b = int(np.argmin(counts))
        if b == 0:
            other = 1
        elif b == len(counts) - 1:
            other = b - 1
        else:
            other = b - 1 if counts[b - 1] <= counts[b + 1] else b + 1
        edges = np.delete(edges, max(b, other))
        counts = np.histogram(t, edges)[0]
    return edges, counts


@pytest.mark.parametrize("seed", range(6))
def test_fast_merge_equals_the_one_by_one_merge(seed):
    rng = np.random.default_rng(seed)
    t = np.round(np.concatenate([rng.normal(rng.uniform(0, 10), rng.uniform(0.2, 2), 150)
                                 for _ in range(3)]), 2)
    for bins, min_size in [(0.05, 1), (0.05, 7), (0.013, 25), (300, 4), (40, 1)]:
        if isinstance(bins, float):
            n = int(np.floor((t.max() - t.min()) / bins + 1e-9)) + 1
            edges = t.min() + bins * np.arange(n + 1)
        else:
            edges = np.linspace(t.min(), t.max(), bins + 1)
        expected_edges, expected_counts = _reference_fit(t, edges, min_size)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TimeBinWarning)
            fitted = TimeBins(bins, min_bin_size=min_size).fit(t)
            by_edges = TimeBins(edges, min_bin_size=min_size).fit(t)
        for got in (fitted, by_edges):
            np.testing.assert_array_equal(got.edges_, expected_edges)
            np.testing.assert_array_equal(got.counts_, expected_counts)
