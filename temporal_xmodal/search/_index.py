"""Cross-modal search with a fitted estimator: a reusable index and a one-shot function.

Queries and gallery are each projected at the instants the user chooses (passed
unchanged to the estimator's ``transform_image`` / ``transform_text``), then
searched exactly with :func:`~temporal_xmodal.search.search_embeddings`.
"""

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
    """Whether a parameter still holds the value the index was fitted with: the same object,
    or (scalars, arrays of times, strings) equal values; an estimator only as the same
    object."""
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

    ``CrossModalIndex(est, modality="text", time=1890).fit(X_text)`` projects
    every gallery caption at 1890 once; ``.search(X_image, k, time=1910)``
    then projects the query pictures at 1910 and returns each one's ``k``
    nearest captions (exact inner-product search, chunked: memory stays
    bounded by ``working_memory`` whatever the gallery size).  The results'
    ``query`` column carries the caller's ids: the index of a DataFrame of
    queries, or ``ids=`` (``search(X_image[[5, 42]], ids=[5, 42])``).

    The date filter: fit with one date per gallery item
    (``time=gallery_dates``: each item is also embedded at its own date) and
    ``search(X, k, time=query_dates, within="180D")`` returns each query's
    ``k`` nearest among the gallery items dated within 180 days of the query's
    date — what a user holding the dates asks of any model, static ones
    included ("same category, within half a year").  Exact and chunked like
    the unfiltered search; a query with fewer than ``k`` candidates gets
    fewer rows (empty slots: index -1, score -inf in the arrays), with a
    warning that counts them.

    Read more in the user guide: docs/search.md.

    Parameters
    ----------
    estimator : fitted cross-modal estimator or Pipeline ending in one
        Any of the library's estimators (or an object with ``transform_image``
        and ``transform_text``), or the fitted ``Pipeline`` it ends (e.g.
        ``make_crossmodal_transformer`` + an estimator): its preprocessing
        then runs on the gallery and the queries, which are whole rows as
        ``pipe.fit`` took them (each row at its own time when ``time`` is
        None) or the modality's own columns.  Give the Pipeline, not
        ``pipe[-1]``, which would skip the preprocessing (refused when the
        column names show it).  It is not refitted.
    modality : {"text", "image"}, default="text"
        Modality of the gallery.
    query_modality : {"image", "text"} or None, default=None
        Modality of the queries; ``None``: the other one (cross-modal
        search).  Same-modality search (e.g. caption → caption) is allowed.
    time : scalar, array-like of shape (n_gallery,) or None, default=None
        Instant(s) at which the gallery is projected, on the estimator's time
        axis (e.g. years) or dates; passed unchanged to
        ``transform_<modality>``.  Required by time-conditioned estimators,
        ignored by static ones for the embedding; kept as :attr:`times_`,
        the gallery's dates that ``search(within=...)`` filters by.
    backend : {"torch", "faiss"}, default="torch"
        Search engine: chunked exact top-k on the estimator's device
        (threshold-pruned cache-sized blocks on the CPU, large blocks on a GPU),
        or ``faiss.IndexFlatIP`` (exact, float32, CPU; the ``faiss`` extra).
    working_memory : float or None, default=None
        Budget of one score block in MiB.  Default: 64 on the CPU; on a GPU
        a quarter of its free memory, at most 8 GiB.

    Attributes
    ----------
    embeddings_ : torch.Tensor of shape (n_gallery, embedding_dim)
        The gallery's embeddings, on :attr:`device_`.
    device_ : torch.device
        Where the similarities are computed (the estimator's device).
    n_items_ : int
        Gallery size.
    times_ : ndarray of float64, shape (n_gallery,), or None
        The gallery's times on the estimator's time axis (``time`` read in
        its ``time_unit``); None without ``time``.
    payload_ : object or None
        The payload given to :meth:`fit`.
    ids_ : ndarray of shape (n_gallery,) or None
        The gallery's ids: ``ids=`` of :meth:`fit`, else the index of a
        pandas gallery, else None.
    faiss_index_ : faiss.IndexFlatIP
        Only with ``backend="faiss"``.

    Notes
    -----
    The fitted index holds the gallery as ``estimator`` embedded it at ``time``
    in ``modality``, in the structure of ``backend``: after changing one of
    these parameters (``set_params(backend="faiss")``), fit the index again;
    a search before that raises :class:`~sklearn.exceptions.NotFittedError`
    naming the parameter.  ``query_modality`` and ``working_memory`` are read
    at each search and can change freely.

    See Also
    --------
    cross_modal_search : One-shot search without keeping the index.
    search_embeddings : The same search on raw embedding matrices.

    Examples
    --------
    >>> from temporal_xmodal import CCACrossModal
    >>> from temporal_xmodal.datasets import make_temporal_crossmodal
    >>> from temporal_xmodal.search import CrossModalIndex
    >>> X, y, info = make_temporal_crossmodal(200, return_info=True, random_state=0)
    >>> est = CCACrossModal(n_image_features=info.n_image_features).fit(X)
    >>> X_img, X_txt = X[:, :info.n_image_features], X[:, info.n_image_features:-1]
    >>> index = CrossModalIndex(est, modality="text").fit(X_txt)
    >>> index.search(X_img[:2], k=3, as_frame=False).indices.shape
    (2, 3)
    >>> index.search(X_img[[5, 42]], k=1, ids=[5, 42])["query"].tolist()
    [5, 42]
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
            The gallery's feature block of :attr:`modality` (no time column);
            through a Pipeline, whole rows as ``pipe.fit`` took them or the
            block's own columns.
        y : None
            Ignored (scikit-learn convention).
        payload : sequence, pandas Series/DataFrame or None, default=None
            One entry per gallery item (caption, file path, ...), joined to
            the search results.
        ids : array-like of shape (n_gallery,) or None, default=None
            The caller's id of each gallery item, given as the results'
            ``gallery_id`` column.  Default: the index of a pandas ``X``;
            for an array ``X``, no such column (``index`` gives the row).

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
        """Check that the index is fitted, with the parameters it holds now: a ``set_params``
        since the fit of one it is built with (:data:`_BUILT_WITH`) raises a NotFittedError
        that names it and says to refit (the faiss structure of ``backend="faiss"`` was an
        AttributeError on ``faiss_index_``)."""
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
        """The ``k`` nearest gallery items of each query, queries projected at ``time``.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_<query modality>_features)
            Query feature block (no time column); through a Pipeline, whole
            rows as ``pipe.fit`` took them or the block's own columns.
        k : int, default=10
            Neighbours per query (at most the gallery size).
        time : scalar, array-like of shape (n_queries,) or None, default=None
            Instant(s) at which the queries are projected (numbers on the
            estimator's time axis or dates); passed unchanged to the
            estimator.  With ``within``, also the dates the gallery is
            filtered by.
        within : float, str, timedelta or None, default=None
            The date filter: only gallery items whose date (:attr:`times_`)
            is within this duration of the query's date are candidates
            (``|t_query - t_gallery| <= within``).  A number in the
            estimator's ``time_unit``, a duration string (``"180D"``,
            ``"1Y"``) or a share of the training span (``"5%"``).  ``None``:
            the whole gallery.
        ids : array-like of shape (n_queries,) or None, default=None
            The caller's id of each query, given as the ``query`` column
            (e.g. ``search(X_image[[5, 42, 77]], ids=[5, 42, 77])``).
            Default: the index of a pandas ``X``, else ``0 .. n_queries - 1``.
        as_frame : {"auto", True, False}, default="auto"
            Return a DataFrame (``True``, or ``"auto"`` when pandas is
            installed) or a :class:`SearchResult`.

        Returns
        -------
        result : pandas.DataFrame or SearchResult
            Columns ``query, rank, index, score`` (+ ``gallery_id`` when the
            gallery has ids, + payload); see :meth:`SearchResult.to_frame`.
            Under ``within``, a query with fewer than ``k`` candidates has
            fewer rows in the DataFrame (in the arrays: index -1, score -inf).
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
        """Search the gallery with already-embedded queries.

        Parameters
        ----------
        query : array-like of shape (n_queries, embedding_dim)
            Query embeddings, in the gallery's space.
        k : int, default=10
            Neighbours per query (at most the gallery size).
        ids : array-like of shape (n_queries,) or None, default=None
            The caller's id of each query, as in :meth:`search`.

        Returns
        -------
        result : SearchResult
            The ``k`` nearest gallery items of each query.
        """
        self._check_fitted()
        return self._search(query, k, check_ids(ids, query, "ids", "query"), None)

    def _search(self, query, k, ids, time_filter):
        """The top ``k`` of the query embeddings (checked here, once), among each query's
        candidates."""
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
    """One-shot top-k search: project queries and gallery at their instants, then search.

    Equivalent to ``CrossModalIndex(...).fit(X_gallery).search(X_query, k)``
    without keeping the index.

    Read more in the user guide: docs/search.md.

    Parameters
    ----------
    estimator : fitted cross-modal estimator or Pipeline ending in one
        As in :class:`CrossModalIndex`.
    X_query : array-like of shape (n_queries, n_query_features)
        Query feature block (image block for ``"i2t"``), no time column.
    X_gallery : array-like of shape (n_gallery, n_gallery_features)
        Gallery feature block (text block for ``"i2t"``), no time column.
    k : int, default=10
        Neighbours per query.
    direction : {"i2t", "t2i", "i2i", "t2t"}, default="i2t"
        Query modality → gallery modality.
    query_time, gallery_time : scalar, array-like or None, default=None
        Instant(s) at which queries / gallery are projected (one value, or
        one per row), on the estimator's time axis; passed unchanged to
        ``transform_image`` / ``transform_text``.
    within : float, str, timedelta or None, default=None
        The date filter: only gallery items dated within this duration of the
        query's date are candidates (needs both times); see
        :meth:`CrossModalIndex.search`.
    payload : sequence, pandas Series/DataFrame or None, default=None
        One entry per gallery item, joined to the results.
    query_ids : array-like of shape (n_queries,) or None, default=None
        The caller's id of each query, given as the ``query`` column.
        Default: the index of a pandas ``X_query``, else ``0 .. n_queries - 1``.
    gallery_ids : array-like of shape (n_gallery,) or None, default=None
        The caller's id of each gallery item, given as the ``gallery_id``
        column.  Default: the index of a pandas ``X_gallery``, else no column.
    backend : {"torch", "faiss"}, default="torch"
        Search engine, as in :class:`CrossModalIndex`.
    working_memory : float or None, default=None
        Budget of one score block in MiB.  Default: 64 on the CPU; on a GPU
        a quarter of its free memory, at most 8 GiB.
    as_frame : {"auto", True, False}, default="auto"
        Return a DataFrame (``True``, or ``"auto"`` when pandas is
        installed) or a :class:`SearchResult`.

    Returns
    -------
    result : pandas.DataFrame or SearchResult
        Columns ``query, rank, index, score`` (+ ``gallery_id``, + payload);
        see :meth:`SearchResult.to_frame`.
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

