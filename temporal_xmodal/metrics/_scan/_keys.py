"""Scores as the scan compares them: sortable keys, the two tie rules, similarities.

Metrics rank an item by the gallery items scoring at least as high (:func:`sortable_keys`);
search orders equal scores by increasing gallery index (:func:`order_by_score_then_index`).
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
    """int64 keys in the order of the float64 values of NaN-free ``scores`` (a negative value's
    bits flipped but for the sign), equal for equal scores (``-0.0`` as ``+0.0``); NumPy keys
    for arrays, tensor keys on the tensor's device."""
    if isinstance(scores, torch.Tensor):
        bits = (scores.to(torch.float64) + 0.0).view(torch.int64)
        return bits ^ ((bits >> 63) & _INT64_MAX)
    bits = np.add(scores, 0.0, dtype=np.float64).view(np.int64)
    sign = bits >> 63  # -1 for negative values, 0 otherwise
    sign &= np.int64(_INT64_MAX)
    bits ^= sign
    return bits


def order_by_score_then_index(scores, indices):
    """Each row by decreasing score, equal scores by increasing index, as NumPy arrays."""
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
    """Query and gallery rows whose products ``Q @ G.T`` score pairs by ``kind``: ``"dot"`` as
    they are, ``"cosine"`` unit rows, ``"hamming"`` the ±1 sign codes (``dim - 2 * hamming``:
    integer scores, ties kept)."""
    if kind == "cosine":
        return unit_rows(Q), unit_rows(G)
    if kind == "hamming":
        if isinstance(Q, torch.Tensor):
            return (torch.where(Q > 0, 1.0, -1.0).to(Q.dtype),
                    torch.where(G > 0, 1.0, -1.0).to(G.dtype))
        return np.where(Q > 0, 1.0, -1.0), np.where(G > 0, 1.0, -1.0)
    return Q, G
