"""Counterpart retrieval on a score matrix: one gold item per query (the TICRC metric).

Query ``i`` pairs with candidate ``i``; :func:`counterpart_reciprocal_ranks` gives the
reciprocal rank of the gold item in both directions, :func:`random_mrr` the expected MRR
of a random ranking.
"""

import numpy as np
from sklearn.utils._param_validation import validate_params

from .._validation import CountInterval
from ._ranking import reciprocal_rank_per_query


@validate_params({"scores": ["array-like"]}, prefer_skip_nested_validation=True)
def counterpart_reciprocal_ranks(scores):
    """Reciprocal rank of each item's counterpart, in both directions.

    Read more in the user guide: docs/evaluation.md.

    Parameters
    ----------
    scores : array-like of shape (n, n)
        ``scores[i, j]``: similarity of query image ``i`` and candidate text
        ``j``; the gold text of image ``i`` is text ``i``.

    Returns
    -------
    rr_i2t : ndarray of shape (n,)
        Rank of text ``i`` among all texts for image ``i`` (row-wise).
    rr_t2i : ndarray of shape (n,)
        Rank of image ``i`` among all images for text ``i`` (column-wise).
        Ties count against the query (:func:`reciprocal_rank_per_query`).

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
    gold = np.eye(scores.shape[0], dtype=bool)
    return (reciprocal_rank_per_query(scores, gold),
            reciprocal_rank_per_query(scores.T, gold))


@validate_params({"n_candidates": [CountInterval(1, None)]},
                 prefer_skip_nested_validation=True)
def random_mrr(n_candidates):
    """Expected MRR of a random ranking with one relevant item among ``n_candidates``.

    Read more in the user guide: docs/evaluation.md.

    Parameters
    ----------
    n_candidates : int

    Returns
    -------
    mrr : float
        ``H_N / N`` (the harmonic number over N).

    Examples
    --------
    >>> from temporal_xmodal.metrics import random_mrr
    >>> random_mrr(2)
    0.75
    """
    return float(np.sum(1.0 / np.arange(1, n_candidates + 1)) / n_candidates)


__all__ = ["counterpart_reciprocal_ranks", "random_mrr"]
