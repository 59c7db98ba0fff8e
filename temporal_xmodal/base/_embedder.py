"""CrossModalEmbedder: the base class every estimator of the library inherits.

See :mod:`temporal_xmodal.base` for the two hooks a subclass implements.
"""

import inspect
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils._set_output import ADAPTERS_MANAGER, _get_output_config
from sklearn.utils.validation import check_is_fitted, validate_data

from .._input import (check_features, check_labels, check_time_column_values, resolve_blocks,
                      split_blocks, split_time_column)
from .._sparse_input import CSRWindow, dense_if_dense, is_sparse_block, refuse_sparse
from .._stacking import refuse_raw_columns
from .._constraints import Interval
from .._validation import Duration
from .._warnings import warn
from ..metrics import QUERY_SAMPLE, cross_modal_scores
from ..time._axis import _same  # a parameter at its default: the span check's own test
from ..time import (
    TIME_UNITS,
    TimeAxis,
    check_axis_plausible,
    instants,
    time_role,
    to_time_axis,
)


#: Parameter constraints of the layout parameters every estimator has.
LAYOUT_CONSTRAINTS = {
    "n_image_features": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                         None],
    "time_unit": [StrOptions(set(TIME_UNITS))],
}


def output_dtype(A):
    """The dtype of an embedding of the feature block ``A``: float32 for float32 features
    (scikit-learn's ``preserves_dtype``), float64 otherwise."""
    return np.float32 if getattr(A, "dtype", None) == np.float32 else np.float64


def l2_normalize(Z):
    """Scale each row of ``Z`` (n, d) to unit L2 norm, in its dtype (zero rows stay zero)."""
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    return Z / np.where(norms > 0, norms, 1.0)


class CrossModalEmbedder(TransformerMixin, BaseEstimator):
    """Base class of the cross-modal embedders (not used directly).

    Embeds the images and texts of ``X = [image features | text features | time]`` in one
    L2-normalised space of dimension ``embedding_dim_`` (dot product = cosine similarity).
    A subclass implements ``_fit`` and ``_embed``.

    Read more in the user guide: docs/index.md; subclassing: docs/adding_an_estimator.md.

    Attributes
    ----------
    time_role : {"none", "training", "inference"}
        Class attribute: projections depend on time (``"inference"``), time shapes
        training only (``"training"``), or time is ignored (``"none"``).  Read it with
        :func:`temporal_xmodal.time.time_role`.
    n_features_in_ : int
        Columns of X, time included.
    feature_names_in_ : ndarray of str
        Column names, when X was a DataFrame with string column names.
    n_image_features_, n_text_features_ : int
        The image and text columns.
    time_axis_ : TimeAxis
        Unit, origin and range of the training times.
    time_range_ : tuple of float
        ``(min, max)`` of the training times on the time axis.
    embedding_dim_ : int
        Dimension D of the common space (set by the subclass).
    """

    time_role = "none"
    #: Default axis unit for subclasses that do not expose ``time_unit`` as a parameter.
    time_unit = "years"
    #: Whether ``fit`` needs labels.
    _requires_labels = True
    #: Whether the features feed a float32 network (values must fit float32).
    _float32_features = False
    #: Whether scipy sparse X is accepted (its blocks reach ``_fit`` / ``_embed`` as CSR, or
    #: dense when in fact dense); else refused (docs/scaling.md, "Sparse text").
    _accepts_sparse = False
    #: Whether sparse blocks reach ``_fit`` / ``_embed`` as CSRWindows of X (not copied).
    _reads_windows = False
    #: The duration parameters (each constrained by a ``Duration``), read once per fit into
    #: ``<name>_``.
    _durations = ()

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Learn the common embedding space.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            ``[image features | text features | time]``; the time is numbers on the time
            axis (``time_unit``) or dates.  Sparse where the estimator accepts it.
        y : array-like of shape (n_samples,) or (n_samples, n_labels), default=None
            Class labels or a multilabel indicator; items sharing a label are
            relevant to each other.

        Returns
        -------
        self : object
        """
        self._validate_params()
        X_image, X_text, time, labels = self._validate_fit(X, y)
        self._fit(X_image, X_text, time, labels)
        return self

    def _continues(self):
        """Whether this fit continues a fitted model (``warm_start``)."""
        return bool(getattr(self, "warm_start", False)) and hasattr(self, "time_axis_")

    def _validate_fit(self, X, y):
        X_image, X_text, time = self._validate_layout(X, reset=not self._continues())
        labels = check_labels(y, len(time), required=self._requires_labels,
                              estimator_name=type(self).__name__)
        return X_image, X_text, time, labels

    def _validate_layout(self, X, reset=True):
        """Validate a training X; learn its layout and time axis (``reset``), or widen the
        axis to its times (a warm start)."""
        features, raw_time = split_time_column(X)
        self._refuse_sparse(features, "X")
        validate_data(self, X, skip_check_array=True, reset=reset)
        time = to_time_axis(raw_time, self.time_unit, name="the time column (last of X)")
        if reset:
            self.n_image_features_, self.n_text_features_ = resolve_blocks(
                self.n_image_features, self.n_features_in_,
                getattr(self, "feature_names_in_", None), self.time_unit)
        features = check_features(features, name="X", float32=self._float32_features,
                                  ensure_min_samples=2)
        if reset:
            if not _holds_dates(raw_time):  # numbers: only the values show the layout
                check_time_column_values(features, time, self.n_image_features_,
                                         self.n_text_features_,
                                         estimator_name=type(self).__name__,
                                         feature_names=getattr(self, "feature_names_in_",
                                                               None))
            self.time_axis_ = TimeAxis(self.time_unit).fit(
                time, dates=_holds_dates(raw_time))
            windows = self._resolve_durations()
            # numbers in a wrong unit are what the check is for; dates are read in their
            # own units, never implausible
            if self.time_role != "none" and not _holds_dates(raw_time):
                check_axis_plausible(time, self.time_unit, type(self).__name__, windows)
            idle = self._idle_parameters()  # a window that cannot act: no advice on its length
            for name, value in windows:
                if name not in idle:
                    self.time_axis_.check_duration(name, value, type(self).__name__,
                                                   estimator=self)
        else:
            if self.time_role != "none":  # a model that ignores time extrapolates nothing
                self.time_axis_.warn_outside(time, type(self).__name__,
                                             what="continuing training on")
            self.time_axis_.extend(time)
        self.time_range_ = self.time_axis_.range_
        return (*self._blocks(features), time)

    def _blocks(self, features):
        """``(X_image, X_text)`` of validated feature columns; a sparse X's are CSRWindows,
        kept (``_reads_windows``) or made whole (``dense_if_dense``)."""
        blocks = split_blocks(features, self.n_image_features_, self.n_text_features_)
        if self._reads_windows:
            return blocks
        dtype = np.float32 if self._float32_features else None
        return tuple(dense_if_dense(block, dtype) for block in blocks)

    def _refuse_sparse(self, A, name):
        """Raise a ``TypeError`` for sparse ``A`` unless the estimator accepts it."""
        if not self._accepts_sparse:
            refuse_sparse(A, type(self).__name__, name)

    def _idle_parameters(self):
        """``{name: why}`` of the parameters that cannot act in this configuration (read
        after :meth:`_resolve_durations`): their windows are not checked against the span."""
        return {}

    def _warn_idle_parameters(self):
        """One warning per fit naming each idle parameter set away from its default."""
        defaults = inspect.signature(type(self).__init__).parameters
        idle = self._idle_parameters()
        set_ = [name for name in idle
                if not _same(getattr(self, name), defaults[name].default)]
        if set_:
            quoted = ", ".join(f"{name}={getattr(self, name)!r}" for name in set_)
            warn(f"{type(self).__name__}: {quoted} {'has' if len(set_) == 1 else 'have'} no "
                 f"effect: {idle[set_[0]]}.", UserWarning)

    def _resolve_durations(self):
        """Read each parameter of ``_durations`` once into ``<name>_``: a float on the time
        axis (a share such as ``"5%"`` of the training span resolved; None stays None), as
        its :class:`~temporal_xmodal._validation.Duration` reads it.  Returns the windows'
        ``(name, value)``."""
        windows = []
        for name in self._durations:
            rule = next((r for r in self._parameter_constraints[name]
                         if isinstance(r, Duration)), Duration())
            value = getattr(self, name)
            value = None if value is None else rule.read(value, self.time_unit, name,
                                                         self.time_axis_.span_)
            setattr(self, f"{name}_", value)
            if rule.window and value is not None:
                windows.append((name, value))
        return windows

    # ------------------------------------------------------------ transform
    def transform(self, X):
        """Embed both modalities of each row, each at the row's own time.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)
            Same layout as in :meth:`fit`.

        Returns
        -------
        Z : ndarray of shape (n_samples, 2 * embedding_dim_)
            ``[image embedding | text embedding]``, each L2-normalised.
        """
        return self._embed_rows(X)[0]

    def _embed_rows(self, X):
        """``(Z, time)``: both embeddings of each row at its own time, and the axis times."""
        X_image, X_text, time = self._validate_transform(X)
        if self._extrapolates():
            self.time_axis_.warn_outside(time, type(self).__name__)
        Z = np.hstack([l2_normalize(self._embed("image", X_image, time)),
                       l2_normalize(self._embed("text", X_text, time))])
        return Z, time

    def _extrapolates(self):
        """Whether projections depend on the time (:func:`~temporal_xmodal.time.time_role`),
        so that times out of range extrapolate."""
        return time_role(self) == "inference"

    def _validate_transform(self, X):
        check_is_fitted(self)
        features, raw_time = split_time_column(X)
        self._refuse_sparse(features, "X")
        validate_data(self, X, skip_check_array=True, reset=False)
        features = check_features(features, name="X", float32=self._float32_features)
        time = to_time_axis(raw_time, self.time_unit, name="the time column (last of X)")
        return (*self._blocks(features), time)

    def transform_image(self, X_image, time=None):
        """Embed image features alone.

        Parameters
        ----------
        X_image : array-like or sparse matrix of shape (n_samples, n_image_features_)
            Image feature block only (no time column).
        time : scalar, date or array-like of shape (n_samples,), default=None
            Instant(s) at which to project: numbers on the time axis (in ``time_unit``) or
            dates.  Needed when ``time_role`` is ``"inference"``; else ignored.

        Returns
        -------
        Z_image : ndarray of shape (n_samples, embedding_dim_)
            L2-normalised image embeddings.
        """
        return self._transform_modality(X_image, time, "image")

    def transform_text(self, X_text, time=None):
        """Embed text features alone.

        Parameters
        ----------
        X_text : array-like or sparse matrix of shape (n_samples, n_text_features_)
            Text feature block only (no time column).
        time : scalar, date or array-like of shape (n_samples,), default=None
            Instant(s) at which to project; see :meth:`transform_image`.

        Returns
        -------
        Z_text : ndarray of shape (n_samples, embedding_dim_)
            L2-normalised text embeddings.
        """
        return self._transform_modality(X_text, time, "text")

    def _transform_modality(self, A, time, modality, preprocessed=False):
        """``transform_<modality>``; ``preprocessed``: the rows come from the fitted
        Pipeline's own preprocessing."""
        original = A
        if not preprocessed and getattr(original, "columns", None) is None:  # a DataFrame's
            refuse_raw_columns(self, original, modality)  # names are checked below
        A = self._check_modality_block(A, modality)
        t = self._instants(time, A.shape[0])
        if self._extrapolates():  # not a model that kept its constant-time control
            if t is None:
                raise ValueError(
                    f"{type(self).__name__} projects items at an instant: pass time= "
                    "(a number on the time axis, a date, or one per row).")
            self.time_axis_.warn_outside(t, type(self).__name__)
        Z = l2_normalize(self._embed(modality, A, t))
        return self._wrap(Z, modality, original)

    def _instants(self, time, n):
        """The ``time=`` argument as n float64 axis times (None stays None)."""
        return instants(time, n, self.time_unit)

    def _check_modality_block(self, A, modality, dtype=None, ensure_min_samples=1):
        """Validate one modality's feature block (no time column) of a fitted estimator."""
        check_is_fitted(self)
        expected = self.n_image_features_ if modality == "image" else self.n_text_features_
        self._refuse_sparse(A, f"X_{modality}")
        A = check_features(A, name=f"X_{modality}", float32=self._float32_features,
                           ensure_min_samples=ensure_min_samples)
        if A.shape[1] != expected:
            raise ValueError(
                f"X_{modality} has {A.shape[1]} columns but {type(self).__name__} was "
                f"fitted with {expected} {modality} features (pass the {modality} block "
                "only, without the time column).")
        if self._reads_windows and is_sparse_block(A):
            A = A if isinstance(A, CSRWindow) else CSRWindow.of(A)  # read per batch
        else:
            A = dense_if_dense(A, np.float32 if self._float32_features else None)
        return A if dtype is None else A.astype(dtype, copy=False)

    def _wrap(self, Z, modality, original):
        """``set_output`` for one modality's embeddings."""
        config = _get_output_config("transform", self)["dense"]
        if config == "default":
            return Z
        names = np.asarray([f"{modality}{i}" for i in range(Z.shape[1])], dtype=object)
        return ADAPTERS_MANAGER.adapters[config].create_container(
            Z, original, columns=names, inplace=False)

    # ---------------------------------------------------------------- score
    def score(self, X, y=None):
        """Mean of image→text and text→image retrieval quality over the rows of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
        y : array-like, default=None
            Labels: the mean of I→T and T→I mAP (relevant = shares a label).  ``None``:
            the mean reciprocal rank of each item's own counterpart, both directions.

        Returns
        -------
        score : float
            Exact up to :data:`~temporal_xmodal.metrics.QUERY_SAMPLE` rows; above, a fixed
            random sample of that many rows (seed 0) queries all rows: an unbiased
            estimate (docs/evaluation.md, "At scale").
        """
        Z, _ = self._embed_rows(X)
        labels = check_labels(y, Z.shape[0], required=False)
        metric = "mrr" if labels is None else "map"
        d = Z.shape[1] // 2
        return cross_modal_scores(Z[:, :d], Z[:, d:], labels, metrics=(metric,),
                                  query_sample=QUERY_SAMPLE, random_state=0)[metric]

    # --------------------------------------------------------- feature names
    def get_feature_names_out(self, input_features=None):
        """Names of the output columns: ``image0 … image{D-1}, text0 … text{D-1}``.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Validated against ``feature_names_in_`` when given, else unused.

        Returns
        -------
        feature_names_out : ndarray of str
        """
        check_is_fitted(self)
        if input_features is not None:
            input_features = np.asarray(input_features, dtype=object)
            if len(input_features) != self.n_features_in_:
                raise ValueError(f"input_features should have length {self.n_features_in_}; "
                                 f"got {len(input_features)}.")
            names_in = getattr(self, "feature_names_in_", None)
            if names_in is not None and not np.array_equal(input_features, names_in):
                raise ValueError("input_features is not equal to feature_names_in_.")
        D = self.embedding_dim_
        return np.asarray([f"image{i}" for i in range(D)] + [f"text{i}" for i in range(D)],
                          dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self._requires_labels
        tags.input_tags.sparse = self._accepts_sparse
        return tags


def _holds_dates(raw_time):
    dtype = getattr(raw_time, "dtype", None)
    return dtype is not None and (getattr(dtype, "kind", "") == "M"
                                  or getattr(dtype, "tz", None) is not None)
