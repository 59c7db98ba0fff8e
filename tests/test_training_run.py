"""TrainingRun (temporal_xmodal/training/_run.py): one fit's lifecycle, Ctrl-C caught once.

The estimators' own Ctrl-C behaviour is tested in test_neural_silent.py, test_binned.py,
test_sequential.py and test_date_prior.py; here the run's contract itself: the one warning at
the outer fit, silence inside another fit, the stop of a model selection, the report's views.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.model_selection import cross_validate

from _tiny import tiny
from temporal_xmodal import SAMEmbedder
from temporal_xmodal.training import FitReport, TrainingInterruptedWarning, TrainingRun
from temporal_xmodal.training._run import fit_child
from test_neural_silent import FIT, CtrlC, _data


class _Parts(BaseEstimator):
    """A fit made of parts: ``fail_at`` raises KeyboardInterrupt in that part (a closed-form
    part's Ctrl-C)."""

    def __init__(self, fail_at=None, random_state=0, device="cpu"):
        self.fail_at, self.random_state, self.device = fail_at, random_state, device

    def fit(self, X=None, y=None):
        with TrainingRun(self, threads=False) as run:
            self.parts_ = 0
            for part in range(3):
                with run.stoppable():
                    if part == self.fail_at:
                        raise KeyboardInterrupt
                    self.parts_ += 1
                if run.stopped:
                    run.partial(f"during part {part}", f"{self.parts_} part(s) kept")
                    break
            self.seen_device_ = run.device
        return self


def _warned(fit):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        fit()
    return [str(w.message) for w in record if issubclass(w.category, TrainingInterruptedWarning)]


def test_a_stopped_part_ends_the_fit_with_one_warning_saying_what_is_kept():
    model = _Parts(fail_at=1)
    (message,) = _warned(model.fit)
    assert message == ("_Parts: training was interrupted (Ctrl-C) during part 1; "
                       "1 part(s) kept.")
    assert model.parts_ == 1 and model.seen_device_ == "cpu"


def test_an_uninterrupted_run_says_nothing():
    model = _Parts()
    assert _warned(model.fit) == [] and model.parts_ == 3


def test_a_run_inside_another_fit_is_silent():
    """A child fit (a bin's model) leaves its Ctrl-C to the outer fit to report."""
    assert _warned(lambda: fit_child(_Parts(fail_at=0), None)) == []


def test_inside_a_model_selection_the_ctrl_c_stops_it_after_the_warning():
    with pytest.raises(KeyboardInterrupt):
        with pytest.warns(TrainingInterruptedWarning, match="during part 0"):
            cross_validate(_Parts(fail_at=0), np.zeros((6, 1)), cv=2,
                           scoring=lambda est, X, y=None: 0.0, error_score="raise")


def test_an_exception_passes_through_the_run():
    class Broken(_Parts):
        def fit(self, X=None, y=None):
            with TrainingRun(self, threads=False):
                raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        Broken().fit()


def test_a_neural_fit_reports_its_ctrl_c_and_the_attributes_are_views_of_the_report():
    X, y = _data()
    model = tiny(SAMEmbedder, callbacks=[CtrlC(epoch=2)], **FIT)
    assert not hasattr(model, "training_interrupted_")  # a view: nothing before a fit
    (message,) = _warned(lambda: model.fit(X, y))
    report = model.fit_report_
    assert isinstance(report, FitReport) and report.interrupted
    assert model.training_interrupted_ is True and model.best_epoch_ == report.kept_epoch == 1
    assert model.convergence_ == report.convergence()
    assert {"training_interrupted_", "best_epoch_", "convergence_"}.isdisjoint(vars(model))
    assert "during epoch 2" in message and "weights of epoch 1" in message
