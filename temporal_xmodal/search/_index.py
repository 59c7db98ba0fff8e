"""Cross-modal search with a fitted estimator: a reusable index and a one-shot function."""

from numbers import Integral, Real

from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import StrOptions, validate_params
from sklearn.utils.validation import check_is_fitted

import numpy as np

from .._constraints import Interval
from .._warnings import warn
from ..metrics._scan import TimeFilter, topk
from ..time import instants, to_duration
from ._pipeline import EMBEDDER, embed, estimator_device, final_estimator
from ._results import SearchResult, check_ids, check_payload, format_result
from ._exact import as_embedding_tensor, build_faiss_index, import_faiss, topk_faiss

_MODALITIES = ("image", "text")
_BACKENDS = ("torch", "faiss")
#: The parameters the fitted index is built with (the gallery's embeddings, times and search
#: structure); ``query_modality`` and ``working_memory`` are read at each search.
_BUILT_WITH = ("estimator", "modality", "time", "backend")
#: Constraints of the parameters shared by the search functions.
CONSTRAINTS = {
    "estimator": EMBEDDER,
    "k": [Interval(Integral, 1, None, closed="left")],
    "working_memory": [Interval(Real, 0, None, closed="neither"), None],
    "as_frame": [StrOptions({"auto"}), "boolean"],
    "ids": ["array-like", None],
}


def _other(modality):
    return "text" if modality == "image" else "image"


def _same(value, fitted):
    """Whether a parameter still holds its value at fit: the same object, or equal values (an
    estimator only as the same object)."""
    if value is fitted:
        return True
    if hasattr(value, "get_params") or hasattr(fitted, "get_params"):
        return False
    try:
        return bool(np.array_equal(np.asarray(value), np.asarray(fitted)))
    except (TypeError, ValueError):
        return False


class CrossModalIndex(BaseEstimator):
    """A gallery embedded once at chosen instants, searched many times.

    ``CrossModalIndex(est, modality="text", time=1890).fit(X_text)`` projects the gallery at
    1890; ``.search(X_image, k, time=1910)`` projects the queries at 1910 and returns each one's
    ``k`` nearest gallery items (exact, chunked within ``working_memory``).  Fitted with one date
    per gallery item, ``search(..., within="180D")`` searches each query's candidates within 180
    days of its date.  Read more in docs/search.md.

    Parameters
    ----------
    estimator : fitted cross-modal estimator or Pipeline ending in one
        Not refitted.  Through a Pipeline, gallery and queries are whole rows as ``pipe.fit``
        took them (each row at its own time when ``time`` is None) or the modality's own
        columns; ``pipe[-1]`` alone is refused where the column names show it.
    modality : {"text", "image"}, default="text"
        Modality of the gallery.
    query_modality : {"image", "text"} or None, default=None
        Modality of the queries; ``None``: the other one.
    time : scalar, array-like of shape (n_gallery,) or None, default=None
        Instant(s) at which the gallery is projected (on the estimator's time axis, or dates),
        passed unchanged to ``transform_<modality>``; also the dates ``within`` filters by.
    backend : {"torch", "faiss"}, default="torch"
        As in :func:`search_embeddings`, torch on the estimator's device.
    working_memory : float or None, default=None
        Budget of one score block in MiB, as in :func:`search_embeddings`.

    Attributes
    ----------
    embeddings_ : torch.Tensor of shape (n_gallery, embedding_dim)
        The gallery's embeddings, on :attr:`device_`, the estimator's device.
    device_ : torch.device
    n_items_ : int
    times_ : ndarray of float64, shape (n_gallery,), or None
        The gallery's times on the estimator's time axis (in its ``time_unit``).
    payload_, ids_ : object or None
        The payload and ids of :meth:`fit` (ids: else the index of a pandas gallery).
    faiss_index_ : faiss.IndexFlatIP
        Only with ``backend="faiss"``.

    Notes
    -----
    After a change of ``estimator``, ``modality``, ``time`` or ``backend``, fit again: a search
    before that raises a :class:`~sklearn.exceptions.NotFittedError` naming the parameter.
    """

    _parameter_constraints = {
        "estimator": CONSTRAINTS["estimator"],
        "modality": [StrOptions(set(_MODALITIES))],
        "query_modality": [StrOptions(set(_MODALITIES)), None],
        "time": "no_validation",
        "backend": [StrOptions(set(_BACKENDS))],
        "working_memory": CONSTRAINTS["working_memory"],
    }

    def __init__(self, estimator, *, modality="text", query_modality=None, time=None,
                 backend="torch", working_memory=None):
        self.estimator = estimator
        self.modality = modality
        self.query_modality = query_modality
        self.time = time
        self.backend = backend
        self.working_memory = working_memory

    def fit(self, X, y=None, *, payload=None, ids=None):
        """Embed the gallery ``X`` at :attr:`time` and keep it.

        Parameters
        ----------
        X : array-like of shape (n_gallery, n_<modality>_features)
            The gallery's feature block (no time column); through a Pipeline, whole rows or the
            block's own columns.
        y : None
            Ignored.
        payload : sequence, pandas Series/DataFrame or None, default=None
            One entry per gallery item (caption, file path, ...), joined to the results.
        ids : array-like of shape (n_gallery,) or None, default=None
            The results' ``gallery_id`` column; default: the index of a pandas ``X``, else none.

        Returns
        -------
        self : CrossModalIndex
        """
        self._validate_params()
        if self.backend == "faiss":
            import_faiss()
        check_is_fitted(self.estimator)
        ids = check_ids(ids, X, "ids", "gallery item")
        self.device_ = estimator_device(self.estimator)
        Z = embed(self.estimator, X, self.modality, self.time)
        self.embeddings_ = as_embedding_tensor(Z, "gallery embeddings", self.device_)
        self.n_items_ = self.embeddings_.shape[0]
        self.times_ = self._axis_times(self.time, self.n_items_, "time")
        self.payload_ = check_payload(payload, self.n_items_)
        self.ids_ = ids
        if self.backend == "faiss":
            self.faiss_index_ = build_faiss_index(self.embeddings_)
        elif hasattr(self, "faiss_index_"):  # a refit with backend="torch"
            del self.faiss_index_
        self._built_with = {name: getattr(self, name) for name in _BUILT_WITH}
        return self

    def _check_fitted(self):
        """Check that the index is fitted with its present parameters: a ``set_params`` of one of
        :data:`_BUILT_WITH` since the fit raises a NotFittedError that names it."""
        check_is_fitted(self, "embeddings_")
        built = self._built_with
        changed = [name for name in _BUILT_WITH if not _same(getattr(self, name), built[name])]
        if not changed:
            return
        parts = [f"{name}={built[name]!r} at fit, {getattr(self, name)!r} now"
                 if name in ("modality", "backend") else f"another {name} at fit"
                 for name in changed]
        raise NotFittedError(
            f"This CrossModalIndex was fitted with other parameters ({'; '.join(parts)}): "
            "set_params after fit leaves the gallery's embeddings and search structure as fit "
            "built them. Refit the index (index.fit(X_gallery)) after changing "
            f"{' or '.join(changed)}.")

    def _time_unit(self):
        """The estimator's ``time_unit`` (years for an embedder without one)."""
        return getattr(final_estimator(self.estimator), "time_unit", "years")

    def _axis_times(self, time, n, name):
        """``time`` as n float64 times on the estimator's axis (None stays None)."""
        return instants(time, n, self._time_unit(), name=name)

    def _within(self, within, query_times):
        """The search's :class:`TimeFilter` for ``within`` (None: no filter)."""
        if within is None:
            return None
        if self.times_ is None:
            raise ValueError(
                "within= filters the gallery by date, but this index has no gallery dates: "
                "fit it with time= (one date per gallery item, e.g. CrossModalIndex(est, "
                "time=gallery_dates).fit(X_gallery)).")
        if query_times is None:
            raise ValueError("within= needs the queries' dates: pass time= to search (one "
                             "date per query, or one for all).")
        if np.isnan(query_times).any() or np.isnan(self.times_).any():
            raise ValueError("within= cannot filter by a missing (NaN) date: "
                             f"{int(np.isnan(query_times).sum())} query and "
                             f"{int(np.isnan(self.times_).sum())} gallery dates are missing.")
        axis = getattr(final_estimator(self.estimator), "time_axis_", None)
        span = None if axis is None else axis.span_
        within = to_duration(within, self._time_unit(), name="within", span=span)
        return TimeFilter(query_times, self.times_, within)

    @validate_params(
        {"X": ["array-like", "sparse matrix"], "k": CONSTRAINTS["k"], "time": "no_validation",
         "within": "no_validation", "ids": CONSTRAINTS["ids"],
         "as_frame": CONSTRAINTS["as_frame"]},
        prefer_skip_nested_validation=True,
    )
    def search(self, X, k=10, *, time=None, within=None, ids=None, as_frame="auto"):
        """The ``k`` nearest gallery items of each query, the queries projected at ``time``.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_<query modality>_features)
            The queries' feature block (no time column); through a Pipeline, whole rows or the
            block's own columns.
        k : int, default=10
            Neighbours per query (at most the gallery size).
        time : scalar, array-like of shape (n_queries,) or None, default=None
            Instant(s) at which the queries are projected, passed unchanged to the estimator;
            with ``within``, also the queries' dates.
        within : float, str, timedelta or None, default=None
            The date filter: only gallery items with ``|t_query - t_gallery| <= within`` are
            candidates.  A number in the estimator's ``time_unit``, a duration (``"180D"``) or a
            share of the training span (``"5%"``).
        ids : array-like of shape (n_queries,) or None, default=None
            The ``query`` column; default: the index of a pandas ``X``, else ``0 .. n_queries - 1``.
        as_frame : {"auto", True, False}, default="auto"
            A DataFrame (``"auto"``: when pandas is installed), else a :class:`SearchResult`.

        Returns
        -------
        result : pandas.DataFrame or SearchResult
            See :meth:`SearchResult.to_frame`.  Under ``within`` a query with fewer than ``k``
            candidates gets fewer results, with a warning that counts such queries.
        """
        self._check_fitted()
        ids = check_ids(ids, X, "ids", "query")
        modality = self.query_modality or _other(self.modality)
        n_queries = X.shape[0] if hasattr(X, "shape") else len(X)
        time_filter = self._within(within, None if within is None else
                                   self._axis_times(time, n_queries, "time"))
        Z = embed(self.estimator, X, modality, time)
        return format_result(self._search(Z, k, ids, time_filter), as_frame)

    @validate_params({"query": ["array-like"], "k": CONSTRAINTS["k"], "ids": CONSTRAINTS["ids"]},
                     prefer_skip_nested_validation=True)
    def search_embeddings(self, query, k=10, *, ids=None):
        """Search the gallery with query embeddings already in its space.

        Parameters
        ----------
        query : array-like of shape (n_queries, embedding_dim)
        k : int, default=10
        ids : array-like of shape (n_queries,) or None, default=None
            As in :meth:`search`.

        Returns
        -------
        result : SearchResult
        """
        self._check_fitted()
        return self._search(query, k, check_ids(ids, query, "ids", "query"), None)

    def _search(self, query, k, ids, time_filter):
        """The top ``k`` of the query embeddings (checked here), among each query's candidates."""
        Q = as_embedding_tensor(query, "query embeddings", self.device_)
        if Q.shape[1] != self.embeddings_.shape[1]:
            raise ValueError(f"query embeddings have {Q.shape[1]} columns; the gallery's have "
                             f"{self.embeddings_.shape[1]}.")
        Q = Q.to(self.embeddings_.dtype)
        if self.backend == "faiss":
            scores, indices = topk_faiss(Q, None, k, index=self.faiss_index_,
                                         time_filter=time_filter)
        else:
            scores, indices = topk(Q, self.embeddings_, k, working_memory=self.working_memory,
                                   time_filter=time_filter)
        if time_filter is not None and (short := (indices < 0).any(axis=1)).any():
            warn(f"{int(short.sum())} of {len(indices)} queries have fewer than "
                 f"{indices.shape[1]} gallery items within {time_filter.within:g} "
                 "(time axis units) of their date: they get fewer results (index -1, score "
                 "-inf in the arrays; no row in the table).")
        return SearchResult(scores, indices, self.payload_, query_ids=ids,
                            gallery_ids=self.ids_)


@validate_params(
    {
        "estimator": CONSTRAINTS["estimator"],
        "X_query": ["array-like", "sparse matrix"],
        "X_gallery": ["array-like", "sparse matrix"],
        "k": CONSTRAINTS["k"],
        "direction": [StrOptions({"i2t", "t2i", "i2i", "t2t"})],
        "query_time": "no_validation",
        "gallery_time": "no_validation",
        "within": "no_validation",
        "payload": "no_validation",
        "query_ids": CONSTRAINTS["ids"],
        "gallery_ids": CONSTRAINTS["ids"],
        "backend": [StrOptions(set(_BACKENDS))],
        "working_memory": CONSTRAINTS["working_memory"],
        "as_frame": CONSTRAINTS["as_frame"],
    },
    prefer_skip_nested_validation=True,
)
def cross_modal_search(estimator, X_query, X_gallery, k=10, *, direction="i2t",
                       query_time=None, gallery_time=None, within=None, payload=None,
                       query_ids=None, gallery_ids=None, backend="torch", working_memory=None,
                       as_frame="auto"):
    """One-shot search: ``CrossModalIndex(...).fit(X_gallery).search(X_query, k)``, index not kept.

    Parameters
    ----------
    estimator, backend, working_memory
        As in :class:`CrossModalIndex`.
    X_query, X_gallery : array-like
        The query and gallery feature blocks (no time column).
    k : int, default=10
    direction : {"i2t", "t2i", "i2i", "t2t"}, default="i2t"
        Query modality → gallery modality.
    query_time, gallery_time : scalar, array-like or None, default=None
        Instant(s) at which queries and gallery are projected (one value, or one per row).
    within, as_frame
        As in :meth:`CrossModalIndex.search`.
    payload : sequence, pandas Series/DataFrame or None, default=None
        One entry per gallery item, joined to the results.
    query_ids, gallery_ids : array-like or None, default=None
        The ``query`` and ``gallery_id`` columns; default: the index of a pandas block.

    Returns
    -------
    result : pandas.DataFrame or SearchResult
        As :meth:`CrossModalIndex.search` returns it.
    """
    query_ids = check_ids(query_ids, X_query, "query_ids", "query")
    gallery_ids = check_ids(gallery_ids, X_gallery, "gallery_ids", "gallery item")
    names = {"i": "image", "t": "text"}
    index = CrossModalIndex(estimator, modality=names[direction[2]],
                            query_modality=names[direction[0]], time=gallery_time,
                            backend=backend, working_memory=working_memory)
    index.fit(X_gallery, payload=payload, ids=gallery_ids)
    return index.search(X_query, k, time=query_time, within=within, ids=query_ids,
                        as_frame=as_frame)

