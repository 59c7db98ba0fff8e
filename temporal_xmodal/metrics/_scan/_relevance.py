"""Relevance of (query, gallery) pairs: shared labels, counterparts, time windows, NaN labels.

:func:`make_relevance` checks labels and times once and builds :class:`NumpyRelevance`
(blocks of whole-gallery rows) or :class:`TorchRelevance` (tensors on a device, any rows).
"""

from typing import NamedTuple

import numpy as np
import torch

from ..._warnings import warn
from ._filter import TimeFilter


def make_relevance(query_labels, gallery_labels, query_time=None, gallery_time=None,
                   time_window=None, *, n_query, n_gallery, nan_policy="raise", device=None,
                   time_filter=None):
    """The relevance of a scan's pairs, checked once, for the scan's backend.

    Parameters
    ----------
    query_labels, gallery_labels : array-like, torch.Tensor or None
        1-D class labels or 2-D indicators (both of one kind); ``None`` for both: counterparts.
    query_time, gallery_time, time_window, time_filter : default=None
        As in :func:`~temporal_xmodal.metrics.iter_score_blocks`; the relevance's
        ``time_filter`` (a :class:`TimeFilter`) is for the :class:`._engine.Scan`.
    n_query, n_gallery : int
    nan_policy : {"raise", "omit"} or None, default="raise"
        ``None``: label tensors already on the device, without missing values or times; only
        their shapes are checked.
    device : torch.device, str or None, default=None
        ``None``: a :class:`NumpyRelevance`; else a :class:`TorchRelevance` there.
    """
    if nan_policy is None:  # tensors on a device: shapes only, no missing values
        _check_label_tensors(query_labels, gallery_labels, n_query, n_gallery)
        if query_labels.ndim == 1:
            kind, ql, gl = "class", query_labels, gallery_labels
        else:  # shared labels through a float32 product: 0/1 entries, counts exact below 2**24
            kind = "shared"
            ql, gl = ((L != 0).to(torch.float32) for L in (query_labels, gallery_labels))
        return TorchRelevance(_Checked(kind, ql, gl, bad_queries=np.zeros(n_query, dtype=bool)),
                              query_labels.device)
    timed = time_window is not None or time_filter is not None
    bad_queries, keep = _nan_masks(query_labels, gallery_labels, query_time, gallery_time,
                                   timed, nan_policy, n_query, n_gallery)
    # counterparts: the (original) row of each gallery item left in the rankings
    gallery_rows = np.arange(n_gallery) if keep is None else np.flatnonzero(keep)
    if query_labels is None and n_query != n_gallery:
        raise ValueError(
            "Without labels each query's relevant item is its counterpart (same "
            f"row), which needs as many queries as gallery items; got {n_query} and "
            f"{n_gallery}.")
    if keep is not None:
        n_gallery = int(keep.sum())
        if gallery_labels is not None:
            gallery_labels = np.asarray(gallery_labels)[keep]
        if gallery_time is not None:
            gallery_time = np.asarray(gallery_time).ravel()[keep]
    kind, ql, gl = _checked_labels(query_labels, gallery_labels, n_query, n_gallery)
    tq, tg = _checked_times(query_time, gallery_time, timed, n_query, n_gallery,
                            "time_window" if time_window is not None else "time_filter")
    candidates = None if time_filter is None else TimeFilter(tq, tg, float(time_filter))
    checked = _Checked(kind, ql, gl, tq, tg, time_window, bad_queries, keep, gallery_rows,
                       candidates)
    return NumpyRelevance(checked) if device is None else TorchRelevance(checked, device)


class _Checked(NamedTuple):
    """Labels and times checked once, before a backend's conversion."""

    kind: str  # "counterpart", "class" or "shared" (indicators)
    query_labels: object = None
    gallery_labels: object = None
    query_time: np.ndarray | None = None
    gallery_time: np.ndarray | None = None
    window: float | None = None
    bad_queries: np.ndarray | None = None
    kept_gallery: np.ndarray | None = None
    gallery_rows: np.ndarray | None = None
    time_filter: TimeFilter | None = None


def _checked_labels(query_labels, gallery_labels, n_query, n_gallery):
    """``(kind, query labels, gallery labels)``, checked, as NumPy (``None``: counterparts)."""
    if (query_labels is None) != (gallery_labels is None):
        raise ValueError("Give both query_labels and gallery_labels, or neither.")
    if query_labels is None:  # as many queries as gallery items: checked before the NaN pass
        return "counterpart", None, None
    ql, gl = np.asarray(query_labels), np.asarray(gallery_labels)
    if ql.shape[0] != n_query or gl.shape[0] != n_gallery:
        raise ValueError(
            f"Labels must have one row per item: query_labels {ql.shape[0]} vs {n_query} "
            f"queries, gallery_labels {gl.shape[0]} vs {n_gallery} gallery items.")
    if (ql.ndim != gl.ndim or ql.ndim not in (1, 2)
            or (ql.ndim == 2 and ql.shape[1] != gl.shape[1])):
        raise ValueError(
            "query_labels and gallery_labels must both be 1-D class labels or both be "
            f"multilabel indicators with the same columns; got shapes {ql.shape} and "
            f"{gl.shape}.")
    return ("class" if ql.ndim == 1 else "shared"), ql, gl


def _checked_times(query_time, gallery_time, timed, n_query, n_gallery, name="time_window"):
    """float64 query and gallery times, checked, when ``timed``; else ``(None, None)``."""
    if not timed:
        return None, None
    if query_time is None or gallery_time is None:
        raise ValueError(f"{name} needs both query_time and gallery_time.")
    tq = np.asarray(query_time, dtype=np.float64).ravel()
    tg = np.asarray(gallery_time, dtype=np.float64).ravel()
    if tq.shape[0] != n_query or tg.shape[0] != n_gallery:
        raise ValueError("query_time / gallery_time must have one value per item.")
    return tq, tg


class _Relevance:
    """What every backend's relevance tells besides its blocks: ``kind`` ("counterpart", "class",
    "shared"), ``window``, ``time_filter`` (for the scan), ``bad_queries`` (their figures NaN)
    and ``kept_gallery`` (``None``: all)."""

    def __init__(self, checked):
        self.kind, self.window = checked.kind, checked.window
        self.bad_queries, self.kept_gallery = checked.bad_queries, checked.kept_gallery
        self.time_filter = checked.time_filter


class NumpyRelevance(_Relevance):
    """Relevance as NumPy blocks of whole-gallery rows (built by :func:`make_relevance`)."""

    def __init__(self, checked):
        super().__init__(checked)
        if self.time_filter is not None:
            self.time_filter = self.time_filter.on(None)
        ql, gl = checked.query_labels, checked.gallery_labels
        self.gallery_rows, self.tq, self.tg = (checked.gallery_rows, checked.query_time,
                                               checked.gallery_time)
        if self.kind == "shared" and _one_label_each(ql) and _one_label_each(gl):
            self.kind = "class"  # one-hot: the same relevance, cheaper
            ql, gl = ql.argmax(axis=1), gl.argmax(axis=1)
        if self.kind == "class":
            self.ql, self.gl = ql, gl
        elif self.kind == "shared":
            # a float64 BLAS product (exact for counts below 2**53; NumPy's int64
            # product has no BLAS and is many times slower)
            self.ql, self.gl_T = ql.astype(np.float64), gl.astype(np.float64).T

    def block(self, rows):
        """Relevance of query ``rows`` (a slice) against the whole gallery: bool, or shared-label
        counts (int64), times the time window."""
        if self.kind == "counterpart":
            rel = np.arange(rows.start, rows.stop)[:, None] == self.gallery_rows[None, :]
        elif self.kind == "class":
            rel = self.ql[rows, None] == self.gl[None, :]
        else:
            rel = (self.ql[rows] @ self.gl_T).astype(np.int64)
        if self.window is not None:
            rel = rel * (np.abs(self.tq[rows, None] - self.tg[None, :]) <= self.window)
        if self.time_filter is not None:
            rel = rel * ~self.time_filter.outside(rows, slice(None))
        return rel


class TorchRelevance(_Relevance):
    """Relevance as tensors on a device (built by :func:`make_relevance`)."""

    def __init__(self, checked, device):
        super().__init__(checked)
        self.device = device = torch.device(device)
        if self.time_filter is not None:
            self.time_filter = self.time_filter.on(device)
        ql, gl = checked.query_labels, checked.gallery_labels
        as_t = lambda a: torch.as_tensor(a, device=device)  # noqa: E731
        if self.kind == "counterpart":
            self.gallery_rows = as_t(checked.gallery_rows)
        elif isinstance(ql, torch.Tensor):
            self.ql, self.gl = ql, gl
        elif self.kind == "shared":
            self.ql, self.gl = as_t(ql.astype(np.float64)), as_t(gl.astype(np.float64))
        else:  # class codes shared by queries and gallery
            missing = _missing(ql, len(ql))
            if missing.any():  # omitted queries (their figures are NaN): any label
                ql = np.where(missing, gl[0], ql)
            _, codes = np.unique(np.concatenate([ql, gl]), return_inverse=True)
            self.ql, self.gl = as_t(codes[:len(ql)]), as_t(codes[len(ql):])
        if self.window is not None:
            self.tq, self.tg = as_t(checked.query_time), as_t(checked.gallery_time)

    def gains(self, queries, cols=slice(None)):
        """float64 gains of ``queries`` (an index tensor or a slice) against gallery rows ``cols``:
        shared-label counts, same class or counterpart, times the time window."""
        gain = self._match(queries, cols).to(torch.float64)
        if self.window is not None:
            gain = gain * self._in_window(queries, cols)
        if self.time_filter is not None:
            gain = gain * ~self.time_filter.outside(queries, cols)
        return gain

    def relevant(self, queries, cols=slice(None)):
        """Bool tensor: whether each gallery item of ``cols`` is relevant to each of ``queries``."""
        match = self._match(queries, cols)
        relevant = match if match.dtype == torch.bool else match > 0
        if self.window is not None:
            relevant = relevant & self._in_window(queries, cols)
        if self.time_filter is not None:
            relevant = relevant & ~self.time_filter.outside(queries, cols)
        return relevant

    def _match(self, queries, cols):
        """Counterpart or same class (bool), or shared-label counts, without the window."""
        if self.kind == "counterpart":
            if isinstance(queries, slice):
                queries = torch.arange(queries.start, queries.stop, device=self.device)
            return queries[:, None] == self.gallery_rows[None, cols]
        if self.kind == "class":
            return self.ql[queries, None] == self.gl[None, cols]
        return self.ql[queries] @ self.gl[cols].T

    def _in_window(self, queries, cols):
        return (self.tq[queries, None] - self.tg[None, cols]).abs() <= self.window


def _one_label_each(indicator):
    """Whether a 0/1 indicator has exactly one label in every row."""
    return bool(np.isin(indicator, (0, 1)).all() and (indicator.sum(axis=1) == 1).all())


def _check_label_tensors(query_labels, gallery_labels, n_query, n_gallery):
    """One row per item, and labels of one kind (1-D classes or indicators alike)."""
    for name, L, n in (("query_labels", query_labels, n_query),
                       ("gallery_labels", gallery_labels, n_gallery)):
        if L.ndim not in (1, 2) or L.shape[0] != n:
            raise ValueError(f"{name} must have one row per item ({n}); got shape "
                             f"{tuple(L.shape)}.")
    if query_labels.ndim != gallery_labels.ndim or (
            query_labels.ndim == 2 and query_labels.shape[1] != gallery_labels.shape[1]):
        raise ValueError(
            "query_labels and gallery_labels must both be 1-D class labels or both be "
            f"indicators with the same columns; got shapes {tuple(query_labels.shape)} and "
            f"{tuple(gallery_labels.shape)}.")


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
    """Raise unless the labels and times have one row per query / gallery item, naming the
    argument and both lengths; ``names`` maps the argument names (and ``"query"``,
    ``"gallery"``) to the caller's."""
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


def _nan_masks(query_labels, gallery_labels, query_time, gallery_time, timed,
               nan_policy, n_query, n_gallery):
    """``(bad_queries, kept_gallery)``: the queries to report as NaN and the gallery items to keep
    (``None``: all) when a label, or a time under a window or filter, is missing; raises under
    ``nan_policy="raise"``, warns with the counts under ``"omit"``."""
    check_lengths(query_labels, gallery_labels, query_time, gallery_time, n_query, n_gallery)
    bad_q = _missing(query_labels, n_query)
    bad_g = _missing(gallery_labels, n_gallery)
    what = "label"
    if timed:
        bad_q = bad_q | _missing(None if query_time is None else
                                 np.asarray(query_time, dtype=np.float64).ravel(), n_query)
        bad_g = bad_g | _missing(None if gallery_time is None else
                                 np.asarray(gallery_time, dtype=np.float64).ravel(), n_gallery)
        what = "label or time (a time window or filter is set)"
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


