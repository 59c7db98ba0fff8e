"""Parameter checks of :func:`~temporal_xmodal.datasets.make_temporal_crossmodal`.

Validation happens once, here, at the public boundary; the generative steps
in ``_synthetic`` trust the cleaned values.
"""

import numbers

import numpy as np

#: Temporal profiles of a category, in the order ``profiles="mixed"`` cycles them.
PROFILES = ("spike", "recurrent", "steady")

def validate_params(params):
    """Check every parameter and return the cleaned values."""
    out = dict(params)
    out["n_categories"] = _check_int(params["n_categories"], "n_categories", 2)
    out["n_samples"] = _check_int(params["n_samples"], "n_samples", 1)
    if out["n_samples"] < out["n_categories"]:
        raise ValueError(
            f"n_samples must be >= n_categories so that every category has an "
            f"item; got n_samples={out['n_samples']} < "
            f"n_categories={out['n_categories']}."
        )
    for name in ("n_image_features", "n_text_features", "n_latent"):
        out[name] = _check_int(params[name], name, 1)
    out["n_recurrences"] = _check_int(params["n_recurrences"], "n_recurrences", 2)
    out["n_eras"] = _check_int(params["n_eras"], "n_eras", 1)
    out["time_range"] = _check_time_range(params["time_range"])
    out["profiles"] = _check_profiles(params["profiles"], out["n_categories"])
    for name in ("drift", "event_strength", "noise", "latent_noise", "topic_drift"):
        out[name] = _check_real(params[name], name, low=0.0)
    out["label_noise"] = _check_real(
        params["label_noise"], "label_noise", low=0.0, high=1.0, high_open=True
    )
    out["burst_width"] = _check_real(params["burst_width"], "burst_width", high=0.5)
    if out["burst_width"] <= 0:
        raise ValueError(
            f"burst_width must be in (0, 0.5]; got {params['burst_width']!r}."
        )
    out["second_label_rate"] = _check_real(
        params["second_label_rate"], "second_label_rate", low=0.0, high=1.0
    )
    out["meaning_shift"] = _check_real(
        params["meaning_shift"], "meaning_shift", low=0.0, high=1.0
    )
    for name in ("multilabel", "return_info"):
        if not isinstance(params[name], (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool; got {params[name]!r}.")
    return out


def _check_int(value, name, minimum):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be an int; got {value!r} ({type(value).__name__})."
        )
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {value}.")
    return int(value)


def _check_real(value, name, low=None, high=None, high_open=False):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a real number; got {value!r} ({type(value).__name__})."
        )
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value}.")
    too_high = high is not None and (value >= high if high_open else value > high)
    if (low is not None and value < low) or too_high:
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        bracket = ")" if high_open or high is None else "]"
        raise ValueError(f"{name} must be in [{lo}, {hi}{bracket}; got {value}.")
    return value


def _check_time_range(time_range):
    try:
        t0, t1 = time_range
    except (TypeError, ValueError):
        raise TypeError(
            f"time_range must be a pair (t0, t1) of numbers; got {time_range!r}."
        ) from None
    t0 = _check_real(t0, "time_range[0]")
    t1 = _check_real(t1, "time_range[1]")
    if not t0 < t1:
        raise ValueError(
            f"time_range must be increasing (t0 < t1); got ({t0}, {t1})."
        )
    return t0, t1


def _check_profiles(profiles, n_categories):
    if isinstance(profiles, str):
        if profiles == "mixed":
            return [PROFILES[c % len(PROFILES)] for c in range(n_categories)]
        names = [profiles] * n_categories
    else:
        try:
            names = list(profiles)
        except TypeError:
            raise TypeError(
                f"profiles must be 'mixed', a profile name or a list of profile "
                f"names; got {profiles!r}."
            ) from None
        if len(names) != n_categories:
            raise ValueError(
                f"profiles must have one entry per category ({n_categories}); "
                f"got {len(names)}."
            )
    bad = [name for name in names if not isinstance(name, str) or name not in PROFILES]
    if bad:
        raise ValueError(
            f"Unknown profile name(s) {bad!r}; valid names are {list(PROFILES)} "
            f"(or 'mixed' for all categories)."
        )
    return names
