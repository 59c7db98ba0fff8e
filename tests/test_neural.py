"""SAMEmbedder and TempXNetEmbedder: training core behaviour and learned structure."""

import copy
import pickle
import warnings

import joblib
import numpy as np
import pytest
from joblib import parallel_config
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import GridSearchCV
from skorch.callbacks import Callback

from _tiny import tiny
from temporal_xmodal import (
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    StillImprovingWarning,
    TempXNetEmbedder,
)
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.training import _report as _checkpoint  # the checkpoint summary
from temporal_xmodal.estimators.tempxnet import CategoryKDECorrelation, WordTopicCorrelation
from temporal_xmodal.metrics import cross_modal_scores


#: On top of the tiny settings: a network that learns the categories in a few epochs, and
#: epochs enough for a best epoch to be chosen among them.
SMALL = dict(embedding_dim=32, hidden_dim=64, max_epochs=6, batch_size=64)


@pytest.fixture(scope="module")
def data():
    X, y, info = make_temporal_crossmodal(900, meaning_shift=0, return_info=True, random_state=0)
    return X[:600], y[:600], X[600:], y[600:], info.n_image_features


@pytest.fixture(scope="module")
def small(data):
    """``{cls: (model, warnings of its fit)}``: one SAM and one TempXNet at the tiny settings
    with SMALL (seed 0) on the training rows, fitted once for the tests that only read them
    (a test that changes one works on a copy)."""
    X, y, _, _, n_img = data
    fitted = {}
    for cls in (SAMEmbedder, TempXNetEmbedder):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = tiny(cls, n_image_features=n_img, **SMALL).fit(X, y)
        fitted[cls] = model, caught
    return fitted


@pytest.mark.parametrize("cls", [SAMEmbedder, TempXNetEmbedder])
def test_same_seed_same_embeddings_and_persistence(cls, data, small, tmp_path):
    X, y, X_te, _, n_img = data
    a = small[cls][0]  # seed 0, fitted earlier in this process (by the fixture)
    b = tiny(cls, random_state=0, n_image_features=n_img, **SMALL).fit(X, y)
    c = tiny(cls, random_state=4, n_image_features=n_img, **SMALL).fit(X, y)
    np.testing.assert_array_equal(a.transform(X_te), b.transform(X_te))
    assert not np.allclose(a.transform(X_te), c.transform(X_te))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(a)).transform(X_te),
                                  a.transform(X_te))
    joblib.dump(a, tmp_path / "model.joblib")
    np.testing.assert_array_equal(joblib.load(tmp_path / "model.joblib").transform(X_te),
                                  a.transform(X_te))


def test_sam_learns_categories_and_beats_cca(data):
    X, y, X_te, y_te, n_img = data
    sam = SAMEmbedder(random_state=0, n_image_features=n_img, embedding_dim=64,
                      hidden_dim=256, max_epochs=15).fit(X, y)
    cca = CCACrossModal(n_image_features=n_img).fit(X)
    s_sam, s_cca = sam.score(X_te, y_te), cca.score(X_te, y_te)
    # chance ~ 1/8; CCA ~ 0.45 on this data; a trained SAM reaches > 0.75
    assert s_sam > 0.75 and s_sam > s_cca + 0.2, (s_sam, s_cca)
    history = sam.net_.history
    assert len(history) == 15 and "valid_map" in history[-1] and "alpha" in history[-1]
    # alpha follows eq. 3.7 with n_e = max_epochs
    assert history[0, "alpha"] == pytest.approx(1 / (1 + np.exp(0.1 * 0.4 * 15)))


def test_validation_selection_restores_best_epoch(data, small):
    X, y, _, _, n_img = data
    sam = small[SAMEmbedder][0]
    scores = sam.net_.history[:, "valid_map"]
    # the validation rows, drawn as in NeuralCrossModalEmbedder._split_rows
    rng = np.random.RandomState(0)
    rng.randint(np.iinfo(np.int32).max)
    valid = np.sort(rng.permutation(len(X))[:60])
    Z = sam.transform(X[valid])
    restored = cross_modal_scores(Z[:, :32], Z[:, 32:], y[valid], metrics=("map",))["map"]
    assert restored == pytest.approx(max(scores), abs=1e-6)


def test_best_epoch_and_a_convergence_warning_while_still_improving(small):
    sam, caught = small[SAMEmbedder]
    sam = copy.deepcopy(sam)  # its history is rewritten below
    scores = np.asarray(sam.net_.history[:, "valid_map"])
    assert sam.best_epoch_ == int(np.argmax(scores)) + 1
    warned = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    gain = _checkpoint.recent_gain(scores)
    assert bool(warned) == (gain > _checkpoint.TOL)
    # the fit's details are in convergence_, not in the (constant) warning text
    assert sam.convergence_ == {"best_epoch": sam.best_epoch_, "last_epoch": len(scores),
                                "metric": "valid_map",
                                "best_score": pytest.approx(float(scores.max())),
                                "recent_gain": pytest.approx(gain),
                                "still_improving": bool(warned), "cannot_rank": False}
    # the rule on given histories: the first best epoch is kept; a fit warns when its last
    # epochs (here all of them: fewer than N_ITER_NO_CHANGE) gained more than TOL
    texts = set()
    for values, best, warns in [([0.1, 0.3, 0.2], 2, True), ([0.1, 0.2, 0.3], 3, True),
                                ([0.3, 0.305, 0.302], 2, False), ([0.2, 0.4], 2, True)]:
        for epoch, value in zip(sam.net_.history, values + [0.0] * 9):
            epoch["valid_map"] = value
        del sam.net_.history[len(values):]
        sam.max_epochs = len(values)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            summary = _summary(sam, True, 0)
        assert summary["best_epoch"] == best
        assert summary["last_epoch"] == len(values) and summary["still_improving"] == warns
        assert summary["best_score"] == pytest.approx(max(values))
        messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
        assert bool(messages) == warns
        texts.update(messages)
        if warns:
            # the rule in words that hold for a fit of any length (a 3-epoch fit has no
            # "last 5 epochs")
            assert messages[0].startswith("SAMEmbedder: the validation figure was still "
                                          "improving: its best over the most recent epochs "
                                          "(5 of them, or every epoch after the first in a "
                                          "fit of 6 or fewer) beat the earlier best by more "
                                          "than 0.01")
            assert "Raise max_epochs" in messages[0] and "convergence_" in messages[0]
        assert _summary(sam, False, 0) == {
            "best_epoch": len(values), "last_epoch": len(values), "metric": None,
            "best_score": None, "recent_gain": None, "still_improving": False,
            "cannot_rank": False}  # no validation: the last epoch
        # a continued fit (warm start, a bin after the global model) selects among its own
        # epochs: here only the third, which is kept, with nothing to compare it to
        if len(values) == 3:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                assert _summary(sam, True, 2)["best_epoch"] == 3
    # one text for every fit of the class (best epoch 3 of 3, 2 of 2): shown once per line
    assert len(texts) == 1


def _summary(est, validating, n_before):
    """The convergence summary of ``est``'s history (as its fit computes it)."""
    return _checkpoint.convergence(est.net_.history, est.selection_metric, n_before,
                                   validating=validating, max_epochs=est.max_epochs,
                                   interrupted=False, name=type(est).__name__)


def test_a_grid_search_prints_a_handful_of_warning_lines():
    """8 candidates × 3 folds and the refit, fits that converge (30 epochs; batch_size=150:
    one step an epoch on a fold's 150 training rows costs 60 % of batch_size=64's three and
    leaves as few fits still improving, none of these 25): under Python's default filter
    the search prints at most a handful of warning lines, without a record of its own and
    without touching warnings.filters (scikit-learn resets the filters around every fit, so
    each still-improving fit shows its warning: what keeps the output short is that a
    converged fit does not warn; with every fit warning, 50 lines).  Every fit used to warn
    ("best epoch = last epoch"), and a process-global record hid the repeats."""
    X, y, info = make_temporal_crossmodal(300, return_info=True, random_state=0)
    grid = {"window": [0.2, 1.0], "decay": [0.1, 1.0], "margin": [0.5, 1.0]}
    search = GridSearchCV(tiny(DiachronicEmbedder, n_image_features=info.n_image_features,
                               validation_fraction=0.25, lr=0.2, batch_size=150,
                               max_epochs=30), grid, cv=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("default")  # Python's default: once per text and line
        filters = list(warnings.filters)
        search.fit(X, y)
        assert warnings.filters == filters
    assert len(search.cv_results_["params"]) == 8
    shown = [str(w.message) for w in caught]
    assert {w.category for w in caught} <= {StillImprovingWarning}, shown
    lines = sum(len(warnings.formatwarning(w.message, w.category, w.filename, w.lineno,
                                           w.line).strip().splitlines()) for w in caught)
    assert lines <= 4
    assert all(w.filename == __file__ for w in caught)  # the search.fit line


def test_early_stopping_and_patience(data):
    X, y, _, _, n_img = data
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a planned stop is no interruption (nor unconverged)
        # lr 1e-12 leaves the validation figure the same at every epoch: that is said (and
        # the last epoch kept), nothing else
        warnings.filterwarnings("ignore", "SAMEmbedder: the validation figure valid_map was "
                                          ".* at every epoch, so it cannot choose")
        sam = tiny(SAMEmbedder, n_image_features=n_img, patience=1,
                   **{**SMALL, "max_epochs": 40, "lr": 1e-12}).fit(X, y)
    assert len(sam.net_.history) < 40 and not sam.training_interrupted_
    assert not sam.convergence_["still_improving"]  # stopped early: no convergence warning
    assert sam.convergence_["cannot_rank"] and sam.best_epoch_ == len(sam.net_.history)


def test_warm_start_continues_training(data, small):
    X, y, _, _, n_img = data
    est = tiny(TempXNetEmbedder, n_image_features=n_img, warm_start=True, **SMALL)
    est.fit(X, y)
    net = est.net_
    est.set_params(max_epochs=2).fit(X, y)
    assert est.net_ is net and len(net.history) == SMALL["max_epochs"] + 2
    assert est.best_epoch_ > SMALL["max_epochs"]  # kept from the continued fit's own epochs
    cold = copy.deepcopy(small[TempXNetEmbedder][0])  # fitted once (not warm): fit again
    assert len(cold.net_.history) == SMALL["max_epochs"]
    cold.fit(X, y)
    assert len(cold.net_.history) == SMALL["max_epochs"]


def test_callbacks_passthrough_and_verbose(data, capsys):
    X, y, _, _, n_img = data

    class CountEpochs(Callback):
        def initialize(self):
            self.epochs = 0
            return self

        def on_epoch_end(self, net, **kwargs):
            self.epochs += 1

    counter = CountEpochs()
    est = tiny(SAMEmbedder, n_image_features=n_img, callbacks=[counter], verbose=1,
               **{**SMALL, "max_epochs": 3}).fit(X, y)
    out = capsys.readouterr().out
    assert "train_loss" in out and "valid_map" in out and "alpha" in out
    assert dict(est.net_.callbacks_)["CountEpochs"] is counter and counter.epochs == 3


def test_no_validation_split(data):
    X, y, _, _, n_img = data
    est = tiny(TempXNetEmbedder, n_image_features=n_img, validation_fraction=0,
               **SMALL).fit(X, y)
    assert "valid_map" not in est.net_.history[-1]
    assert est.best_epoch_ == SMALL["max_epochs"]  # the last epoch's weights


def test_transform_image_and_text_ignore_time(data, small):
    X, y, X_te, _, n_img = data
    est = small[TempXNetEmbedder][0]
    Z = est.transform(X_te)
    np.testing.assert_allclose(est.transform_image(X_te[:, :n_img], time=1e6), Z[:, :32])
    np.testing.assert_allclose(est.transform_text(X_te[:, n_img:-1]), Z[:, 32:])


def test_labels_required_and_single_class_rejected(data):
    X, y, _, _, n_img = data
    with pytest.raises(ValueError, match="requires y"):
        SAMEmbedder(n_image_features=n_img).fit(X)
    with pytest.raises(ValueError, match="at least 2 classes"):
        SAMEmbedder(n_image_features=n_img).fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="schedule_slope"):
        SAMEmbedder(schedule_slope=-1, n_image_features=n_img).fit(X, y)


def test_multilabel_training(data):
    X, _, X_te, _, n_img = data
    Xm, Y, info = make_temporal_crossmodal(600, multilabel=True, return_info=True,
                                           random_state=1)
    est = tiny(SAMEmbedder, n_image_features=info.n_image_features, **SMALL)
    est.fit(Xm[:400], Y[:400])
    assert 0.3 < est.score(Xm[400:], Y[400:]) <= 1


def test_grid_search_over_margin_and_temporal_parameters(data):
    X, y, _, _, n_img = data
    smaller = {**SMALL, "max_epochs": 3, "hidden_dim": 32}
    # two fits at a time on threads: joblib's default worker processes spent seconds starting
    # and importing torch for these fits of a fraction of a second (searches on worker
    # processes: tests/test_scaling.py's Dask cluster)
    with parallel_config(backend="threading"):
        sam_search = GridSearchCV(tiny(SAMEmbedder, n_image_features=n_img, **smaller),
                                  {"margin": [0.2, 1.0]}, cv=2, n_jobs=2).fit(X, y)
    assert sam_search.best_params_["margin"] in (0.2, 1.0)
    assert np.isfinite(sam_search.cv_results_["mean_test_score"]).all()
    with parallel_config(backend="threading"):
        tx_search = GridSearchCV(tiny(TempXNetEmbedder, n_image_features=n_img, **smaller),
                                 {"bandwidth": [0.3, 1.0], "temporal_weight": [0.0, 5.0]},
                                 cv=2, n_jobs=2).fit(X, y)
    assert set(tx_search.best_params_) == {"bandwidth", "temporal_weight"}
    assert tx_search.best_estimator_.transform(X[:5]).shape == (5, 64)


def _tmap50(est, X, y, window=0.5):
    Z = est.transform(X)
    d = Z.shape[1] // 2
    return cross_modal_scores(Z[:, :d], Z[:, d:], y, metrics=("map",), k=50, time=X[:, -1],
                              time_window=window)["map"]


def test_tempxnet_beats_its_static_control_on_time_window_map():
    # Averaged over seeds, at the defaults (lambda = 0.1, recency bandwidth 1 year), on the
    # world whose structure TempXNet models: categories recur in bursts whose items share
    # an event offset, so pulling items close in time together answers "same category,
    # close in time" (bench_demo_time: +0.05 at full size, recurring events).
    from temporal_xmodal.datasets import TEMPORAL_WORLDS

    gains = []
    for seed in range(2):
        X, y, info = make_temporal_crossmodal(1500, return_info=True, random_state=seed,
                                              **TEMPORAL_WORLDS["recurring events"])
        kw = dict(random_state=seed, n_image_features=info.n_image_features, max_epochs=10,
                  hidden_dim=256, use_time=True)
        static = TempXNetEmbedder(temporal_weight=0.0, **kw).fit(X[:1000], y[:1000])
        temporal = TempXNetEmbedder(**kw).fit(X[:1000], y[:1000])
        gains.append(_tmap50(temporal, X[1000:], y[1000:]) - _tmap50(static, X[1000:], y[1000:]))
    # observed +0.019 and +0.008 here (10 epochs, 1,000 items); +0.05 at full size
    assert min(gains) > 0 and np.mean(gains) > 0.01, gains


def test_tempxnet_correlation_given_as_object_is_cloned():
    X, y, info = make_temporal_crossmodal(300, return_info=True, random_state=0)
    kw = dict(n_image_features=info.n_image_features)
    corr = CategoryKDECorrelation(bandwidth=0.5, n_grid=128)
    by_object = tiny(TempXNetEmbedder, correlation=corr, **kw).fit(X, y)
    by_name = tiny(TempXNetEmbedder, correlation="category", bandwidth=0.5, **kw)
    assert not hasattr(corr, "density_")  # the given object stays unfitted
    assert by_object.correlation_ is not corr and by_object.correlation_.n_grid == 128
    assert isinstance(by_name.fit(X, y).correlation_, CategoryKDECorrelation)
    assert by_name.correlation_.bandwidth == 0.5 and by_name.correlation_.n_grid == 512
    default = tiny(TempXNetEmbedder, correlation="topic", **kw).fit(X, y).correlation_
    assert isinstance(default, WordTopicCorrelation) and default.bandwidth == 1.0
    with pytest.raises(ValueError, match="bandwidth"):
        tiny(TempXNetEmbedder, correlation=corr, bandwidth=2.0, **kw).fit(X, y)
    with pytest.raises(ValueError, match="'correlation' parameter"):
        tiny(TempXNetEmbedder, correlation="rec", **kw).fit(X, y)


# two validation rows: the figure can tie at every epoch, which is said too
@pytest.mark.filterwarnings("ignore:SAMEmbedder. the validation figure valid_map was .* at every "
                            "epoch:UserWarning")
def test_a_validation_fraction_below_two_rows_holds_out_two_and_says_so(data):
    X, y, _, _, n_img = data
    est = tiny(SAMEmbedder, n_image_features=n_img, max_epochs=2, validation_fraction=0.01)
    with pytest.warns(UserWarning, match=r"validation_fraction=0.01 of 120 rows is 1.2 rows; "
                                         r"2 are held out"):
        est.fit(X[:120], y[:120])
    assert "valid_tmap" in est.net_.history[-1] or "valid_map" in est.net_.history[-1]
    with pytest.warns(UserWarning, match="too few rows to hold out"):
        tiny(SAMEmbedder, n_image_features=n_img, max_epochs=1,
             validation_fraction=0.5).fit(X[:3], y[:3] * 0 + np.arange(3) % 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # 0.1 of 120 rows: 12, nothing to say
        tiny(SAMEmbedder, n_image_features=n_img, max_epochs=1,
             validation_fraction=0.1).fit(X[:120], y[:120])


def test_a_diverged_training_loss_stops_the_fit_and_is_named(data):
    from temporal_xmodal.training import TrainingDivergedError

    X, y, _, _, n_img = data
    est = tiny(DiachronicEmbedder, n_image_features=n_img, max_epochs=2, window=0.5,
               decay="5%", intra_balance=1e38)  # L_intra on (off by default), overflowing
    with pytest.raises(TrainingDivergedError, match="Training diverged: the training loss "
                                                    "was (inf|nan) at batch 1 of epoch 1"):
        est.fit(X, y)
    # its weights went with it: the estimator is not fitted (it embedded everything as NaN)
    with pytest.raises(NotFittedError):
        est.transform(X)


class _CtrlC(Callback):
    """Ctrl-C in the first epoch of every fit; counts the fits it stopped."""

    stopped = 0

    def on_epoch_end(self, net, **kwargs):
        type(self).stopped += 1
        raise KeyboardInterrupt


def test_ctrl_c_in_a_grid_search_stops_the_search_not_only_the_fit(data):
    X, y, _, _, n_img = data
    est = tiny(SAMEmbedder, n_image_features=n_img, max_epochs=3, callbacks=[_CtrlC()])
    _CtrlC.stopped = 0
    search = GridSearchCV(est, {"margin": [0.2, 0.5]}, cv=2)
    with pytest.warns(UserWarning, match="interrupted"), pytest.raises(KeyboardInterrupt):
        search.fit(X, y)
    assert _CtrlC.stopped == 1  # the search did not go on to its next fits
    # called directly, the interrupted fit returns the usable model with the warning
    with pytest.warns(UserWarning, match="interrupted"):
        est.fit(X, y)
    assert est.training_interrupted_ and est.transform(X).shape[0] == len(X)


def test_learning_rate_decay_sets_every_batch_and_a_warm_start_continues_it(data):
    X, y, _, _, n_img = data
    est = tiny(DiachronicEmbedder, n_image_features=n_img, max_epochs=2, lr=1e-2,
               lr_decay=0.5, validation_fraction=0, batch_size=200, time_lr_scale=3.0)
    est.fit(X, y)  # 600 rows: 3 batches per epoch
    # event_lr is the first parameter group's: the time pathway's (lr · time_lr_scale)
    lrs = [b["event_lr"] for row in est.net_.history for b in row["batches"]]
    np.testing.assert_allclose(lrs, [3e-2 / (1 + 0.5 * it) for it in range(6)])
    groups = est.net_.optimizer_.param_groups
    assert len(groups) == 3 and groups[0]["lr"] == pytest.approx(3 * groups[-1]["lr"])
    # the other weights, at the rate of the next step (torch's LambdaLR steps after a batch)
    assert groups[-1]["lr"] == pytest.approx(1e-2 / (1 + 0.5 * 6))
    est.set_params(warm_start=True, max_epochs=1).fit(X, y)
    more = [b["event_lr"] for b in est.net_.history[-1]["batches"]]
    np.testing.assert_allclose(more, [3e-2 / (1 + 0.5 * it) for it in range(6, 9)])


@pytest.mark.parametrize("slim", [False, True])
def test_a_warm_start_after_ctrl_c_continues_the_schedule_at_the_step_reached(data, slim):
    """Issue 57, 8: the interrupted epoch's row had no batch count, so the schedule resumed
    at a wrong step (a slim pickle of it: at step 0)."""
    X, y, _, _, n_img = data

    class CtrlCAtSecondBatchOfEpoch2(Callback):
        def on_batch_end(self, net, training=False, **kwargs):
            if training and len(net.history) == 2 and len(net.history[-1]["batches"]) == 2:
                raise KeyboardInterrupt

    est = tiny(DiachronicEmbedder, n_image_features=n_img, max_epochs=3, lr=1e-2,
               lr_decay=0.5, validation_fraction=0.1, batch_size=200, time_lr_scale=3.0,
               warm_start=True, callbacks=[("stop", CtrlCAtSecondBatchOfEpoch2())])
    with pytest.warns(UserWarning, match="interrupted"):
        est.fit(X, y)  # 540 training rows: 3 batches an epoch; stopped after 3 + 2 steps
    steps = sum("train_loss" in b for row in est.net_.history for b in row["batches"])
    assert steps == 5 and est.net_.history[-1]["train_batch_count"] == 2
    est.set_params(max_epochs=1, callbacks=None)
    if slim:
        est = pickle.loads(pickle.dumps(est))
    est.fit(X, y)
    more = [b["event_lr"] for b in est.net_.history[-1]["batches"] if "event_lr" in b]
    np.testing.assert_allclose(more, [3e-2 / (1 + 0.5 * it) for it in range(5, 8)])


def test_a_verbose_fit_shows_its_progress_and_time_left_without_colour_codes(data, capsys):
    """verbose=1: skorch's epoch table with epoch n of N and the time left; captured output
    (not a terminal) carries no ANSI colour codes (skorch colours the best values)."""
    X, y, _, _, n_img = data
    tiny(SAMEmbedder, n_image_features=n_img, max_epochs=3, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    header, _, *rows = [line for line in out.splitlines() if line.strip()][:5]
    assert "progress" in header.split() and "left" in header.split()
    assert [row.split()[header.split().index("progress")] for row in rows[:3]] == [
        "1/3", "2/3", "3/3"]
    assert rows[2].split()[header.split().index("left")] == "0:00"  # nothing left at the end
    assert "\x1b[" not in out


# ---------------------------------------------------------------- input standardisation
def test_the_input_standardisation_is_the_training_rows_centre_and_block_scale():
    """standardize=True: (x − mean) / s per modality, s the RMS of the centred training
    features per feature (one scale per block), computed over the training rows only."""
    import torch
    from temporal_xmodal.estimators._neural import TrainingRows
    from temporal_xmodal.nn.towers import Standardize

    rng = np.random.default_rng(0)
    A = (rng.normal(size=(50, 4)) * [1, 2, 3, 4] + 5).astype(np.float32)
    B = rng.normal(size=(50, 3)).astype(np.float32)
    rows = np.arange(0, 50, 2)
    spec = TrainingRows(A, B, np.zeros(50), np.ones((50, 1), bool), rows).standardization()
    from temporal_xmodal.nn.towers import block_standardization
    small = block_standardization(A, rows, block=7)  # read in blocks: the same figures
    np.testing.assert_allclose(small[0], spec["image"][0])
    assert small[1] == pytest.approx(spec["image"][1])
    centred = A[rows] - A[rows].mean(axis=0)
    np.testing.assert_allclose(spec["image"][0], A[rows].mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(spec["image"][1], np.sqrt((centred ** 2).mean()), rtol=1e-5)
    out = Standardize(*spec["image"])(torch.from_numpy(A[rows])).numpy()
    np.testing.assert_allclose(out, centred / spec["image"][1], atol=1e-5)
    assert abs(float((out ** 2).mean()) - 1.0) < 1e-4  # unit mean variance per feature


def test_standardized_inputs_pay_on_clip_like_features():
    """CLIP-like vectors (a large shared offset per modality, small spread around it): the
    standardised network learns the categories, the raw one much less (two draws)."""
    from temporal_xmodal.datasets import make_clip_like

    gains = []
    for seed in (0, 1):
        X, y = make_clip_like(1500, n_image_features=128, n_text_features=128, random_state=seed)
        scores = [DiachronicEmbedder(n_image_features=128, standardize=standardize, max_epochs=8,
                                     hidden_dim=256, time_dim=32, embedding_dim=64,
                                     random_state=0).fit(X[:1000], y[:1000]).score(X[1000:],
                                                                                   y[1000:])
                  for standardize in (False, True)]
        gains.append(scores[1] - scores[0])
    assert min(gains) > 0.03 and np.mean(gains) > 0.05, gains


def test_a_warm_start_follows_the_current_verbose_and_epochs(capsys):
    """Issue 57, 12: the progress column kept the first fit's epoch count and a changed
    verbose did not reach the net."""
    X, y = make_temporal_crossmodal(150, random_state=0)
    model = tiny(SAMEmbedder, n_image_features=64, max_epochs=3, verbose=1, warm_start=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
        assert "3/3" in capsys.readouterr().out
        model.set_params(max_epochs=2).fit(X, y)
        out = capsys.readouterr().out
        assert "1/2" in out and "2/2" in out and "/3" not in out
        model.set_params(verbose=0).fit(X, y)
        assert capsys.readouterr().out == ""
        model.set_params(verbose=1).fit(X, y)
        assert "2/2" in capsys.readouterr().out
