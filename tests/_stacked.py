"""Small stacked X = [image | text | time] and a warning recorder, for the message tests."""

import warnings

import numpy as np

from temporal_xmodal import stack_modalities


def stacked(n=60, n_img=6, n_txt=5, t0=2000.0, span=3.0, seed=0):
    """``(X, y)``: three categories, features shifted by the label, sorted times over ``span``
    years from ``t0``."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = stack_modalities(rng.standard_normal((n, n_img)) + y[:, None],
                         rng.standard_normal((n, n_txt)) + y[:, None],
                         t0 + np.sort(rng.uniform(0, span, n)))
    return X, y


def recorded(fn):
    """``(fn(), the warnings it raised)`` with every warning shown."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = fn()
    return out, record
