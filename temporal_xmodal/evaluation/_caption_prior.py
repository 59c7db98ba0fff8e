"""The caption → date prior: a kernel density over the dates of a caption's nearest
training captions (the date signal that undated captions carry in their words)."""

import datetime
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..base import l2_normalize
from ..time import TIME_UNITS, to_duration, to_time_axis

__all__ = ["CaptionDatePrior"]


class CaptionDatePrior(BaseEstimator):
    r"""Date density of a caption, estimated from the dates of similar training captions.

    .. math::

        p(t \mid c) = (1 - f)\,\sum_{j \in N_k(c)} w_{cj}\, \mathcal{N}(t; t_j, h^2)
                      + f \,\frac{1}{n}\sum_{j=1}^{n} \mathcal{N}(t; t_j, h^2)

    with :math:`N_k(c)` the caption's ``n_neighbors`` most similar training captions (cosine)
    and :math:`w_{cj}` their similarities clipped at 0 and normalised to sum 1.  A caption
    sharing nothing with the training captions (every similarity <= 0) gets the global
    density (the second sum) alone.  Neighbours and densities are computed in blocks of
    at most :attr:`BLOCK` elements.

    Parameters
    ----------
    n_neighbors : int, default=25
        Training captions per candidate caption.
    bandwidth : float or duration, default=2.0
        Gaussian kernel width h on the time axis (years by default), or a
        duration such as ``"2Y"``.
    floor : float, default=0.05
        Weight of the global date density mixed into every caption's density
        (no caption is impossible at any date).
    time_unit : str, default="years"

    Attributes
    ----------
    reference_text_ : ndarray of shape (n_reference, n_text_features)
        L2-normalised training captions.
    reference_time_ : ndarray of shape (n_reference,)
    """

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "bandwidth": [Interval(Real, 0, None, closed="neither"), str, datetime.timedelta,
                      np.timedelta64],
        "floor": [Interval(Real, 0, 1, closed="both")],
        "time_unit": [StrOptions(set(TIME_UNITS))],
    }

    #: Elements of one block of caption x reference or date x reference work (32 MiB of
    #: float64): memory stays bounded for any number of captions and dates.
    BLOCK = 2 ** 22

    def __init__(self, n_neighbors=25, bandwidth=2.0, floor=0.05, time_unit="years"):
        self.n_neighbors = n_neighbors
        self.bandwidth = bandwidth
        self.floor = floor
        self.time_unit = time_unit

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, text, time):
        """Store the training captions and their dates.

        Parameters
        ----------
        text : array-like of shape (n_reference, n_text_features)
        time : array-like of shape (n_reference,)
            Numbers on the time axis or dates.

        Returns
        -------
        self : CaptionDatePrior
        """
        R = np.asarray(text, dtype=np.float64)
        if to_duration(self.bandwidth, self.time_unit, name="bandwidth") <= 0:
            raise ValueError(f"bandwidth must be a positive duration; got {self.bandwidth!r}.")
        self.reference_text_ = l2_normalize(R)
        self.reference_time_ = to_time_axis(time, self.time_unit)
        if not 1 <= self.n_neighbors <= len(R):
            raise ValueError(f"n_neighbors must be in 1..{len(R)}; got {self.n_neighbors!r}.")
        return self

    def log_density(self, text, query_time):
        """:math:`\\log p(t_q \\mid c)` for every query date and candidate caption.

        Parameters
        ----------
        text : array-like of shape (n_candidates, n_text_features)
        query_time : array-like of shape (n_queries,)

        Returns
        -------
        log_p : ndarray of shape (n_queries, n_candidates)
        """
        check_is_fitted(self)
        h = to_duration(self.bandwidth, self.time_unit, name="bandwidth")
        C = l2_normalize(np.asarray(text, dtype=np.float64))
        t_q = to_time_axis(query_time, self.time_unit)
        nearest, weight, seen = self._neighbours(C)
        t_ref = self.reference_time_
        t_near = t_ref[nearest]
        norm = 1.0 / (h * np.sqrt(2 * np.pi))
        log_p = np.empty((len(t_q), len(C)))
        rows = max(1, self.BLOCK // max(len(t_ref), t_near.size))
        for start in range(0, len(t_q), rows):  # bounded memory: a block of query dates
            t = t_q[start:start + rows]
            overall = norm * np.exp(-0.5 * ((t[:, None] - t_ref[None]) / h) ** 2).mean(1)
            own = norm * np.einsum("qck,ck->qc",
                                   np.exp(-0.5 * ((t[:, None, None] - t_near[None]) / h) ** 2),
                                   weight)
            own = np.where(seen[None], own, overall[:, None])
            mixed = (1 - self.floor) * own + self.floor * overall[:, None]
            log_p[start:start + rows] = np.log(np.maximum(mixed, 1e-300))
        return log_p

    def _neighbours(self, C):
        """The ``n_neighbors`` most similar training captions of each row of C, and weights.

        Weights are the clipped cosine similarities normalised to sum 1; ``seen`` is False
        for a caption whose neighbours all have similarity <= 0 (it shares no word with
        the training captions).  The similarities are computed a block of captions at a
        time.
        """
        R, k = self.reference_text_, self.n_neighbors
        nearest = np.empty((len(C), k), dtype=np.intp)
        weight = np.empty((len(C), k))
        rows = max(1, self.BLOCK // len(R))
        for start in range(0, len(C), rows):
            sim = C[start:start + rows] @ R.T
            idx = np.argpartition(-sim, k - 1, axis=1)[:, :k]
            nearest[start:start + rows] = idx
            weight[start:start + rows] = np.clip(np.take_along_axis(sim, idx, axis=1), 0.0, None)
        total = weight.sum(axis=1)
        seen = total > 0
        weight /= np.where(seen, total, 1.0)[:, None]
        return nearest, weight, seen
