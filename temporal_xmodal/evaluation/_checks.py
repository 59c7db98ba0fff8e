"""Argument checks and small reductions shared by the protocols (validated once, at entry)."""

import numbers

import numpy as np

DIRECTIONS = ("i2t", "t2i")


def check_int(value, name, *, allow_none=False, minimum=1):
    """``value`` as an int >= ``minimum`` (or None when allowed); ValueError naming ``name``."""
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) \
            or value < minimum:
        kind = f"an int >= {minimum}" + (" or None" if allow_none else "")
        raise ValueError(f"{name} must be {kind}; got {value!r}.")
    return int(value)


def check_choice(value, name, choices):
    """``value`` if it is one of ``choices``; ValueError naming ``name`` otherwise."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}; got {value!r}.")
    return value


def check_query_index(query_index, n):
    """Row positions of the queries and whether a scalar was given."""
    idx = np.asarray(query_index)
    scalar = idx.ndim == 0
    idx = np.atleast_1d(idx)
    if idx.ndim != 1 or idx.size == 0 or (idx.dtype.kind not in "iu"):
        raise ValueError(
            "query_index must be an int or a non-empty 1-D array of ints (row positions "
            f"of X); got {query_index!r}."
        )
    if idx.min() < 0 or idx.max() >= n:
        raise ValueError(
            f"query_index out of range: X has {n} rows, so indices must lie in [0, {n - 1}]; "
            f"got {idx.min() if idx.min() < 0 else idx.max()}."
        )
    return idx.astype(np.intp), scalar


def nanmean(values):
    """Mean of the non-NaN values (NaN when there are none)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else float("nan")


def scores_dict(i2t, t2i):
    """``{"i2t", "t2i", "mean"}`` as plain floats."""
    return {"i2t": float(i2t), "t2i": float(t2i), "mean": float((i2t + t2i) / 2)}
