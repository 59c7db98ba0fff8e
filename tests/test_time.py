"""The time owner: axis precision, encodings, warm start, range warnings, durations, tags."""

import datetime
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    SequentialCrossModal,
    TempXNetEmbedder,
    TimeRangeWarning,
    TimeUnitWarning,
    stack_modalities,
)
from temporal_xmodal.estimators.diachronic import diachronic_weights
from temporal_xmodal.time import (TimeEncoding, is_share, time_role, to_duration, to_rate,
                                  to_time_axis)

PACKAGE = Path(__file__).resolve().parents[1] / "temporal_xmodal"
SMALL = dict(hidden_dim=8, embedding_dim=4, max_epochs=2, batch_size=16, random_state=0,
             n_image_features=5)  # _data's layout: 5 image + 4 text columns
#: The fits here test the time axis: 2 epochs on 60 rows leave 6 validation rows, whose figure
#: ties at every epoch, and their window acts on nothing at the default decay=0
#: (tests/test_neural.py and tests/test_diachronic.py test those warnings).
pytestmark = [
    pytest.mark.filterwarnings("ignore:DiachronicEmbedder. the validation figure valid_map was .* "
                               "at every epoch:UserWarning"),
    pytest.mark.filterwarnings("ignore:DiachronicEmbedder. .* no effect. L_intra, the "
                               "same-category time term:UserWarning"),
]


def _data(n=60, t0=0.0, span=2.0, seed=0, n_img=5, n_txt=4):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X_img = rng.standard_normal((n, n_img)) + y[:, None]
    X_txt = rng.standard_normal((n, n_txt)) + y[:, None]
    t = t0 + np.sort(rng.uniform(0, span, n))
    return stack_modalities(X_img, X_txt, t), y


# ----------------------------------------------------------- precision
def test_epoch_seconds_keep_exact_window_membership():
    """Times ≈1.7e9 s with window=60: pairs 59/60/61 s apart are in/in/out of the window."""
    t0 = 1.7e9
    X, y = _data(n=40, t0=t0, span=3600.0)
    model = DiachronicEmbedder(window=60, decay=0.01, time_unit="seconds", **SMALL).fit(X, y)
    probe = t0 + np.array([1000.0, 1059.0, 1060.0, 1061.0, 1000.5])
    batch_time = torch.as_tensor(model._batch_times(model.time_axis_.centre(probe))["time"])
    assert batch_time.dtype == torch.float64
    labels = torch.ones(5, 1)
    _, intra = diachronic_weights(labels, batch_time, model.window_, 0.01)
    assert intra[0, 1] == 0 and intra[0, 2] == 0  # 59 s and exactly 60 s: inside (≤ w)
    assert intra[0, 3] > 0  # 61 s: outside
    assert intra[1, 3] == 0 and intra[0, 4] == 0  # 2 s and 0.5 s apart
    # the same times cast to float32 before the difference (the old path) lose them
    t32 = torch.as_tensor(probe, dtype=torch.float32)
    assert (t32[3] - t32[0]).item() != 61.0


def test_dates_and_fractional_years_give_the_same_axis():
    dates = np.array(["1890-03-05", "1904-07-02", "1913-12-31"], dtype="datetime64[D]")
    from temporal_xmodal.datasets import fractional_year

    np.testing.assert_array_equal(to_time_axis(dates), fractional_year(dates))
    ts = pd.Series(pd.to_datetime(dates)).dt.tz_localize("UTC")
    np.testing.assert_allclose(to_time_axis(ts), fractional_year(dates), atol=1e-12)
    np.testing.assert_array_equal(to_time_axis(dates.astype(object)), fractional_year(dates))
    assert to_time_axis(np.datetime64("1970-01-02"), "hours") == 24.0
    # leap and common years, months: exact fractions of their own year, without NumPy's
    # DeprecationWarning for a bare-integer ('generic') timedelta (NumPy 2.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        years = to_time_axis(np.array(["1900-07-02", "2000-07-02", "2001-01-01"],
                                      dtype="datetime64[D]"))
        months = to_time_axis(np.array(["2000-07-02"], dtype="datetime64[D]"), "months")
    np.testing.assert_allclose(years, [1900 + 182 / 365, 2000 + 183 / 366, 2001.0], rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose(months, [(2000 + 183 / 366) * 12], rtol=0, atol=1e-9)


@pytest.mark.parametrize("value, message", [
    (np.array(["a", "b"]), "numbers on the time axis or dates"),
    (np.array([1.0, np.nan]), "1 NaN"),
    (np.array([np.timedelta64(1, "D")]), "time differences"),
    (np.array([pd.Timestamp("1900-01-01"), 3.0], dtype=object), "mixes dates"),
    # pandas.NaT is a datetime numpy cannot convert: it was "TypeError: 'float' object cannot
    # be interpreted as an integer"
    (pd.NaT, r"1 missing date\(s\) \(NaT\)"),
    ([pd.Timestamp("1900-01-01"), pd.NaT], r"1 missing date\(s\) \(NaT\)"),
    (np.array([pd.Timestamp("1900-01-01", tz="UTC"), pd.NaT], dtype=object),
     r"1 missing date\(s\) \(NaT\)"),
])
def test_bad_times_named(value, message):
    with pytest.raises((TypeError, ValueError), match=message):
        to_time_axis(value)


@pytest.mark.parametrize("value, unit, expected", [
    ("180D", "years", 180 / 365.25), ("6M", "years", 0.5), ("1Y", "months", 12.0),
    ("2W", "days", 14.0), ("12h", "days", 0.5), ("30min", "seconds", 1800.0),
    ("30 minutes", "seconds", 1800.0), ("6mo", "years", 0.5),
    (pd.Timedelta(days=3), "days", 3.0),
    (np.timedelta64(36, "h"), "days", 1.5), (np.timedelta64(2, "Y"), "months", 24.0),
    (0.25, "years", 0.25),
])
def test_durations(value, unit, expected):
    assert to_duration(value, unit) == pytest.approx(expected, rel=1e-12)


def test_bad_durations_and_rates():
    with pytest.raises(ValueError, match="not a duration"):
        to_duration("soon")
    with pytest.raises(ValueError, match="non-negative"):
        to_duration(-1.0)
    assert to_rate(0.1) == 0.1
    assert to_rate("1Y") == pytest.approx(np.log(2))


@pytest.mark.parametrize("value, span, duration", [
    ("5%", 10.0, 0.5), ("100%", 3.0, 3.0), (" 2.5 %", 40.0, 1.0), ("1e-1%", 1000.0, 1.0),
    (".5%", 10.0, 0.05), ("+5%", 10.0, 0.5), (" + 5%", 10.0, 0.5)])  # "+": issue 48, 12
def test_shares_of_the_span_as_durations_and_half_lives(value, span, duration):
    """A share ``"<p>%"`` is p % of the span as a duration, and as a rate the half-life."""
    assert is_share(value)
    assert to_duration(value, span=span) == pytest.approx(duration)
    assert to_rate(value, span=span) == pytest.approx(np.log(2) / duration)
    # a zero span (every time equal): the duration is 0 and the rate acts on nothing
    assert to_duration(value, span=0.0) == 0.0 and to_rate(value, span=0.0) == 0.0


@pytest.mark.parametrize("value", ["0%", "150%", "-5%", "5 %%", "x%", "%", "++5%", "+%",
                                   "+-5%"])
def test_malformed_shares_say_what_a_share_is(value):
    for convert in (to_duration, to_rate):
        with pytest.raises(ValueError, match=r"is not a share of the time span: write a "
                                             r"percentage in \(0, 100\]"):
            convert(value, span=1.0)


def test_a_share_too_small_to_represent_says_so():
    """``"1e-400%"`` reads as 0 %: the message said "write a percentage in (0, 100]", a
    rule the value as written satisfies."""
    for convert in (to_duration, to_rate):
        with pytest.raises(ValueError, match=r"time_window='1e-400%' is a percentage too "
                                             r"small to represent \(it reads as 0 %\)"):
            convert("1e-400%", name="time_window", span=1.0)
    assert to_duration("1e-3%", span=3.0) == pytest.approx(3e-5)


def test_a_share_without_a_span_names_what_is_missing():
    for convert in (to_duration, to_rate):
        with pytest.raises(ValueError, match=r"window='5%' is a share of the time span, "
                                             r"which is only known from the times"):
            convert("5%", name="window")


# ------------------------------------------------------------ encodings
def test_raw_encoding_on_large_times_warns():
    with pytest.warns(TimeUnitWarning, match="saturates"):
        TimeEncoding("raw").fit(np.array([-500.0, 500.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TimeEncoding("raw").fit(np.array([-1.0, 1.0]))


@pytest.mark.parametrize("encoding, width", [("minmax", 1), ("zscore", 1), ("raw", 1),
                                             ("onehot", 12), ("sinusoidal", 25)])
def test_encodings_shapes_and_one_binning(encoding, width):
    t = np.linspace(-1, 1, 50)
    enc = TimeEncoding(encoding).fit(t)
    F = enc.transform(t)
    assert F.shape == (50, width) and F.dtype == np.float32 and enc.n_features_out_ == width
    if encoding == "onehot":  # the one TimeBins decides the bins
        np.testing.assert_array_equal(F.argmax(1), enc.bins_.transform(t))


def test_onehot_of_many_bins_builds_no_identity_matrix():
    """Issue 48 (noticed): the one-hot encoding indexed ``np.eye(n_bins)`` on every call
    (8,000 daily bins: 0.5 GB and 4 s per call); it writes the n × n_bins rows directly."""
    import tracemalloc

    t = np.linspace(0.0, 1.0, 8000)
    enc = TimeEncoding("onehot", n_bins=8000).fit(t)
    tracemalloc.start()
    F = enc.transform(t[:10])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert F.shape == (10, 8000) and F.dtype == np.float32 and (F.sum(1) == 1).all()
    np.testing.assert_array_equal(F.argmax(1), enc.bins_.transform(t[:10]))
    assert peak < 10 * 8000 * 8 + 1_000_000  # the output, not 8000² float64 (512 MB)


# ----------------------------------------------------------- warm start
def test_warm_start_on_shifted_times_keeps_the_encoding_and_warns():
    X, y = _data()
    model = DiachronicEmbedder(window=0.2, warm_start=True, **SMALL).fit(X, y)
    origin, encoding = model.time_axis_.origin_, model.time_encoding_
    stats = (encoding.low_, encoding.span_)
    X_shift = X.copy()
    X_shift[:, -1] += 5.0
    with pytest.warns(TimeRangeWarning, match=r"continuing training on 60 of 60 row\(s\)"):
        model.fit(X_shift, y)
    assert model.time_axis_.origin_ == origin and model.time_encoding_ is encoding
    assert (encoding.low_, encoding.span_) == stats
    assert model.time_range_[1] == pytest.approx(X_shift[:, -1].max())


def test_warm_start_with_another_width_fails_before_touching_the_model():
    X, y = _data()
    model = DiachronicEmbedder(window=0.2, warm_start=True, **SMALL).fit(X, y)
    before = {k: v.clone() for k, v in model.net_.module_.state_dict().items()}
    Z = model.transform(X)
    with pytest.raises(ValueError, match="features"):
        model.fit(np.hstack([X[:, :1], X]), y)
    for k, v in model.net_.module_.state_dict().items():
        assert torch.equal(v, before[k])
    np.testing.assert_array_equal(model.transform(X), Z)


# -------------------------------------------------------- range warning
def test_time_range_warning_counts_rows_outside_and_points_at_the_caller():
    X, y = _data()
    model = DiachronicEmbedder(window=0.2, **SMALL, use_time=True).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TimeRangeWarning)
        model.transform(X)  # all inside: no warning
    X_out = X[:10].copy()
    X_out[:3, -1] = 10.0
    with pytest.warns(TimeRangeWarning, match=r"3 of 10 row\(s\).*by up to") as record:
        model.transform(X_out)
    assert record[0].filename == __file__
    with pytest.warns(TimeRangeWarning, match=r"2 of 2 row\(s\)") as record:
        model.transform_text(X[:2, 5:-1], time=-3.0)
    assert record[0].filename == __file__
    # the tolerance: up to 5 % of the training span outside does not warn, farther does
    lo, hi = model.time_range_
    tolerance = 0.05 * (hi - lo)
    X_near = X[:10].copy()
    X_near[:2, -1] = [lo - 0.9 * tolerance, hi + 0.9 * tolerance]
    with warnings.catch_warnings():
        warnings.simplefilter("error", TimeRangeWarning)
        model.transform(X_near)
    X_near[2, -1] = hi + 1.2 * tolerance  # one row beyond: all three outside are counted
    with pytest.warns(TimeRangeWarning, match=r"3 of 10 row\(s\)"):
        model.transform(X_near)


# --------------------------------------------------------------- tags
def test_time_use_tags_replace_the_private_flag():
    assert {type(e).__name__: time_role(e) for e in (
        CCACrossModal(), SAMEmbedder(), TempXNetEmbedder(), DiachronicEmbedder(),
        BinnedProcrustesEmbedder(), SequentialCrossModal())} == {
        "CCACrossModal": "none", "SAMEmbedder": "none", "TempXNetEmbedder": "training",
        "DiachronicEmbedder": "inference", "BinnedProcrustesEmbedder": "inference",
        "SequentialCrossModal": "none"}
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    assert time_role(make_pipeline(FunctionTransformer(), DiachronicEmbedder())) == "inference"


def test_one_module_slices_the_time_column():
    """Only the layout module reads the last column; no private time flag remains."""
    # X's last column sliced (X, A, df, frame ...); other matrices' last columns are not time
    slice_re = re.compile(r"\b(?:X\w*|A|df|frame)(?:\.iloc)?\[\s*:\s*,\s*-1\s*\]")
    owners = set()
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "_time_at_inference" not in text, path
        code = "\n".join(line for line in text.splitlines()
                         if not line.lstrip().startswith(">>>"))  # doctests show the layout
        if slice_re.search(code):
            owners.add(path.relative_to(PACKAGE).as_posix())
    assert owners <= {"_input/_columns.py"}, owners


def test_ctrl_c_during_a_neural_fit_warns_and_leaves_a_usable_partial_model():
    from skorch.callbacks import Callback

    from temporal_xmodal.training import TrainingInterruptedWarning

    class Interrupt(Callback):
        def on_epoch_end(self, net, **kwargs):
            if len(net.history) == 2:
                raise KeyboardInterrupt

    X, y = _data()
    model = DiachronicEmbedder(window=0.2, callbacks=[Interrupt()], validation_fraction=0,
                               **{**SMALL, "max_epochs": 5})
    with pytest.warns(TrainingInterruptedWarning, match=r"after 2 epoch\(s\)") as record:
        model.fit(X, y)
    assert record[0].filename == __file__
    assert model.training_interrupted_ and len(model.net_.history) == 2
    assert np.all(np.isfinite(model.transform(X)))


# ------------------------------------------------- dates outside datetime64[ns]'s range
@pytest.mark.parametrize("values, expected", [
    # pandas at second resolution: cast to [ns] these wrapped round to 2254.97, 2259.97
    (lambda: pd.Series(pd.to_datetime(["1670-01-01", "1675-01-01", "1680-01-01"]).as_unit("s")),
     [1670.0, 1675.0, 1680.0]),
    # numpy days: 1500 and 9999 read 2084.55 and 1816.24 before
    (lambda: np.array(["1500-01-01", "9999-01-01"], dtype="datetime64[D]"), [1500.0, 9999.0]),
    (lambda: np.array([datetime.date(1550, 1, 1), datetime.datetime(1601, 1, 1)], dtype=object),
     [1550.0, 1601.0]),
    (lambda: np.datetime64("1200-01-01", "s"), 1200.0),
    (lambda: np.array(["-5000-01-01"], dtype="datetime64[Y]"), [-5000.0]),
])
def test_historical_dates_map_exactly(values, expected):
    np.testing.assert_allclose(to_time_axis(values()), expected, atol=1e-9)


def test_dates_beyond_the_microsecond_range_are_refused_naming_it():
    with pytest.raises(ValueError, match="dates must lie within years -290307 to 294246"):
        to_time_axis(np.array(["1900-01-01", "400000-01-01"], dtype="datetime64[D]"))


def test_a_1550s_collection_keeps_its_years():
    """A 1550s collection read time_range_ 2134-2143 and a query dated 1500 warned that a
    1990s model was asked about it."""
    from temporal_xmodal import CCACrossModal

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.standard_normal((60, 6)), columns=[f"img_{i}" for i in range(3)]
                     + [f"txt_{i}" for i in range(3)])
    X["date"] = (pd.to_datetime("1550-01-01").as_unit("s")
                 + pd.to_timedelta(rng.integers(0, 3650, 60), unit="D"))
    model = CCACrossModal(n_image_features="auto", embedding_dim=2).fit(X)
    low, high = model.time_range_
    assert 1550 <= low < high < 1560


def test_a_collection_of_1500_1700_reads_as_the_same_collection_in_1900_2100():
    """400 years is a whole Gregorian cycle: the same day offsets from 1500 and from 1900
    give time axes 400 years apart, which every estimator centres away.  The fit, the
    embeddings and a dated search must then be the same (before, 1500-1677 wrapped round)."""
    from temporal_xmodal import DiachronicEmbedder
    from temporal_xmodal.datasets import make_temporal_crossmodal
    from temporal_xmodal.search import CrossModalIndex

    X, y, info = make_temporal_crossmodal(200, return_info=True, random_state=0)
    d = info.n_image_features
    days = np.round(X[:, -1] * 20 * 365.2425).astype("timedelta64[D]")  # 0-10 -> 200 years
    outputs = []
    for start in ("1500-01-01", "1900-01-01"):
        dates = np.datetime64(start, "D") + days
        frame = pd.DataFrame(X[:, :-1], columns=[f"img_{i}" for i in range(d)]
                             + [f"txt_{i}" for i in range(X.shape[1] - 1 - d)])
        frame["date"] = dates
        model = DiachronicEmbedder(n_image_features="auto", hidden_dim=32, embedding_dim=8,
                                   time_dim=8, max_epochs=2, random_state=0,
                                   device="cpu").fit(frame, y)
        index = CrossModalIndex(model, modality="text", time=dates).fit(
            frame.filter(like="txt_"))
        found = index.search(frame.filter(like="img_")[:10], k=5, time=dates[:10],
                             within="3650D", as_frame=False)
        outputs.append((model.time_range_, model.transform(frame), found.indices))
    (range_a, Z_a, top_a), (range_b, Z_b, top_b) = outputs
    assert 1500 <= range_a[0] < range_a[1] <= 1701
    np.testing.assert_allclose(np.subtract(range_b, range_a), 400.0, atol=1e-9)
    np.testing.assert_allclose(Z_a, Z_b, atol=1e-5)
    np.testing.assert_array_equal(top_a, top_b)
