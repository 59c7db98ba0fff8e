"""``fit_report_`` (:class:`temporal_xmodal.training.FitReport`): one fitted attribute that
says what a fit did, read by callers instead of the warnings (issue 58)."""

import warnings

import numpy as np
import pytest

from _tiny import tiny
from temporal_xmodal import (BinnedProcrustesEmbedder, CCACrossModal, DiachronicEmbedder,
                             SAMEmbedder, SequentialCrossModal)
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.training import FitReport


@pytest.fixture(scope="module")
def data():
    return make_temporal_crossmodal(300, random_state=0)


def _quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


def test_a_neural_fit_reports_the_epoch_it_kept_and_why(data):
    X, y = data
    model = _quiet(lambda: tiny(SAMEmbedder, n_image_features=64, max_epochs=4).fit(X, y))
    report = model.fit_report_
    assert report.epochs == report.max_epochs == 4 and report.kept_why == "best"
    assert report.kept_epoch == model.best_epoch_ == model.convergence_["best_epoch"]
    assert report.kept_score == model.net_.history[report.kept_epoch - 1, "valid_map"]
    assert report.still_improving == model.convergence_["still_improving"]
    assert not report.interrupted and not report.cannot_rank
    assert f"kept epoch {report.kept_epoch}" in report.summary()
    # without validation rows: the last epoch, and it says so
    last = _quiet(lambda: tiny(SAMEmbedder, n_image_features=64, max_epochs=2,
                               validation_fraction=0).fit(X, y)).fit_report_
    assert last.kept_why == "no validation" and last.kept_epoch == 2 and last.metric is None


def test_a_warm_start_reports_its_own_epochs(data):
    X, y = data
    model = tiny(DiachronicEmbedder, n_image_features=64, max_epochs=2, warm_start=True)
    _quiet(lambda: model.fit(X, y).set_params(max_epochs=3).fit(X, y))
    assert model.fit_report_.epochs == 3 and len(model.net_.history) == 5
    assert 3 <= model.fit_report_.kept_epoch <= 5


def test_a_binned_model_reports_each_bin(data):
    X, y = data
    closed = BinnedProcrustesEmbedder(CCACrossModal(), bins=3, min_bin_size=30,
                                      n_image_features=64).fit(X, y).fit_report_
    assert [name for name, _ in closed.children] == ["bin 0", "bin 1", "bin 2"]
    assert all(r == FitReport() for _, r in closed.children) and closed.epochs == 0
    neural = _quiet(lambda: BinnedProcrustesEmbedder(
        tiny(SAMEmbedder), bins=2, min_bin_size=30, n_image_features=64, max_epochs=2,
        random_state=0).fit(X, y))
    report = neural.fit_report_
    # the model on all rows that every bin continued (init="auto"), then each bin
    assert report.children[0][0] == "all rows" and report.children[0][1].epochs == 2
    assert [r for name, r in report.children[1:]] == [est.fit_report_ for est in
                                                      neural.bin_estimators_]
    assert report.still_improving == any(r.still_improving for _, r in report.children)


def test_a_sequential_model_reports_each_stage(data):
    X, y = data
    model = _quiet(lambda: SequentialCrossModal(n_image_features=64, max_epochs=2,
                                                random_state=0).fit(X, y))
    names = [name for name, _ in model.fit_report_.children]
    assert names[0] == "Stage I" and len(names) == len(model.nets_)
    assert all(r.epochs == len(net.history) for (_, r), net in
               zip(model.fit_report_.children, model.nets_.values()))


def test_the_compare_job_reads_the_report_not_the_warnings():
    """A fit that warns nothing but reports itself still improving is marked from its
    fit_report_ alone (a Ctrl-C read the same way: tests/test_comparison_run.py)."""
    from temporal_xmodal.comparison import compare, load_comparison_data

    class Reports(CCACrossModal):
        def fit(self, X, y=None):
            super().fit(X, y)
            self.fit_report_ = FitReport(epochs=3, max_epochs=3, kept_epoch=3,
                                         kept_why="best", metric="valid_map", kept_score=0.5,
                                         still_improving=True)
            return self

    data = load_comparison_data(n_samples=150)
    rows = _quiet(lambda: compare({"R": Reports(n_image_features=data.n_image_features)},
                                  data.X_train, data.y_train, data.X_test, data.y_test,
                                  time_window=data.eval_window, log=lambda *a: None))
    assert rows[0]["still_improving"] is True and np.isfinite(rows[0]["map"])


def test_the_kept_epoch_is_decided_once_by_the_checkpoint_callback(data):
    """Issue 58: CheckpointSelection decides the kept epoch (kept_epoch_), the estimator's
    report reads it; the rule and skorch's stored best weights agree."""
    X, y = data
    model = _quiet(lambda: tiny(SAMEmbedder, n_image_features=64, max_epochs=5).fit(X, y))
    selection = dict(model.net_.callbacks_)["selection"]
    assert selection.kept_epoch_ == model.fit_report_.kept_epoch == model.best_epoch_
    figures = model.net_.history[:, "valid_map"]
    assert figures[model.best_epoch_ - 1] == max(figures)
