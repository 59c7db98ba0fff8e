"""Fuse a model's content scores with a caption→date prior (:class:`DatePriorRetrieval`):
undated captions, dated queries.  Read more in docs/evaluation.md."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params
from sklearn.utils.validation import check_is_fitted

from .._input import resolve_blocks, split_blocks, split_time_column
from .._stacking import stack_modalities
from .._constraints import Interval, SequenceOf
from .._warnings import warn
from ..metrics import counterpart_reciprocal_ranks
from ..time import time_role, to_time_axis
from ..training import TrainingRun
from ..training._report import ReportsFit
from ._caption_prior import CaptionDatePrior

__all__ = ["DatePriorRetrieval", "query_time_scores"]


def _is_fitted(estimator):
    """Whether ``estimator`` has fitted attributes (a fit Ctrl-C stopped may have none)."""
    return any(k.endswith("_") and not k.startswith("__") for k in vars(estimator))


@validate_params(
    {"estimator": [HasMethods(["transform_image", "transform_text"])],
     "X_image": ["array-like"], "X_text": ["array-like"], "query_time": ["array-like"],
     "calibrate": ["boolean"]},
    prefer_skip_nested_validation=True)
def query_time_scores(estimator, X_image, X_text, query_time, *, calibrate=True):
    """Similarity of each query image to every candidate text, texts projected at the query's date.

    ``S[i, j] = <f_image(x_i, t_i), f_text(c_j, t_i)>`` with L2-normalised embeddings: rows
    rank captions for a picture (I→T), columns pictures for a caption (T→I).  Estimators
    whose projection ignores time at inference are projected once.

    Read more in the user guide: docs/evaluation.md.

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder
    X_image : array-like of shape (n_queries, n_image_features)
    X_text : array-like of shape (n_candidates, n_text_features)
    query_time : array-like of shape (n_queries,)
        The date of each query picture: numbers on the estimator's time axis (its
        ``time_unit``) or dates.
    calibrate : bool, default=True
        For an estimator whose projection depends on the time: standardise the scores of each
        query date (zero mean, unit variance over that date's queries × all candidates), which
        leaves every picture's ranking of the captions unchanged and makes the columns
        comparable across dates.  ``False``: the raw cosines.

    Returns
    -------
    scores : ndarray of shape (n_queries, n_candidates)
    """
    query_time = to_time_axis(query_time, estimator.time_unit, name="query_time")
    Z_image = estimator.transform_image(X_image, time=query_time)
    if time_role(estimator) != "inference":
        return Z_image @ estimator.transform_text(X_text).T
    instants, which = np.unique(query_time, return_inverse=True)
    scores = np.empty((Z_image.shape[0], np.shape(X_text)[0]))
    for k, instant in enumerate(instants):  # one text projection per distinct date
        rows = which == k
        block = Z_image[rows] @ estimator.transform_text(X_text, time=instant).T
        if calibrate:
            std = block.std()
            block = (block - block.mean()) / (std if std > 0 else 1.0)
        scores[rows] = block
    return scores


class DatePriorRetrieval(ReportsFit, BaseEstimator):
    r"""Any estimator's undated-caption ranking fused with a caption→date prior.

    .. math::

        \mathrm{score}(q, c) = s(q, c) + \beta \log p(t_q \mid c)

    with :math:`s` the estimator's similarity, every caption projected at the query's date
    (:func:`query_time_scores`), and :math:`p(t \mid c)` the caption's date density
    (:class:`~temporal_xmodal.estimators.CaptionDatePrior`): the log-linear fusion of a
    content likelihood :math:`\propto e^{s/\tau}` with the date likelihood, :math:`\beta =
    \tau` (a method beyond the papers).  β and the prior's neighbours and bandwidth are chosen
    on held-out training pairs (the estimator refitted without them).  One Ctrl-C stops the
    whole ``fit``: before β is chosen the model is left unfitted; during the fit on all rows,
    β and the prior are kept with the partial estimator.

    Read more in the user guide: docs/evaluation.md.

    Parameters
    ----------
    estimator : CrossModalEmbedder
        Unfitted; cloned.
    prior : CaptionDatePrior or None, default=None
        Unfitted; ``None`` uses ``CaptionDatePrior(time_unit=estimator.time_unit)``.  A given
        prior must read time in the estimator's ``time_unit`` (else ``fit`` raises).  Setting
        a parameter of the default prior (``set_params(prior__bandwidth=...)``) makes it a
        given one.
    weights : sequence of float, default=(0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2)
        Candidate β (finite, ≥ 0); 0 keeps the content ranking.
    prior_grid : dict of str -> list, "auto" or None, default="auto"
        Parameters of the prior searched with β on the held-out pairs (every combination, as
        :class:`~sklearn.model_selection.ParameterGrid`).  ``"auto"``: :attr:`AUTO_PRIOR_GRID`
        with ``prior=None``, nothing with a given prior.  ``None``: the prior as given.
    validation_fraction : float, default=0.2
        Training pairs held out to choose β and the prior.
    content_time : {"dated", "constant"}, default="dated"
        Time the estimator is fitted and projected at: the rows' dates, or a constant time
        column (0), i.e. the estimator's constant-time control fused with the same prior (the
        prior always reads the dates).
    n_image_features : int, "auto" or None, default=None
        Leading image columns of X.  ``None``: the estimator's own ``n_image_features``; an
        int or ``"auto"`` wins over it.
    random_state : int, RandomState or None, default=0
        Seeds the held-out split.

    Attributes
    ----------
    n_image_features_ : int
        Leading image columns of X, resolved from ``n_image_features``.
    estimator_ : CrossModalEmbedder
        The estimator fitted on all rows.
    prior_ : CaptionDatePrior
        The prior fitted on all rows.
    prior_params_ : dict
        The prior's parameters chosen from ``prior_grid`` (empty when it is None).
    weight_ : float
        The chosen β.
    validation_mrr_ : dict of float -> float
        Held-out MRR per candidate β, with the chosen prior.
    validation_results_ : list of dict
        Every candidate: ``{"prior_params": dict, "weight": float, "mrr": float}``.
    fit_report_ : FitReport
        The reports of the held-out fit (``"held-out"``) and of the fit on all rows
        (``"all rows"``): :class:`~temporal_xmodal.training.FitReport`.
    training_interrupted_ : bool
        Whether Ctrl-C stopped the fit on all rows (a view of ``fit_report_``).

    Examples
    --------
    >>> import numpy as np
    >>> from temporal_xmodal import CCACrossModal, stack_modalities
    >>> from temporal_xmodal.estimators import DatePriorRetrieval
    >>> rng = np.random.default_rng(0)
    >>> image, text = rng.normal(size=(200, 8)), rng.normal(size=(200, 6))
    >>> dates = np.linspace(1900.0, 1950.0, 200)
    >>> model = DatePriorRetrieval(CCACrossModal(embedding_dim=4), n_image_features=8)
    >>> model = model.fit(stack_modalities(image, text, dates), np.arange(200))
    >>> model.scores(image[:5], text, dates[:5]).shape
    (5, 200)
    """

    #: The prior's parameters searched by default (``prior_grid="auto"``).
    AUTO_PRIOR_GRID = {"n_neighbors": [3, 10, 25], "bandwidth": ["3M", "1Y", "2Y"]}

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "transform_image", "transform_text"])],
        "prior": [HasMethods(["fit", "log_density"]), None],
        "weights": [SequenceOf(Interval(Real, 0, None, closed="left"))],
        "prior_grid": [dict, StrOptions({"auto"}), None],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "content_time": [StrOptions({"dated", "constant"})],
        "n_image_features": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                             None],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator, prior=None,
                 weights=(0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2),
                 prior_grid="auto", validation_fraction=0.2, content_time="dated",
                 n_image_features=None, random_state=0):
        self.estimator = estimator
        self.prior = prior
        self.weights = weights
        self.prior_grid = prior_grid
        self.validation_fraction = validation_fraction
        self.content_time = content_time
        self.n_image_features = n_image_features
        self.random_state = random_state

    def set_params(self, **params):
        """Set parameters, as scikit-learn's; ``prior__<name>`` with ``prior=None`` first makes the
        default prior a given one on the estimator's axis.

        Parameters
        ----------
        **params : dict
            Estimator parameters.

        Returns
        -------
        self : DatePriorRetrieval
        """
        if params.get("prior", self.prior) is None and any(
                key.startswith("prior__") for key in params):
            estimator = params.get("estimator", self.estimator)
            unit = params.get("estimator__time_unit",
                              getattr(estimator, "time_unit", "years"))
            params = {**params, "prior": CaptionDatePrior(time_unit=unit)}
        return super().set_params(**params)

    def _estimator(self):
        return clone(self.estimator).set_params(n_image_features=self.n_image_features_)

    def _unit(self):
        return getattr(self.estimator, "time_unit", "years")

    def _new_prior(self, params):
        """An unfitted prior with ``params``, reading time on the estimator's axis."""
        if self.prior is None:
            return CaptionDatePrior(time_unit=self._unit(), **params)
        prior = clone(self.prior).set_params(**params)
        if getattr(prior, "time_unit", self._unit()) != self._unit():
            raise ValueError(f"The prior reads time in {prior.time_unit!r} and the estimator in "
                             f"{self._unit()!r}; give both the same time_unit.")
        return prior

    def _content_time(self, time):
        """The time the content model sees: the dates, or the constant-time control's 0."""
        return time if self.content_time == "dated" else np.zeros(len(time))

    def _resolve_blocks(self, X):
        """Learn ``n_image_features_`` from X."""
        n_image = self.n_image_features
        if n_image is None:
            n_image = getattr(self.estimator, "n_image_features", None)
        columns = getattr(X, "columns", None)
        names = (np.asarray(columns, dtype=object) if columns is not None
                 and all(isinstance(c, str) for c in columns) else None)
        self.n_image_features_, _ = resolve_blocks(n_image, np.shape(X)[1], names,
                                                   self._unit())

    def _blocks(self, X):
        features, time = split_time_column(X)
        features = np.asarray(features, dtype=np.float64)
        n_text = features.shape[1] - self.n_image_features_
        return (*split_blocks(features, self.n_image_features_, n_text),
                to_time_axis(time, self._unit(), name="the time column"))

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Choose β on held-out pairs, then fit the estimator and the prior on all rows.

        Parameters
        ----------
        X : ndarray of shape (n, n_features)
            ``[image | text | time]``; row i is a dated picture and its caption.
        y : array-like of shape (n,)
            Labels for the estimator (the pairs themselves on TICRC).

        Returns
        -------
        self : DatePriorRetrieval
        """
        weights = np.asarray(self.weights, dtype=np.float64)
        self._resolve_blocks(X)
        image, text, time = self._blocks(X)
        seen = self._content_time(time)
        if y is None:
            raise ValueError("DatePriorRetrieval.fit needs y, the labels of the estimator it "
                             "fits (with pair labels, as on TICRC: np.arange(len(X))).")
        y = np.asarray(y)
        if y.ndim == 0:
            raise ValueError(f"y must hold one label per row of X; got the scalar {y!r}.")
        if len(y) != len(time):
            raise ValueError(f"X has {len(time)} rows but y has {len(y)} labels.")
        rng = check_random_state(self.random_state)
        order = rng.permutation(len(y))
        n_val = int(round(self.validation_fraction * len(y)))
        if n_val < 2 or len(y) - n_val < 2:
            raise ValueError(
                f"validation_fraction={self.validation_fraction!r} holds out {n_val} of "
                f"{len(y)} pairs: the weight β is chosen on held-out pairs, so at least 2 "
                "must be held out and 2 left to fit; raise validation_fraction (or give "
                "more rows).")
        val, fit = np.sort(order[:n_val]), np.sort(order[n_val:])
        with TrainingRun(self, threads=False) as run:  # the model's fits set their threads
            self._fit_parts(run, image, text, time, seen, y, fit, val, weights)
        return self

    def _fit_parts(self, run, image, text, time, seen, y, fit, val, weights):
        """The held-out fit, the choice of β and the prior, the fit on all rows (a Ctrl-C in the
        first two leaves the estimator unfitted)."""
        model = run.fit_part(self._estimator(),
                             stack_modalities(image[fit], text[fit], seen[fit]), y[fit])
        if run.stopped:
            return self._forget(run, f"during the held-out fit (on {len(fit)} of {len(y)} "
                                     "pairs, the one that chooses β)")
        with run.stoppable():
            self._choose(model, image, text, time, seen, fit, val, weights)
        if run.stopped:
            return self._forget(run, "while β was chosen on the held-out pairs")
        final = run.fit_part(self._estimator(), stack_modalities(image, text, seen), y)
        if not _is_fitted(final):
            return self._forget(run, f"during the fit on all rows (after β = "
                                     f"{self.weight_:g} was chosen)")
        self.estimator_ = final
        self.prior_ = self._new_prior(self.prior_params_).fit(text, time)
        self.fit_report_ = run.report([("held-out", getattr(model, "fit_report_", None)),
                                       ("all rows", getattr(final, "fit_report_", None))])
        if run.stopped:
            run.partial(f"during the fit of {type(final).__name__} on all rows",
                        f"β = {self.weight_:g} and the prior were chosen on the held-out "
                        "pairs before it, so the model is usable but partial: estimator_ "
                        "holds what that fit reached. Fit again to train it fully")

    def _choose(self, model, image, text, time, seen, fit, val, weights):
        """β and the prior's parameters on the held-out pairs ``val``."""
        n_val = len(val)
        content = query_time_scores(model, image[val], text[val], seen[val])
        grid = self.prior_grid or {}
        if self.prior_grid == "auto":  # search only the default prior, never a given one
            grid = self.AUTO_PRIOR_GRID if self.prior is None else {}
        self.validation_results_ = []
        for params in ParameterGrid(grid):
            prior = self._new_prior(params).fit(text[fit], time[fit])
            log_p = prior.log_density(text[val], time[val])
            self.validation_results_ += [
                {"prior_params": params, "weight": float(w),
                 "mrr": float(counterpart_reciprocal_ranks(content + w * log_p)[0].mean())}
                for w in weights]
        mrrs = [row["mrr"] for row in self.validation_results_]
        if len({row["weight"] for row in self.validation_results_}) > 1 and max(mrrs) == min(
                mrrs):
            warn(f"DatePriorRetrieval: every weight and prior scores the same validation MRR "
                 f"({mrrs[0]:.4g}) on the {n_val} held-out pairs, so they cannot choose β; "
                 f"the first candidate (β = {self.validation_results_[0]['weight']:g}) is "
                 "kept. Hold out more pairs (validation_fraction) for a figure that ranks "
                 "them.")
        best = max(self.validation_results_, key=lambda row: row["mrr"])
        self.prior_params_, self.weight_ = best["prior_params"], best["weight"]
        self.validation_mrr_ = {row["weight"]: row["mrr"] for row in self.validation_results_
                                if row["prior_params"] == self.prior_params_}

    def _forget(self, run, where):
        """Ctrl-C stopped the fit ``where``: forget it (the warning says so)."""
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, name)
        run.partial(where, "the fit stopped there (the next step did not start) and the "
                           "model is left unfitted: fit again to train it")

    def scores(self, X_image, X_text, query_time):
        """Fused scores of every query picture against every candidate caption.

        Parameters
        ----------
        X_image : array-like of shape (n_queries, n_image_features)
        X_text : array-like of shape (n_candidates, n_text_features)
        query_time : array-like of shape (n_queries,)

        Returns
        -------
        scores : ndarray of shape (n_queries, n_candidates)
        """
        check_is_fitted(self)
        query_time = to_time_axis(query_time, self.estimator_.time_unit, name="query_time")
        content = query_time_scores(self.estimator_, X_image, X_text,
                                    self._content_time(query_time))
        return content + self.weight_ * self.prior_.log_density(X_text, query_time)

    def score(self, X, y=None):
        """Picture → caption MRR of the fused ranking over the rows of X: each row's picture, at its
        date, ranks every caption of X, the row's own being the gold one (TICRC's metric).

        Parameters
        ----------
        X : ndarray of shape (n, n_features)
            ``[image | text | time]``.
        y : ignored

        Returns
        -------
        mrr : float
        """
        check_is_fitted(self)
        image, text, time = self._blocks(X)
        return float(counterpart_reciprocal_ranks(self.scores(image, text, time))[0].mean())

