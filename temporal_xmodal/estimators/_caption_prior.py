"""The caption → date prior: a kernel density over the dates of a caption's nearest training
captions (:class:`CaptionDatePrior`), and the date-only ranking built on it
(:func:`date_prior_scores`)."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import StrOptions, validate_params
from sklearn.utils.validation import check_is_fitted

from .._docs import fill_doc
from .._input import check_features
from .._constraints import Interval
from .._validation import PositiveDuration
from ..base import l2_normalize
from ..time import TIME_UNITS, to_duration, to_time_axis

__all__ = ["CaptionDatePrior", "date_prior_scores"]


@fill_doc
class CaptionDatePrior(BaseEstimator):
    r"""Date density of a caption, estimated from the dates of similar training captions.

    .. math::

        p(t \mid c) = (1 - f)\,\sum_{j \in N_k(c)} w_{cj}\, \mathcal{N}(t; t_j, h^2)
                      + f \,\frac{1}{n}\sum_{j=1}^{n} \mathcal{N}(t; t_j, h^2)

    with :math:`N_k(c)` the caption's ``n_neighbors`` most similar training captions (cosine)
    and :math:`w_{cj}` their similarities clipped at 0 and normalised to sum 1; a caption
    sharing nothing with the training captions gets the global density alone.

    Read more in the user guide: docs/evaluation.md.

    Parameters
    ----------
    n_neighbors : int, default=25
        Training captions per candidate caption.
    bandwidth : float or duration, default=2.0
        Gaussian kernel width h: a number in ``time_unit``, or a duration such as ``"2Y"``.
    floor : float, default=0.05
        Weight f of the global date density mixed into every caption's density.
    {time_unit}

    Attributes
    ----------
    reference_text_ : ndarray of shape (n_reference, n_text_features)
        L2-normalised training captions.
    reference_time_ : ndarray of shape (n_reference,)
        Their dates on the time axis.

    Examples
    --------
    >>> import numpy as np
    >>> from temporal_xmodal.estimators import CaptionDatePrior
    >>> text = np.array([[1.0, 0.0]] * 3 + [[0.0, 1.0]] * 3)
    >>> dates = np.array([1850.0] * 3 + [1900.0] * 3)
    >>> prior = CaptionDatePrior(n_neighbors=3, bandwidth=5.0).fit(text, dates)
    >>> log_p = prior.log_density([[1.0, 0.0], [0.0, 1.0]], [1850.0])
    >>> bool(log_p[0, 0] > log_p[0, 1])
    True
    """

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "bandwidth": [Interval(Real, 0, None, closed="neither"), PositiveDuration()],
        "floor": [Interval(Real, 0, 1, closed="both")],
        "time_unit": [StrOptions(set(TIME_UNITS))],
    }

    #: Elements of one block of caption × reference or date × reference work.
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
        R = _dense_text(text, "text")
        times = _one_per_row(to_time_axis(time, self.time_unit), len(R), "time", "caption")
        self.reference_text_ = l2_normalize(R)
        self.reference_time_ = times
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
        C = _dense_text(text, "text")
        if C.shape[1] != self.reference_text_.shape[1]:
            raise ValueError(f"text has {C.shape[1]} features per caption, but the prior was "
                             f"fitted on {self.reference_text_.shape[1]}.")
        C = l2_normalize(C)
        t_q = to_time_axis(query_time, self.time_unit)
        if t_q.ndim != 1:  # (n, 1) would broadcast against the references
            t_q = _one_per_row(t_q, t_q.size, "query_time", "query")
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
        """The ``n_neighbors`` most similar training captions of each row of C, their normalised
        weights, and ``seen`` (False where every similarity is <= 0), a block of captions at a
        time."""
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


@validate_params(
    {"reference_text": ["array-like"], "reference_time": ["array-like"],
     "candidate_text": ["array-like"], "query_time": ["array-like"],
     "n_neighbors": [Interval(Integral, 1, None, closed="left")],
     "bandwidth": [Interval(Real, 0, None, closed="neither")]},
    prefer_skip_nested_validation=True)
def date_prior_scores(reference_text, reference_time, candidate_text, query_time, *,
                      n_neighbors=25, bandwidth=2.0):
    r"""Date-only ranking: how likely the query's date is for each caption, from its words.

    Each candidate caption's date density is a kernel density over the dates of its
    ``n_neighbors`` most similar reference captions, weighted by cosine similarity:
    :class:`CaptionDatePrior` with ``floor=0``, scaled by :math:`h\sqrt{2\pi}`, the Bayes
    ranking of the candidates given only the query's date.

    Read more in the user guide: docs/evaluation.md.

    Parameters
    ----------
    reference_text : array-like of shape (n_reference, n_text_features)
        L2-normalised text features (e.g. TF-IDF) of the training captions.
    reference_time : array-like of shape (n_reference,)
        Their dates: numbers in years, or dates.
    candidate_text : array-like of shape (n_candidates, n_text_features)
        L2-normalised text features of the candidate captions.
    query_time : array-like of shape (n_queries,)
        The query pictures' dates: numbers in years, or dates.
    n_neighbors : int, default=25
        Reference captions per candidate.
    bandwidth : float, default=2.0
        Gaussian kernel width ``h``, in years.

    Returns
    -------
    scores : ndarray of shape (n_queries, n_candidates)
    """
    R = np.asarray(reference_text, dtype=np.float64)
    if R.shape[0] != len(reference_time):
        raise ValueError(f"reference_text has {R.shape[0]} rows but reference_time "
                         f"{len(reference_time)}.")
    prior = CaptionDatePrior(n_neighbors, bandwidth, floor=0.0).fit(R, reference_time)
    # p(t_q | c) up to the kernel's constant 1 / (h sqrt(2 pi)), the same for every pair
    return np.exp(prior.log_density(candidate_text, query_time)) * bandwidth * np.sqrt(2 * np.pi)


def _dense_text(text, name):
    """Caption features as a finite 2-D float64 array (refused by name otherwise)."""
    if np.ndim(text) != 2 and not hasattr(text, "tocsr"):
        raise ValueError(f"{name} must be 2-D, one row of text features per caption; got "
                         f"shape {np.shape(text)}.")
    checked = check_features(text, name=name)
    return checked.toarray() if hasattr(checked, "toarray") else np.asarray(checked, np.float64)


def _one_per_row(times, n, name, what):
    """``times`` as a 1-D array of ``n`` values (a column ``(n, 1)`` is read as one per row)."""
    times = np.asarray(times, dtype=np.float64)
    if times.ndim == 2 and times.shape[1] == 1:
        times = times[:, 0]
    if times.ndim != 1 or len(times) != n:
        raise ValueError(f"{name} must hold one time per {what}: {n} {what}(s) but {name} has "
                         f"shape {times.shape}.")
    return times
