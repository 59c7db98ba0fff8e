"""Neighbourhoods over time: an item's top-k at several instants, and the items that shift most
(after Hamilton et al., 2016, and Gonen et al., 2020; docs/search.md)."""

from numbers import Real

import numpy as np
from scipy import sparse
import torch
from sklearn.utils._param_validation import StrOptions, validate_params

from ..metrics._scan import topk
from ._change import over_time_change, time_change
from ._index import CONSTRAINTS, CrossModalIndex
from ._pipeline import embed, estimator_device
from ._results import _payload_columns, check_ids, check_payload, pandas_or_none
from ._exact import as_embedding_tensor

_DIRECTIONS = {"i2t": ("image", "text"), "t2i": ("text", "image"),
               "i2i": ("image", "image"), "t2t": ("text", "text")}
_STATUSES = ("initial", "kept", "entered", "left")
_MODALITIES = StrOptions({"image", "text"})


def _require_pandas(name):
    pd = pandas_or_none()
    if pd is None:
        raise ImportError(f"{name} returns a pandas DataFrame; install pandas "
                          "(pip install temporal-xmodal[pandas]).")
    return pd


def instant_label(t):
    """An instant as a person reads it: ``1870``, not ``1870.0``; ``1881-01-01``, not
    ``1881-01-01 00:00:00`` (a date's time of day only when it has one)."""
    if isinstance(t, Real) and not isinstance(t, bool):
        return f"{t:g}"
    if isinstance(t, np.datetime64) or hasattr(t, "isoformat"):
        pd = pandas_or_none()
        if pd is not None:
            stamp = pd.Timestamp(t)
            return str(stamp.date()) if stamp == stamp.normalize() else str(stamp)
    return str(t)


_instant = instant_label


def _as_row(x):
    """One item's row: a DataFrame row stays a DataFrame (a Pipeline reads its columns)."""
    if hasattr(x, "to_frame") and not hasattr(x, "columns"):  # a Series: df.loc[905]
        x = x.to_frame().T.infer_objects()
    if not hasattr(x, "columns") and not sparse.issparse(x):  # a sparse row stays sparse
        x = np.asarray(x)
        if x.ndim == 1:
            x = x[None, :]
    if len(x.shape) != 2 or x.shape[0] != 1:
        raise ValueError(f"x must be one item's feature row (1-D, or shape (1, n_features)); "
                         f"got shape {np.shape(x)}.")
    return x


@validate_params(
    {
        "estimator": CONSTRAINTS["estimator"],
        "x": ["array-like", "sparse matrix"],
        "X_gallery": ["array-like", "sparse matrix"],
        "times": ["array-like"],
        "k": CONSTRAINTS["k"],
        "direction": [StrOptions(set(_DIRECTIONS))],
        "payload": "no_validation",
        "working_memory": CONSTRAINTS["working_memory"],
    },
    prefer_skip_nested_validation=True,
)
def neighbourhood_over_time(estimator, x, X_gallery, times, k=10, *, direction="i2t",
                            payload=None, working_memory=None):
    """An item's top-k neighbourhood at each of several instants.

    At each instant ``t`` the item and the gallery are projected at ``t`` and the item's ``k``
    nearest are found by exact search, each marked against the previous instant.  Read more in
    docs/search.md.

    Parameters
    ----------
    estimator, working_memory
        As in :class:`CrossModalIndex`.
    x : array-like of shape (n_features,) or (1, n_features)
        The item's row of the query modality (no time column); through a Pipeline, its whole
        row (``df.loc[[905]]``) or the block's own columns.
    X_gallery : array-like of shape (n_gallery, n_gallery_features)
        The gallery modality's block; through a Pipeline, whole rows or the block's columns.
    times : sequence of scalars
        Instants on the estimator's time axis, passed unchanged to it, listed in this order.
    k : int, default=10
    direction : {"i2t", "t2i", "i2i", "t2t"}, default="i2t"
        Modality of ``x`` → modality of the gallery.
    payload : sequence, pandas Series/DataFrame or None, default=None
        One entry per gallery item (e.g. its caption), joined as column(s).

    Returns
    -------
    table : pandas.DataFrame
        One row per (instant, neighbour): ``instant``, ``rank`` (1 = nearest; missing for
        ``"left"``), ``neighbour`` (gallery row), ``score`` (at that instant), ``status``
        (``"initial"`` at the first instant, then ``"kept"``, ``"entered"`` or ``"left"``: in
        the previous top-k only), then the payload.  ``table.attrs["time_change"]``: Δ
        (``neighbourhood_change``, the mean 1 − Jaccard between consecutive instants),
        ``displacement``, ``time_role``, ``barely_changes`` and a ``message``.
    """
    pd = _require_pandas("neighbourhood_over_time")
    query_modality, gallery_modality = _DIRECTIONS[direction]
    times = list(times)
    if not times:
        raise ValueError("times is empty; give at least one instant.")
    x = _as_row(x)
    payload = check_payload(payload, X_gallery.shape[0] if hasattr(X_gallery, "shape")
                            else len(X_gallery))
    frames, previous, queries = [], None, []
    for t in times:
        index = CrossModalIndex(estimator, modality=gallery_modality,
                                query_modality=query_modality, time=t,
                                working_memory=working_memory).fit(X_gallery)
        q = as_embedding_tensor(embed(estimator, x, query_modality, t), "x embedding",
                                index.device_).to(index.embeddings_.dtype)
        queries.append(q[0])
        result = index.search_embeddings(q, k)
        top, scores = result.indices[0], result.scores[0]
        if previous is None:
            status = np.full(len(top), "initial", dtype=object)
            left = np.empty(0, dtype=np.int64)
        else:
            status = np.where(np.isin(top, previous), "kept", "entered").astype(object)
            left = previous[~np.isin(previous, top)]
        left_scores = (index.embeddings_[torch.as_tensor(left, device=index.device_)]
                       @ q[0]).cpu().numpy()
        frames.append(pd.DataFrame({
            "instant": [t] * (len(top) + len(left)),
            "rank": pd.array(list(range(1, len(top) + 1)) + [None] * len(left), dtype="Int64"),
            "neighbour": np.concatenate([top, left]),
            "score": np.concatenate([scores, left_scores]),
            "status": np.concatenate([status, np.full(len(left), "left", dtype=object)]),
        }))
        previous = top
    table = pd.concat(frames, ignore_index=True)
    if payload is not None:
        for name, values in _payload_columns(payload).items():
            table[name] = values[table["neighbour"].to_numpy()]
    moves = [1.0 - float(torch.nn.functional.cosine_similarity(a, b, dim=0))
             for a, b in zip(queries[:-1], queries[1:])]
    table.attrs["time_change"] = time_change(
        estimator, over_time_change(table), max(float(np.mean(moves)), 0.0) if moves else 0.0,
        k=k, between="consecutive instants")
    return table


def _shared_counts(A, B, block_entries=2**24):
    """Per row, how many entries of ``A`` also appear in ``B`` (rows are sets)."""
    n, k = A.shape
    rows = max(1, block_entries // (k * B.shape[1]))
    shared = np.empty(n, dtype=np.int64)
    for r in range(0, n, rows):
        a, b = A[r:r + rows], B[r:r + rows]
        shared[r:r + rows] = (a[:, :, None] == b[:, None, :]).any(axis=2).sum(axis=1)
    return shared


def _topk_sets(Z, G, k, exclude_self, working_memory):
    """Top-k gallery rows of each row of ``Z``; the item itself left out if asked."""
    if not exclude_self:
        return topk(Z, G, k, working_memory=working_memory)[1]
    idx = topk(Z, G, k + 1, working_memory=working_memory)[1]
    own = idx == np.arange(len(idx))[:, None]
    # drop the item itself where found, otherwise the (k+1)-th neighbour
    drop = np.where(own.any(axis=1), own.argmax(axis=1), idx.shape[1] - 1)
    keep = np.ones_like(idx, dtype=bool)
    keep[np.arange(len(idx)), drop] = False
    return idx[keep].reshape(len(idx), -1)


@validate_params(
    {
        "estimator": CONSTRAINTS["estimator"],
        "X": ["array-like", "sparse matrix"],
        "times": ["array-like"],
        "k": CONSTRAINTS["k"],
        "modality": [_MODALITIES],
        "X_gallery": ["array-like", "sparse matrix", None],
        "gallery_modality": [_MODALITIES, None],
        "payload": "no_validation",
        "ids": CONSTRAINTS["ids"],
        "working_memory": CONSTRAINTS["working_memory"],
    },
    prefer_skip_nested_validation=True,
)
def neighbourhood_shift(estimator, X, times, k=10, *, modality="text", X_gallery=None,
                        gallery_modality=None, payload=None, ids=None, working_memory=None):
    """Items ranked by how much their neighbourhood changes between two instants.

    ``neighbourhood_shift = 1 − |N_t1 ∩ N_t2| / |N_t1 ∪ N_t2|``, with ``N_t`` the item's ``k``
    nearest when everything is projected at ``t``, and ``displacement = 1 − cos(e(x, t1),
    e(x, t2))``.  Read more in docs/search.md.

    Parameters
    ----------
    estimator, working_memory
        As in :class:`CrossModalIndex`.
    X : array-like of shape (n_items, n_features)
        Feature block of ``modality`` (no time column); through a Pipeline, whole rows or the
        block's own columns.
    times : pair of scalars (t1, t2)
        On the estimator's time axis, passed unchanged to it.
    k : int, default=10
    modality : {"text", "image"}, default="text"
        Modality of ``X``.
    X_gallery : array-like or None, default=None
        Where neighbours are looked up; ``None``: among the items of ``X``, each item's own row
        left out.
    gallery_modality : {"text", "image"} or None, default=None
        Modality of ``X_gallery``; default: the other one.
    payload : sequence, pandas Series/DataFrame or None, default=None
        One entry per item of ``X``, joined as column(s).
    ids : array-like of shape (n_items,) or None, default=None
        The ``item`` column; default: the index of a pandas ``X``, else its rows.

    Returns
    -------
    table : pandas.DataFrame
        One row per item by decreasing ``neighbourhood_shift`` (then ``displacement``):
        ``item``, ``neighbourhood_shift``, ``displacement``, ``shared`` (neighbours in both
        top-k), then the payload; ``table.attrs["time_change"]`` as in
        :func:`neighbourhood_over_time`, over all items.
    """
    pd = _require_pandas("neighbourhood_shift")
    times = list(times)
    if len(times) != 2:
        raise ValueError(f"times must hold exactly two instants (t1, t2); got {len(times)}.")
    n_items = X.shape[0] if hasattr(X, "shape") else len(X)
    payload = check_payload(payload, n_items)
    ids = check_ids(ids, X, "ids", "item")
    device = estimator_device(estimator)
    exclude_self = X_gallery is None
    if exclude_self:
        gallery_modality, X_gallery = modality, X
        if n_items < k + 1:
            raise ValueError(f"X has {n_items} items; neighbourhoods of k={k} among them "
                             f"need at least {k + 1}.")
    elif gallery_modality is None:
        gallery_modality = "image" if modality == "text" else "text"
    Z, sets = [], []
    for t in times:
        Zt = as_embedding_tensor(embed(estimator, X, modality, t), "item embeddings", device)
        Gt = Zt if exclude_self else as_embedding_tensor(
            embed(estimator, X_gallery, gallery_modality, t), "gallery embeddings", device)
        Z.append(Zt)
        sets.append(_topk_sets(Zt, Gt.to(Zt.dtype), min(k, len(Gt) - exclude_self),
                               exclude_self, working_memory))
    shared = _shared_counts(sets[0], sets[1])
    size = sets[0].shape[1]
    jaccard = shared / (2 * size - shared)
    cos = torch.nn.functional.cosine_similarity(Z[0], Z[1].to(Z[0].dtype), dim=1)
    table = pd.DataFrame({
        "item": np.arange(len(shared)) if ids is None else ids,
        "neighbourhood_shift": 1.0 - jaccard,
        "displacement": (1.0 - cos).clamp_min(0.0).cpu().numpy().astype(np.float64),
        "shared": shared,
    })
    if payload is not None:
        for name, values in _payload_columns(payload).items():
            table[name] = values
    # by decreasing shift, then displacement, then row of X (ids need not be sortable)
    order = np.lexsort((np.arange(len(table)), -table["displacement"].to_numpy(),
                        -table["neighbourhood_shift"].to_numpy()))
    table = table.iloc[order].reset_index(drop=True)
    table.attrs["time_change"] = time_change(
        estimator, float(table["neighbourhood_shift"].mean()),
        float(table["displacement"].mean()), k=size,
        between=f"{_instant(times[0])} and {_instant(times[1])}")
    return table
