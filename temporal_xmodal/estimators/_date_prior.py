r"""Fuse a model's content scores with a caption→date prior: undated captions, dated queries.

TICRC's captions carry no date, but the query picture does, and a caption's words say when it
is plausible.  :class:`DatePriorRetrieval` turns that into a ranking any estimator can use (a
method beyond the papers):

.. math::

    \mathrm{score}(q, c) = s(q, c) + \beta \log p(t_q \mid c)

where :math:`s` is the estimator's similarity with every caption projected at the query's
date (:func:`query_time_scores`), and :math:`p(t \mid c)` the caption's date density
(:class:`~temporal_xmodal.estimators.CaptionDatePrior`).  It is the log-linear fusion of a
content likelihood :math:`\propto e^{s/\tau}` with the date likelihood, :math:`\beta = \tau`.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params
from sklearn.utils.validation import check_is_fitted

from .._layout import resolve_blocks, split_blocks, split_time_column
from .._stacking import stack_modalities
from .._validation import Interval, SequenceOf
from .._warnings import warn
from ..metrics import counterpart_reciprocal_ranks
from ..time import time_role, to_time_axis
from ..training import TrainingInterruptedWarning
from ._caption_prior import CaptionDatePrior
from .._interrupts import report_interrupt

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

    ``S[i, j] = <f_image(x_i, t_i), f_text(c_j, t_i)>`` with L2-normalised
    embeddings.  Both directions of the undated-caption evaluation read this one matrix:
    rows rank captions for a picture (I→T), columns rank pictures for a
    caption (T→I; the caption is projected at each candidate picture's date).
    Estimators whose projection ignores time at inference are projected once.
    Ranking captions with the date of the picture they belong to would use the answer.

    Read more in the user guide: docs/evaluation.md.

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder
    X_image : array-like of shape (n_queries, n_image_features)
    X_text : array-like of shape (n_candidates, n_text_features)
    query_time : array-like of shape (n_queries,)
        The date of each query picture: numbers on the estimator's time axis
        (its ``time_unit``) or dates.
    calibrate : bool, default=True
        For an estimator whose projection depends on the time: standardise the scores of
        each query date (zero mean, unit variance over that date's queries × all
        candidates).  A column of ``S`` compares scores of one caption projected at
        different dates, and a time-conditioned model's similarities have a scale of their
        own at each date, so raw columns rank pictures by their date's scale as much as by
        content.  The standardisation is increasing within a date, so every picture's
        ranking of the captions (I→T) is unchanged; it reads no caption date and no gold
        pair.  ``False``: the raw cosines.

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


class DatePriorRetrieval(BaseEstimator):
    """Any estimator's undated-caption ranking fused with a caption→date prior.

    β and the prior's neighbours and bandwidth are chosen on held-out training pairs
    (cross-fitting: the estimator is refitted without them), never on the evaluation
    pairs.

    Read more in the user guide: docs/evaluation.md.

    Parameters
    ----------
    estimator : CrossModalEmbedder
        Unfitted; cloned.
    prior : CaptionDatePrior or None, default=None
        Unfitted; ``None`` uses ``CaptionDatePrior(time_unit=estimator.time_unit)``.  A
        given prior must read time in the estimator's ``time_unit`` (else ``fit``
        raises): both see the time column on one axis.  Setting a parameter of the
        default prior (``set_params(prior__bandwidth=...)``, as ``GridSearchCV`` does)
        makes it a given one: ``CaptionDatePrior(time_unit=estimator.time_unit)`` with that
        parameter, used as it is (``prior_grid="auto"`` then searches nothing).
    weights : sequence of float, default=(0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2)
        Candidate β (finite, ≥ 0); 0 keeps the content ranking.
    prior_grid : dict of str -> list, "auto" or None, default="auto"
        Parameters of the prior searched on the held-out pairs together with β
        (every combination, as :class:`~sklearn.model_selection.ParameterGrid`);
        the search costs no refit of the estimator.  ``"auto"``: with ``prior=None``,
        ``{"n_neighbors": [3, 10, 25], "bandwidth": ["3M", "1Y", "2Y"]}`` (durations,
        read on the prior's time axis); a given ``prior`` is used as it is.  ``None``:
        the prior as given.
    validation_fraction : float, default=0.2
        Training pairs held out to choose β and the prior (the estimator is
        refitted on the rest for that, then on everything).
    content_time : {"dated", "constant"}, default="dated"
        Time the estimator is fitted and projected at.  ``"dated"``: the rows'
        dates, queries at their own date.  ``"constant"``: a constant time column
        (0) in the fit and at scoring, i.e. the estimator's constant-time control
        fused with the same prior; the prior always reads the dates.  The
        difference between the two says what the model's own use of time adds on
        top of the prior.
    n_image_features : int, "auto" or None, default=None
        Leading image columns of X.  ``None``: the estimator's own ``n_image_features``
        (read as it reads it: from X's column names, or the half split with a
        :class:`~temporal_xmodal.LayoutWarning`); an int or ``"auto"`` wins over it.
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
    training_interrupted_ : bool
        Whether Ctrl-C stopped the fit on all rows (β chosen, the estimator partial).

    Notes
    -----
    One Ctrl-C stops the whole ``fit``, with a
    :class:`~temporal_xmodal.training.TrainingInterruptedWarning` (inside a model
    selection it is raised again, as every estimator's).  During the held-out fit or the
    choice of β, nothing is chosen yet and the model is left unfitted; during the fit on
    all rows, β and the prior are kept and ``estimator_`` holds what training reached
    (``training_interrupted_ = True``), when the estimator keeps a partial model (the
    neural ones), else the model is left unfitted.

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
        """Set parameters, as scikit-learn's; ``prior__<name>`` with ``prior=None`` first
        makes the default prior a given one, ``CaptionDatePrior(time_unit=...)`` on the
        estimator's axis (so that ``GridSearchCV`` can search ``prior__bandwidth``).

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
        """Learn ``n_image_features_`` from X (its names, or the half split)."""
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
        stopped = None  # where Ctrl-C stopped the fit, if it did
        try:
            model, interrupted = self._fit_estimator(
                stack_modalities(image[fit], text[fit], seen[fit]), y[fit])
            if interrupted:
                stopped = (f"during the held-out fit (on {len(fit)} of {len(y)} pairs, the "
                           "one that chooses β)")
            else:
                self._choose(model, image, text, time, seen, fit, val, weights)
        except KeyboardInterrupt:
            stopped = "while β was chosen on the held-out pairs"
        if stopped is not None:
            return self._interrupted(stopped)
        try:
            final, self.training_interrupted_ = self._fit_estimator(
                stack_modalities(image, text, seen), y)
        except KeyboardInterrupt:
            final, self.training_interrupted_ = None, True
        if final is None or not _is_fitted(final):
            return self._interrupted(f"during the fit on all rows (after β = "
                                     f"{self.weight_:g} was chosen)")
        self.estimator_ = final
        self.prior_ = self._new_prior(self.prior_params_).fit(text, time)
        if self.training_interrupted_:
            report_interrupt(
                f"DatePriorRetrieval: training was interrupted (Ctrl-C) during the fit of "
                f"{type(self.estimator_).__name__} on all rows; β = {self.weight_:g} and the "
                "prior were chosen on the held-out pairs before it, so the model is usable but "
                "partial: estimator_ holds what that fit reached (training_interrupted_ = "
                "True). Fit again to train it fully.")
        return self

    def _fit_estimator(self, X, y):
        """``(model, stopped)``: a clone of the estimator fitted on ``X``, and whether
        Ctrl-C stopped that fit (a neural model keeps its partial weights and says so; its
        own warning, which advises a warm start this estimator does not make, is left to
        :meth:`_interrupted`)."""
        model = self._estimator()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingInterruptedWarning)
            try:
                model.fit(X, y)
            except KeyboardInterrupt:
                return model, True
        return model, bool(getattr(model, "training_interrupted_", False))

    def _choose(self, model, image, text, time, seen, fit, val, weights):
        """β and the prior's parameters, on the held-out pairs ``val`` (``model`` and the
        priors fitted on ``fit``)."""
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

    def _interrupted(self, where):
        """Ctrl-C stopped the fit ``where``: forget the fit, warn (and, inside a model
        selection, stop it)."""
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, name)
        report_interrupt(
            f"DatePriorRetrieval: training was interrupted (Ctrl-C) {where}; the fit stopped "
            "there (the next step did not start) and the model is left unfitted: fit again "
            "to train it.")
        return self

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
        """Picture → caption MRR of the fused ranking over the rows of X.

        Each row's picture, at the row's date, ranks every caption of X; the
        gold caption is the row's own (TICRC's metric), so that
        :class:`~sklearn.model_selection.GridSearchCV` can tune the prior and
        the estimator (``prior__bandwidth``, ``estimator__window``).

        Parameters
        ----------
        X : ndarray of shape (n, n_features)
            ``[image | text | time]``.
        y : ignored
            Accepted for the scikit-learn API.

        Returns
        -------
        mrr : float
        """
        check_is_fitted(self)
        image, text, time = self._blocks(X)
        return float(counterpart_reciprocal_ranks(self.scores(image, text, time))[0].mean())

