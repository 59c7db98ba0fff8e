"""Nothing silent, round 3 (issues 32 and 35): each family that was silent, obscure or
misleading, with the answer a user now gets.

* rates with a number in the denominator (``"1/2Y"``) are 1 per 2 years, not 1 per 12;
* ``"m"`` (minutes or months?) is refused with the fix; time magnitudes that no calendar in
  ``time_unit`` reaches warn;
* a default ``window`` that spans the data says it is the default, and what it means;
* a label column left after the date column is named as the likely mistake;
* wrong-length time arrays in the metrics name the argument and both lengths;
* NumPy X without ``n_image_features`` warns that the half split is a guess;
* ``transform_text`` given whole rows says which columns it takes.
"""

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from _tiny import tiny
import temporal_xmodal
from temporal_xmodal import CCACrossModal, DiachronicEmbedder, TimeUnitWarning, stack_modalities
from temporal_xmodal.metrics import (
    cross_modal_scores,
    mean_average_precision,
    recall_at_k,
    retrieval_metrics_at_k,
)
from temporal_xmodal.time import to_duration, to_rate


def _data(n=60, n_img=6, n_txt=5, t0=2000.0, span=3.0, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = stack_modalities(rng.standard_normal((n, n_img)) + y[:, None],
                         rng.standard_normal((n, n_txt)) + y[:, None],
                         t0 + np.sort(rng.uniform(0, span, n)))
    return X, y


def _recorded(fn):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = fn()
    return out, record


# ------------------------------------------------------------- 32.1 rates
@pytest.mark.parametrize("text, per_year", [
    ("1/1Y", 1.0), ("1/2Y", 0.5), ("3/2Y", 1.5), ("1/ 2 years", 0.5), ("2/Y", 2.0),
    ("0.1/M", 1.2), ("1/6mo", 2.0), ("1/0.5Y", 2.0), ("12/1 year", 12.0),
])
def test_rate_with_a_number_in_the_denominator_is_per_that_many_units(text, per_year):
    assert to_rate(text) == pytest.approx(per_year)


def test_diachronic_decay_1_per_1y_reaches_the_loss():
    X, y = _data()
    model = tiny(DiachronicEmbedder, decay="1/1Y", window=0.5, max_epochs=1,
                 n_image_features=6).fit(X, y)
    assert model.net_.criterion_.decay == pytest.approx(1.0)


@pytest.mark.parametrize("text", ["1/0Y", "1/-2Y", "1/2", "1/Y/Y", "/Y", "1/2Q"])
def test_malformed_rate_names_the_string(text):
    with pytest.raises(ValueError, match=re.escape(repr(text))):
        to_rate(text)


# ------------------------------------------------- 35.3 ambiguous units
@pytest.mark.parametrize("call", [lambda: to_duration("6m"), lambda: to_duration("6 m"),
                                  lambda: to_rate("0.1/m"), lambda: to_rate("2m")])
def test_lowercase_m_is_refused_as_ambiguous_with_the_fix(call):
    with pytest.raises(ValueError, match=r"ambiguous.*min'.*mo'.*for months"):
        call()


@pytest.mark.parametrize("text, years", [("6mo", 0.5), ("6M", 0.5), ("6 months", 0.5),
                                         ("30min", 30 / (365.25 * 24 * 60)), ("1 year", 1.0)])
def test_unambiguous_months_and_minutes_still_parse(text, years):
    assert to_duration(text) == pytest.approx(years)


def test_window_6m_is_refused_at_fit():
    X, y = _data()
    with pytest.raises(ValueError, match="window='6m'.*ambiguous"):
        tiny(DiachronicEmbedder, window="6m", n_image_features=6).fit(X, y)


@pytest.mark.parametrize("unit, times", [
    ("years", np.linspace(-32864, -32000, 60)),  # day numbers (1880) read as years
    ("years", np.linspace(3650, 7300, 60)),  # day numbers (1980s): span of 3,650 "years"
    ("months", np.linspace(-32864 * 12, -32000 * 12, 60)),
    ("seconds", np.linspace(1.6e18, 1.7e18, 60)),  # epoch nanoseconds read as seconds
    ("days", np.linspace(1.6e12, 1.7e12, 60)),  # epoch milliseconds read as days
])
def test_implausible_time_magnitude_for_the_unit_warns(unit, times):
    X, y = _data()
    X[:, -1] = times
    est = tiny(DiachronicEmbedder, window="1Y", time_unit=unit, n_image_features=6,
               max_epochs=1)
    _, record = _recorded(lambda: est.fit(X, y))
    messages = [str(w.message) for w in record if issubclass(w.category, TimeUnitWarning)]
    assert any("implausible" in m and f"time_unit={unit!r}" in m for m in messages), messages


@pytest.mark.parametrize("unit, times", [
    ("years", np.linspace(1880, 1920, 60)), ("years", np.linspace(0, 30, 60)),
    ("years", np.linspace(-500, 300, 60)), ("months", np.linspace(1880 * 12, 1920 * 12, 60)),
    ("days", np.linspace(-40000, 20000, 60)), ("seconds", np.linspace(1.6e9, 1.7e9, 60)),
])
def test_plausible_times_do_not_warn(unit, times):
    X, y = _data()
    X[:, -1] = times
    est = tiny(DiachronicEmbedder, window=0.5, time_unit=unit, n_image_features=6,
               max_epochs=1)
    _, record = _recorded(lambda: est.fit(X, y))
    assert not [w for w in record if "implausible" in str(w.message)]


# ------------------------------------------- 35.4 defaults that blame the user
def test_default_window_follows_the_span_so_it_never_spans_the_data():
    """The default window is 5 % of the training span (it was a fixed 4 years, which spanned
    two years of data and switched L_intra off with a warning)."""
    X, y = _data(span=2.0)
    est = tiny(DiachronicEmbedder, n_image_features=6, max_epochs=1)
    est.set_params(window=DiachronicEmbedder().window)  # the default, as a user gets it
    _, record = _recorded(lambda: est.fit(X, y))
    assert not [w for w in record if "training span" in str(w.message)]
    assert est.net_.criterion_.window == pytest.approx(0.05 * np.ptp(X[:, -1]))


def test_user_window_spanning_the_data_names_the_users_value():
    X, y = _data(span=2.0)
    est = tiny(DiachronicEmbedder, window="3Y", n_image_features=6, max_epochs=1)
    _, record = _recorded(lambda: est.fit(X, y))
    (message,) = [str(w.message) for w in record if "training span" in str(w.message)]
    assert "window='3Y' (3 years)" in message and "default" not in message
    assert "static control" not in message


# ---------------------------------------- 35.5 a label column left after the date
def _frame(n=60):
    X, y = _data(n)
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


# ------------------------------------------------- 32.4 metric time lengths
def test_cross_modal_scores_wrong_length_time_names_time_and_both_lengths():
    Q = np.random.default_rng(0).standard_normal((20, 4))
    lab = np.arange(20) % 3
    with pytest.raises(ValueError, match=r"time has 5 value\(s\).*20 rows"):
        cross_modal_scores(Q, Q, lab, time=np.ones(5), time_window=1.0)


@pytest.mark.parametrize("metric", [mean_average_precision, recall_at_k,
                                    retrieval_metrics_at_k])
@pytest.mark.parametrize("which", ["query_time", "gallery_time"])
def test_metric_wrong_length_time_names_the_argument_and_both_lengths(metric, which):
    rng = np.random.default_rng(0)
    Q, G = rng.standard_normal((10, 4)), rng.standard_normal((12, 4))
    times = {"query_time": np.zeros(10), "gallery_time": np.zeros(12)}
    times[which] = np.zeros(5)
    n = 10 if which == "query_time" else 12
    with pytest.raises(ValueError, match=rf"{which} has 5 value\(s\).*{n}"):
        metric(Q, G, np.arange(10) % 3, np.arange(12) % 3, time_window=1.0, **times)


def test_metric_wrong_length_labels_with_omit_names_them():
    rng = np.random.default_rng(0)
    Q, G = rng.standard_normal((10, 4)), rng.standard_normal((12, 4))
    gl = np.r_[np.nan, np.arange(4.0)]
    with pytest.raises(ValueError, match=r"gallery_labels has 5 row\(s\).*12"):
        mean_average_precision(Q, G, np.arange(10) % 3, gl, nan_policy="omit")


# ------------------------------------------------- 32.8 the half split is a guess
def test_numpy_x_without_n_image_features_warns_the_split_is_a_guess():
    X, y = _data(n_img=64 // 8, n_txt=48 // 8)
    est = tiny(CCACrossModal)
    _, record = _recorded(lambda: est.fit(X, y))
    (w,) = [w for w in record if issubclass(w.category, temporal_xmodal.LayoutWarning)]
    message = str(w.message)
    assert "n_image_features" in message and "7 image + 7 text" in message
    assert w.filename == __file__  # at the user's line


def test_named_blocks_or_an_explicit_count_do_not_warn():
    X, y = _data()
    _, record = _recorded(lambda: tiny(CCACrossModal, n_image_features=6).fit(X, y))
    assert not [w for w in record if issubclass(w.category, temporal_xmodal.LayoutWarning)]
    df, y = _frame()
    _, record = _recorded(lambda: tiny(CCACrossModal).fit(df, y))
    assert not [w for w in record if issubclass(w.category, temporal_xmodal.LayoutWarning)]


# ---------------------------------------- 32.9 transform_text given whole rows
def test_transform_text_given_whole_rows_says_which_columns_it_takes():
    df, y = _frame()
    est = tiny(CCACrossModal, n_image_features="auto").fit(df, y)
    with pytest.raises(TypeError, match=r"X_text's column 'date'.*holds dates.*"
                                        r"text feature columns only.*time="):
        est.transform_text(df)
    with pytest.raises(TypeError, match=r"X_image's column 'date'.*image feature columns"):
        est.transform_image(df, time=1890.0)
