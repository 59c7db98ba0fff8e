"""The layout of X (``_input/_columns.py``, ``_input/_time_column.py``): nothing silent,
every message named.

``DESIGN.md``, "Bad input": bools as counts, a date column that is not where the layout
says and ``n_image_features`` out of range fail or warn, naming the problem.  With NumPy
input only the values show where the time is (:class:`TimeColumnWarning`).  A label column
left after the date is named as the likely mistake; NumPy X without ``n_image_features``
warns that the half split is a guess; ``transform_text`` given whole rows says which
columns it takes.
"""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from _stacked import recorded, stacked
from _tiny import SIX, tiny, tiny_six
import temporal_xmodal
from temporal_xmodal import CCACrossModal, DiachronicEmbedder
from temporal_xmodal._input import resolve_blocks
from temporal_xmodal._stacking import TimeColumn
from temporal_xmodal._input import TimeColumnWarning, check_time_column_values
from temporal_xmodal.datasets import make_temporal_crossmodal


@pytest.fixture(scope="module")
def data():
    X, y, info = make_temporal_crossmodal(400, return_info=True, random_state=0)
    return X, y, info.n_image_features


def _time_column_warnings(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [w for w in caught if issubclass(w.category, TimeColumnWarning)]


# ------------------------------------------------------- n_image_features=True
@pytest.mark.parametrize("flag", [True, False, np.True_])
@pytest.mark.parametrize("estimator", list(tiny_six().values()), ids=list(SIX))
def test_a_bool_is_not_a_count_of_image_columns(data, estimator, flag):
    X, y, _ = data
    estimator = clone(estimator).set_params(n_image_features=flag)
    with pytest.raises((TypeError, ValueError), match="n_image_features"):
        estimator.fit(X, y)
    assert not hasattr(estimator, "n_image_features_")


def test_a_bool_is_rejected_by_the_layout_itself():
    with pytest.raises(TypeError, match=r"n_image_features=True is a bool, not a count"):
        resolve_blocks(True, 10)
    assert resolve_blocks(3, 10) == (3, 6)
    assert resolve_blocks(np.int64(3), 10) == (3, 6)


# ------------------------------------------- the time column, from the values
@pytest.mark.parametrize("Estimator", [DiachronicEmbedder, CCACrossModal])
def test_a_missing_time_column_warns_with_numpy_input(data, Estimator):
    """X without its time: the last text feature would be read as the time."""
    X, y, d = data
    estimator = (tiny(DiachronicEmbedder, n_image_features=d) if Estimator is DiachronicEmbedder
                 else CCACrossModal(n_image_features=d))
    caught = _time_column_warnings(lambda: estimator.fit(X[:, :-1], y))
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "last column, read as the time, looks like one more text feature" in message
    assert "missing" in message and "[image | text | time]" in message
    assert caught[0].filename == __file__  # points at the user's line


def test_a_time_column_listed_first_in_a_column_transformer_warns(data):
    """The date first, the (scaled) features after it: only the time looked standardised."""
    X, y, d = data
    names = [f"img_{i}" for i in range(d)] + [f"txt_{i}" for i in range(X.shape[1] - 1 - d)]
    frame = pd.DataFrame(X[:, :-1], columns=names)
    frame["date"] = pd.Timestamp("1880-01-01") + pd.to_timedelta(X[:, -1] * 365.25, unit="D")
    date_first = ColumnTransformer([("date", TimeColumn(), ["date"]),
                                    ("img", StandardScaler(), names[:d]),
                                    ("txt", StandardScaler(), names[d:])])
    pipe = make_pipeline(date_first, tiny(DiachronicEmbedder, n_image_features=d))
    caught = _time_column_warnings(lambda: pipe.fit(frame, y))
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "first column looks like a time (values 1880" in message
    assert "list the time last" in message
    date_last = ColumnTransformer(date_first.transformers[1:] + date_first.transformers[:1])
    pipe = make_pipeline(date_last, tiny(DiachronicEmbedder, n_image_features=d))
    assert not _time_column_warnings(lambda: pipe.fit(frame, y))


def _check(X, n_image, n_text):
    return _time_column_warnings(lambda: check_time_column_values(
        X[:, :-1], X[:, -1], n_image, n_text, estimator_name="E"))


_SYNTHETIC = [dict(), dict(multilabel=True), dict(profiles="steady"), dict(profiles="spike"),
              dict(profiles="recurrent"), dict(drift=3.0), dict(noise=0.0), dict(noise=2.0),
              dict(n_image_features=300, n_text_features=200), dict(n_latent=2),
              dict(n_image_features=128, n_text_features=10)]
_TIME_RANGES = [(0.0, 10.0), (1850.0, 1950.0), (0.0, 1.0), (0.0, 120.0), (-100.0, 0.0),
                (1.0e9, 1.3e9)]


@pytest.mark.parametrize("n_samples", [60, 300, 2500])
def test_no_false_alarm_on_the_synthetic_time_columns(n_samples):
    """make_temporal_crossmodal's time (many shapes, scales, sizes) never warns, with raw
    features, with standardised features, and with all of X standardised (a
    standardised time cannot be judged and is left to the TimeUnitWarning)."""
    seeds = (0, 1) if n_samples < 1000 else (0,)  # 2,500 rows: the subsampled path
    for kw, time_range, seed in itertools.product(_SYNTHETIC, _TIME_RANGES, seeds):
        raw, _, info = make_temporal_crossmodal(n_samples, time_range=time_range,
                                                return_info=True, random_state=seed, **kw)
        for scale in ("raw", "features", "all"):  # one data set, three scalings of it
            X = raw
            if scale == "features":
                X = np.column_stack([StandardScaler().fit_transform(raw[:, :-1]), raw[:, -1]])
            elif scale == "all":
                X = StandardScaler().fit_transform(raw)
            caught = _check(X, info.n_image_features, info.n_text_features)
            assert not caught, (kw, time_range, scale, seed, str(caught[0].message))


def test_the_missing_time_is_found_across_synthetic_shapes():
    """The same data sets without their time column: the last text feature is judged a
    feature (raw features; standardised ones cannot be told from a standardised time)."""
    missed = []
    for kw, seed in itertools.product(_SYNTHETIC, (0, 1, 2)):
        X, _, info = make_temporal_crossmodal(1000, return_info=True, random_state=seed,
                                              **kw)
        if not _check(X[:, :-1], info.n_image_features, info.n_text_features - 1):
            missed.append((kw, seed))
    # one escapes: of 10 text columns the last is the most extreme of one statistic
    assert missed == [(dict(n_image_features=128, n_text_features=10), 1)]


def test_estimators_stay_quiet_on_valid_numpy_input(data):
    X, y, d = data
    for estimator in (CCACrossModal(n_image_features=d),
                      tiny(DiachronicEmbedder, n_image_features=d)):
        assert not _time_column_warnings(lambda: estimator.fit(X, y))
    # a standardised X (time included) is the TimeUnitWarning's, not this one's
    pipe = make_pipeline(StandardScaler(), CCACrossModal(n_image_features=d))
    assert not _time_column_warnings(lambda: pipe.fit(X, y))
    # a constant time (static data, e.g. Wikipedia's) and few rows say nothing
    static = X.copy()
    static[:, -1] = 0.0
    assert not _time_column_warnings(lambda: CCACrossModal(n_image_features=d).fit(static))
    assert not _time_column_warnings(
        lambda: CCACrossModal(n_image_features=d).fit(X[:40, :-1]))


def test_names_that_show_the_layout_are_left_to_the_name_checks(data):
    X, y, d = data
    names = ([f"image__{i}" for i in range(d)]
             + [f"text__{i}" for i in range(X.shape[1] - 2 - d)] + ["time__t[years]"])
    frame = pd.DataFrame(X[:, :-1], columns=names)  # time missing, but named as time
    assert not _time_column_warnings(lambda: CCACrossModal(n_image_features="auto").fit(frame))


# ---------------------------------------------------- a date column misplaced
def _frame_with_date_at(X, d, position, last_time=False):
    names = [f"img_{i}" for i in range(d)] + [f"txt_{i}" for i in range(X.shape[1] - 1 - d)]
    frame = pd.DataFrame(X[:, :-1], columns=names)
    frame.insert(position, "date", (1900 + 10 * X[:, -1]).astype("int64"))
    if last_time:
        frame["t"] = X[:, -1]
    return frame


@pytest.mark.parametrize("n_image_features", ["auto", 64, None])
def test_an_int_date_column_in_the_middle_is_named(data, n_image_features):
    X, y, d = data
    frame = _frame_with_date_at(X, d, d)
    with pytest.raises(ValueError, match=r"column 'date' \(position 64\) looks like a date "
                                         r"or time.*'txt_47'.*must be the last"):
        CCACrossModal(n_image_features=n_image_features).fit(frame, y)


def test_an_int_date_column_first_is_named(data):
    X, y, d = data
    frame = _frame_with_date_at(X, d, 0)
    with pytest.raises(ValueError, match=r"column 'date' \(position 0\).*must be the last"):
        CCACrossModal(n_image_features="auto").fit(frame, y)


def test_auto_names_a_date_column_among_the_features(data):
    """A time last and an int date between the blocks: 'auto' says which column is odd."""
    X, y, d = data
    frame = _frame_with_date_at(X, d, d, last_time=True)
    with pytest.raises(ValueError, match=r"no two blocks \(prefixes 'img' ×64, 'date' ×1, "
                                         r"'txt' ×48\); X's column 'date' \(position 64\) "
                                         r"looks like a date or time.*move it last"):
        CCACrossModal(n_image_features="auto").fit(frame, y)
    # an ordinary DataFrame without blocks in its names is still accepted with an int
    plain = pd.DataFrame(X, columns=[f"col_{i}" for i in range(X.shape[1])])
    assert CCACrossModal(n_image_features=d).fit(plain).n_image_features_ == d


# ------------------------------------------- messages of the layout as users meet them
# ----------------------------------------- a label column left after the date
def _frame(n=60):
    X, y = stacked(n)
    df = pd.DataFrame(X[:, :-1], columns=[f"img_{i}" for i in range(6)]
                      + [f"txt_{i}" for i in range(5)])
    df["date"] = pd.date_range("1880-01-01", periods=n, freq="W")
    return df, y


@pytest.mark.parametrize("label", [["crime", "sport", "art"], [0, 1, 2]])
def test_label_column_after_the_date_is_named(label):
    df, y = _frame()
    df["label"] = np.array(label)[y]
    with pytest.raises((TypeError, ValueError),
                       match=r"last column 'label'.*label column left in X\? pass labels "
                             r"as y.*drop\(columns='label'\)"):
        tiny(DiachronicEmbedder, n_image_features="auto").fit(df, y)


# ------------------------------------------------- the half split is a guess
def test_numpy_x_without_n_image_features_warns_the_split_is_a_guess():
    X, y = stacked(n_img=64 // 8, n_txt=48 // 8)
    est = tiny(CCACrossModal)
    _, record = recorded(lambda: est.fit(X, y))
    (w,) = [w for w in record if issubclass(w.category, temporal_xmodal.LayoutWarning)]
    message = str(w.message)
    assert "n_image_features" in message and "7 image + 7 text" in message
    assert w.filename == __file__  # at the user's line


def test_named_blocks_or_an_explicit_count_do_not_warn():
    X, y = stacked()
    _, record = recorded(lambda: tiny(CCACrossModal, n_image_features=6).fit(X, y))
    assert not [w for w in record if issubclass(w.category, temporal_xmodal.LayoutWarning)]
    df, y = _frame()
    _, record = recorded(lambda: tiny(CCACrossModal).fit(df, y))
    assert not [w for w in record if issubclass(w.category, temporal_xmodal.LayoutWarning)]


# ---------------------------------------- transform_text given whole rows
def test_transform_text_given_whole_rows_says_which_columns_it_takes():
    df, y = _frame()
    est = tiny(CCACrossModal, n_image_features="auto").fit(df, y)
    with pytest.raises(TypeError, match=r"X_text's column 'date'.*holds dates.*"
                                        r"text feature columns only.*time="):
        est.transform_text(df)
    with pytest.raises(TypeError, match=r"X_image's column 'date'.*image feature columns"):
        est.transform_image(df, time=1890.0)
