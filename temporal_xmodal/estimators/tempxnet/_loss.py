"""TempXNet: triplet loss plus a temporal soft constraint (Semedo, thesis, Eqs. 4.6–4.11, 4.18).

    objective = (L + λ · κ · L_temp) / b
    L_temp = Σ_i 1/|P_i| Σ_{j∈P_i} [f_t(i, j) (1 − f_s(i, j)) + (1 − f_t(i, j)) f_s(i, j)]

P_i: the batch items sharing a label with i; f_s: the harmonic mean of the pair's two
cross-modal cosines; f_t: a temporal correlation (:mod:`._correlation`); κ = 1 in the
paper.  Read more in docs/estimators/tempxnet.md.
"""

from numbers import Real

import torch
from sklearn.utils._param_validation import (
    StrOptions,
    validate_parameter_constraints,
    validate_params,
)
from torch import nn

from ..._constraints import Interval
from ...losses.triplet import (
    NEGATIVE_MODES,
    REDUCTIONS,
    _hinges,
    _negative_mask,
    _reduce,
    _triplet_loss,
    shared_label_mask,
)

SIMILARITY_MODES = ("clamp", "literal", "shift")
TEMPORAL_NORMALISATIONS = ("active_triplets", "triplets", "literal")


@validate_params({"eps": [Interval(Real, 0, None, closed="left")],
                  "mode": [StrOptions(set(SIMILARITY_MODES))]},
                 prefer_skip_nested_validation=True)
def cross_modality_similarity(z_image, z_text, eps=1e-6, mode="clamp"):
    """f_s: harmonic mean of the two cross-modal cosines of each pair (Semedo, thesis, Eq. 4.11).

    Parameters
    ----------
    z_image, z_text : torch.Tensor of shape (B, D)
        L2-normalised embeddings.
    eps : float, default=1e-6
        ε, added to each cosine.
    mode : {"clamp", "literal", "shift"}, default="clamp"
        Each cosine clamped to [ε, 1] first; the formula as printed (it can diverge);
        or each cosine s mapped to (s + 1) / 2.

    Returns
    -------
    f_s : torch.Tensor of shape (B, B)
        ``f_s[i, j]`` uses s(image_i, text_j) and s(text_i, image_j).
    """
    return _cross_modality_similarity(z_image, z_text, eps, mode)


def _cross_modality_similarity(z_image, z_text, eps, mode, S=None):
    S = z_image @ z_text.T if S is None else S
    # both directions' guarded cosines come from one matrix: f_s[i, j] uses A[i, j] and
    # A[j, i]; the harmonic mean 2 / (1/a + 1/b) written 2ab / (a + b)
    if mode == "clamp":
        A = S.clamp(eps, 1.0) + eps
    elif mode == "shift":
        A = (S + 1) / 2 + eps
    else:
        A = S + eps
    return A * A.T / ((A + A.T) * 0.5)


def temporal_soft_constraint(f_t, f_s, positives):
    """L_temp = Σ_i mean_{j∈P_i} [f_t (1 − f_s) + (1 − f_t) f_s] (Semedo, thesis, Eqs. 4.6–4.10).

    Parameters
    ----------
    f_t : torch.Tensor of shape (B, B)
        Temporal correlation in [0, 1].
    f_s : torch.Tensor of shape (B, B)
        Cross-modality similarity.
    positives : torch.BoolTensor of shape (B, B)
        P_i membership; an empty P_i contributes 0.

    Returns
    -------
    loss : torch.Tensor (scalar)
    """
    # f_t (1 − f_s) + (1 − f_t) f_s = f_t + f_s (1 − 2 f_t); each anchor's mean over P_i as
    # one weight matrix, so that the whole term is one weighted sum
    share = positives / positives.sum(1, keepdim=True).clamp(min=1)
    return (torch.addcmul(f_t, f_s, 1 - 2 * f_t) * share).sum()


class TempXNetLoss(nn.Module):
    """Fixed-margin triplet loss plus the weighted temporal term (Semedo, thesis, Eq. 4.18).

    The criterion of :class:`~temporal_xmodal.TempXNetEmbedder`, called as
    ``loss(embeddings, labels, batch)``.

    Parameters
    ----------
    correlation : TemporalCorrelation, default=None
        Fitted f_t.
    margin : float, default=1.0
        Fixed triplet margin m.
    temporal_weight : float, default=1.0
        λ; 0: the static triplet control.
    eps : float, default=1e-6
        ε of :func:`cross_modality_similarity`.
    similarity_mode : {"clamp", "literal", "shift"}, default="clamp"
        Guard of :func:`cross_modality_similarity`.
    exclude_self : bool, default=False
        Drop j = i from P_i.
    negatives : {"different_category", "all_non_matching"}, default="different_category"
        In-batch negatives (:func:`~temporal_xmodal.losses.negative_mask`).
    reduction : {"sum_per_anchor", "sum", "mean_active"}, default="sum_per_anchor"
        Of the triplet term (the paper's 1/b is "sum_per_anchor").
    temporal_normalisation : {"active_triplets", "triplets", "literal"}, default="active_triplets"
        κ: with r the triplet reduction's divisor, the temporal term is λ · (L_temp / b)
        · n / r with n the batch's triplets of both directions with a positive hinge
        ("active_triplets") or all of them ("triplets"); "literal": λ · L_temp / b.
    """

    _parameter_constraints = {
        "similarity_mode": [StrOptions(set(SIMILARITY_MODES))],
        "negatives": [StrOptions(set(NEGATIVE_MODES))],
        "reduction": [StrOptions(set(REDUCTIONS))],
        "temporal_normalisation": [StrOptions(set(TEMPORAL_NORMALISATIONS))],
    }

    def __init__(self, correlation=None, margin=1.0, temporal_weight=1.0, eps=1e-6,
                 similarity_mode="clamp", exclude_self=False,
                 negatives="different_category", reduction="sum_per_anchor",
                 temporal_normalisation="active_triplets"):
        super().__init__()
        validate_parameter_constraints(
            self._parameter_constraints,
            {"similarity_mode": similarity_mode, "negatives": negatives, "reduction": reduction,
             "temporal_normalisation": temporal_normalisation},
            caller_name=type(self).__name__)
        self.correlation = correlation
        self.margin = margin
        self.temporal_weight = temporal_weight
        self.eps = eps
        self.similarity_mode = similarity_mode
        self.exclude_self = exclude_self
        self.negatives = negatives
        self.reduction = reduction
        self.temporal_normalisation = temporal_normalisation
        # the correlation's fitted tables, uploaded once with the loss (non-persistent
        # buffers follow ``.to(device)``) instead of once per batch
        self._table_names = []
        for name, table in ({} if correlation is None else correlation.tables()).items():
            self.register_buffer(f"table_{name}", torch.as_tensor(table), persistent=False)
            self._table_names.append(name)

    def terms(self, embeddings, labels, batch):
        """The triplet term and the normalised, unweighted temporal term of a batch (two scalars);
        ``forward`` returns ``triplet + temporal_weight * temporal``.
        """
        z_image, z_text = embeddings
        S = z_image @ z_text.T  # once per step: the triplets, f_s and the active count read it
        positives = shared_label_mask(labels)
        mask = (~positives if self.negatives == "different_category"
                else _negative_mask(labels, self.negatives))
        hinges = _hinges(z_image, z_text, self.margin, mask, S=S)
        b = z_image.shape[0]
        triplet = _reduce(hinges, self.reduction, b)
        if self.exclude_self:
            positives.fill_diagonal_(False)
        f_t = self.correlation._batch_matrix(  # fitted when the loss was built
            batch["time"], labels, batch.get("text"), z_image.dtype,
            {name: getattr(self, f"table_{name}") for name in self._table_names})
        f_s = _cross_modality_similarity(z_image, z_text, self.eps, self.similarity_mode, S=S)
        temporal = temporal_soft_constraint(f_t, f_s, positives)
        if self.temporal_normalisation == "literal":
            return triplet, temporal if self.reduction == "sum" else temporal / b
        with torch.no_grad():
            needs_active = (self.temporal_normalisation == "active_triplets"
                            or self.reduction == "mean_active")
            active = (hinges > 0).sum() if needs_active else None
            count = 2 * mask.sum() if self.temporal_normalisation == "triplets" else active
            divisor = {"sum_per_anchor": b, "sum": 1}.get(self.reduction) or active.clamp(min=1)
        return triplet, temporal / b * (count / divisor)

    def forward(self, embeddings, labels, batch):
        if self.temporal_weight == 0:
            z_image, z_text = embeddings
            return _triplet_loss(z_image, z_text, self.margin,
                                 _negative_mask(labels, self.negatives), self.reduction)
        triplet, temporal = self.terms(embeddings, labels, batch)
        return triplet + self.temporal_weight * temporal
