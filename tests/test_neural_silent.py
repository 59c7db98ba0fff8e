"""Ctrl-C in a neural fit is never a crash ("nothing silent", round 2, item 1).

skorch swallows ``KeyboardInterrupt``; ``RecordsInterrupt`` records it and the estimator
warns.  A Ctrl-C during the first epoch (the common case on a long epoch) comes before any
validation figure: the warning says the model holds the partial weights of that unfinished
epoch, ``best_epoch_`` is that epoch, and a warm-start refit continues from there.
"""

import warnings

import numpy as np
import pytest
from skorch.callbacks import Callback

from _tiny import tiny
from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    DiachronicEmbedder,
    SAMEmbedder,
    SequentialCrossModal,
    TempXNetEmbedder,
    TimeRangeWarning,
    stack_modalities,
)
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.training import TrainingInterruptedWarning

#: On top of the tiny settings: three epochs (the warm-start refits count them), a validation
#: split, the 5 image columns of ``_data``.
FIT = dict(max_epochs=3, n_image_features=5, validation_fraction=0.2)
EXTRA = {SAMEmbedder: {}, TempXNetEmbedder: {}, DiachronicEmbedder: {"window": 0.2}}


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X_img = rng.standard_normal((n, 5)) + y[:, None]
    X_txt = rng.standard_normal((n, 4)) + y[:, None]
    return stack_modalities(X_img, X_txt, np.sort(rng.uniform(0, 2, n))), y


class CtrlC(Callback):
    """Raise KeyboardInterrupt (a simulated Ctrl-C) once, at the end of a training batch.

    ``epoch``: the 1-based epoch (over ``net.history``) in which it fires; ``batch``: after
    which of that epoch's training batches.
    """

    def __init__(self, epoch=1, batch=1):
        self.epoch, self.batch = epoch, batch
        self.fired_ = False

    def on_epoch_begin(self, net, **kwargs):
        self.seen_ = 0

    def on_batch_end(self, net, training=False, **kwargs):
        if not training or self.fired_:
            return
        self.seen_ += 1
        if len(net.history) == self.epoch and self.seen_ == self.batch:
            self.fired_ = True
            raise KeyboardInterrupt


def _interrupt_warnings(record):
    return [str(w.message) for w in record if issubclass(w.category, TrainingInterruptedWarning)]


def _fit(model, X, y):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model.fit(X, y)
    return _interrupt_warnings(record)


@pytest.mark.parametrize("cls", [SAMEmbedder, TempXNetEmbedder, DiachronicEmbedder])
def test_ctrl_c_in_the_first_epoch_with_validation_warns_and_leaves_a_usable_model(cls):
    X, y = _data()
    model = tiny(cls, callbacks=[CtrlC()], warm_start=True, **EXTRA[cls], **FIT)
    (message,) = _fit(model, X, y)  # no KeyError from the best-epoch lookup
    assert "during the first epoch of the fit (epoch 1), before its validation" in message
    assert "partial weights of that unfinished first epoch (best_epoch_ = 1)" in message
    assert "warm_start=True" in message
    history = model.net_.history
    assert model.training_interrupted_ and len(history) == 1 and model.best_epoch_ == 1
    assert "valid_map" not in history[-1]  # no figure: the epoch never reached validation
    assert np.isfinite(model.transform(X)).all()
    # interrupt, then warm_start refit: continues from the partial weights, all epochs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a still-improving figure may warn; not the point
        model.fit(X, y)
    assert not model.training_interrupted_ and len(history) == 1 + FIT["max_epochs"]
    figures = [row["valid_map"] for row in history[1:]]
    assert model.best_epoch_ == 2 + int(np.argmax(figures))
    assert np.isfinite(model.transform(X)).all()


def test_ctrl_c_in_the_first_epoch_of_a_warm_start_refit():
    X, y = _data()
    ctrl_c = CtrlC(epoch=4)  # the refit's first epoch: 3 epochs were fitted before
    model = tiny(TempXNetEmbedder, callbacks=[ctrl_c], warm_start=True, **FIT)
    assert not _fit(model, X, y) and not ctrl_c.fired_
    (message,) = _fit(model, X, y)
    assert "during the first epoch of this warm-start fit (epoch 4)" in message
    assert model.training_interrupted_ and model.best_epoch_ == 4 == len(model.net_.history)
    assert np.isfinite(model.transform(X)).all()


def test_ctrl_c_in_a_later_epoch_keeps_the_best_finished_epoch():
    X, y = _data()
    model = tiny(SAMEmbedder, callbacks=[CtrlC(epoch=3, batch=2)], **{**FIT, "max_epochs": 5})
    (message,) = _fit(model, X, y)
    history = model.net_.history
    assert len(history) == 3 and "valid_map" not in history[-1]
    best = 1 + int(np.argmax([history[0, "valid_map"], history[1, "valid_map"]]))
    assert model.best_epoch_ == best
    assert "interrupted (Ctrl-C) during epoch 3" in message
    assert f"weights of epoch {best} (best_epoch_), the best validation mAP" in message


def test_ctrl_c_in_the_first_epoch_without_validation_says_so():
    X, y = _data()
    model = tiny(DiachronicEmbedder, callbacks=[CtrlC(batch=2)], window=0.2,
                 **{**FIT, "validation_fraction": 0})
    (message,) = _fit(model, X, y)
    assert "during epoch 1" in message and "partial weights of the unfinished epoch 1" in message
    assert model.best_epoch_ == 1 and np.isfinite(model.transform(X)).all()


def test_ctrl_c_in_the_first_epoch_of_a_neural_bin_with_validation():
    X, y = _data(240)
    ctrl_c = CtrlC()
    base = tiny(TempXNetEmbedder, callbacks=[ctrl_c], **FIT)  # validation inside each bin
    model = tiny(BinnedProcrustesEmbedder, base_estimator=base, min_bin_size=40,
                 init="independent", n_image_features=5)
    (message,) = _fit(model, X, y)  # one warning, the binned estimator's
    assert "after 1 of 2 time bins were fitted" in message
    assert model.training_interrupted_ and len(model.bin_estimators_) == 1
    (first,) = model.bin_estimators_
    assert first.training_interrupted_ and first.best_epoch_ == 1
    assert np.isfinite(model.transform(X)).all()


def test_a_warm_start_of_a_model_that_ignores_time_does_not_warn_about_time():
    """SAM ignores time: a warm start on later times extrapolates nothing, so no
    TimeRangeWarning (a time-aware model's warm start still warns, tests/test_time.py)."""
    X, y, info = make_temporal_crossmodal(200, random_state=0, return_info=True)
    model = tiny(SAMEmbedder, n_image_features=info.n_image_features, max_epochs=1,
                 warm_start=True).fit(X, y)
    X_later = X.copy()
    X_later[:, -1] += 50.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X_later, y)
    assert not [w for w in caught if issubclass(w.category, TimeRangeWarning)]


def test_verbose_tables_are_titled_and_skorch_does_not_announce_reinitialisation(capsys):
    """verbose=1: a title over each of SCML's four stage tables and each bin's table, and
    none of skorch's "Re-initializing ..." lines (a bin's warm start from the model on all
    rows sets the loss' parameters, which skorch announces when verbose)."""
    X, y = _data(240)
    tiny(SequentialCrossModal, n_image_features=5, verbose=1, max_epochs=1).fit(X, y)
    out = capsys.readouterr().out
    titles = [line for line in out.splitlines() if line.startswith("SequentialCrossModal")]
    assert [t.split(" (")[0] for t in titles] == [
        f"SequentialCrossModal stage {i}/4" for i in (1, 2, 3, 4)]
    assert out.count("epoch") >= 4  # the four tables the titles stand over
    base = tiny(TempXNetEmbedder, n_image_features=5, verbose=1, max_epochs=1)
    model = tiny(BinnedProcrustesEmbedder, base_estimator=base, min_bin_size=40,
                 n_image_features=5, init="global").fit(X, y)
    out = capsys.readouterr().out
    lo, mid, hi = model.bins_.edges_
    assert [line for line in out.splitlines() if line.startswith("Binned")] == [
        "BinnedProcrustesEmbedder start: all 240 items (init='global'; every bin continues "
        "from it)",
        f"BinnedProcrustesEmbedder bin 1/2 [{lo:.6g}, {mid:.6g}) years: "
        f"{model.bins_.counts_[0]} items",
        f"BinnedProcrustesEmbedder bin 2/2 [{mid:.6g}, {hi:.6g}) years: "
        f"{model.bins_.counts_[1]} items"]
    assert "Re-initializing" not in out and out.count("train_loss") == 3


@pytest.mark.parametrize("case", ["two validation pairs", "every validation row one class"])
def test_a_validation_figure_that_cannot_rank_epochs_keeps_the_last_and_says_so(case):
    """With 2 held-out rows mAP stayed constant and the tie kept epoch 1 (issue 48, 2);
    with every validation row of one class the same happened without a warning."""
    from skorch.callbacks import EarlyStopping

    from temporal_xmodal import DiachronicEmbedder, TempXNetEmbedder

    X, y, info = make_temporal_crossmodal(120, return_info=True, random_state=0)
    small = dict(n_image_features=info.n_image_features, max_epochs=8, hidden_dim=16,
                 embedding_dim=8, batch_size=32, random_state=0, device="cpu")
    if case == "two validation pairs":
        est = DiachronicEmbedder(time_dim=8, validation_fraction=0.01, **small)
    else:
        est, y = TempXNetEmbedder(**small), (np.arange(120) == 0).astype(int)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    said = [str(w.message) for w in caught if "cannot choose the checkpoint" in str(w.message)]
    assert len(said) == 1 and "last epoch's weights are kept" in said[0]
    assert est.best_epoch_ == 8 and est.convergence_["cannot_rank"]
    kept = est.transform(X)
    # skorch's own rule would have restored epoch 1's weights: they differ from those kept
    selection = dict(est.net_.callbacks_)["selection"]
    assert selection.best_epoch_ == 1
    EarlyStopping.on_train_end(selection, est.net_)
    assert not np.allclose(est.transform(X), kept)


def test_a_nan_validation_figure_reports_the_epoch_actually_kept():
    """Issue 57, 7: validation rows without a label give valid_map NaN at every epoch; the
    fit kept the last epoch's weights while best_epoch_ said 1, without a word."""
    X, y = make_temporal_crossmodal(200, random_state=0)
    Y = np.zeros((len(y), y.max() + 1), dtype=int)
    Y[np.arange(len(y)), y] = 1
    Y[np.arange(len(Y)) % 50 != 0] = 0  # 4 labelled rows of 200: none among the validation rows
    with pytest.warns(UserWarning, match="valid_map was NaN at every epoch .* the last epoch's "
                                         r"weights are kept \(best_epoch_ = 4\)"):
        model = tiny(SAMEmbedder, n_image_features=64, max_epochs=4).fit(X, Y)
    assert np.isnan(model.net_.history[:, "valid_map"]).all()
    assert model.best_epoch_ == 4 and model.convergence_["cannot_rank"]


def test_nan_epochs_are_no_candidates_for_the_checkpoint():
    from temporal_xmodal.training._report import convergence
    from temporal_xmodal.training import kept_epoch
    figures = [0.3, np.nan, 0.5, np.nan]
    assert kept_epoch(figures, lower_is_better=False) == 2
    assert kept_epoch([np.nan, np.nan], lower_is_better=True) == 1
    history = [{"valid_map": v} for v in figures]
    with pytest.warns(UserWarning, match="NaN at 2 of 4 epochs; .* among the others \\(epoch 3"):
        summary = convergence(history, "valid_map", 0, validating=True, max_epochs=4,
                              interrupted=False, name="SAMEmbedder")
    assert summary["best_epoch"] == 3 and summary["best_score"] == 0.5
