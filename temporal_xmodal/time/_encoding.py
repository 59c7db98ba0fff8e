"""Network input features of the time, fitted once per estimator."""

import warnings
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import StrOptions, validate_parameter_constraints

from .._constraints import Interval
from ._axis import TimeUnitWarning
from ._bins import TimeBins, TimeBinWarning
from .._warnings import warn


class TimeEncoding:
    """Network input features of the time, fitted on the centred training times.

    Read more in docs/time.md.

    Parameters
    ----------
    encoding : {"minmax", "zscore", "raw", "onehot", "sinusoidal"}, default="minmax"
        ``minmax``: (t − t_min) / (t_max − t_min), in [0, 1] on the training range; ``zscore``:
        (t − mean) / std; ``raw``: the centred time in axis units (warned beyond 10 in magnitude,
        where tanh saturates); ``onehot``: one-hot over ``n_bins`` equal-width :class:`TimeBins`
        (an empty bin joins a neighbour, its unit unused); ``sinusoidal``: the minmax scalar plus
        its sin / cos at ``n_bins`` frequencies (periods span / 1 … span / n_bins).
    n_bins : int, default=12
        Bins (``onehot``) or frequencies (``sinusoidal``).

    Attributes
    ----------
    n_features_out_ : int
        Number of features per time.
    """

    ENCODINGS = ("minmax", "zscore", "raw", "onehot", "sinusoidal")
    _parameter_constraints = {
        "encoding": [StrOptions(set(ENCODINGS))],
        "n_bins": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, encoding="minmax", n_bins=12):
        self.encoding = encoding
        self.n_bins = n_bins

    def fit(self, centred):
        """Learn the statistics from centred training times.

        Parameters
        ----------
        centred : ndarray of float64

        Returns
        -------
        self : TimeEncoding
        """
        validate_parameter_constraints(
            self._parameter_constraints, {"encoding": self.encoding, "n_bins": self.n_bins},
            caller_name=type(self).__name__)
        self.low_, high = float(np.min(centred)), float(np.max(centred))
        self.span_ = high - self.low_ if high > self.low_ else 1.0
        self.mean_ = float(np.mean(centred))
        std = float(np.std(centred))
        self.std_ = std if std > 0 else 1.0
        if self.encoding == "onehot":
            with warnings.catch_warnings():
                # an empty bin joins a neighbour: no training time changes bin, and a time
                # projected there gets a trained input instead of a unit no item ever set
                warnings.simplefilter("ignore", TimeBinWarning)
                self.bins_ = TimeBins(bins=self.n_bins).fit(centred)
        peak = max(abs(self.low_), abs(high))
        if self.encoding == "raw" and peak > 10:
            warn(
                f"time_encoding='raw' feeds centred times up to {peak:.3g} "
                "into the time layer's tanh, which saturates; use 'minmax' (or express time in a "
                "coarser unit).", TimeUnitWarning)
        self.n_features_out_ = {"onehot": self.n_bins, "sinusoidal": 1 + 2 * self.n_bins}.get(
            self.encoding, 1)
        return self

    def transform(self, centred):
        """Encode centred times.

        Parameters
        ----------
        centred : ndarray of float64 of shape (n,)

        Returns
        -------
        features : ndarray of float32 of shape (n, n_features_out_)
        """
        t = np.asarray(centred, dtype=np.float64).reshape(-1, 1)
        if self.encoding == "zscore":
            out = (t - self.mean_) / self.std_
        elif self.encoding == "raw":
            out = t
        elif self.encoding == "onehot":  # n × n_bins, never an n_bins × n_bins identity
            index = self.bins_.transform(t.ravel())
            out = np.zeros((len(index), self.n_bins), dtype=np.float32)
            out[np.arange(len(index)), index] = 1.0
            return out
        else:
            out = (t - self.low_) / self.span_
            if self.encoding == "sinusoidal":
                angle = 2 * np.pi * out * np.arange(1, self.n_bins + 1)
                out = np.hstack([out, np.sin(angle), np.cos(angle)])
        return out.astype(np.float32)

    def describe_extrapolation(self, centred, fitted):
        """Say what the encoding makes of times outside the range it was fitted for.

        ``centred``: those times; ``fitted``: the range's ``(min, max)``, centred. Returns one
        sentence without a full stop.
        """
        t = np.asarray(centred, dtype=np.float64).ravel()
        if self.encoding == "onehot":
            return ("the 'onehot' encoding puts them in its first or last bin, with the "
                    "times at the edges of that range (the model cannot tell them apart)")
        lo, hi = (float(v) for v in self.transform(np.asarray(fitted))[:, 0])
        out = self.transform(t)[:, 0]
        values = (f"{out.min():.3g}" if out.min() == out.max()
                  else f"{out.min():.3g} to {out.max():.3g}")
        wrap = " (its sin / cos features wrap around)" if self.encoding == "sinusoidal" else ""
        return (f"the {self.encoding!r} encoding maps them to {values}, against "
                f"[{lo:.3g}, {hi:.3g}] over that range{wrap}")
