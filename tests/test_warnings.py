"""The library's warnings: at the user's line (through Pipeline, GridSearchCV and joblib),
naming the estimator the user built, filtered by Python's own mechanisms alone, and rare:
a fit warns that it is still improving only when the last epochs gained more than a
tolerance."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from _tiny import tiny
from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    DiachronicEmbedder,
    SAMEmbedder,
    StillImprovingWarning,
    TempXNetEmbedder,
    TimeUnitWarning,
    make_crossmodal_transformer,
)
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.training import _report as _checkpoint  # the checkpoint summary
from temporal_xmodal.time import TimeBinWarning

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def frame():
    """The README's DataFrame: img_*, txt_*, a datetime64 date; and its labels."""
    X, y, info = make_temporal_crossmodal(240, return_info=True, random_state=0)
    d = info.n_image_features
    df = pd.DataFrame(X[:, :-1], columns=[f"img_{i}" for i in range(d)]
                      + [f"txt_{i}" for i in range(X.shape[1] - 1 - d)])
    df["date"] = pd.Timestamp("1880-01-01") + pd.to_timedelta(X[:, -1] * 365.25, unit="D")
    return df, y


def _pipe(estimator):
    return make_pipeline(make_crossmodal_transformer("img_", "txt_", "date",
                                                     image_transformer=StandardScaler()),
                         estimator)


def test_every_library_warning_from_a_pipeline_in_a_grid_search_points_at_this_file(frame):
    """They pointed at sklearn/pipeline.py:645 and joblib/parallel.py:1940, and Binned's bins
    warned as "TempXNetEmbedder"; the merged-bins warning named no estimator."""
    df, y = frame
    binned = BinnedProcrustesEmbedder(tiny(TempXNetEmbedder, max_epochs=3, lr=0.05),
                                      bins=8, min_bin_size=30, n_image_features="auto",
                                      random_state=0, use_time=True)
    diachronic = tiny(DiachronicEmbedder, max_epochs=3, lr=0.05, n_image_features="auto",
                      window="40Y")
    caught = []
    for estimator, grid in [(binned, {"binnedprocrustesembedder__bins": [8, 4]}),
                            (diachronic, {"diachronicembedder__decay": [0.5, 1.0]})]:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            GridSearchCV(_pipe(estimator), grid, cv=2, n_jobs=1).fit(df, y)
        caught += [(type(estimator).__name__, w) for w in record]
    library = [(name, w) for name, w in caught
               if w.category in (StillImprovingWarning, TimeBinWarning, TimeUnitWarning)]
    assert {w.category for _, w in library} == {StillImprovingWarning, TimeBinWarning,
                                                TimeUnitWarning}
    assert [w.filename for _, w in caught] == [__file__] * len(caught)
    for name, w in library:  # the estimator the user built, first
        assert str(w.message).startswith(name), (name, str(w.message)[:80])
    bin_models = [str(w.message) for name, w in library if name == "BinnedProcrustesEmbedder"
                  and w.category is StillImprovingWarning]
    assert bin_models and all(m.startswith("BinnedProcrustesEmbedder (its TempXNetEmbedder):")
                              for m in bin_models)


@pytest.fixture(scope="module")
def data():
    X, y, info = make_temporal_crossmodal(200, return_info=True, random_state=0)
    return X, y, info.n_image_features


def _still_improving(n_img, **overrides):
    """A SAM whose two epochs raise the validation mAP by far more than the tolerance."""
    return tiny(SAMEmbedder, n_image_features=n_img, max_epochs=2, lr=0.05,
                validation_fraction=0.3, **overrides)


def test_python_filters_alone_decide(data):
    """A process-global record hid the second search's warning after resetwarnings(); the
    warning is a plain warnings.warn of a ConvergenceWarning subclass now."""
    X, y, n_img = data
    search = GridSearchCV(_still_improving(n_img), {"lr": [0.05]}, cv=2)
    assert not hasattr(_checkpoint, "_SHOWN")
    shown = []
    for _ in range(2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.resetwarnings()
            warnings.simplefilter("default")
            search.fit(X, y)
        shown.append([w for w in caught if issubclass(w.category, ConvergenceWarning)])
    assert shown[0] and shown[1]
    assert all(w.category is StillImprovingWarning and w.filename == __file__
               for w in shown[0] + shown[1])
    assert search.best_estimator_.convergence_["recent_gain"] > _checkpoint.TOL
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        with pytest.raises(StillImprovingWarning, match="SAMEmbedder: the validation figure "
                                                       "was still improving"):
            _still_improving(n_img).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=ConvergenceWarning)
        _still_improving(n_img).fit(X, y)  # ignored by the user's filter, nothing else


@pytest.mark.parametrize("values, warns", [
    ([0.50, 0.60, 0.70, 0.71, 0.72, 0.73, 0.74, 0.75], True),    # +0.04 in the last 5
    ([0.50, 0.70, 0.71, 0.712, 0.713, 0.714, 0.715, 0.716], False),  # +0.006: converged
    ([0.5, 0.7, 0.705, 0.69, 0.70, 0.695, 0.70, 0.708], False),  # a noisy plateau, best last
    ([0.5, 0.7, 0.71, 0.69, 0.715, 0.70, 0.71, 0.70], False),    # best in the last 5, +0.005
    ([0.1, 0.3], True),                                          # two epochs, a rise
    ([0.3, 0.302], False),                                       # two epochs, flat
])
def test_still_improving_means_a_gain_above_the_tolerance(data, values, warns):
    """"Best epoch = last epoch" warned on every noisy plateau (almost every fit); the rule is
    scikit-learn's tol / n_iter_no_change: the best figure of the last 5 epochs beats the best
    before them by more than 0.01 of mAP."""
    X, y, n_img = data
    sam = _still_improving(n_img).fit(X, y)
    sam.net_.history.extend([{**sam.net_.history[-1]} for _ in range(len(values) - 2)])
    for epoch, value in zip(sam.net_.history, values):
        epoch["valid_map"] = value
    sam.max_epochs = len(values)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = _checkpoint.convergence(sam.net_.history, "valid_map", 0, validating=True,
                                          max_epochs=sam.max_epochs, interrupted=False,
                                          name="SAMEmbedder")
    assert summary["best_epoch"] == int(np.argmax(values)) + 1
    assert summary["still_improving"] is warns
    assert bool([w for w in caught if w.category is StillImprovingWarning]) is warns
    cut = max(1, len(values) - _checkpoint.N_ITER_NO_CHANGE)
    assert summary["recent_gain"] == pytest.approx(max(values[cut:]) - max(values[:cut]))


def test_without_a_user_frame_a_warning_points_into_the_library_not_at_runpy():
    """The compare job (python -m temporal_xmodal) and worker threads have no user's frame:
    a TimeBinWarning pointed at '<frozen runpy>:88'; now at the outermost frame of the
    library (here a fit run by a thread, as joblib's workers run them)."""
    import threading

    import temporal_xmodal
    from temporal_xmodal.time import TimeBins

    worker = threading.Thread(target=TimeBins(10, min_bin_size=30).fit,
                              args=(np.linspace(0, 1, 60) ** 4,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        worker.start()
        worker.join()
    assert caught and caught[0].category is TimeBinWarning
    assert caught[0].filename.startswith(temporal_xmodal.__path__[0]), caught[0].filename


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_warning_in_a_cross_validation_worker_points_at_sklearns_fit_call(n_jobs):
    """Issue 56: in a GridSearchCV(n_jobs=2) worker no frame is the user's, and a warning
    pointed at a line inside the library (temporal_xmodal/base/_embedder.py:173). In-process
    (n_jobs=1) it points at the user's call; in a worker (threads here; a loky process walks
    the same stack) at scikit-learn's `estimator.fit(X_train, y_train, ...)`, the fit the
    user asked for; GridSearchCV's refit runs in the user's thread, at the user's line."""
    import linecache
    import os

    import sklearn
    from joblib import parallel_config
    from sklearn.model_selection import cross_validate

    from temporal_xmodal import CCACrossModal, LayoutWarning

    X, y = make_temporal_crossmodal(60, random_state=0)
    guess = CCACrossModal(1)  # n_image_features=None on NumPy X: the half split warns
    with warnings.catch_warnings(record=True) as caught, parallel_config(backend="threading"):
        warnings.simplefilter("always")
        cross_validate(guess, X, y, cv=2, n_jobs=n_jobs)
        GridSearchCV(guess, {"embedding_dim": [1, 2]}, cv=2, n_jobs=n_jobs).fit(X, y)
    layout = [w for w in caught if w.category is LayoutWarning]
    where = [w.filename for w in layout]
    assert len(where) == 2 + 4 + 1, [str(w.message)[:80] for w in caught]
    if n_jobs == 1:
        assert where == [__file__] * 7
        return
    validation = os.path.join(os.path.dirname(sklearn.__file__), "model_selection",
                              "_validation.py")
    assert where == [validation] * 6 + [__file__]  # the refit: in this thread
    assert all(linecache.getline(w.filename, w.lineno).strip().startswith("estimator.fit(")
               for w in layout[:6])


def test_a_warning_inside_python_m_does_not_break_the_job(tmp_path):
    """Under `python -m`, the outermost library frame is a __main__ whose loader cannot give
    its source to linecache: passing its globals to warn_explicit raised ImportError and the
    compare job stopped ("loader for temporal_xmodal.__main__ cannot handle __main__")."""
    import subprocess
    import sys

    package = tmp_path / "probe_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(
        "import warnings\nfrom temporal_xmodal._warnings import warn\n"
        "warnings.simplefilter('always')\nwarn('probe', UserWarning)\nprint('went on')\n")
    out = subprocess.run([sys.executable, "-m", "probe_pkg"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "went on" in out.stdout, out.stderr


def test_a_fit_on_several_threads_on_a_busy_machine_says_so_at_its_start(monkeypatch):
    """A fit from Python uses torch's default threads (one per core): beside other busy work
    its epochs crawl without a word (issue 49: 5 s epochs became 58-83 s at load 3), so its
    start says so when the load exceeds the cores plus the fit's own threads."""
    from temporal_xmodal import BusyMachineWarning
    from temporal_xmodal._warnings import warn_if_busy
    from temporal_xmodal import _device

    with pytest.warns(BusyMachineWarning, match=r"busy \(1-minute load average 7\.0 on 2 "
                                                r"cores\) and this fit runs 2 torch threads"):
        assert warn_if_busy("SAMEmbedder", 2, load=7.0, cores=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not warn_if_busy("SAMEmbedder", 2, load=3.5, cores=2)  # its own threads
        assert not warn_if_busy("SAMEmbedder", 1, load=50.0, cores=2)  # one thread: steady
    # a fit reads the machine at its start (the suite's fixture silences it elsewhere)
    monkeypatch.setattr(_device, "warn_if_busy", warn_if_busy)
    monkeypatch.setattr("os.getloadavg", lambda: (64.0, 64.0, 64.0))
    monkeypatch.setattr("torch.get_num_threads", lambda: 2)  # torch's default on 2 cores
    X, y = make_temporal_crossmodal(60, random_state=0)
    with pytest.warns(BusyMachineWarning, match="SAMEmbedder: the machine is busy"):
        tiny(SAMEmbedder, n_image_features=64, max_epochs=1).fit(X, y)
