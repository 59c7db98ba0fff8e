"""Joint diachronic ranking loss (spec ``diachronic_and_binned.md`` §3).

For a batch embedded at the items' own times, with S[a, j] = e_V^a · e_T^j and
h_aj = [m − S_aa + S_aj]_+ (image→text; S_ja for text→image):

    L = Σ_{a,j} W_aj · h_aj (both directions)                              (eqs. 7–11)
    W_aj = 1                      if a and j share no category   (L_inter, margin m)
         = ρ(|t_a − t_j|)         if they do and |t_a − t_j| > w (L_intra, margin m_intra)
         = 0                      otherwise (same category within the window, or j = a)
    ρ(Δ) = 1 − exp(−λ Δ)                                                    (eq. 10)

Same-category items outside the window act as soft negatives weighted by ρ.

With ``DiachronicNet(same_time_anchors=K)`` the network also hands over, for the batch's first
K anchors, S'_aj computed with item j projected at the anchor's time t_a (image→text: its
caption; text→image: its picture).  Those anchors' hinges use S' in place of S (and of Sᵀ), the
others' stay as above (a deviation, see ``DiachronicEmbedder(same_time_anchors=...)``); the
positives S_aa are unchanged.
"""

import torch
from torch import nn

from .triplet import REDUCTIONS, bidirectional_triplet_loss, shared_label_mask


def diachronic_weights(labels, time, window, decay):
    """Pair weights W (and the L_intra mask) of a batch.

    Parameters
    ----------
    labels : torch.Tensor of shape (B, C)
        Label indicator.
    time : torch.Tensor of shape (B,)
        Timestamps in the user's units (the loss always uses raw differences).
    window : float
        w: no constraint between same-category items with ``|Δt| ≤ w`` (A4: ≤).
    decay : float
        λ of ρ = 1 − exp(−λ ``|Δt|``).

    Returns
    -------
    inter : torch.BoolTensor (B, B)
        Pairs sharing no category (weight 1).
    intra_weight : torch.Tensor (B, B)
        ρ for same-category pairs outside the window, else 0.
    """
    shared = shared_label_mask(labels)
    dt = (time[:, None] - time[None, :]).abs().to(labels.dtype)
    intra = shared & (dt > window)
    return ~shared, torch.where(intra, 1.0 - torch.exp(-decay * dt), torch.zeros_like(dt))


class DiachronicRankingLoss(nn.Module):
    """L_inter + L_intra over the whole batch, both retrieval directions.

    Parameters
    ----------
    margin : float, default=1.0
        m of L_inter.
    intra_margin : float or None, default=None
        Margin inside L_intra (the paper uses m; ``None`` = ``margin``).
    window : float, default=4.0
        w, in the units of the time column (paper: 4 months).
    decay : float, default=0.1
        λ per time unit (paper: 0.1 per month).
    reduction : {"sum", "sum_per_anchor", "mean_active"}, default="sum"
        The thesis sums every triplet term (§2.2.5.3); the estimator divides
        by the batch size by default (see ``DiachronicEmbedder``).
    """

    def __init__(self, margin=1.0, intra_margin=None, window=4.0, decay=0.1, reduction="sum"):
        super().__init__()
        if reduction not in REDUCTIONS:
            raise ValueError(f"reduction must be one of {REDUCTIONS}; got {reduction!r}.")
        self.margin = margin
        self.intra_margin = margin if intra_margin is None else intra_margin
        self.window = window
        self.decay = decay
        self.reduction = reduction

    def forward(self, embeddings, labels, batch):
        """The loss of a batch; ``embeddings`` is ``(z_image, z_text)`` or
        ``(z_image, z_text, S_it, S_ti)`` (the first K anchors' negatives at their times)."""
        z_image, z_text, *same_time = embeddings
        inter, intra_weight = diachronic_weights(labels, batch["time"], self.window, self.decay)
        margins = torch.where(inter, self.margin, self.intra_margin)
        weights = inter.to(intra_weight.dtype) + intra_weight  # the two masks are disjoint
        scores = None
        if same_time:  # the first K anchors compare at their own times, the rest as usual
            k = same_time[0].shape[0]
            scores = (torch.cat([same_time[0], z_image[k:] @ z_text.T]),
                      torch.cat([same_time[1], z_text[k:] @ z_image.T]))
        return bidirectional_triplet_loss(z_image, z_text, margins, weights, self.reduction,
                                          scores=scores)
