"""Procrustes alignment of the per-bin models: their embeddings and the chained rotations
(NumPy and SciPy on the host; the SVDs are D × D)."""

import warnings

import numpy as np
from scipy.linalg import orthogonal_procrustes

from ...time import TimeRangeWarning, time_role


def bin_embedding(estimator, modality, A, time):
    """A per-bin model's own (unrotated) embedding of one modality, its out-of-range warning
    silenced (the binned estimator warns once)."""
    t = time if time_role(estimator) == "inference" else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TimeRangeWarning)
        if modality == "image":
            return estimator.transform_image(A, time=t)
        return estimator.transform_text(A, time=t)


def _stacked(estimator, X_image, X_text, time, align_on):
    """``[f_V(X_V); f_T(X_T)]`` of shape (2N, D), or one modality's (N, D) block."""
    if align_on == "image":
        return bin_embedding(estimator, "image", X_image, time)
    if align_on == "text":
        return bin_embedding(estimator, "text", X_text, time)
    return np.vstack([bin_embedding(estimator, "image", X_image, time),
                      bin_embedding(estimator, "text", X_text, time)])


def chain_rotations(bin_estimators, X_image, X_text, time, rows, dim, *, alignment, align_on):
    """The rotations R_t into bin 0's frame, chained over adjacent bins: bin t's training items
    embedded by model t (rotated by R_t) and by model t+1 give
    Ω = argmin_{ΩᵀΩ = I} ‖M_t R_t Ω − M_{t+1}‖_F and R_{t+1} = Ωᵀ (Semedo & Magalhães, ACM MM
    2019, Eq. 12).

    Parameters
    ----------
    bin_estimators : list of fitted estimators
        The per-bin models, in time order.
    X_image, X_text, time : ndarray
        The training data.
    rows : list of ndarray of int
        The training rows of each fitted bin.
    dim : int
        The shared embedding dimension D.
    alignment : {"procrustes", "none"}
    align_on : {"both", "image", "text"}

    Returns
    -------
    rotations : ndarray of shape (T, D, D)
    residuals : ndarray of shape (T - 1, 2)
        ‖M_t R_t − M_{t+1}‖_F and ‖M_t R_t Ω − M_{t+1}‖_F per adjacent pair.
    """
    T = len(bin_estimators)
    R = np.tile(np.eye(dim), (T, 1, 1))
    residuals = np.zeros((max(T - 1, 0), 2))
    for t in range(T - 1):
        r = rows[t]
        A = _stacked(bin_estimators[t], X_image[r], X_text[r], time[r], align_on) @ R[t]
        B = _stacked(bin_estimators[t + 1], X_image[r], X_text[r], time[r], align_on)
        omega = orthogonal_procrustes(A, B)[0] if alignment == "procrustes" else np.eye(dim)
        R[t + 1] = omega.T
        residuals[t] = np.linalg.norm(A - B), np.linalg.norm(A @ omega - B)
    return R, residuals
