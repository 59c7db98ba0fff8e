"""Browsing protocols: semantic dispersion and cross-modal evolution (spec §8.6-8.7).

Both take row positions of query items in the evaluation set and compare
each query, at its own time, with the other-modality items of every instant
(time bin), each at its own time.  ``estimator``, ``X`` and ``bins`` are read
as in :mod:`temporal_xmodal.evaluation.protocols` (``X`` may be an
:class:`~temporal_xmodal.evaluation.EmbeddedSplit`; bins may be durations or
dated edges).
"""

import numpy as np

from ._bins import evaluate_per_instant, fit_instants, stack_per_instant
from ._checks import DIRECTIONS, check_choice, check_int, check_query_index
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


def _browse(estimator, X, query_index, bins, direction):
    """The split, query rows, whether one scalar query was given, and the instants."""
    check_choice(direction, "direction", DIRECTIONS)
    split = as_split(estimator, X)
    q, scalar = check_query_index(query_index, split.n_samples)
    instants = fit_instants(bins, split.time, split.estimator.time_unit)
    return split, q, scalar, instants


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
    estimator : fitted CrossModalEmbedder, Pipeline ending in one, or None
        None when ``X`` is an :class:`EmbeddedSplit`.
    X : array-like of shape (n_samples, n_features_in_) or EmbeddedSplit
    query_index : int or array-like of int
        Row position(s) of the query item(s) in X.
    bins : int, float, duration, array-like or fitted TimeBins, default=10
        The instants: a count, a bin width (a number in the estimator's
        ``time_unit``, or a duration such as ``"30D"``), edges (numbers on
        the time axis or dates) or a fitted ``TimeBins``.
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
        Bin centres on the time axis (the x axis of the plot).

    Raises
    ------
    ValueError
        On an out-of-range ``query_index``, a bad ``bins``, ``k`` or ``direction``.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    k = check_int(k, "k")
    split, q, scalar, instants = _browse(estimator, X, query_index, bins, direction)
    similarities = _similarities(exclude_self)
    out = stack_per_instant(evaluate_per_instant(
        split, instants, direction, lambda *a: _topk_mean(similarities(*a), k), query_rows=q),
        q.size)
    return (out[0] if scalar else out), instants.centers


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
    estimator : fitted CrossModalEmbedder, Pipeline ending in one, or None
        None when ``X`` is an :class:`EmbeddedSplit`.
    X : array-like of shape (n_samples, n_features_in_) or EmbeddedSplit
    query_index : int or array-like of int
        Row position(s) of the query item(s) in X.
    bins : int, float, duration, array-like or fitted TimeBins, default=10
        The instants, as in :func:`semantic_dispersion`.
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
        On an out-of-range ``query_index``, a bad ``bins``, ``top_bins`` or
        ``direction``.
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    top_bins = check_int(top_bins, "top_bins")
    split, q, scalar, instants = _browse(estimator, X, query_index, bins, direction)
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
