"""Inference of SCML, as plain functions: an item's code is sign(h) of its own modality (or
h); an item seen in both modalities has the fused code sign(h_image + h_text) (Song & Tan)."""

import numpy as np
import torch

from ...base import l2_normalize
from ...metrics import mean_average_precision, mean_reciprocal_rank
from ...training import as_tensor, embed_batches


def hidden(module, modality, A, device):
    """h ∈ (−1, 1)^K of one modality's feature block (eval mode), as float64 (n_samples, K)."""
    h = embed_batches(module, {modality: as_tensor(A)}, device, modality=modality)
    return h.numpy().astype(np.float64)


def binary_codes(h):
    """sign(h), with sign(0) = +1."""
    return np.where(h >= 0, 1.0, -1.0)


def fused_codes(h_image, h_text):
    """L2-normalised fused codes sign(h_image + h_text): per bit, the likelier sign under
    P(b=+1 | x) = (1 + h)/2 in both modalities."""
    return l2_normalize(binary_codes(h_image + h_text))


def class_probabilities(module, modality, A, device, multilabel):
    """S's softmax (single-label) or per-label sigmoid (multilabel) probabilities of one
    modality's float32 feature block, (n_samples, n_classes)."""
    module.eval()
    with torch.no_grad():
        logits = module(**{modality: as_tensor(A).to(device)})[modality]
    proba = torch.sigmoid(logits) if multilabel else torch.softmax(logits, dim=1)
    return proba.cpu().numpy().astype(np.float64)


def fused_database_score(Z, fused, labels):
    """Mean of image→fused and text→fused retrieval quality of ``Z`` (``[image codes | text
    codes]``) against the ``fused`` codes of the same rows: mAP with ``labels``, else
    counterpart MRR."""
    d = Z.shape[1] // 2
    metric = (mean_reciprocal_rank if labels is None
              else lambda q, g: mean_average_precision(q, g, labels, labels))
    return float(np.mean([metric(Z[:, :d], fused), metric(Z[:, d:], fused)]))


__all__ = ["binary_codes", "class_probabilities", "fused_codes", "fused_database_score",
           "hidden"]
