"""Inference of SCML, as plain functions: codes, fused codes, class probabilities, score.

An item's code is sign(h) of its own modality (or h itself); the unified code of an
item seen in both modalities is sign(h_image + h_text) (Song & Tan); retrieval
may search either database.
"""

import numpy as np
import torch

from ...base import l2_normalize
from ...metrics import mean_average_precision, mean_reciprocal_rank
from ...training import as_tensor, embed_batches


def hidden(module, modality, A, device):
    """h ∈ (−1, 1)^K of one modality's feature block (eval mode), as float64.

    Parameters
    ----------
    module : SequentialNet
    modality : {"image", "text"}
    A : ndarray of shape (n_samples, n_<modality>_features)
    device : str

    Returns
    -------
    h : ndarray of shape (n_samples, K)
    """
    h = embed_batches(module, {modality: as_tensor(A)}, device, modality=modality)
    return h.numpy().astype(np.float64)


def binary_codes(h):
    """sign(h), with sign(0) = +1."""
    return np.where(h >= 0, 1.0, -1.0)


def fused_codes(h_image, h_text):
    """L2-normalised unified codes sign(h_image + h_text) of items seen in both modalities.

    Per bit, +1 when P(b=+1 | image) · P(b=+1 | text) ≥ P(b=−1 | image) · P(b=−1 | text)
    with P(b=+1 | x) = (1 + h)/2, which for two modalities is the sign of the sum.
    """
    return l2_normalize(binary_codes(h_image + h_text))


def class_probabilities(module, modality, A, device, multilabel):
    """S's classifier output for one modality's float32 feature block.

    Returns
    -------
    proba : ndarray of shape (n_samples, n_classes)
        Softmax (single-label) or per-label sigmoid (multilabel) probabilities.
    """
    module.eval()
    with torch.no_grad():
        logits = module(**{modality: as_tensor(A).to(device)})[modality]
    proba = torch.sigmoid(logits) if multilabel else torch.softmax(logits, dim=1)
    return proba.cpu().numpy().astype(np.float64)


def fused_database_score(Z, fused, labels):
    """Mean of image→fused and text→fused retrieval quality.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, 2 * K)
        ``[image codes | text codes]`` of the queries.
    fused : ndarray of shape (n_samples, K)
        Fused codes of the database (the same rows).
    labels : ndarray or None
        Validated labels (mAP); ``None``: counterpart MRR.

    Returns
    -------
    score : float
    """
    d = Z.shape[1] // 2
    metric = (mean_reciprocal_rank if labels is None
              else lambda q, g: mean_average_precision(q, g, labels, labels))
    return float(np.mean([metric(Z[:, :d], fused), metric(Z[:, d:], fused)]))


__all__ = ["binary_codes", "class_probabilities", "fused_codes", "fused_database_score",
           "hidden"]
