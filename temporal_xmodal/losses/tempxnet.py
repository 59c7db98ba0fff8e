"""TempXNet: triplet loss plus temporal soft-constraints (spec ``tempxnet.md`` §3).

    objective = (L + λ · L_temp) / b                                      (eq. 4.18)
    L_temp = Σ_i C_0(d_i) + C_1(d_i)                                      (eq. 4.6)
    C_0(d_i) = 1/|P_i| Σ_{j∈P_i} f_t(i, j) · (1 − f_s(i, j))              (eq. 4.9)
    C_1(d_i) = 1/|P_i| Σ_{j∈P_i} (1 − f_t(i, j)) · f_s(i, j)              (eq. 4.10)
    f_s(i, j) = 2 · (1/(s(v_i, t_j) + ε) + 1/(s(t_i, v_j) + ε))^(−1)      (eq. 4.11)

P_i are the batch items sharing a label with i; f_t is a temporal correlation
from :mod:`temporal_xmodal.losses.temporal_correlation`.
"""

import torch
from torch import nn

from .triplet import bidirectional_triplet_loss, negative_mask, shared_label_mask

SIMILARITY_MODES = ("clamp", "literal", "shift")


def cross_modality_similarity(z_image, z_text, eps=1e-6, mode="clamp"):
    """f_s: harmonic mean of the two cross-modal cosines of each pair (eq. 4.11).

    Parameters
    ----------
    z_image, z_text : torch.Tensor of shape (B, D)
        L2-normalised embeddings.
    eps : float, default=1e-6
        ε of eq. 4.11.
    mode : {"clamp", "literal", "shift"}, default="clamp"
        The harmonic mean is unbounded when a cosine is ≤ 0 (ambiguity 5):
        "clamp" clamps each cosine to [ε, 1] first; "literal" uses the
        formula as printed (can diverge); "shift" maps cosines to (s + 1)/2.

    Returns
    -------
    f_s : torch.Tensor of shape (B, B)
        ``f_s[i, j]`` uses s(image_i, text_j) and s(text_i, image_j).
    """
    if mode not in SIMILARITY_MODES:
        raise ValueError(f"similarity_mode must be one of {SIMILARITY_MODES}; got {mode!r}.")
    S = z_image @ z_text.T
    a, b = S, S.T
    if mode == "clamp":
        a, b = a.clamp(eps, 1.0), b.clamp(eps, 1.0)
    elif mode == "shift":
        a, b = (a + 1) / 2, (b + 1) / 2
    return 2.0 / (1.0 / (a + eps) + 1.0 / (b + eps))


def temporal_soft_constraint(f_t, f_s, positives):
    """L_temp = Σ_i mean_{j∈P_i} [f_t (1 − f_s) + (1 − f_t) f_s]  (eqs. 4.6–4.10).

    Parameters
    ----------
    f_t : torch.Tensor of shape (B, B)
        Temporal correlation in [0, 1].
    f_s : torch.Tensor of shape (B, B)
        Cross-modality similarity.
    positives : torch.BoolTensor of shape (B, B)
        P_i membership; rows with an empty P_i contribute 0.

    Returns
    -------
    loss : torch.Tensor (scalar), summed over anchors i
    """
    terms = (f_t * (1 - f_s) + (1 - f_t) * f_s) * positives
    size = positives.sum(1).clamp(min=1)
    return (terms.sum(1) / size).sum()


class TempXNetLoss(nn.Module):
    """Triplet loss with a fixed margin plus λ · L_temp (eq. 4.18).

    Parameters
    ----------
    correlation : TemporalCorrelation
        Fitted f_t (recency, category KDE or word-topic).
    margin : float, default=1.0
    temporal_weight : float, default=1.0
        λ; 0 gives the static triplet control.
    eps : float, default=1e-6
    similarity_mode : {"clamp", "literal", "shift"}, default="clamp"
    exclude_self : bool, default=False
        Drop j = i from P_i (the text includes it; ambiguity 4).
    negatives : {"different_category", "all_non_matching"}
    reduction : {"sum_per_anchor", "sum", "mean_active"}
        Of the triplet term; L_temp is divided by the batch size when the
        reduction is "sum_per_anchor" or "mean_active" (eq. 4.18's 1/b).
    """

    def __init__(self, correlation=None, margin=1.0, temporal_weight=1.0, eps=1e-6,
                 similarity_mode="clamp", exclude_self=False,
                 negatives="different_category", reduction="sum_per_anchor"):
        super().__init__()
        self.correlation = correlation
        self.margin = margin
        self.temporal_weight = temporal_weight
        self.eps = eps
        self.similarity_mode = similarity_mode
        self.exclude_self = exclude_self
        self.negatives = negatives
        self.reduction = reduction

    def forward(self, embeddings, labels, batch):
        z_image, z_text = embeddings
        loss = bidirectional_triplet_loss(z_image, z_text, self.margin,
                                          negative_mask(labels, self.negatives), self.reduction)
        if self.temporal_weight == 0:
            return loss
        positives = shared_label_mask(labels)
        if self.exclude_self:
            positives.fill_diagonal_(False)
        with torch.no_grad():
            f_t = self.correlation.batch_matrix(batch["time"], labels, batch["text"])
        f_s = cross_modality_similarity(z_image, z_text, self.eps, self.similarity_mode)
        temporal = temporal_soft_constraint(f_t, f_s, positives)
        if self.reduction != "sum":
            temporal = temporal / z_image.shape[0]
        return loss + self.temporal_weight * temporal
