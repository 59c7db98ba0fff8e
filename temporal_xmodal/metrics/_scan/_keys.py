"""Scores as the scan engine compares them: sortable keys, the two tie rules, similarities.

Ties
----
Two tie rules, each with one implementation for NumPy arrays and torch tensors:

* Metrics rank an item by the number of gallery items scoring **at least as
  high** as it (ties count against the query), the convention of
  :func:`sklearn.metrics.average_precision_score`.  Scores are compared
  through :func:`sortable_keys`: int64 keys ordered as the float64 scores, equal
  for equal scores (``-0.0`` and ``+0.0`` included).
* Search returns equal scores by **increasing gallery index**
  (:func:`order_by_score_then_index`).
"""

from numbers import Integral, Real

import numpy as np
import torch

from ..._constraints import Interval

_INT64_MAX = 0x7FFFFFFFFFFFFFFF
#: The similarities of :func:`prepare_similarity`.
SIMILARITIES = ("dot", "cosine", "hamming")
#: The valid values of every scan's ``k``: a positive int (not a bool).
K_RANGE = Interval(Integral, 1, None, closed="left")
#: The valid values of every scan's ``working_memory`` (MiB), besides None.
WORKING_MEMORY_RANGE = Interval(Real, 0, None, closed="neither")


def sortable_keys(scores):
    """int64 keys in the order of the float64 values of ``scores`` (NaN-free).

    The bits of a float64 read as an int64 are in order for positive values
    and in reverse for negative ones: flipping all but the sign bit of the
    negative ones puts every value in order.  ``+ 0.0`` first maps ``-0.0``
    to ``+0.0``, so equal scores get equal keys.  NumPy arrays give NumPy
    keys, tensors tensor keys (on their device).
    """
    if isinstance(scores, torch.Tensor):
        bits = (scores.to(torch.float64) + 0.0).view(torch.int64)
        return bits ^ ((bits >> 63) & _INT64_MAX)
    bits = np.add(scores, 0.0, dtype=np.float64).view(np.int64)
    sign = bits >> 63  # -1 for negative values, 0 otherwise
    sign &= np.int64(_INT64_MAX)
    bits ^= sign
    return bits


def order_by_score_then_index(scores, indices):
    """Each row by decreasing score, equal scores by increasing index (the search tie rule).

    Takes tensors or arrays; returns NumPy arrays (the results of a search
    are small: n_queries x k).
    """
    scores, indices = (np.asarray(a.cpu() if isinstance(a, torch.Tensor) else a)
                       for a in (scores, indices))
    order = np.lexsort((indices, -scores), axis=1)
    return np.take_along_axis(scores, order, 1), np.take_along_axis(indices, order, 1)


def unit_rows(A):
    """Rows scaled to unit L2 norm (zero rows stay zero); arrays or tensors."""
    if isinstance(A, torch.Tensor):
        return A / A.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return A / np.maximum(np.linalg.norm(A, axis=1, keepdims=True), 1e-12)


def prepare_similarity(Q, G, kind):
    """Query and gallery rows whose products ``Q @ G.T`` score pairs by ``kind``.

    ``"dot"``: the rows as they are.  ``"cosine"``: unit rows.
    ``"hamming"``: the sign codes (+-1; float64 for arrays, the input's dtype
    for tensors): ``Q @ G.T = dim - 2 x Hamming distance``, so the ranking is
    that of the negative Hamming distance, integer-valued (ties kept).
    """
    if kind == "cosine":
        return unit_rows(Q), unit_rows(G)
    if kind == "hamming":
        if isinstance(Q, torch.Tensor):
            return (torch.where(Q > 0, 1.0, -1.0).to(Q.dtype),
                    torch.where(G > 0, 1.0, -1.0).to(G.dtype))
        return np.where(Q > 0, 1.0, -1.0), np.where(G > 0, 1.0, -1.0)
    return Q, G
