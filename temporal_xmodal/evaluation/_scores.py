"""Small reductions shared by the protocols: the directions and the score dict."""

import numpy as np

#: Image → text and text → image.
DIRECTIONS = ("i2t", "t2i")


def nanmean(values):
    """Mean of the non-NaN values (NaN when there are none)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else float("nan")


def scores_dict(i2t, t2i):
    """``{"i2t", "t2i", "mean"}`` as plain floats."""
    return {"i2t": float(i2t), "t2i": float(t2i), "mean": float((i2t + t2i) / 2)}
