"""DCM's joint diachronic ranking loss.

For a batch embedded at the items' own times, with S[a, j] = e_V^a · e_T^j and
h_aj = [m − S_aa + S_aj]_+ (image→text; S_ja for text→image), L = Σ_{a,j} W_aj · h_aj over
both directions, where W_aj is 1 for items sharing no category, ``ρ(Δt) = 1 − exp(−λ Δt)``
of their time difference Δt for same-category items more than w apart (soft negatives), and 0
otherwise (Semedo & Magalhães, "Diachronic Cross-modal Embeddings", ACM MM 2019, Eqs. 6–11).
The batch form, and the same-time negatives of ``DiachronicNet(same_time_anchors=K)`` (not in
the paper), are in docs/estimators/diachronic.md ("Loss").
"""

import torch
from sklearn.utils._param_validation import StrOptions, validate_parameter_constraints
from torch import nn

from .triplet import REDUCTIONS, _triplet_loss, shared_label_mask


def diachronic_weights(labels, time, window, decay):
    """Pair weights W (and the L_intra mask) of a batch.

    Read more in the user guide: docs/estimators/diachronic.md.

    Parameters
    ----------
    labels : torch.Tensor of shape (B, C)
        Label indicator.
    time : torch.Tensor of shape (B,)
        Times on one axis (only their differences matter).
    window : float
        w, in the unit of ``time``: no constraint between same-category items
        with ``|Δt| ≤ w``.
    decay : float
        λ of ρ = 1 − exp(−λ ``|Δt|``), per unit of ``time``.

    Returns
    -------
    inter : torch.BoolTensor (B, B)
        Pairs sharing no category (weight 1).
    intra_weight : torch.Tensor (B, B)
        ρ for same-category pairs outside the window, else 0.

    Examples
    --------
    >>> import torch
    >>> from temporal_xmodal.losses import diachronic_weights
    >>> labels = torch.eye(2)[[0, 0, 1]]
    >>> inter, rho = diachronic_weights(labels, torch.tensor([0.0, 12.0, 0.0]), 4.0, 0.1)
    >>> round(float(rho[0, 1]), 3), inter[0].tolist()
    (0.699, [False, False, True])
    """
    shared = shared_label_mask(labels)
    dt = (time[:, None] - time[None, :]).abs().to(labels.dtype)
    intra = shared & (dt > window)
    return ~shared, torch.where(intra, 1.0 - torch.exp(-decay * dt), torch.zeros_like(dt))


class DiachronicRankingLoss(nn.Module):
    """L_inter + L_intra over the whole batch, both retrieval directions.

    The criterion of :class:`~temporal_xmodal.DiachronicEmbedder`, called as
    ``loss(embeddings, labels, batch)`` with the batch's times in ``batch["time"]``.

    Read more in the user guide: docs/estimators/diachronic.md.

    Parameters
    ----------
    margin : float, default=1.0
        m of L_inter.
    intra_margin : float or None, default=None
        Margin inside L_intra (the paper uses m; ``None`` = ``margin``).
    window : float, default=4.0
        w, in the unit of the batch's times (the paper: 4 months).
    decay : float, default=0.1
        λ, per unit of the batch's times (the paper: 0.1 per month).
    reduction : {"sum", "sum_per_anchor", "mean_active"}, default="sum"
        The paper sums every triplet term (Semedo, thesis, §2.2.5.3); the
        estimator divides by the batch size by default (``"sum_per_anchor"``).
    intra_balance : float or None, default=None
        ``None``: every pair of the batch counts once (batch-all, the paper's:
        the thesis counts the B × B triplets of a batch, Semedo, thesis,
        §5.3.4.3), so with C categories the other-category terms outnumber the
        same-category ones about C − 1 to 1.  A number β (ours, not the
        paper's): the same-category weights of each batch are scaled by
        β · n_inter / n_intra (the counts of other-category pairs and of
        same-category pairs outside the window), so that per pair count L_intra
        weighs β times L_inter.  ρ still scales each pair.

    Examples
    --------
    >>> import torch
    >>> from temporal_xmodal.losses import DiachronicRankingLoss
    >>> z = torch.nn.functional.normalize(torch.randn(3, 4), dim=1)
    >>> labels = torch.eye(2)[[0, 0, 1]]
    >>> loss = DiachronicRankingLoss(window=4.0, decay=0.1)
    >>> loss((z, z), labels, {"time": torch.tensor([0.0, 12.0, 0.0])}).shape
    torch.Size([])
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
        """The loss of a batch; ``embeddings`` is ``(z_image, z_text)`` or
        ``(z_image, z_text, S_it, S_ti)`` (the first K anchors' negatives at their times)."""
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
