"""The diachronic evaluation protocols of the DCM spec (``diachronic_and_binned.md`` §8).

Every protocol takes any fitted estimator of the library and an evaluation set
``X = [image | text | time]`` (plus labels where relevance is needed).  The
estimator is only used through its public projections:

* ``estimator.transform(X)``: every item at its **own** time (Diachronic
  Operation #1 projections, spec §8.0);
* ``estimator.transform_image(X_image, time=t)`` / ``transform_text``: items
  projected at an arbitrary instant ``t`` (Operation #3).  Static models
  ignore ``t``; time-conditioned ones (``_time_at_inference = True``) are
  projected there.

Instants
--------
The spec's instants are months.  Here they are **time bins**: the ``bins``
argument of each binned protocol is an int (that many equal-width bins), a
float (the bin width in the units of the time column, e.g. ``1/12`` for months
when time is in fractional years), an array of edges, or a fitted
:class:`~temporal_xmodal.binning.TimeBins` (used as it is, e.g. the bins of a
binned model).  Anything else but a fitted ``TimeBins`` is fitted on the time
column of the evaluation X (empty bins are merged into a neighbour by
``TimeBins``, with a warning).  An item's instant is its bin; "projecting at
instant b" means projecting at the bin centre ``centers_[b]``.  Candidates
"of instant b projected at b" are projected at their **own** timestamps (the
rows of ``transform(X)``), which equal the instant when the time column is
already discretised at the bin granularity (the spec's monthly setting) and
keep each candidate at its true time otherwise.

Relevance
---------
``y`` holds class labels (1-D) or a multilabel indicator (2-D); two items are
relevant to each other when they share a label (spec §8.0; the DCM data are
single-label).  Candidate pools include the query's own counterpart (§8.0).
Directions are always image→text (``"i2t"``) and text→image (``"t2i"``) and
their arithmetic mean (``"mean"``).

Results
-------
Scalar results are plain dicts ``{"i2t", "t2i", "mean"}``.  Tabular results
(per bin, per query) are :class:`ResultTable` objects: a read-only mapping of
column name → 1-D numpy array that works without pandas and converts with
:meth:`ResultTable.to_frame` (or ``pandas.DataFrame(dict(table))``).
"""

import copy
import numbers
from collections.abc import Mapping

import numpy as np
from sklearn.utils import check_random_state

from .._validation import check_labels
from ..base import embed_with_time, layout_blocks
from ..time import time_use
from ..binning import TimeBins
from ..metrics import cross_modal_scores, mean_average_precision
from ..metrics._retrieval import _nanmean

__all__ = [
    "ResultTable",
    "coarse_alignment",
    "cross_modal_evolution",
    "local_alignment",
    "semantic_dispersion",
    "temporally_bounded_retrieval",
    "time_period_inference",
]

_DIRECTIONS = ("i2t", "t2i")
_QUERY_TIMES = {"instant": "instant", "target_bin": "instant", "own": "own", "own_bin": "own"}
_AGGREGATES = {"micro": "micro", "macro": "macro", "macro_over_bins": "macro"}
_AP_NORMALISERS = ("relevant_in_topk", "min_k_total")


# ---------------------------------------------------------------- result type
class ResultTable(Mapping):
    """A small column table: a read-only mapping of column name → 1-D array.

    Returned by the protocols for per-bin and per-query results so that they
    need no pandas; ``table["center"]`` gives a column, ``table.to_frame()`` a
    :class:`pandas.DataFrame` and ``table.records()`` a list of row dicts.

    Parameters
    ----------
    columns : mapping of str to array-like
        Columns of equal length.

    Attributes
    ----------
    n_rows : int
        Number of rows.
    """

    def __init__(self, columns):
        self._columns = {str(name): np.asarray(col) for name, col in columns.items()}
        lengths = {col.shape[0] for col in self._columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"All columns must have the same length; got {sorted(lengths)}.")
        self.n_rows = lengths.pop() if lengths else 0

    def __getitem__(self, name):
        return self._columns[name]

    def __iter__(self):
        return iter(self._columns)

    def __len__(self):
        return len(self._columns)

    @property
    def columns(self):
        """Column names, in order (list of str)."""
        return list(self._columns)

    def records(self):
        """The rows as a list of ``{column: value}`` dicts (numpy scalars unwrapped).

        Returns
        -------
        rows : list of dict
        """
        return [
            {name: col[i].item() if hasattr(col[i], "item") else col[i]
             for name, col in self._columns.items()}
            for i in range(self.n_rows)
        ]

    def to_frame(self):
        """Convert to a :class:`pandas.DataFrame` (needs pandas).

        Returns
        -------
        frame : pandas.DataFrame
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - pandas is installed in the tests
            raise ImportError(
                "ResultTable.to_frame needs pandas: pip install temporal-xmodal[pandas]"
            ) from exc
        return pd.DataFrame(self._columns)

    def __repr__(self):
        header = " | ".join(self._columns)
        rows = [
            " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row.values())
            for row in self.records()[:10]
        ]
        more = [f"... ({self.n_rows} rows)"] if self.n_rows > 10 else []
        return "\n".join([f"ResultTable({self.n_rows} rows)", header, *rows, *more])


# ------------------------------------------------------------------- helpers
def _project_own_time(estimator, X):
    """Embeddings at own time and the raw blocks: ``(Zi, Zt, X_img, X_txt, time)``.

    ``transform`` runs first so that an unfitted estimator raises
    ``NotFittedError`` and a badly shaped X the estimator's own error.
    """
    Zi, Zt, time, _ = embed_with_time(estimator, X)
    X_img, X_txt, _ = layout_blocks(estimator, X)
    return Zi, Zt, X_img, X_txt, time


def _labels(y, n):
    if y is None:
        raise ValueError(
            "y is required: relevance in this protocol is 'shares a label' (give class "
            "labels or a multilabel indicator)."
        )
    return check_labels(y, n, required=False)


def _resolve_bins(bins, time):
    """A fitted bin partition: a fitted ``TimeBins`` as is, anything else fitted on ``time``."""
    if all(hasattr(bins, a) for a in ("edges_", "centers_", "n_bins_", "transform")):
        return bins
    if isinstance(bins, TimeBins):
        return copy.deepcopy(bins).fit(time)
    return TimeBins(bins=bins).fit(time)


def _check_int(value, name, *, allow_none=False, minimum=1):
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) \
            or value < minimum:
        kind = f"an int >= {minimum}" + (" or None" if allow_none else "")
        raise ValueError(f"{name} must be {kind}; got {value!r}.")
    return int(value)


def _check_choice(value, name, choices):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}; got {value!r}.")
    return value


def _check_query_index(query_index, n):
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


def _scores_dict(i2t, t2i):
    return {"i2t": float(i2t), "t2i": float(t2i), "mean": float((i2t + t2i) / 2)}


def _sample_queries(labels, per_category, rng):
    """``per_category`` random rows of each category (a label column if multilabel)."""
    if labels.ndim == 1:
        members = [np.flatnonzero(labels == c) for c in np.unique(labels)]
    else:
        members = [np.flatnonzero(labels[:, j]) for j in range(labels.shape[1])]
    chosen = []
    for rows in members:
        if per_category is not None and rows.size > per_category:
            rows = rng.choice(rows, per_category, replace=False)
        chosen.append(rows)
    return np.unique(np.concatenate(chosen)) if chosen else np.empty(0, dtype=np.intp)


def _topk_mean(S, k):
    """Mean of the (at most) ``k`` largest finite entries of each row; NaN if none."""
    if S.shape[1] == 0:
        return np.full(S.shape[0], np.nan)
    kk = min(k, S.shape[1])
    top = -np.partition(-S, kk - 1, axis=1)[:, :kk]
    finite = np.isfinite(top)
    count = finite.sum(axis=1)
    total = np.where(finite, top, 0.0).sum(axis=1)
    return np.divide(total, count, out=np.full(S.shape[0], np.nan), where=count > 0)


# ----------------------------------------------------------------- protocols
def coarse_alignment(estimator, X, y, *, k=None):
    """Coarse semantic alignment: full-ranking mAP over all items at their own time.

    Spec ``diachronic_and_binned.md`` §8.1, Diachronic Operation #1: every
    image and text is projected at its own timestamp (``estimator.transform``;
    a binned model uses its own-bin aligned embedding), each image query ranks
    **all** texts from all instants and vice versa, and a candidate is
    relevant when it shares the query's label (no time constraint).  The
    candidate pool includes the query's own counterpart (§8.0).

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder
        Any estimator of the library (static ones ignore time).
    X : array-like of shape (n_samples, n_features_in_)
        Evaluation items, ``[image | text | time]``.
    y : array-like of shape (n_samples,) or (n_samples, n_labels)
        Class labels or a multilabel indicator.
    k : int or None, default=None
        ``None``: full-ranking mAP (the spec).  An int: mAP@k with the
        ``relevant_in_topk`` normaliser (spec A8).

    Returns
    -------
    scores : dict
        ``{"i2t": float, "t2i": float, "mean": float}``.

    Raises
    ------
    ValueError
        If ``y`` does not match X or ``k`` is not a positive int.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    k = _check_int(k, "k", allow_none=True)
    Zi, Zt, *_ = _project_own_time(estimator, X)
    labels = _labels(y, Zi.shape[0])
    res = cross_modal_scores(Zi, Zt, labels, metrics=("map",), k=k)
    return _scores_dict(res["map_i2t"], res["map_t2i"])


def local_alignment(
    estimator, X, y, *, bins=10, queries_per_category=50, k=10, query_time="instant",
    include_empty=True, ap_at_k_normaliser="relevant_in_topk", random_state=None,
    return_details=False,
):
    """Local semantic alignment: mAP@k of queries projected into every instant.

    Spec ``diachronic_and_binned.md`` §8.2 (and §8.3), Diachronic Operation
    #3.  ``queries_per_category`` random items of each category are the
    queries; each serves as an image query (I→T) and a text query (T→I).  For
    every query and every instant (time bin) b:

    * the query is projected **at the instant** (the bin centre,
      ``transform_image(x, time=centers_[b])``) with ``query_time="instant"``,
      or keeps its own-time embedding with ``query_time="own"``;
    * the candidate pool is the other-modality items of bin b, each projected
      at its own timestamp (see the module notes on instants);
    * AP@k is computed with same-label relevance.

    mAP@k is the mean over all (query, instant) pairs.

    Ambiguity choices: pairs whose pool holds no item of the query's category
    count as AP = 0 (``include_empty=True``, spec A11) and are skipped
    otherwise; the AP@k denominator is the number of relevant items within the
    top k (``ap_at_k_normaliser="relevant_in_topk"``, spec A8).  Bins that hold
    no evaluation item at all (possible only with a passed, pre-fitted
    ``TimeBins``) are not instants of the evaluation set and are skipped.

    ``query_time`` implements spec §8.3 / A7 for any estimator: ``"instant"``
    (alias ``"target_bin"``) is the literal Op #3, and the reading for
    continuous time-conditioned models; ``"own"`` (alias ``"own_bin"``) keeps
    the query's own-time embedding, which for a binned model is its own-bin
    aligned embedding f^(b(ts_i))(x) R_b(ts_i) compared against the aligned
    embeddings of bin b, the spec's default for reproducing DCM-Binned in
    Table 1.  Both give the same result for static models.

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder
    X : array-like of shape (n_samples, n_features_in_)
    y : array-like of shape (n_samples,) or (n_samples, n_labels)
    bins : int, float, array-like or fitted TimeBins, default=10
        The instants (see the module notes).
    queries_per_category : int or None, default=50
        Random queries per category (all members when a category is smaller;
        a multilabel item may be drawn for several labels and is used once).
        ``None`` uses every item as a query.
    k : int, default=10
        Cut-off of AP@k.
    query_time : {"instant", "own", "target_bin", "own_bin"}, default="instant"
        Where queries are projected (see above).
    include_empty : bool, default=True
        Count (query, instant) pairs without any relevant candidate as AP = 0.
    ap_at_k_normaliser : {"relevant_in_topk", "min_k_total"}, default="relevant_in_topk"
        Denominator of AP@k (spec A8).
    random_state : int, RandomState instance or None, default=None
        Seed of the query sampling.
    return_details : bool, default=False
        Also return the per-(query, instant) AP.

    Returns
    -------
    scores : dict
        ``{"i2t": float, "t2i": float, "mean": float}``.
    details : dict
        Only with ``return_details``: ``"query_index"`` (rows of X used as
        queries), ``"bin_centers"``, ``"n_items"`` (items per bin) and
        ``"ap_i2t"``, ``"ap_t2i"``: arrays of shape (n_queries, n_bins) with
        NaN for pairs without a relevant candidate and for empty bins.

    Raises
    ------
    ValueError
        On mismatched X/y, a bad ``k``, ``queries_per_category``,
        ``query_time`` or ``ap_at_k_normaliser``.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    k = _check_int(k, "k")
    queries_per_category = _check_int(queries_per_category, "queries_per_category",
                                      allow_none=True)
    mode = _QUERY_TIMES[_check_choice(query_time, "query_time", _QUERY_TIMES)]
    _check_choice(ap_at_k_normaliser, "ap_at_k_normaliser", _AP_NORMALISERS)
    Zi, Zt, X_img, X_txt, time = _project_own_time(estimator, X)
    labels = _labels(y, Zi.shape[0])
    time_bins = _resolve_bins(bins, time)
    item_bin = time_bins.transform(time)
    centers = np.asarray(time_bins.centers_, dtype=np.float64)
    n_bins = len(centers)
    q = _sample_queries(labels, queries_per_category, check_random_state(random_state))
    fixed_queries = mode == "own" or time_use(estimator) != "inference"

    setups = {
        "i2t": (X_img[q], Zi[q], estimator.transform_image, Zt),
        "t2i": (X_txt[q], Zt[q], estimator.transform_text, Zi),
    }
    n_items = np.bincount(item_bin, minlength=n_bins)
    ap = {}
    for direction, (feats, own_emb, project, gallery) in setups.items():
        out = np.full((q.size, n_bins), np.nan)
        for b in np.flatnonzero(n_items):
            members = np.flatnonzero(item_bin == b)
            Q = own_emb if fixed_queries else project(feats, time=float(centers[b]))
            _, out[:, b] = mean_average_precision(
                Q, gallery[members], labels[q], labels[members], k=k,
                ap_at_k_normaliser=ap_at_k_normaliser, return_per_query=True,
            )
        ap[direction] = out
    nonempty = n_items > 0
    means = {}
    for direction, out in ap.items():
        pairs = out[:, nonempty]
        means[direction] = (np.nan_to_num(pairs, nan=0.0).mean() if include_empty and pairs.size
                            else _nanmean(pairs))
    scores = _scores_dict(means["i2t"], means["t2i"])
    if not return_details:
        return scores
    details = {"query_index": q, "bin_centers": centers, "n_items": n_items,
               "ap_i2t": ap["i2t"], "ap_t2i": ap["t2i"]}
    return scores, details


def temporally_bounded_retrieval(estimator, X, y, *, bins=10, aggregate="micro"):
    """Temporally-bounded retrieval: each query ranks only the items of its own bin.

    Spec ``diachronic_and_binned.md`` §8.4, Diachronic Operation #4 (the
    "preservation of temporal locality biases"): each query is projected at
    its own timestamp and ranks only the other-modality items of the same
    instant (time bin), also at their own timestamps (rows of
    ``transform(X)``); relevance is the same label; full-ranking AP.  Static
    models get the same candidate restriction (they are "artificially fed
    with the relevant time period", P1 §5.6).

    Ambiguity choice (spec A10): the overall figure pools the queries of all
    bins (``aggregate="micro"``, default); ``"macro"`` (alias
    ``"macro_over_bins"``) averages the per-bin mAPs.  Both can be read from
    the per-bin table (``n_items`` gives the micro weights).

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder
    X : array-like of shape (n_samples, n_features_in_)
    y : array-like of shape (n_samples,) or (n_samples, n_labels)
    bins : int, float, array-like or fitted TimeBins, default=10
        The instants (see the module notes).
    aggregate : {"micro", "macro", "macro_over_bins"}, default="micro"
        How the overall figure combines the bins.

    Returns
    -------
    scores : dict
        ``{"i2t": float, "t2i": float, "mean": float}``.
    per_bin : ResultTable
        One row per bin: ``bin``, ``start``, ``end`` (edges), ``center``,
        ``n_items``, ``map_i2t``, ``map_t2i``, ``map_mean`` (NaN for bins
        without items).  The per-month curve of P1 Fig. 4.

    Raises
    ------
    ValueError
        On mismatched X/y or a bad ``aggregate``.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    mode = _AGGREGATES[_check_choice(aggregate, "aggregate", _AGGREGATES)]
    Zi, Zt, _, _, time = _project_own_time(estimator, X)
    labels = _labels(y, Zi.shape[0])
    time_bins = _resolve_bins(bins, time)
    item_bin = time_bins.transform(time)
    n_bins = int(time_bins.n_bins_)
    n_items = np.bincount(item_bin, minlength=n_bins)
    per_bin = {d: np.full(n_bins, np.nan) for d in _DIRECTIONS}
    per_query = {d: np.full(Zi.shape[0], np.nan) for d in _DIRECTIONS}
    for b in np.flatnonzero(n_items):
        members = np.flatnonzero(item_bin == b)
        for direction, (Q, G) in {"i2t": (Zi, Zt), "t2i": (Zt, Zi)}.items():
            m, ap = mean_average_precision(Q[members], G[members], labels[members],
                                           labels[members], return_per_query=True)
            per_bin[direction][b] = m
            per_query[direction][members] = ap
    source = per_query if mode == "micro" else per_bin
    scores = _scores_dict(_nanmean(source["i2t"]), _nanmean(source["t2i"]))
    edges = np.asarray(time_bins.edges_, dtype=np.float64)
    table = ResultTable({
        "bin": np.arange(n_bins),
        "start": edges[:-1],
        "end": edges[1:],
        "center": np.asarray(time_bins.centers_, dtype=np.float64),
        "n_items": n_items,
        "map_i2t": per_bin["i2t"],
        "map_t2i": per_bin["t2i"],
        "map_mean": (per_bin["i2t"] + per_bin["t2i"]) / 2,
    })
    return scores, table


def time_period_inference(estimator, X, y, *, window, k=50):
    """Media time-period inference: t-mAP@k with same-label, same-period relevance.

    Spec ``diachronic_and_binned.md`` §8.5, Diachronic Operation #1: every
    image and text is a query projected at its own timestamp and ranks all
    other-modality items at their own timestamps (``transform(X)``); a
    candidate is relevant when it shares the query's label **and**
    ``|t_query - t_candidate| <= window`` (inclusive boundary, spec A4);
    AP@k with the ``relevant_in_topk`` normaliser (A8).

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder
    X : array-like of shape (n_samples, n_features_in_)
    y : array-like of shape (n_samples,) or (n_samples, n_labels)
    window : float
        Half-width of the relevant period, in the units of the time column.
        The paper uses 1 month (spec A9): ``window=1`` with a month index,
        ``1/12`` with fractional years.
    k : int or None, default=50
        Cut-off (t-mAP@50 in the thesis); ``None`` ranks everything.

    Returns
    -------
    scores : dict
        ``{"i2t": float, "t2i": float, "mean": float}``.

    Raises
    ------
    ValueError
        On mismatched X/y, a negative / non-finite ``window`` or a bad ``k``.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    if isinstance(window, (bool, np.bool_)) or not isinstance(window, numbers.Real) \
            or not np.isfinite(window) or window < 0:
        raise ValueError(
            f"window must be a finite non-negative number (time units); got {window!r}."
        )
    k = _check_int(k, "k", allow_none=True)
    Zi, Zt, _, _, time = _project_own_time(estimator, X)
    labels = _labels(y, Zi.shape[0])
    res = cross_modal_scores(Zi, Zt, labels, metrics=("map",), time=time,
                             time_window=float(window), k=k)
    return _scores_dict(res["map_i2t"], res["map_t2i"])


def _query_against_bins(estimator, X, query_index, bins, direction):
    """Shared set-up of the browsing protocols (Op #1/#2): queries, gallery, bins.

    Returns ``(q, scalar, Q, G, item_bin, centers)``: query rows, whether a
    scalar index was given, query and gallery embeddings (own-time
    projections, modalities by ``direction``), each item's bin and the bin
    centres.
    """
    _check_choice(direction, "direction", _DIRECTIONS)
    Zi, Zt, _, _, time = _project_own_time(estimator, X)
    q, scalar = _check_query_index(query_index, Zi.shape[0])
    Q, G = (Zi[q], Zt) if direction == "i2t" else (Zt[q], Zi)
    time_bins = _resolve_bins(bins, time)
    centers = np.asarray(time_bins.centers_, dtype=np.float64)
    return q, scalar, Q, G, time_bins.transform(time), centers


def semantic_dispersion(estimator, X, query_index, *, bins=10, k=5, direction="i2t",
                        exclude_self=False):
    """Semantic dispersion over time: mean top-k similarity of a query per instant.

    Spec ``diachronic_and_binned.md`` §8.6, Diachronic Operation #2: the
    query (the image of row ``query_index`` for ``direction="i2t"``, its text
    for ``"t2i"``) is projected at its own timestamp; for every instant (time
    bin) the candidates are the other-modality items of that bin at their own
    timestamps; the value is the mean of the top ``k`` cosine similarities,
    regardless of category.  Ambiguity choice (spec A11): a bin with fewer
    than ``k`` candidates averages those available; a bin with none gives NaN.
    The query's own counterpart is a candidate of its bin unless
    ``exclude_self``.

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder
    X : array-like of shape (n_samples, n_features_in_)
    query_index : int or array-like of int
        Row position(s) of the query item(s) in X.
    bins : int, float, array-like or fitted TimeBins, default=10
        The instants (see the module notes).
    k : int, default=5
        Number of nearest candidates averaged.
    direction : {"i2t", "t2i"}, default="i2t"
        Image query over texts (the spec's figures) or text query over images.
    exclude_self : bool, default=False
        Leave the query's own counterpart out of the candidates.

    Returns
    -------
    dispersion : ndarray of shape (n_queries, n_bins)
        Mean top-k similarity in [-1, 1]; NaN for bins without candidates.
        Shape ``(n_bins,)`` when ``query_index`` is a scalar.
    centers : ndarray of shape (n_bins,)
        Bin centres (the x axis of the plot).

    Raises
    ------
    ValueError
        On an out-of-range ``query_index``, a bad ``k`` or ``direction``.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    k = _check_int(k, "k")
    q, scalar, Q, G, item_bin, centers = _query_against_bins(estimator, X, query_index, bins,
                                                             direction)
    out = np.full((q.size, len(centers)), np.nan)
    for b in range(len(centers)):
        members = np.flatnonzero(item_bin == b)
        if members.size == 0:
            continue
        S = Q @ G[members].T
        if exclude_self:
            S[members[None, :] == q[:, None]] = -np.inf
        out[:, b] = _topk_mean(S, k)
    return (out[0] if scalar else out), centers


def cross_modal_evolution(estimator, X, query_index, *, bins=10, top_bins=20, direction="i2t",
                          exclude_self=False):
    """Cross-modal evolution: the bins holding the items closest to a query.

    Spec ``diachronic_and_binned.md`` §8.7, Diachronic Operation #1 plus bin
    ranking: the query and all items are projected at their own timestamps
    (``transform(X)``); the score of bin b is the maximum cosine similarity
    between the query and the other-modality items of b; the ``top_bins``
    best bins are kept, each with its nearest item.  Bins without candidates
    are never listed.  The query's own counterpart is a candidate unless
    ``exclude_self`` (spec §8.0: pools include the counterpart).

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder
    X : array-like of shape (n_samples, n_features_in_)
    query_index : int or array-like of int
        Row position(s) of the query item(s) in X.
    bins : int, float, array-like or fitted TimeBins, default=10
        The instants (see the module notes).
    top_bins : int, default=20
        Number of bins kept per query (fewer when fewer bins have candidates).
    direction : {"i2t", "t2i"}, default="i2t"
        Image query over texts or text query over images.
    exclude_self : bool, default=False
        Leave the query's own counterpart out of the candidates.

    Returns
    -------
    evolution : list of ResultTable
        One table per query (a single table when ``query_index`` is a
        scalar), rows sorted by decreasing similarity (ties: earlier bin
        first), columns ``bin``, ``center``, ``item`` (row position in X of
        the nearest item), ``similarity`` and ``is_query_bin`` (the bin of the
        query's own timestamp, black-filled in the paper's figures).

    Raises
    ------
    ValueError
        On an out-of-range ``query_index``, a bad ``top_bins`` or ``direction``.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    top_bins = _check_int(top_bins, "top_bins")
    q, scalar, Q, G, item_bin, centers = _query_against_bins(estimator, X, query_index, bins,
                                                             direction)
    n_bins = len(centers)
    S = Q @ G.T
    if exclude_self:
        S[np.arange(q.size), q] = -np.inf
    best_sim = np.full((q.size, n_bins), -np.inf)
    best_item = np.full((q.size, n_bins), -1, dtype=np.intp)
    rows = np.arange(q.size)
    for b in range(n_bins):
        members = np.flatnonzero(item_bin == b)
        if members.size == 0:
            continue
        arg = np.argmax(S[:, members], axis=1)
        best_item[:, b] = members[arg]
        best_sim[:, b] = S[rows, members[arg]]
    query_bin = item_bin[q]
    tables = []
    for j in range(q.size):
        valid = np.flatnonzero(np.isfinite(best_sim[j]))
        order = valid[np.argsort(-best_sim[j, valid], kind="stable")][:top_bins]
        tables.append(ResultTable({
            "bin": order,
            "center": centers[order],
            "item": best_item[j, order],
            "similarity": best_sim[j, order],
            "is_query_bin": order == query_bin[j],
        }))
    return tables[0] if scalar else tables
