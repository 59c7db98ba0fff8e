"""Building ``X = [image features | text features | time]``: from arrays
(:func:`stack_modalities`) or, in a Pipeline, from a DataFrame's named columns
(:func:`make_crossmodal_transformer`).  Reading X back is :mod:`temporal_xmodal._input`'s.
Read more in docs/pipelines.md.
"""

import re

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.utils._param_validation import StrOptions, validate_params
from sklearn.utils.validation import check_is_fitted

from .time import TIME_UNITS, to_time_axis

_TIME_UNIT = [StrOptions(set(TIME_UNITS))]

@validate_params(
    {"X_image": ["array-like"], "X_text": ["array-like"], "time": "no_validation",
     "time_unit": _TIME_UNIT},
    prefer_skip_nested_validation=True,
)
def stack_modalities(X_image, X_text, time=None, *, time_unit="years"):
    """Build ``X = [X_image | X_text | time]``, the layout every estimator takes.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    X_image : array-like of shape (n_samples, n_image_features)
        Image features.
    X_text : array-like of shape (n_samples, n_text_features)
        Text features, row-aligned with ``X_image``.
    time : scalar, array-like of shape (n_samples,) or None, default=None
        Time of each item: numbers on the time axis or dates (mapped to ``time_unit``).
        A scalar is broadcast; ``None`` gives zeros (static data).
    time_unit : {"years", "months", "weeks", "days", "hours", "minutes", "seconds"}, \
            default="years"
        Unit of the time axis that dates are mapped to (numbers pass unchanged).

    Returns
    -------
    X : ndarray of shape (n_samples, n_image_features + n_text_features + 1)
        float64.  Pass ``n_image_features=X_image.shape[1]`` to the estimators.

    Examples
    --------
    >>> import numpy as np
    >>> from temporal_xmodal import stack_modalities
    >>> X = stack_modalities(np.ones((3, 2)), np.zeros((3, 4)), [1990, 1991, 1992])
    >>> X.shape
    (3, 7)
    """
    X_image = _as_2d_float(X_image, "X_image")
    X_text = _as_2d_float(X_text, "X_text")
    n = X_image.shape[0]
    if X_text.shape[0] != n:
        raise ValueError(f"X_image and X_text must have the same number of rows; got {n} "
                         f"and {X_text.shape[0]}.")
    if time is None:
        t = np.zeros(n)
    else:
        t = to_time_axis(time, time_unit)
        t = np.full(n, float(t)) if t.ndim == 0 else t
        if t.shape != (n,):
            raise ValueError(f"time must be a scalar or have shape ({n},); got {t.shape}.")
    return np.hstack([X_image, X_text, t[:, None]])


#: Rows copied at a time into a bin model's X (a bounded temporary of each block).
_CHUNK_ROWS = 16384


def stack_rows(X_image, X_text, time, rows=None):
    """``[X_image | X_text | time]`` of ``rows`` (all when None), filled in row chunks:
    float32 when both blocks are float32 (times rounded to float32), else float64."""
    n = len(time) if rows is None else len(rows)
    d, e = X_image.shape[1], X_text.shape[1]
    dtype = np.float32 if X_image.dtype == X_text.dtype == np.float32 else np.float64
    X = np.empty((n, d + e + 1), dtype=dtype)
    for start in range(0, n, _CHUNK_ROWS):
        part = slice(start, min(start + _CHUNK_ROWS, n))
        take = part if rows is None else rows[part]
        X[part, :d], X[part, d:d + e], X[part, -1] = X_image[take], X_text[take], time[take]
    return X


def _as_2d_float(A, name):
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-D; got {A.ndim}-D with shape {A.shape}.")
    return A


class TimeColumn(TransformerMixin, BaseEstimator):
    """Pass a time column through, mapped to the time axis and never scaled.

    The time step of :func:`make_crossmodal_transformer`; its output name
    (``"<column>[<unit>]"``) carries the unit, which the estimators check.

    Read more in the user guide: docs/pipelines.md.

    Parameters
    ----------
    time_unit : {"years", "months", "weeks", "days", "hours", "minutes", "seconds"}, \
            default="years"
        Unit of the time axis that dates are mapped to.

    Examples
    --------
    >>> import pandas as pd
    >>> TimeColumn().fit_transform(pd.DataFrame({"d": pd.to_datetime(["1904-07-02"])}))
    array([[1904.5]])
    """

    _parameter_constraints = {"time_unit": _TIME_UNIT}

    def __init__(self, time_unit="years"):
        self.time_unit = time_unit

    def fit(self, X, y=None):
        """Record the column name of ``X`` (n_samples, 1); ``y`` is ignored."""
        self._validate_params()
        columns = getattr(X, "columns", None)
        self.feature_names_in_ = (np.asarray(columns, dtype=object) if columns is not None
                                  else None)
        self.n_features_in_ = 1
        return self

    def transform(self, X):
        """The times on the axis, shape (n_samples, 1), float64."""
        check_is_fitted(self, "n_features_in_")
        column = X.iloc[:, 0] if hasattr(X, "iloc") else np.asarray(X, dtype=object)[:, 0] \
            if np.ndim(X) == 2 else X
        return to_time_axis(column, self.time_unit, name="the time column")[:, None]

    def get_feature_names_out(self, input_features=None):
        """``["<column>[<unit>]"]``: the unit travels with the name."""
        name = (self.feature_names_in_[0] if getattr(self, "feature_names_in_", None)
                is not None else "time")
        return np.asarray([f"{name}[{self.time_unit}]"], dtype=object)


def _selector(columns):
    """Column selection: a list of names as is, a string as a name prefix, a callable as is."""
    if isinstance(columns, str):
        return make_column_selector(pattern="^" + re.escape(columns))
    return columns


class CrossModalColumnTransformer(ColumnTransformer):
    """The ColumnTransformer of :func:`make_crossmodal_transformer`: it selects columns by
    name, and refuses an array without names, naming the columns to pass.  Parameters are
    :class:`~sklearn.compose.ColumnTransformer`'s.
    """

    def fit_transform(self, X, y=None, **params):
        self._refuse_array(X)
        return super().fit_transform(X, y, **params)

    def transform(self, X, **params):
        self._refuse_array(X)
        return super().transform(X, **params)

    def _refuse_array(self, X):
        if hasattr(X, "columns"):
            return
        names = getattr(self, "feature_names_in_", None)
        wanted = (f"the {len(names)} columns it was fitted on ({_preview(names)})"
                  if names is not None else "the named image, text and time columns")
        raise ValueError(
            f"make_crossmodal_transformer's ColumnTransformer selects the image, text and time "
            f"columns by name, so X must be a DataFrame; got {type(X).__name__} of shape "
            f"{np.shape(X)} without column names. Pass a DataFrame with {wanted}"
            + (", e.g. pd.DataFrame(X, columns=pipe.feature_names_in_)."
               if names is not None else "."))


@validate_params(
    {"image": [list, str, callable], "text": [list, str, callable], "time": [str],
     "image_transformer": "no_validation", "text_transformer": "no_validation",
     "time_unit": _TIME_UNIT},
    prefer_skip_nested_validation=True,
)
def make_crossmodal_transformer(image, text, time, *, image_transformer="passthrough",
                                text_transformer="passthrough", time_unit="years"):
    """A ColumnTransformer building ``X = [image | text | time]`` from a DataFrame's columns.

    Each block is preprocessed by its own transformer; the time is mapped to the time axis
    and **never scaled**.  The output DataFrame's names (``image__*``, ``text__*``,
    ``time__<column>[<unit>]``) let the estimator read the blocks
    (``n_image_features="auto"``).

    Read more in the user guide: docs/pipelines.md.

    Parameters
    ----------
    image, text : list of str, str or callable
        The block's columns: a list of names, a name prefix (``"img_"``), or a
        selector such as :func:`sklearn.compose.make_column_selector`.
    time : str
        The time column (numbers on the axis, or ``datetime64``).
    image_transformer, text_transformer : transformer or "passthrough", default="passthrough"
        Per-block preprocessing (e.g. ``StandardScaler()``), with dense output.
    time_unit : {"years", "months", "weeks", "days", "hours", "minutes", "seconds"}, \
            default="years"
        Unit of the time axis; give the estimator the same ``time_unit``.

    Returns
    -------
    transformer : CrossModalColumnTransformer
        With pandas output (requires pandas).

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from temporal_xmodal import DiachronicEmbedder, make_crossmodal_transformer
    >>> pipe = make_pipeline(
    ...     make_crossmodal_transformer("img_", "txt_", "date",
    ...                                 image_transformer=StandardScaler()),
    ...     DiachronicEmbedder(window="180D", n_image_features="auto"))
    """
    transformer = CrossModalColumnTransformer(
        [("image", image_transformer, _selector(image)),
         ("text", text_transformer, _selector(text)),
         ("time", TimeColumn(time_unit), [time])],
        remainder="drop", sparse_threshold=0, verbose_feature_names_out=True)
    return transformer.set_output(transform="pandas")


def _preview(names, n=3):
    names = [str(c) for c in names]
    shown = ", ".join(repr(c) for c in names[:n])
    return shown + (", ..." if len(names) > n else "")


def refuse_raw_columns(estimator, X, modality=None):
    """Raise a ``ValueError`` for X that ``estimator``, fitted inside a Pipeline, would read
    unpreprocessed: a DataFrame whose names are not the fitted ones (the raw names of
    preprocessed ones: pass the Pipeline), or an array without names where the fitted
    names are preprocessed (``<block>__<column>``).  ``modality`` (``"image"``,
    ``"text"``): X is that block only; None: whole rows.
    """
    names = getattr(estimator, "feature_names_in_", None)
    columns = getattr(X, "columns", None)
    n_image = getattr(estimator, "n_image_features_", None)
    if names is None or n_image is None:
        return
    names = [str(c) for c in names]
    if columns is None:
        preprocessed = [c for c in names if "__" in c]
        if preprocessed:
            name = type(estimator).__name__
            raise ValueError(
                f"{name} was fitted inside a Pipeline on the preprocessed columns "
                f"{_preview(preprocessed)}; X is an array without column names, so nothing "
                "shows whether it went through that preprocessing (e.g. a scaler), and raw "
                "features would be embedded without it. Pass the Pipeline itself, not "
                "pipe[-1] (e.g. CrossModalIndex(pipe, ...)), with whole rows as pipe.fit "
                "took them, or a DataFrame with the preprocessed column names "
                "(pipe[:-1].transform(X) under set_output(transform='pandas')).")
        return
    if modality is None:
        fitted = names
    else:
        n_text = getattr(estimator, "n_text_features_", len(names) - n_image - 1)
        fitted = names[:n_image] if modality == "image" else names[n_image:n_image + n_text]
    given = [str(c) for c in columns]
    if given == fitted:
        return
    raw = [c.split("__", 1)[1] if "__" in c else c for c in fitted]
    raw = [c.split("[", 1)[0] if c.endswith("]") else c for c in raw]  # time__date[years]
    name = type(estimator).__name__
    if set(raw) <= set(given) if modality is None else given == raw:
        raise ValueError(
            f"{name} was fitted inside a Pipeline on the preprocessed columns "
            f"{_preview(fitted)}; X holds the raw columns {_preview(given)}, which that "
            "preprocessing (e.g. a scaler) has not seen, so the results would be wrong. "
            "Pass the Pipeline itself, not pipe[-1] (e.g. CrossModalIndex(pipe, ...), "
            "time_period_inference(pipe, X, y)); it takes whole rows as pipe.fit took them.")
    if modality is not None:
        raise ValueError(
            f"X's columns ({_preview(given)}) are not the {modality} columns {name} was "
            f"fitted on ({_preview(fitted)}); pass the {modality} block with the fitted "
            "names, in order.")
