"""Bidirectional cross-modal triplet hinge over in-batch negatives (masks, no loops).

For a batch of B paired items with similarity matrix S = Z_image Z_textᵀ the
loss (Semedo, thesis, Eqs. 2.9, 3.4, 3.6, 4.4; with pair weights, Semedo &
Magalhães, "Diachronic Cross-modal Embeddings", ACM MM 2019, Eqs. 7–11) is

    L = Σ_i Σ_{n ∈ N_i} [m_in − S_ii + S_in]_+        (image i → texts)
      + Σ_i Σ_{n ∈ N_i} [m_in − S_ii + S_ni]_+        (text i → images)

The positive of each anchor is only its own counterpart; ``N_i`` are the batch
items that are negatives for anchor ``i`` (by default the items sharing no
category with it; option: every non-matching item).  ``m`` is a scalar or a
B×B matrix indexed ``[anchor, negative]`` (SAM's per-pair margins).

The public functions validate their options; the losses, which validate theirs
once when built, call the private ones on every batch.
"""

import torch
from sklearn.utils._param_validation import StrOptions, validate_params

NEGATIVE_MODES = ("different_category", "all_non_matching")
REDUCTIONS = ("sum_per_anchor", "sum", "mean_active")


@validate_params({"mode": [StrOptions(set(NEGATIVE_MODES))]},
                 prefer_skip_nested_validation=True)
def negative_mask(labels, mode="different_category"):
    """Which batch items are negatives of which anchors.

    Read more in the user guide: docs/estimators/sam.md.

    Parameters
    ----------
    labels : torch.Tensor of shape (B, C)
        Label indicator (one-hot for single-label data).
    mode : {"different_category", "all_non_matching"}, default="different_category"
        Negatives share no label with the anchor, or are every other item of
        the batch.

    Returns
    -------
    mask : torch.BoolTensor of shape (B, B)
        ``mask[i, n]``: n is a negative for anchor i.

    Examples
    --------
    >>> import torch
    >>> from temporal_xmodal.losses import negative_mask
    >>> negative_mask(torch.eye(2)[[0, 0, 1]]).tolist()
    [[False, False, True], [False, False, True], [True, True, False]]
    """
    return _negative_mask(labels, mode)


def _negative_mask(labels, mode):
    if mode == "different_category":
        return (labels @ labels.T) == 0
    return ~torch.eye(labels.shape[0], dtype=torch.bool, device=labels.device)


def shared_label_mask(labels):
    """``mask[i, j]``: items i and j share at least one label (includes i = j).

    Parameters
    ----------
    labels : torch.Tensor of shape (B, C)
        Label indicator.

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

    Read more in the user guide: docs/estimators/sam.md.

    Parameters
    ----------
    z_image, z_text : torch.Tensor of shape (B, D)
        L2-normalised embeddings; row i of both is item i.
    margin : float or torch.Tensor of shape (B, B)
        Margin ``m`` or per-(anchor, negative) margins (no gradient flows
        through a margin tensor).
    negatives : torch.Tensor of shape (B, B)
        Which (anchor, item) pairs form triplets: a boolean mask from
        :func:`negative_mask`, or non-negative weights per pair (DCM's ρ).
    reduction : {"sum_per_anchor", "sum", "mean_active"}, default="sum_per_anchor"
        The sum over triplets divided by B (the 1/b of Algorithm 1 in
        Semedo, thesis, Ch. 3), the plain sum, or the mean over the triplets
        with a positive hinge.
    scores : tuple of two torch.Tensor of shape (B, B) or None, default=None
        The anchor–negative similarities of each direction, indexed ``[anchor, item]``
        (image → texts, text → images), when they are not ``S`` and ``Sᵀ`` (Diachronic's
        negatives projected at the anchor's time).  The positives stay ``<z_image_i, z_text_i>``.

    Returns
    -------
    loss : torch.Tensor (scalar)

    Examples
    --------
    >>> import torch
    >>> from temporal_xmodal.losses import bidirectional_triplet_loss, negative_mask
    >>> z = torch.eye(3)
    >>> labels = torch.eye(3)
    >>> float(bidirectional_triplet_loss(z, z, 1.0, negative_mask(labels), "sum"))
    0.0
    """
    return _triplet_loss(z_image, z_text, margin, negatives, reduction, scores)


def _triplet_loss(z_image, z_text, margin, negatives, reduction="sum_per_anchor", scores=None):
    return _reduce(_hinges(z_image, z_text, margin, negatives, scores), reduction,
                   z_image.shape[0])


def _hinges(z_image, z_text, margin, negatives, scores=None, S=None):
    """The hinges of both directions in one (2, B, B) tensor: ``[0]`` image → texts, ``[1]``
    text → images, indexed ``[anchor, item]``, times ``negatives``.

    ``S`` (``z_image @ z_text.T``) may be passed when the caller has it (TempXNet's f_s
    reads it too), so that it is computed once per step.
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
    """A batch's loss from its hinges (:func:`bidirectional_triplet_loss`'s ``reduction``)."""
    total = hinges.sum()
    if reduction == "sum_per_anchor":
        return total / batch_size
    if reduction == "sum":
        return total
    return total / (hinges > 0).sum().clamp(min=1)
