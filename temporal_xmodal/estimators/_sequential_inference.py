"""Inference of :class:`SequentialCrossModal` (SCML): codes, fused codes, scores.

Spec ``sequential_ticrc_cca.md`` §A.7: an item's code is sign(h) of its own
modality (or h itself), the unified code of an item seen in both modalities
is sign(h_image + h_text), and retrieval may search either database.
"""

import numpy as np
import torch
from sklearn.utils.validation import check_is_fitted

from .._validation import check_labels
from ..base import l2_normalize
from ..metrics import mean_average_precision, mean_reciprocal_rank
from ..nn.sequential import MODALITIES
from ..training import embed_batches
from ..training import as_tensor


class SequentialInference:
    """Codes, fused codes, class probabilities and scores of a fitted SCML (mixin)."""

    def _embed(self, modality, A, time):
        h = self._hidden(modality, A)
        return np.where(h >= 0, 1.0, -1.0) if self.codes == "sign" else h

    def _hidden(self, modality, A):
        """h ∈ (−1, 1)^K of one modality (eval mode)."""
        h = embed_batches(self.module_, {modality: as_tensor(A)}, self.device_,
                          modality=modality)
        return h.numpy().astype(np.float64)

    def transform_fused(self, X):
        """Unified binary codes of items observed in both modalities (A-14).

        Per bit, ``+1`` when P(b=+1 | image) · P(b=+1 | text) ≥
        P(b=−1 | image) · P(b=−1 | text) with P(b=+1 | x) = (1 + h)/2, which for
        two modalities is ``sign(h_image + h_text)`` (spec §A.7).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)

        Returns
        -------
        codes : ndarray of shape (n_samples, embedding_dim_)
            L2-normalised ±1 codes (ranked by dot product = by Hamming distance).
        """
        X_image, X_text, _ = self._validate_transform(X)
        h = self._hidden("image", X_image) + self._hidden("text", X_text)
        return l2_normalize(np.where(h >= 0, 1.0, -1.0))

    def class_probabilities(self, X_modality, modality):
        """S's classifier output for one modality's feature block.

        Parameters
        ----------
        X_modality : array-like of shape (n_samples, n_<modality>_features_)
        modality : {"image", "text"}

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes_)
            Softmax (single-label) or per-label sigmoid (multilabel)
            probabilities; columns follow ``classes_``.
        """
        check_is_fitted(self)
        if modality not in MODALITIES:
            raise ValueError(f"modality must be 'image' or 'text'; got {modality!r}.")
        A = self._check_modality_block(X_modality, modality, dtype=np.float32)
        self.module_.eval()
        with torch.no_grad():
            logits = self.module_(**{modality: as_tensor(A).to(self.device_)})[modality]
        proba = torch.sigmoid(logits) if self.multilabel_ else torch.softmax(logits, dim=1)
        return proba.cpu().numpy().astype(np.float64)

    def score(self, X, y=None):
        """Mean of image→text and text→image retrieval quality over the rows of X.

        With ``database_codes="single_modality"`` as
        :meth:`CrossModalEmbedder.score`; with ``"fused"`` each direction's
        queries (one modality) retrieve from the fused codes of the rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
        y : array-like, default=None
            Labels (mAP); ``None``: counterpart MRR.

        Returns
        -------
        score : float
        """
        if self.database_codes == "single_modality":
            return super().score(X, y)
        Z = self.transform(X)
        F = self.transform_fused(X)
        d = Z.shape[1] // 2
        labels = check_labels(y, Z.shape[0], required=False)
        metric = (mean_reciprocal_rank if labels is None
                  else lambda q, g: mean_average_precision(q, g, labels, labels))
        return float(np.mean([metric(Z[:, :d], F), metric(Z[:, d:], F)]))


__all__ = ["SequentialInference"]
