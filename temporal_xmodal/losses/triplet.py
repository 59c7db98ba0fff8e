"""Bidirectional cross-modal triplet hinge over in-batch negatives (masks, no loops).

With S = Z_image Z_textᵀ (Semedo, thesis, Eqs. 2.9, 3.4, 3.6, 4.4; pair weights: Semedo &
Magalhães, ACM MM 2019, Eqs. 7–11), L = Σ_i Σ_{n ∈ N_i} [m_in − S_ii + S_in]_+ +
[m_in − S_ii + S_ni]_+: the positive of anchor i is its counterpart, N_i its negatives, m a
scalar or B×B ``[anchor, negative]``.  The losses call the private, unvalidated forms.
"""

import torch
from sklearn.utils._param_validation import StrOptions, validate_params

NEGATIVE_MODES = ("different_category", "all_non_matching")
REDUCTIONS = ("sum_per_anchor", "sum", "mean_active")


@validate_params({"mode": [StrOptions(set(NEGATIVE_MODES))]},
                 prefer_skip_nested_validation=True)
def negative_mask(labels, mode="different_category"):
    """Which batch items are negatives of which anchors.

    Parameters
    ----------
    labels : torch.Tensor of shape (B, C)
        Label indicator.
    mode : {"different_category", "all_non_matching"}, default="different_category"
        Items sharing no label with the anchor, or every other item.

    Returns
    -------
    mask : torch.BoolTensor of shape (B, B)
        ``mask[i, n]``: n is a negative for anchor i.
    """
    return _negative_mask(labels, mode)


def _negative_mask(labels, mode):
    if mode == "different_category":
        return (labels @ labels.T) == 0
    return ~torch.eye(labels.shape[0], dtype=torch.bool, device=labels.device)


def shared_label_mask(labels):
    """``mask[i, j]``: items i and j share a label (i = j included), from ``labels`` (B, C).

    Returns
    -------
    mask : torch.BoolTensor of shape (B, B)
    """
    return (labels @ labels.T) > 0


@validate_params({"reduction": [StrOptions(set(REDUCTIONS))]},
                 prefer_skip_nested_validation=True)
def bidirectional_triplet_loss(z_image, z_text, margin, negatives, reduction="sum_per_anchor",
                               scores=None):
    """Triplet hinge of both retrieval directions over a batch.

    Parameters
    ----------
    z_image, z_text : torch.Tensor of shape (B, D)
        L2-normalised embeddings; row i of both is item i.
    margin : float or torch.Tensor of shape (B, B)
        m, or per-(anchor, negative) margins (no gradient).
    negatives : torch.Tensor of shape (B, B)
        A boolean mask (:func:`negative_mask`) or non-negative pair weights.
    reduction : {"sum_per_anchor", "sum", "mean_active"}, default="sum_per_anchor"
        The sum over B (the 1/b of Semedo, thesis, Algorithm 1), the sum, or the mean
        over the positive hinges.
    scores : tuple of two torch.Tensor of shape (B, B) or None, default=None
        The ``[anchor, item]`` similarities of each direction when they are not S and Sᵀ;
        the positives stay ``<z_image_i, z_text_i>``.

    Returns
    -------
    loss : torch.Tensor (scalar)
    """
    return _triplet_loss(z_image, z_text, margin, negatives, reduction, scores)


def _triplet_loss(z_image, z_text, margin, negatives, reduction="sum_per_anchor", scores=None):
    return _reduce(_hinges(z_image, z_text, margin, negatives, scores), reduction,
                   z_image.shape[0])


def _hinges(z_image, z_text, margin, negatives, scores=None, S=None):
    """Both directions' hinges as one (2, B, B) tensor ``[direction, anchor, item]``, times
    ``negatives``; ``S`` may be passed when the caller has it.
    """
    if torch.is_tensor(margin):
        margin = margin.detach()
    if scores is None:
        S = z_image @ z_text.T if S is None else S
        both, positive = torch.stack([S, S.T]), S.diagonal()[:, None]
    else:
        both, positive = torch.stack(scores), (z_image * z_text).sum(dim=1, keepdim=True)
    return torch.relu(both + (margin - positive)) * negatives


def _reduce(hinges, reduction, batch_size):
    """A batch's loss from its hinges (``reduction`` of :func:`bidirectional_triplet_loss`)."""
    total = hinges.sum()
    if reduction == "sum_per_anchor":
        return total / batch_size
    if reduction == "sum":
        return total
    return total / (hinges > 0).sum().clamp(min=1)
