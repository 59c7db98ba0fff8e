"""SCML's semantic classification loss (spec ``sequential_ticrc_cca.md`` eq. 10, §A.3).

.. math::

    l(D;\\theta) = -\\sum_i \\sum_{j=1}^{C}
        \\big[w_p\\, y_{ij} \\log \\hat y_{ij} + (1 - y_{ij}) \\log(1 - \\hat y_{ij})\\big]

with sigmoid outputs ŷ for multi-label data (w_p > 1 re-weights the rare
positive labels) and, for single-label data, the categorical cross-entropy
of the softmax (ambiguity A-4; ``"literal"`` applies eq. 10 to the softmax
outputs as written).  Reduction (A-5): mean over the batch, sum over classes;
or the paper's plain sum.
"""

import torch
from torch import nn
from torch.nn import functional as F

REDUCTIONS = ("mean", "sum")
SINGLE_LABEL_LOSSES = ("cross_entropy", "literal")


def classification_loss(logits, labels, *, multilabel=False, positive_weight=1.0,
                        reduction="mean", single_label_loss="cross_entropy", split=False):
    """Eq. 10 on one batch of classifier logits.

    Parameters
    ----------
    logits : torch.Tensor of shape (B, C)
    labels : torch.Tensor of shape (B, C)
        Label indicator (one-hot for single-label data).
    multilabel : bool, default=False
        Sigmoid outputs (multi-label) or softmax (single-label).
    positive_weight : float, default=1.0
        w_p, weight of the positive-label terms.
    reduction : {"mean", "sum"}, default="mean"
        Over the batch (classes are always summed).
    single_label_loss : {"cross_entropy", "literal"}, default="cross_entropy"
        For softmax outputs: the categorical cross-entropy, or eq. 10 with its
        ``(1 − y) log(1 − ŷ)`` terms as written.
    split : bool, default=False
        Return the positive-label and negative-label parts ``(l+, l−)``
        separately (the multi-label gradient disentangling of §A.3).

    Returns
    -------
    loss : torch.Tensor (scalar), or tuple of two scalars when ``split``
    """
    if multilabel:
        log_p, log_not_p = F.logsigmoid(logits), F.logsigmoid(-logits)
    else:
        log_p = F.log_softmax(logits, dim=1)
        log_not_p = (torch.log1p(-log_p.exp().clamp(max=1 - 1e-7))
                     if single_label_loss == "literal" else None)
    positive = -(positive_weight * labels * log_p).sum(1)
    negative = (-((1 - labels) * log_not_p).sum(1) if log_not_p is not None
                else torch.zeros_like(positive))
    reduce = torch.mean if reduction == "mean" else torch.sum
    if split:
        return reduce(positive), reduce(negative)
    return reduce(positive + negative)


class ClassificationLoss(nn.Module):
    """skorch criterion: eq. 10 summed over the modalities present in a batch.

    Called as ``criterion(logits, y_true, batch)`` by
    :class:`~temporal_xmodal.training.CrossModalNet`; ``logits`` maps each
    modality to its (B, C) logits and ``batch[f"{modality}_labels"]`` holds
    its label indicator.

    Parameters
    ----------
    multilabel, positive_weight, reduction, single_label_loss
        See :func:`classification_loss`.
    """

    def __init__(self, multilabel=False, positive_weight=1.0, reduction="mean",
                 single_label_loss="cross_entropy"):
        super().__init__()
        self.multilabel = multilabel
        self.positive_weight = positive_weight
        self.reduction = reduction
        self.single_label_loss = single_label_loss

    def loss(self, logits, labels, split=False):
        """Eq. 10 of one modality's logits under this configuration (see
        :func:`classification_loss`)."""
        return classification_loss(logits, labels, multilabel=self.multilabel,
                                   positive_weight=self.positive_weight,
                                   reduction=self.reduction,
                                   single_label_loss=self.single_label_loss, split=split)

    def forward(self, logits, y_true=None, batch=None):
        return sum(self.loss(z, batch[f"{m}_labels"]) for m, z in logits.items())


__all__ = ["ClassificationLoss", "REDUCTIONS", "SINGLE_LABEL_LOSSES", "classification_loss"]
