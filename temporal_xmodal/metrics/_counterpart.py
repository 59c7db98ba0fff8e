"""Counterpart retrieval on a score matrix (the TICRC metric): ranks counted in one scan."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import validate_params

from .._constraints import Interval
from ._scan import Footprint, Reducer, Scan

#: 1-byte comparisons per pair, in blocks of at most 256 rows x 4,096 columns
#: (2**20 pairs: the block's comparisons stay in the cache).
_FOOTPRINT = Footprint(8, max_query_block=256, max_pairs=2**20)


class _CounterpartRanks(Reducer):
    """Candidates scoring at least as high as the gold one, per row and per column."""

    def __init__(self, gold):
        self.gold = gold
        self.row_rank = np.zeros(len(gold), dtype=np.int64)
        self.col_rank = np.zeros(len(gold), dtype=np.int64)

    def reduce(self, state, rows, cols, S):
        self.row_rank[rows] += np.count_nonzero(S >= self.gold[rows, None], axis=1)
        self.col_rank[cols] += np.count_nonzero(S >= self.gold[None, cols], axis=0)


@validate_params({"scores": ["array-like"]}, prefer_skip_nested_validation=True)
def counterpart_reciprocal_ranks(scores):
    """Reciprocal rank of each item's counterpart, in both directions.

    A rank counts every candidate scoring at least as high as the gold one (docs/evaluation.md).

    Parameters
    ----------
    scores : array-like of shape (n, n)
        ``scores[i, j]``: similarity of image ``i`` and text ``j``; text ``i`` is image ``i``'s
        counterpart.

    Returns
    -------
    rr_i2t, rr_t2i : ndarray of shape (n,)
        Reciprocal rank of text ``i`` among all texts for image ``i`` (along the rows), and of
        image ``i`` among all images for text ``i`` (along the columns).

    Raises
    ------
    ValueError
        A matrix that is not square, or NaN scores.

    Examples
    --------
    >>> import numpy as np
    >>> from temporal_xmodal.metrics import counterpart_reciprocal_ranks
    >>> rr_i2t, rr_t2i = counterpart_reciprocal_ranks(np.array([[1.0, 0.0], [2.0, 0.5]]))
    >>> rr_i2t.tolist(), rr_t2i.tolist()
    ([1.0, 0.5], [0.5, 1.0])
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[0] != scores.shape[1]:
        raise ValueError(f"scores must be a square (n, n) matrix; got shape {scores.shape}.")
    n_nan = int(np.isnan(scores).sum())
    if n_nan:
        raise ValueError(f"scores contain {n_nan} NaN value(s); a NaN score has no rank.")
    # one scan, no thread: the column counts of different row blocks add up
    ranks = Scan(scores, None, _FOOTPRINT).run(_CounterpartRanks(np.diagonal(scores).copy()))
    return 1.0 / ranks.row_rank, 1.0 / ranks.col_rank


@validate_params({"n_candidates": [Interval(Integral, 1, None, closed="left")]},
                 prefer_skip_nested_validation=True)
def random_mrr(n_candidates):
    """Expected MRR of a random ranking with one relevant item among ``n_candidates``.

    Parameters
    ----------
    n_candidates : int

    Returns
    -------
    mrr : float
        ``H_N / N``, with H_N the N-th harmonic number.
    """
    return float(np.sum(1.0 / np.arange(1, n_candidates + 1)) / n_candidates)


def random_map(labels, *, block_size=1024):
    r"""Expected category mAP of a random ranking: the chance line of category retrieval.

    An item querying ``n`` items of which ``R`` share a label with it (its counterpart among
    them) has expected AP
    :math:`\frac{1}{n}\left(\frac{R - 1}{n - 1}(n - H_n) + H_n\right)` (:math:`H_n` the n-th
    harmonic number; Bestgen, 2015); the figure is its mean over the items.

    Parameters
    ----------
    labels : array-like of shape (n,) or (n, n_labels)
        Class labels or a 0/1 multilabel indicator (relevant: a shared label).
    block_size : int, default=1024
        Queries per block of the multilabel count (``block_size × n`` memory).

    Returns
    -------
    map : float
    """
    labels = np.asarray(labels)
    n = labels.shape[0]
    if n < 2:
        return 1.0
    if labels.ndim == 1:
        _, which, counts = np.unique(labels, return_inverse=True, return_counts=True)
        relevant = counts[which].astype(np.float64)
    else:
        Y = (labels != 0).astype(np.float32)
        relevant = np.concatenate([((Y[i:i + block_size] @ Y.T) > 0).sum(axis=1)
                                   for i in range(0, n, block_size)]).astype(np.float64)
    harmonic = float(np.sum(1.0 / np.arange(1, n + 1)))
    return float(np.mean(((relevant - 1) / (n - 1) * (n - harmonic) + harmonic) / n))


__all__ = ["counterpart_reciprocal_ranks", "random_map", "random_mrr"]
