"""Durations, rates and the time axis's checks, as users write them.

``time/_durations.py`` and ``time/_axis.py``: rates with a number in the denominator
(``"1/2Y"`` is 1 per 2 years, not 1 per 12); ``"m"`` (minutes or months?) refused with the
fix; time magnitudes that no calendar in ``time_unit`` reaches warn; a default ``window``
that follows the span (it never spans the data) and a user's window that does, quoted.
"""

import re

import numpy as np
import pytest

from _stacked import recorded, stacked
from _tiny import tiny
from temporal_xmodal import DiachronicEmbedder, TempXNetEmbedder, TimeUnitWarning
from temporal_xmodal._validation import Duration
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.estimators import all_estimators
from temporal_xmodal.time import to_duration, to_rate


# ------------------------------------------------------------- rates
@pytest.mark.parametrize("text, per_year", [
    ("1/1Y", 1.0), ("1/2Y", 0.5), ("3/2Y", 1.5), ("1/ 2 years", 0.5), ("2/Y", 2.0),
    ("0.1/M", 1.2), ("1/6mo", 2.0), ("1/0.5Y", 2.0), ("12/1 year", 12.0),
])
def test_rate_with_a_number_in_the_denominator_is_per_that_many_units(text, per_year):
    assert to_rate(text) == pytest.approx(per_year)


def test_diachronic_decay_1_per_1y_reaches_the_loss():
    X, y = stacked()
    model = tiny(DiachronicEmbedder, decay="1/1Y", window=0.5, max_epochs=1,
                 n_image_features=6).fit(X, y)
    assert model.net_.criterion_.decay == pytest.approx(1.0)


@pytest.mark.parametrize("text", ["1/0Y", "1/-2Y", "1/2", "1/Y/Y", "/Y", "1/2Q"])
def test_malformed_rate_names_the_string(text):
    with pytest.raises(ValueError, match=re.escape(repr(text))):
        to_rate(text)


# ------------------------------------------------- ambiguous units
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
    X, y = stacked()
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
    X, y = stacked()
    X[:, -1] = times
    est = tiny(DiachronicEmbedder, window="1Y", time_unit=unit, n_image_features=6,
               max_epochs=1)
    _, record = recorded(lambda: est.fit(X, y))
    messages = [str(w.message) for w in record if issubclass(w.category, TimeUnitWarning)]
    assert any("implausible" in m and f"time_unit={unit!r}" in m for m in messages), messages


@pytest.mark.parametrize("unit, times", [
    ("years", np.linspace(1880, 1920, 60)), ("years", np.linspace(0, 30, 60)),
    ("years", np.linspace(-500, 300, 60)), ("months", np.linspace(1880 * 12, 1920 * 12, 60)),
    ("days", np.linspace(-40000, 20000, 60)), ("seconds", np.linspace(1.6e9, 1.7e9, 60)),
])
def test_plausible_times_do_not_warn(unit, times):
    X, y = stacked()
    X[:, -1] = times
    est = tiny(DiachronicEmbedder, window=0.5, time_unit=unit, n_image_features=6,
               max_epochs=1)
    _, record = recorded(lambda: est.fit(X, y))
    assert not [w for w in record if "implausible" in str(w.message)]


# ------------------------------------------- defaults that blame the user
def test_default_window_follows_the_span_so_it_never_spans_the_data():
    """The default window is 5 % of the training span (it was a fixed 4 years, which spanned
    two years of data and switched L_intra off with a warning)."""
    X, y = stacked(span=2.0)
    est = tiny(DiachronicEmbedder, n_image_features=6, max_epochs=1)
    est.set_params(window=DiachronicEmbedder().window)  # the default, as a user gets it
    _, record = recorded(lambda: est.fit(X, y))
    assert not [w for w in record if "training span" in str(w.message)]
    assert est.net_.criterion_.window == pytest.approx(0.05 * np.ptp(X[:, -1]))


def test_user_window_spanning_the_data_names_the_users_value():
    X, y = stacked(span=2.0)
    est = tiny(DiachronicEmbedder, window="3Y", decay="1/Y", n_image_features=6, max_epochs=1)
    _, record = recorded(lambda: est.fit(X, y))
    (message,) = [str(w.message) for w in record if "training span" in str(w.message)]
    assert "window='3Y' (3 years)" in message and "default" not in message
    assert "static control" not in message


@pytest.mark.parametrize("cls, params", [
    (DiachronicEmbedder, {"window": "5%", "decay": "5%"}),
    (TempXNetEmbedder, {"bandwidth": "2%"}),
])
def test_each_duration_is_read_once_per_fit_into_its_fitted_attribute(cls, params,
                                                                      monkeypatch):
    """One reader of the duration parameters: each is parsed once per fit (not once per
    check and once more by the loss) and kept as ``<name>_``, the value the loss uses."""
    import sys

    calls = []
    depth = [0]

    def counting(function):
        def wrapper(value, *args, name="duration", **kwargs):
            if depth[0] == 0:
                calls.append(name)
            depth[0] += 1
            try:
                return function(value, *args, name=name, **kwargs)
            finally:
                depth[0] -= 1
        return wrapper

    for module in [m for n, m in list(sys.modules.items()) if n.startswith("temporal_xmodal")]:
        for function in ("to_duration", "to_rate"):
            if callable(getattr(module, function, None)):
                monkeypatch.setattr(module, function, counting(getattr(module, function)))
    X, y = make_temporal_crossmodal(120, random_state=0)  # times in [0, 10] years
    model = tiny(cls, n_image_features=64, max_epochs=1, **params).fit(X, y)
    assert sorted(calls) == sorted(params)
    span = np.ptp(X[:, -1])
    if cls is DiachronicEmbedder:
        assert model.window_ == pytest.approx(0.05 * span) == model.net_.criterion_.window
        assert model.decay_ == pytest.approx(np.log(2) / (0.05 * span))
    else:  # a share works for TempXNet's bandwidth as for any duration
        assert model.bandwidth_ == pytest.approx(0.02 * span)
        assert model.correlation_.bandwidth == model.bandwidth_


@pytest.mark.parametrize("entry", all_estimators(), ids=lambda e: e.name)
def test_each_estimator_lists_its_duration_parameters(entry):
    """``_durations`` names every parameter constrained by a ``Duration``, and only those:
    the base class reads that list, not the constraints."""
    cls = entry.estimator
    constrained = [name for name, rules in cls._parameter_constraints.items()
                   if any(isinstance(rule, Duration) for rule in rules)]
    assert list(cls._durations) == constrained


def test_genuine_dates_are_never_implausible():
    # issue 57, 9: a datetime64 column spanning 2,500 years warned "implausible for
    # time_unit='years'" and told the user to pass the datetime64 column they had passed
    import pandas as pd

    X, y = stacked()
    frame = pd.DataFrame(X[:, :-1], columns=[f"img_{j}" for j in range(6)]
                         + [f"txt_{j}" for j in range(X.shape[1] - 7)])
    days = np.linspace(0, 2500 * 365, len(frame)).astype("timedelta64[D]")
    frame["date"] = (np.datetime64("-0500-01-01") + days).astype("datetime64[s]")
    est = tiny(DiachronicEmbedder, window="1Y", n_image_features=6, max_epochs=1)
    _, record = recorded(lambda: est.fit(frame, y))
    assert not [w for w in record if issubclass(w.category, TimeUnitWarning)]
    assert np.ptp(est.time_axis_.range_) > 2000  # the span the warning objected to
