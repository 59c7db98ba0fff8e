"""SCML's semantic classification loss.

Song & Tan, "Sequential Learning for Cross-modal Retrieval", Eq. 10:

.. math::

    l(D;\\theta) = -\\sum_i \\sum_{j=1}^{C}
        \\big[w_p\\, y_{ij} \\log \\hat y_{ij} + (1 - y_{ij}) \\log(1 - \\hat y_{ij})\\big]

with sigmoid outputs ŷ for multi-label data (w_p > 1 re-weights the rare
positive labels) and, for single-label data, the categorical cross-entropy
of the softmax (the paper writes Eq. 10 for both; ``"literal"`` applies it to
the softmax outputs as written).  The paper sums over the samples; the mean
over the batch, summed over classes, is the default.
"""

import torch
from sklearn.utils._param_validation import (
    StrOptions,
    validate_parameter_constraints,
    validate_params,
)
from torch import nn
from torch.nn import functional as F

REDUCTIONS = ("mean", "sum")
SINGLE_LABEL_LOSSES = ("cross_entropy", "literal")


@validate_params({"reduction": [StrOptions(set(REDUCTIONS))],
                  "single_label_loss": [StrOptions(set(SINGLE_LABEL_LOSSES))]},
                 prefer_skip_nested_validation=True)
def classification_loss(logits, labels, *, multilabel=False, positive_weight=1.0,
                        reduction="mean", single_label_loss="cross_entropy", split=False):
    """SCML's classification loss (Song & Tan, Eq. 10) on one batch of classifier logits.

    Read more in the user guide: docs/estimators/sequential.md.

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
        separately (SCML's disentangling of multi-label gradients, Song & Tan, §4.1).

    Returns
    -------
    loss : torch.Tensor (scalar), or tuple of two scalars when ``split``
        The loss, or its positive-label and negative-label parts.

    Examples
    --------
    >>> import torch
    >>> from temporal_xmodal.losses import classification_loss
    >>> logits = torch.tensor([[2.0, 0.0], [0.0, 2.0]])
    >>> round(float(classification_loss(logits, torch.eye(2))), 4)
    0.1269
    """
    return _classification_loss(logits, labels, multilabel, positive_weight, reduction,
                                single_label_loss, split)


def _classification_loss(logits, labels, multilabel=False, positive_weight=1.0,
                         reduction="mean", single_label_loss="cross_entropy", split=False):
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
    """skorch criterion: SCML's classification loss summed over the modalities of a batch.

    Called as ``criterion(logits, y_true, batch)`` by
    :class:`~temporal_xmodal.training.CrossModalNet`; ``logits`` maps each
    modality to its (B, C) logits and ``batch[f"{modality}_labels"]`` holds
    its label indicator.

    Read more in the user guide: docs/estimators/sequential.md.

    Parameters
    ----------
    multilabel, positive_weight, reduction, single_label_loss
        See :func:`classification_loss`.

    Examples
    --------
    >>> import torch
    >>> from temporal_xmodal.losses import ClassificationLoss
    >>> labels = torch.eye(2)
    >>> logits = {"image": torch.tensor([[2.0, 0.0], [0.0, 2.0]])}
    >>> round(float(ClassificationLoss()(logits, batch={"image_labels": labels})), 4)
    0.1269
    """

    _parameter_constraints = {
        "reduction": [StrOptions(set(REDUCTIONS))],
        "single_label_loss": [StrOptions(set(SINGLE_LABEL_LOSSES))],
    }

    def __init__(self, multilabel=False, positive_weight=1.0, reduction="mean",
                 single_label_loss="cross_entropy"):
        super().__init__()
        validate_parameter_constraints(
            self._parameter_constraints,
            {"reduction": reduction, "single_label_loss": single_label_loss},
            caller_name=type(self).__name__)
        self.multilabel = multilabel
        self.positive_weight = positive_weight
        self.reduction = reduction
        self.single_label_loss = single_label_loss

    def loss(self, logits, labels, split=False):
        """The loss of one modality's logits under this configuration (see
        :func:`classification_loss`)."""
        return _classification_loss(logits, labels, self.multilabel, self.positive_weight,
                                    self.reduction, self.single_label_loss, split)

    def forward(self, logits, y_true=None, batch=None):
        return sum(self.loss(z, batch[f"{m}_labels"]) for m, z in logits.items())


__all__ = ["ClassificationLoss", "REDUCTIONS", "SINGLE_LABEL_LOSSES", "classification_loss"]
