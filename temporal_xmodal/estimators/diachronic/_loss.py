"""DCM's joint diachronic ranking loss (Semedo & Magalhães, "Diachronic Cross-modal
Embeddings", ACM MM 2019, Eqs. 6–11).

L = Σ_{a,j} W_aj · [m − S_aa + S_aj]_+ over both directions, with W_aj = 1 for items
sharing no category, ρ(Δt) = 1 − exp(−λ Δt) for same-category items more than w apart,
0 otherwise.  Read more in docs/estimators/diachronic.md ("Loss").
"""

import torch
from sklearn.utils._param_validation import StrOptions, validate_parameter_constraints
from torch import nn

from ...losses.triplet import REDUCTIONS, _triplet_loss, shared_label_mask


def diachronic_weights(labels, time, window, decay):
    """Pair weights W of a batch: the L_inter mask and the L_intra weights ρ.

    Parameters
    ----------
    labels : torch.Tensor of shape (B, C)
        Label indicator.
    time : torch.Tensor of shape (B,)
        Times on one axis (only their differences matter).
    window : float
        w, in the unit of ``time``.
    decay : float
        λ, per unit of ``time``.

    Returns
    -------
    inter : torch.BoolTensor of shape (B, B)
        Pairs sharing no category (weight 1).
    intra_weight : torch.Tensor of shape (B, B)
        ρ for same-category pairs more than w apart, else 0.
    """
    shared = shared_label_mask(labels)
    dt = (time[:, None] - time[None, :]).abs().to(labels.dtype)
    intra = shared & (dt > window)
    return ~shared, torch.where(intra, 1.0 - torch.exp(-decay * dt), torch.zeros_like(dt))


class DiachronicRankingLoss(nn.Module):
    """L_inter + L_intra over the whole batch, both retrieval directions.

    The criterion of :class:`~temporal_xmodal.DiachronicEmbedder`, called as
    ``loss(embeddings, labels, batch)`` with the batch's times in ``batch["time"]``.

    Parameters
    ----------
    margin : float, default=1.0
        m of L_inter.
    intra_margin : float or None, default=None
        Margin of L_intra; ``None``: ``margin`` (the paper's).
    window : float, default=4.0
        w, in the unit of the batch's times.
    decay : float, default=0.1
        λ, per unit of the batch's times.
    reduction : {"sum", "sum_per_anchor", "mean_active"}, default="sum"
        The sum of the triplet terms (the paper's), over B, or their mean over the positive ones.
    intra_balance : float or None, default=None
        ``None``: every pair counts once (the paper's batch-all); β: the same-category
        weights are scaled by β · n_inter / n_intra per batch.
    """

    _parameter_constraints = {"reduction": [StrOptions(set(REDUCTIONS))]}

    def __init__(self, margin=1.0, intra_margin=None, window=4.0, decay=0.1, reduction="sum",
                 intra_balance=None):
        super().__init__()
        validate_parameter_constraints(self._parameter_constraints, {"reduction": reduction},
                                       caller_name=type(self).__name__)
        self.margin = margin
        self.intra_margin = margin if intra_margin is None else intra_margin
        self.window = window
        self.decay = decay
        self.reduction = reduction
        self.intra_balance = intra_balance

    def forward(self, embeddings, labels, batch):
        """The loss of a batch; ``embeddings`` is ``(z_image, z_text)`` or ``(z_image, z_text,
        S_it, S_ti)`` (:meth:`DiachronicNet.forward`).
        """
        z_image, z_text, *same_time = embeddings
        if self.decay == 0:  # ρ ≡ 0: L_inter alone, no time differences computed
            weights = (~shared_label_mask(labels)).to(z_image.dtype)
            margins = self.margin
        else:
            inter, intra_weight = diachronic_weights(labels, batch["time"], self.window,
                                                     self.decay)
            if self.intra_balance is not None:  # tensors only: no host sync
                n_intra = (intra_weight > 0).sum().clamp(min=1)
                intra_weight = intra_weight * (self.intra_balance * inter.sum() / n_intra)
            margins = torch.where(inter, self.margin, self.intra_margin)
            weights = inter.to(intra_weight.dtype) + intra_weight  # the masks are disjoint
        scores = None
        if same_time:  # the first K anchors compare at their own times, the rest as usual
            k = same_time[0].shape[0]
            scores = (torch.cat([same_time[0], z_image[k:] @ z_text.T]),
                      torch.cat([same_time[1], z_text[k:] @ z_image.T]))
        return _triplet_loss(z_image, z_text, margins, weights, self.reduction, scores=scores)
