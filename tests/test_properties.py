"""Property-based robustness: whatever X and y, an estimator fits to finite embeddings or
raises a ValueError/TypeError in the library's words — never another exception, never NaN.

Hypothesis draws shapes, dtypes and values (NaN, ±inf, huge, tiny, constant, duplicate rows,
bad times) and labels, for all six estimators at tiny sizes; the example budget keeps the whole
module within a few seconds per estimator.
"""

import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from _tiny import tiny  # noqa: E402
from temporal_xmodal import (  # noqa: E402
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    SequentialCrossModal,
    TempXNetEmbedder,
)


#: Smaller than the tiny settings: the drawn data sets have 2 to 14 rows and 1 to 3 columns
#: per modality.
NET = dict(hidden_dim=4, embedding_dim=2, max_epochs=1, batch_size=4)
ESTIMATORS = {
    "CCA": lambda: tiny(CCACrossModal, embedding_dim=1),
    "SAM": lambda: tiny(SAMEmbedder, **NET),
    "TempXNet": lambda: tiny(TempXNetEmbedder, **NET),
    "Diachronic": lambda: tiny(DiachronicEmbedder, time_dim=2, **NET),
    "Binned": lambda: tiny(BinnedProcrustesEmbedder,
                           base_estimator=tiny(CCACrossModal, embedding_dim=1), min_bin_size=3),
    "SCML": lambda: tiny(SequentialCrossModal, common_dim=2, n_memory=3, n_meta_train=3, **NET),
}
#: Words that a clear message uses to name the problem (one of them must appear).
NAMED = ("NaN", "infinity", "infinite", "float32", "column", "class", "label", "sample",
         "feature", "time", "row", "y ", "y:", "embedding_dim", "bin", "dimension", "constant",
         "variance", "singular", "modality", "rank")
SPECIALS = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf, "huge": 1e39, "tiny": 1e-300}


@st.composite
def datasets(draw):
    n = draw(st.integers(2, 14))
    n_img, n_txt = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_img + n_txt + 1))
    X[:, -1] = rng.uniform(0, 5, n)
    kind = draw(st.sampled_from(["clean", "special", "constant", "duplicate", "time", "scale"]))
    if kind == "special":
        value = SPECIALS[draw(st.sampled_from(sorted(SPECIALS)))]
        X[draw(st.integers(0, n - 1)), draw(st.integers(0, X.shape[1] - 1))] = value
    elif kind == "constant":
        X[:, :-1] = draw(st.sampled_from([0.0, 1.0, -3.0]))
    elif kind == "duplicate":
        X[:] = X[0]
    elif kind == "time":
        X[:, -1] = draw(st.sampled_from([0.0, 1.7e9, -1e6, np.nan]))
    elif kind == "scale":
        X[:, :-1] *= draw(st.sampled_from([1e-30, 1e30, 1e-200]))
    dtype = draw(st.sampled_from([np.float64, np.float32, "int"]))
    if dtype == "int":
        X = np.clip(np.nan_to_num(X, nan=0, posinf=0, neginf=0), -1e6, 1e6).round().astype(
            np.int64)
    elif dtype == np.float32:
        with np.errstate(over="ignore", under="ignore"):
            X = X.astype(np.float32)
    n_classes = draw(st.integers(1, 3))
    y = draw(st.sampled_from(["int", "str"]))
    labels = np.arange(n) % n_classes
    labels = labels if y == "int" else np.array(["a", "b", "c"])[labels]
    return X, labels, n_img


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets())
def test_fit_gives_finite_embeddings_or_a_named_error(name, data):
    X, y, n_img = data
    model = ESTIMATORS[name]().set_params(n_image_features=n_img)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model.fit(X, y)
            Z = np.asarray(model.transform(X))
        except (ValueError, TypeError) as error:
            message = str(error)
            assert message and any(word in message for word in NAMED), message
            assert "HistGradientBoosting" not in message and "array([" not in message, message
            return
    assert Z.shape[0] == X.shape[0] and np.all(np.isfinite(Z)), (name, Z)


# ------------------------------------------------- duration and rate strings
#: Seconds per unit, written out independently of temporal_xmodal.time (a year is 365.25
#: days, a month a twelfth of it).
_SECONDS = {"years": 31_557_600.0, "months": 2_629_800.0, "weeks": 604_800.0,
            "days": 86_400.0, "hours": 3_600.0, "minutes": 60.0, "seconds": 1.0}
#: How people spell each unit (case varies; "M" is months, and a lone "m" is refused).
_SPELLINGS = {
    "years": ["Y", "y", "yr", "yrs", "year", "years", "Year", "YEARS", "a"],
    "months": ["M", "mo", "Mo", "mon", "month", "months", "Months"],
    "weeks": ["W", "w", "wk", "week", "weeks"],
    "days": ["D", "d", "day", "days", "Days"],
    "hours": ["h", "H", "hr", "hrs", "hour", "hours"],
    "minutes": ["min", "mins", "MIN", "T", "minute", "minutes"],
    "seconds": ["s", "S", "sec", "secs", "second", "seconds"],
}
_SPACE = st.sampled_from(["", " ", "  ", "\t"])


@st.composite
def numbers(draw, positive=False):
    """``(text, value)``: a number as a person writes it and the value they read."""
    mantissa = draw(st.integers(1 if positive else 0, 10 ** 6))
    places = draw(st.integers(0, 3))
    value = mantissa / 10 ** places
    style = draw(st.sampled_from(["fixed", "exponent", "plain"]))
    if style == "exponent":
        text = f"{mantissa}e-{places}" if places else f"{mantissa}E0"
    elif style == "fixed" and places:
        text = f"{value:.{places}f}"
        if text.startswith("0."):
            text = draw(st.sampled_from([text, text[1:]]))  # "0.5" or ".5"
    else:
        text = f"{mantissa}" if not places else f"{value!r}"
    return draw(st.sampled_from(["", "+"])) + text, value


@st.composite
def durations(draw):
    """``(text, seconds)`` of a well-formed duration string."""
    text, value = draw(numbers())
    unit = draw(st.sampled_from(sorted(_SPELLINGS)))
    spelling = draw(st.sampled_from(_SPELLINGS[unit]))
    string = draw(_SPACE) + text + draw(_SPACE) + spelling + draw(_SPACE)
    return string, value * _SECONDS[unit]


@st.composite
def rates(draw):
    """``(text, per second)`` of a well-formed rate string ``<rate>/[<count>]<unit>``."""
    text, value = draw(numbers())
    unit = draw(st.sampled_from(sorted(_SPELLINGS)))
    spelling = draw(st.sampled_from(_SPELLINGS[unit]))
    count_text, count = draw(st.one_of(st.just(("", 1.0)), numbers(positive=True)))
    string = (text + draw(_SPACE) + "/" + draw(_SPACE) + count_text + draw(_SPACE) + spelling
              + draw(_SPACE))
    return string, value / (count * _SECONDS[unit])


_AXES = st.sampled_from(sorted(_SECONDS))
_SWEEP = settings(max_examples=300, deadline=None, derandomize=True)


@_SWEEP
@given(duration=durations(), axis=_AXES)
def test_every_well_formed_duration_parses_to_what_a_person_reads(duration, axis):
    from temporal_xmodal.time import to_duration

    text, seconds = duration
    assert to_duration(text, axis) == pytest.approx(seconds / _SECONDS[axis], rel=1e-12)


@_SWEEP
@given(rate=rates(), axis=_AXES)
def test_every_well_formed_rate_parses_to_what_a_person_reads(rate, axis):
    from temporal_xmodal.time import to_rate

    text, per_second = rate
    assert to_rate(text, axis) == pytest.approx(per_second * _SECONDS[axis], rel=1e-12)


@st.composite
def malformed_durations(draw):
    """Strings that are not durations: each kind a person might type."""
    number = draw(numbers())[0]
    unit = draw(st.sampled_from([s for spellings in _SPELLINGS.values() for s in spellings]))
    kind = draw(st.sampled_from(["no unit", "no number", "unknown unit", "lone m", "two units",
                                 "unit first", "negative", "non-finite", "empty", "comma"]))
    return {
        "no unit": number,
        "no number": unit,
        "unknown unit": number + draw(st.sampled_from(["q", "fortnight", "ms", "ns", "x",
                                                       "yy", "dayz", "Q"])),
        "lone m": number + draw(_SPACE) + "m",
        "two units": number + unit + draw(_SPACE) + draw(numbers())[0] + unit,
        "unit first": unit + draw(_SPACE) + number,
        "negative": "-" + draw(numbers(positive=True))[0] + unit,
        "non-finite": draw(st.sampled_from(["inf", "nan", "1e400", "-inf"])) + unit,
        "empty": draw(_SPACE),
        "comma": "1,5" + unit,
    }[kind]


@st.composite
def malformed_rates(draw):
    """Rate strings (with a '/') that are not rates."""
    number = draw(numbers())[0]
    unit = draw(st.sampled_from([s for spellings in _SPELLINGS.values() for s in spellings]))
    return draw(st.sampled_from([
        number + "/", "/" + unit, number + "/" + number, number + "//" + unit,
        number + "/" + unit + "/" + unit, "x/" + unit, number + "/-2" + unit,
        "-" + draw(numbers(positive=True))[0] + "/" + unit, number + "/m",
        number + "/0" + unit, number + "/2q", number + "/" + unit + number,
    ]))


@_SWEEP
@given(text=malformed_durations(), axis=_AXES)
def test_every_malformed_duration_raises_naming_the_string(text, axis):
    from temporal_xmodal.time import to_duration

    with pytest.raises(ValueError) as error:
        to_duration(text, axis, name="window")
    assert f"window={text!r}" in str(error.value)


@_SWEEP
@given(text=malformed_rates(), axis=_AXES)
def test_every_malformed_rate_raises_naming_the_string(text, axis):
    from temporal_xmodal.time import to_rate

    with pytest.raises(ValueError) as error:
        to_rate(text, axis)
    assert f"decay={text!r}" in str(error.value)


@_SWEEP
@given(text=st.text(max_size=12), axis=_AXES)
def test_any_string_is_a_duration_and_rate_or_an_error_naming_it(text, axis):
    """Whatever the string: a finite non-negative value, or a ValueError that quotes it."""
    from temporal_xmodal.time import to_duration, to_rate

    for parse, name in ((to_duration, "window"), (to_rate, "decay")):
        try:
            value = parse(text, axis, name=name)
        except ValueError as error:
            assert repr(text) in str(error), str(error)
        else:
            assert np.isfinite(value) and value >= 0, (text, value)
