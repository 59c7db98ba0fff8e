"""Browsing protocols: semantic dispersion and cross-modal evolution of a query over time."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import StrOptions, validate_params

from .._constraints import Interval
from ._bins import evaluate_per_instant, fit_instants, stack_per_instant
from ._scores import DIRECTIONS
from ._table import ResultTable
from .embedded import as_split

__all__ = ["cross_modal_evolution", "semantic_dispersion"]


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


def _similarities(exclude_self):
    """Cosine similarities of the queries to an instant's gallery (-inf on the own counterpart)."""
    def similarities(Q, G, rows, members):
        S = Q @ G.T
        if exclude_self:
            S[rows[:, None] == members[None, :]] = -np.inf
        return S
    return similarities


def _query_rows(query_index, n):
    """Query row positions (checked against the ``n`` rows of X); whether a scalar was given."""
    idx = np.asarray(query_index)
    scalar = idx.ndim == 0
    idx = np.atleast_1d(idx)
    if idx.ndim != 1 or idx.size == 0 or (idx.dtype.kind not in "iu"):
        raise ValueError(
            "query_index must be an int or a non-empty 1-D array of ints (row positions "
            f"of X); got {query_index!r}.")
    if idx.min() < 0 or idx.max() >= n:
        raise ValueError(
            f"query_index out of range: X has {n} rows, so indices must lie in [0, {n - 1}]; "
            f"got {idx.min() if idx.min() < 0 else idx.max()}.")
    return idx.astype(np.intp), scalar


def _browse(estimator, X, query_index, bins):
    """The split, query rows, whether one scalar query was given, and the instants."""
    split = as_split(estimator, X)
    q, scalar = _query_rows(query_index, split.n_samples)
    instants = fit_instants(bins, split.time, split.estimator.time_unit)
    return split, q, scalar, instants


_BROWSING_CONSTRAINTS = {
    "estimator": "no_validation",
    "X": "no_validation",
    "query_index": ["array-like", Integral],
    "bins": "no_validation",
    "direction": [StrOptions(set(DIRECTIONS))],
    "exclude_self": ["boolean"],
}


@validate_params({**_BROWSING_CONSTRAINTS, "k": [Interval(Integral, 1, None, closed="left")]},
                 prefer_skip_nested_validation=True)
def semantic_dispersion(estimator, X, query_index, *, bins=10, k=5, direction="i2t",
                        exclude_self=False):
    """Semantic dispersion over time: mean top-k similarity of a query per instant.

    The query, at its own time, is compared with the other-modality items of every instant, each at
    its own time, whatever their category; an instant's value is the mean of the top ``k`` cosine
    similarities (Semedo & Magalhães, ACM MM 2019, §5.7), over fewer when the bin has fewer
    candidates.  Read more in docs/evaluation.md.

    Parameters
    ----------
    estimator, X
        As in :func:`~temporal_xmodal.evaluation.coarse_alignment` (``estimator`` None with an
        ``EmbeddedSplit``).
    query_index : int or array-like of int
        Row position(s) of the query item(s) in X.
    bins : int, float, str, timedelta, array-like or fitted TimeBins, default=10
        The instants, as in :func:`~temporal_xmodal.evaluation.local_alignment`.
    k : int, default=5
        Number of nearest candidates averaged.
    direction : {"i2t", "t2i"}, default="i2t"
        Image query over texts (the paper's figures) or text query over images.
    exclude_self : bool, default=False
        Leave the query's own counterpart out of the candidates.

    Returns
    -------
    dispersion : ndarray of shape (n_queries, n_bins), or (n_bins,) for a scalar query_index
        Mean top-k similarity in [-1, 1]; NaN for bins without candidates.
    centers : ndarray of shape (n_bins,)
        Bin centres on the time axis.

    Raises
    ------
    ValueError
        On an out-of-range ``query_index`` or a bad ``bins``, ``k`` or ``direction``.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    split, q, scalar, instants = _browse(estimator, X, query_index, bins)
    similarities = _similarities(exclude_self)
    out = stack_per_instant(evaluate_per_instant(
        split, instants, direction, lambda *a: _topk_mean(similarities(*a), k), query_rows=q),
        q.size)
    return (out[0] if scalar else out), instants.centers


@validate_params({**_BROWSING_CONSTRAINTS,
                  "top_bins": [Interval(Integral, 1, None, closed="left")]},
                 prefer_skip_nested_validation=True)
def cross_modal_evolution(estimator, X, query_index, *, bins=10, top_bins=20, direction="i2t",
                          exclude_self=False):
    """Cross-modal evolution: the bins holding the items closest to a query.

    The query and all items are projected at their own times; a bin's score is the largest cosine
    similarity between the query and the bin's other-modality items, and the ``top_bins`` best bins
    are kept, each with its nearest item (Semedo & Magalhães, ACM MM 2019, §5.8).  Bins without
    candidates are never listed.  Read more in docs/evaluation.md.

    Parameters
    ----------
    estimator, X, query_index, bins, direction, exclude_self
        As in :func:`semantic_dispersion` (the same defaults).
    top_bins : int, default=20
        Bins kept per query (fewer when fewer bins have candidates).

    Returns
    -------
    evolution : list of ResultTable, or one ResultTable for a scalar query_index
        Per query, rows by decreasing similarity (ties: earlier bin first), columns ``bin``,
        ``center``, ``item`` (row in X of the nearest item), ``similarity`` and ``is_query_bin``
        (the bin of the query's own time).

    Raises
    ------
    ValueError
        On an out-of-range ``query_index`` or a bad ``bins``, ``top_bins`` or ``direction``.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    split, q, scalar, instants = _browse(estimator, X, query_index, bins)
    similarities = _similarities(exclude_self)

    def nearest(Q, G, rows, members):  # the bin's best item and its similarity, per query
        S = similarities(Q, G, rows, members)
        arg = np.argmax(S, axis=1)
        return np.stack([members[arg], S[np.arange(rows.size), arg]])

    results = evaluate_per_instant(split, instants, direction, nearest, query_rows=q)
    best_item = stack_per_instant([None if r is None else r[0] for r in results], q.size)
    best_sim = stack_per_instant([None if r is None else r[1] for r in results], q.size)
    best_sim[np.isnan(best_sim)] = -np.inf
    query_bin = instants.item_bin[q]
    tables = []
    for j in range(q.size):
        valid = np.flatnonzero(np.isfinite(best_sim[j]))
        order = valid[np.argsort(-best_sim[j, valid], kind="stable")][:top_bins]
        tables.append(ResultTable({
            "bin": order,
            "center": instants.centers[order],
            "item": best_item[j, order].astype(np.intp),
            "similarity": best_sim[j, order],
            "is_query_bin": order == query_bin[j],
        }))
    return tables[0] if scalar else tables
