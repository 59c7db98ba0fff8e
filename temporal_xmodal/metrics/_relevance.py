"""Relevance of (query, gallery) pairs: shared labels, counterparts, time windows, NaN labels.

A gallery item is relevant to a query when it shares a label with it (1-D
class labels: the same class; 2-D indicators: at least one common label; the
gain of nDCG is the number of common labels), or, without labels, when it is
the query's counterpart (the same row).  A time window additionally requires
``|t_query - t_gallery| <= time_window``.  Items whose label (or time, under a
window) is missing are raised about or left out (``nan_policy``).

The reducers ask for the relevance of a block of rows at a time: NumPy blocks
for the full-ranking metrics (:func:`_prepare_labels`, :func:`_prepare_time`),
torch gains for the @k metrics (:class:`_Relevance`).
"""


import numpy as np
import torch
from .._warnings import warn


def _prepare_labels(query_labels, gallery_labels, n_query, n_gallery):
    """Return a callable ``rows -> relevance block`` (bool, or shared-label counts)."""
    if (query_labels is None) != (gallery_labels is None):
        raise ValueError("Give both query_labels and gallery_labels, or neither.")
    if query_labels is None:
        if n_query != n_gallery:
            raise ValueError(
                "Without labels each query's relevant item is its counterpart (same row), "
                f"which needs as many queries as gallery items; got {n_query} and {n_gallery}."
            )
        return lambda rows: (np.arange(rows.start, rows.stop)[:, None]
                             == np.arange(n_gallery)[None, :])
    ql, gl = np.asarray(query_labels), np.asarray(gallery_labels)
    if ql.shape[0] != n_query or gl.shape[0] != n_gallery:
        raise ValueError(
            f"Labels must have one row per item: query_labels {ql.shape[0]} vs {n_query} "
            f"queries, gallery_labels {gl.shape[0]} vs {n_gallery} gallery items."
        )
    if (ql.ndim != gl.ndim or ql.ndim not in (1, 2)
            or (ql.ndim == 2 and ql.shape[1] != gl.shape[1])):
        raise ValueError(
            "query_labels and gallery_labels must both be 1-D class labels or both be "
            f"multilabel indicators with the same columns; got shapes {ql.shape} and {gl.shape}."
        )
    if ql.ndim == 2 and _one_label_each(ql) and _one_label_each(gl):
        ql, gl = ql.argmax(axis=1), gl.argmax(axis=1)  # one-hot: the same relevance, cheaper
    if ql.ndim == 1:
        return lambda rows: ql[rows, None] == gl[None, :]
    # shared labels through a float64 BLAS product (exact for counts below 2**53;
    # NumPy's int64 product has no BLAS and is many times slower)
    Q, G = ql.astype(np.float64), gl.astype(np.float64).T
    return lambda rows: (Q[rows] @ G).astype(np.int64)


def _one_label_each(indicator):
    """Whether a 0/1 indicator has exactly one label in every row."""
    return bool(np.isin(indicator, (0, 1)).all() and (indicator.sum(axis=1) == 1).all())


def _prepare_time(query_time, gallery_time, time_window, n_query, n_gallery):
    """Return a callable ``rows -> bool block`` (pairs within the window), or None."""
    if time_window is None:
        return None
    if query_time is None or gallery_time is None:
        raise ValueError("time_window needs both query_time and gallery_time.")
    tq = np.asarray(query_time, dtype=np.float64).ravel()
    tg = np.asarray(gallery_time, dtype=np.float64).ravel()
    if tq.shape[0] != n_query or tg.shape[0] != n_gallery:
        raise ValueError("query_time / gallery_time must have one value per item.")
    return lambda rows: np.abs(tq[rows, None] - tg[None, :]) <= time_window


def _missing(values, n):
    """Rows of ``values`` (1-D, or 2-D: any column) that are NaN / None; all False for None."""
    if values is None:
        return np.zeros(n, dtype=bool)
    a = np.asarray(values)
    if a.dtype.kind == "f":
        bad = np.isnan(a)
    elif a.dtype.kind == "O":
        bad = np.frompyfunc(lambda v: v is None or v != v, 1, 1)(a).astype(bool)
    else:
        return np.zeros(n, dtype=bool)
    return bad.reshape(len(a), -1).any(axis=1)


def check_lengths(query_labels, gallery_labels, query_time, gallery_time, n_query,
                  n_gallery, *, names=None):
    """Raise unless the labels and times have one row per query / gallery item.

    The first check of every metric (before any mask is combined), so that a
    wrong length is named with the argument and both lengths rather than met
    by a NumPy broadcast error.

    Parameters
    ----------
    query_labels, gallery_labels, query_time, gallery_time : array-like or None
    n_query, n_gallery : int
        Rows of the query and gallery embeddings.
    names : dict or None, default=None
        The caller's names of the four arguments and of the two embeddings
        (keys ``"query_labels"``, ..., ``"query"``, ``"gallery"``), e.g.
        :func:`cross_modal_scores`' ``labels`` and ``time``.
    """
    names = {"query_labels": "query_labels", "gallery_labels": "gallery_labels",
             "query_time": "query_time", "gallery_time": "gallery_time",
             "query": "the query embeddings have", "gallery": "the gallery embeddings have",
             **(names or {})}
    for key, values, n, side in (("query_labels", query_labels, n_query, "query"),
                                 ("gallery_labels", gallery_labels, n_gallery, "gallery"),
                                 ("query_time", query_time, n_query, "query"),
                                 ("gallery_time", gallery_time, n_gallery, "gallery")):
        if values is None:
            continue
        shape = np.shape(values)
        if key.endswith("time"):
            if len(shape) > 1 and int(np.prod(shape[1:])) != 1:
                raise ValueError(f"{names[key]} must be 1-D, one time per item; got shape "
                                 f"{shape}.")
            count, what = int(np.prod(shape)) if shape else 1, "value(s)"
        else:
            count, what = (shape[0] if shape else 1), "row(s)"
        if count != n:
            raise ValueError(f"{names[key]} has {count} {what} but {names[side]} {n} rows: "
                             f"give one {'time' if key.endswith('time') else 'label'} per "
                             "item.")


def _nan_masks(query_labels, gallery_labels, query_time, gallery_time, time_window,
               nan_policy, n_query, n_gallery):
    """Queries and gallery items whose label, or time under a window, is missing.

    Returns ``(bad_queries, kept_gallery)``: a boolean mask of the queries to
    report as NaN, and the boolean mask of the gallery items to keep (``None``
    when all are kept).  ``nan_policy="raise"`` raises instead when any is
    missing; ``"omit"`` warns with the counts.
    """
    check_lengths(query_labels, gallery_labels, query_time, gallery_time, n_query, n_gallery)
    bad_q = _missing(query_labels, n_query)
    bad_g = _missing(gallery_labels, n_gallery)
    what = "label"
    if time_window is not None:
        bad_q = bad_q | _missing(None if query_time is None else
                                 np.asarray(query_time, dtype=np.float64).ravel(), n_query)
        bad_g = bad_g | _missing(None if gallery_time is None else
                                 np.asarray(gallery_time, dtype=np.float64).ravel(), n_gallery)
        what = "label or time (time_window is set)"
    n_bad_q, n_bad_g = int(bad_q.sum()), int(bad_g.sum())
    if not (n_bad_q or n_bad_g):
        return bad_q, None
    message = (f"{n_bad_q} of {n_query} queries and {n_bad_g} of {n_gallery} gallery items "
               f"have a missing (NaN) {what}")
    if nan_policy == "raise":
        raise ValueError(message + "; they cannot be scored. Fix them, or pass "
                         "nan_policy='omit' to leave them out (with a warning).")
    if n_bad_g == n_gallery:
        raise ValueError(message + "; no gallery item is left to rank.")
    warn(message + "; nan_policy='omit': those queries are left out of the means "
         "(NaN per query) and those gallery items out of the rankings.")
    return bad_q, (~bad_g if n_bad_g else None)


def _keep_gallery(keep, gallery_labels, gallery_time):
    """The gallery labels and times of the kept items (``keep`` from :func:`_nan_masks`)."""
    if keep is None:
        return gallery_labels, gallery_time
    return (None if gallery_labels is None else np.asarray(gallery_labels)[keep],
            None if gallery_time is None else np.asarray(gallery_time).ravel()[keep])


class _Relevance:
    """Gains of (query rows, gallery columns) blocks as torch tensors on ``device``.

    Shared-label counts (multilabel), same class (1-D labels) or counterpart
    (no labels), times the time window; float64.
    """

    def __init__(self, query_labels, gallery_labels, query_time, gallery_time, time_window,
                 n_query, n_gallery, device):
        _prepare_labels(query_labels, gallery_labels, n_query, n_gallery)  # validation only
        _prepare_time(query_time, gallery_time, time_window, n_query, n_gallery)
        as_t = lambda a: torch.as_tensor(np.asarray(a), device=device)  # noqa: E731
        self.counterpart = query_labels is None
        self.device = device
        if not self.counterpart:
            ql, gl = np.asarray(query_labels), np.asarray(gallery_labels)
            if ql.ndim == 1:  # class codes shared by queries and gallery
                _, codes = np.unique(np.concatenate([ql, gl]), return_inverse=True)
                self.ql, self.gl = as_t(codes[:len(ql)]), as_t(codes[len(ql):])
                self.multilabel = False
            else:
                self.ql = as_t(ql.astype(np.float64))
                self.gl = as_t(gl.astype(np.float64))
                self.multilabel = True
        self.window = time_window
        if time_window is not None:
            self.tq = as_t(np.asarray(query_time, dtype=np.float64).ravel())
            self.tg = as_t(np.asarray(gallery_time, dtype=np.float64).ravel())

    def __call__(self, q_idx, cols):
        """Gains of query rows ``q_idx`` (int64 tensor) against gallery slice ``cols``."""
        if self.counterpart:
            gain = (q_idx[:, None]
                    == torch.arange(cols.start, cols.stop, device=self.device)[None, :])
            gain = gain.to(torch.float64)
        elif self.multilabel:
            gain = self.ql[q_idx] @ self.gl[cols].T
        else:
            gain = (self.ql[q_idx, None] == self.gl[None, cols]).to(torch.float64)
        if self.window is not None:
            gain = gain * ((self.tq[q_idx, None] - self.tg[None, cols]).abs() <= self.window)
        return gain
