"""Search results: the top-k arrays, and their table with payload columns."""

import numpy as np


def pandas_or_none():
    """The :mod:`pandas` module, or None when it is not installed."""
    try:
        import pandas
    except ImportError:
        return None
    return pandas


class SearchResult:
    """Top-k neighbours of a batch of queries, the searches' result with ``as_frame=False``.

    The parameters are kept as attributes.  Read more in docs/search.md.

    Parameters
    ----------
    scores : ndarray of shape (n_queries, k)
        Similarity of each neighbour, decreasing along each row.
    indices : ndarray of int, shape (n_queries, k)
        Gallery row of each neighbour; -1 (score -inf) in a slot a date filter left empty.
    payload : sequence, pandas Series/DataFrame or None, default=None
        One entry (row) per gallery item, e.g. captions or file paths.
    query_ids : array-like of shape (n_queries,) or None, default=None
        The ``query`` column of :meth:`to_frame` (default ``0 .. n_queries - 1``).
    gallery_ids : array-like of shape (n_gallery,) or None, default=None
        The ``gallery_id`` column of :meth:`to_frame` (none when ``None``).
    """

    def __init__(self, scores, indices, payload=None, *, query_ids=None, gallery_ids=None):
        self.scores = scores
        self.indices = indices
        self.payload = payload
        self.query_ids = query_ids
        self.gallery_ids = gallery_ids

    def __len__(self):
        return len(self.indices)

    def __repr__(self):
        n, k = self.indices.shape
        return f"SearchResult({n} queries x top {k})"

    def payload_of(self):
        """The payload of every neighbour: an array shaped like :attr:`indices`.

        Returns
        -------
        values : ndarray of shape (n_queries, k)
            For a DataFrame payload, its first column; ``None`` in empty slots.

        Raises
        ------
        ValueError
            Without a payload.
        """
        if self.payload is None:
            raise ValueError("This SearchResult has no payload; pass payload= when searching.")
        values = _payload_columns(self.payload)
        first = next(iter(values.values()))
        out = first[np.maximum(self.indices, 0)]
        if (self.indices < 0).any():  # empty slots of a date filter: None
            out = out.astype(object)
            out[self.indices < 0] = None
        return out

    def to_frame(self, query_ids=None):
        """One row per (query, neighbour): ``query, rank, index, score`` and the payload.

        Parameters
        ----------
        query_ids : array-like of shape (n_queries,), default=None
            The ``query`` column; default :attr:`query_ids`, else ``0 .. n_queries - 1``.

        Returns
        -------
        frame : pandas.DataFrame
            ``query``, ``rank`` (1 = nearest), ``index`` (gallery row), ``gallery_id`` (with
            :attr:`gallery_ids`), ``score``, then the payload: a Series' name (or ``payload``), a
            DataFrame's columns.  Empty slots have no row.
        """
        pd = pandas_or_none()
        if pd is None:
            raise ImportError("SearchResult.to_frame needs pandas (pip install pandas); "
                              "the arrays are in .indices and .scores.")
        n, k = self.indices.shape
        if query_ids is None:
            query_ids = self.query_ids
        query_ids = np.arange(n) if query_ids is None else as_id_array(query_ids)
        if len(query_ids) != n:
            raise ValueError(f"query_ids has {len(query_ids)} entries but there are {n} "
                             "queries; give one id per query.")
        found = self.indices.ravel() >= 0  # slots a date filter left empty (index -1): no row
        index = self.indices.ravel()[found]
        columns = {
            "query": np.repeat(query_ids, k)[found],
            "rank": np.tile(np.arange(1, k + 1), n)[found],
            "index": index,
        }
        if self.gallery_ids is not None:
            columns["gallery_id"] = as_id_array(self.gallery_ids)[index]
        columns["score"] = self.scores.ravel()[found]
        if self.payload is not None:
            for name, values in _payload_columns(self.payload).items():
                columns[name] = values[index]
        return pd.DataFrame(columns)


def _payload_columns(payload):
    """``{column name: ndarray}`` of a sequence, Series or DataFrame payload."""
    if hasattr(payload, "columns") and hasattr(payload, "to_numpy"):  # DataFrame
        return {str(c): payload[c].to_numpy() for c in payload.columns}
    if hasattr(payload, "to_numpy"):  # Series
        return {str(payload.name) if payload.name is not None else "payload":
                payload.to_numpy()}
    values = np.empty(len(payload), dtype=object)
    values[:] = list(payload)
    return {"payload": values}


def as_id_array(ids, name="ids"):
    """``ids`` as a 1-D array (object when the entries are tuples or mixed); an entry that is a
    list or array is refused naming ``name``."""
    if isinstance(ids, np.ndarray) and ids.ndim != 1:
        raise ValueError(f"{name} must be 1-D, one id per row; got an array of shape "
                         f"{ids.shape}.")
    try:
        values = np.asarray(ids)
    except ValueError:  # ragged entries: NumPy's "inhomogeneous shape"
        values = None
    if values is not None and values.ndim == 1 and values.dtype != object:
        return values
    entries = list(ids)
    for i, entry in enumerate(entries):
        if not isinstance(entry, tuple) and np.ndim(entry) != 0:
            raise ValueError(
                f"{name} must hold one id per row (a number, string or tuple); entry {i} is "
                f"{type(entry).__name__} {entry!r}. For several ids per row, give tuples.")
    values = np.empty(len(entries), dtype=object)
    values[:] = entries
    return values


def check_ids(ids, X, name, what):
    """The caller's ids of the rows of ``X``: ``ids`` (one per row, else a ValueError naming
    ``name``), else the index of a pandas ``X``, else None."""
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    if ids is None:
        index = getattr(X, "index", None)
        if index is None or not hasattr(index, "to_numpy"):
            return None
        return index.to_numpy()
    if isinstance(ids, str) or not hasattr(ids, "__len__"):
        raise ValueError(f"{name} must be a sequence with one id per {what}; got {ids!r}.")
    if isinstance(ids, (set, frozenset, dict)) or type(ids).__name__.startswith("dict_"):
        raise TypeError(
            f"{name} is a {type(ids).__name__}, whose order is arbitrary, so ids could not be "
            f"matched to rows; give a list or array in row order, one id per {what} (e.g. "
            f"search(X[[5, 42, 77]], {name}=[5, 42, 77])).")
    if len(ids) != n:
        plural = "queries" if what == "query" else f"{what}s"
        raise ValueError(f"{name} has {len(ids)} entries but there are {n} {plural} "
                         f"(rows of X); give one id per {what}.")
    return as_id_array(ids, name)


def check_payload(payload, n_gallery):
    """Check that ``payload`` has one entry per gallery item (None passes)."""
    if payload is None:
        return None
    if len(payload) != n_gallery:
        raise ValueError(
            f"payload has {len(payload)} entries but the gallery has {n_gallery} items; "
            "give one entry (caption, path, ...) per gallery row."
        )
    return payload


def format_result(result, as_frame):
    """A DataFrame (``as_frame`` True, or "auto" with pandas) or the SearchResult."""
    if as_frame is True or (as_frame == "auto" and pandas_or_none() is not None):
        return result.to_frame()
    return result
