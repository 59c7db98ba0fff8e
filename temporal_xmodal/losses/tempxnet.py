"""TempXNet: the triplet loss plus a temporal soft constraint.

    objective = (L + λ · κ · L_temp) / b
    L_temp = Σ_i 1/|P_i| Σ_{j∈P_i} [f_t(i, j) (1 − f_s(i, j)) + (1 − f_t(i, j)) f_s(i, j)]

(Semedo & Magalhães, "Temporal Cross-Media Retrieval with Soft-Smoothing", ACM MM 2018;
Semedo, thesis, Eqs. 4.6–4.11 and 4.18, where κ = 1).  P_i are the batch items sharing a
label with i, f_s the harmonic mean of the pair's two cross-modal cosines, and f_t a temporal
correlation from :mod:`temporal_xmodal.losses.temporal_correlation`.  The equations, and why κ
defaults to the batch's share of active triplets (``temporal_normalisation``), are in
docs/estimators/tempxnet.md.
"""

from numbers import Real

import torch
from sklearn.utils._param_validation import (
    StrOptions,
    validate_parameter_constraints,
    validate_params,
)
from torch import nn

from .._constraints import Interval
from .triplet import (
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

    Read more in the user guide: docs/estimators/tempxnet.md.

    Parameters
    ----------
    z_image, z_text : torch.Tensor of shape (B, D)
        L2-normalised embeddings.
    eps : float, default=1e-6
        ε, added to each cosine.
    mode : {"clamp", "literal", "shift"}, default="clamp"
        The harmonic mean is unbounded when a cosine is ≤ 0 (the paper gives
        no guard): "clamp" clamps each cosine to [ε, 1] first; "literal" uses
        the formula as printed (it can diverge); "shift" maps each cosine s
        to (s + 1)/2.

    Returns
    -------
    f_s : torch.Tensor of shape (B, B)
        ``f_s[i, j]`` uses s(image_i, text_j) and s(text_i, image_j).

    Examples
    --------
    >>> import torch
    >>> from temporal_xmodal.losses import cross_modality_similarity
    >>> z = torch.eye(2)
    >>> cross_modality_similarity(z, z, eps=0.0).diagonal().tolist()
    [1.0, 1.0]
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
    """L_temp = Σ_i mean_{j∈P_i} [f_t (1 − f_s) + (1 − f_t) f_s], the temporal soft constraint.

    Semedo, thesis, Eqs. 4.6–4.10.

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
    loss : torch.Tensor (scalar)
        Summed over the anchors i.
    """
    # f_t (1 − f_s) + (1 − f_t) f_s = f_t + f_s (1 − 2 f_t); each anchor's mean over P_i as
    # one weight matrix, so that the whole term is one weighted sum
    share = positives / positives.sum(1, keepdim=True).clamp(min=1)
    return (torch.addcmul(f_t, f_s, 1 - 2 * f_t) * share).sum()


class TempXNetLoss(nn.Module):
    """Triplet loss with a fixed margin plus the weighted temporal term (Semedo, thesis, Eq. 4.18).

    The criterion of :class:`~temporal_xmodal.TempXNetEmbedder`, called as
    ``loss(embeddings, labels, batch)``.

    Read more in the user guide: docs/estimators/tempxnet.md.

    Parameters
    ----------
    correlation : TemporalCorrelation, default=None
        Fitted f_t (recency, category KDE or word density).
    margin : float, default=1.0
        Fixed triplet margin m.
    temporal_weight : float, default=1.0
        λ; 0 gives the static triplet control.
    eps : float, default=1e-6
        ε of :func:`cross_modality_similarity`.
    similarity_mode : {"clamp", "literal", "shift"}, default="clamp"
        Guard of :func:`cross_modality_similarity`.
    exclude_self : bool, default=False
        Drop j = i from P_i (the paper's P_i includes it).
    negatives : {"different_category", "all_non_matching"}, default="different_category"
        In-batch negatives (:func:`~temporal_xmodal.losses.negative_mask`).
    reduction : {"sum_per_anchor", "sum", "mean_active"}, default="sum_per_anchor"
        Of the triplet term (the paper's 1/b is "sum_per_anchor").
    temporal_normalisation : {"active_triplets", "triplets", "literal"}, default="active_triplets"
        κ, the scale of the temporal term: with r the triplet reduction's
        divisor (b for "sum_per_anchor", 1 for "sum", the number of active
        triplets for "mean_active"), "active_triplets" gives
        λ · (L_temp / b) · n_active / r, "triplets" λ · (L_temp / b) · n_triplets / r,
        where n_triplets counts the batch's (anchor, negative) triplets of both
        directions and n_active those with a positive hinge (a count without
        gradient); "literal" is the paper's λ · L_temp / b (no 1/b with
        reduction "sum").

    Examples
    --------
    >>> import torch
    >>> from temporal_xmodal.losses import RecencyCorrelation, TempXNetLoss
    >>> time = torch.tensor([0.0, 0.1, 5.0, 5.1], dtype=torch.float64)
    >>> labels = torch.eye(2)[[0, 0, 1, 1]]
    >>> f_t = RecencyCorrelation(bandwidth=0.3).fit(time.numpy())
    >>> z = torch.nn.functional.normalize(torch.randn(4, 3), dim=1)
    >>> TempXNetLoss(f_t)((z, z), labels, {"time": time}).shape
    torch.Size([])
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
        """The triplet term and the (unweighted, normalised) temporal term of a batch.

        Returns
        -------
        triplet, temporal : torch.Tensor (scalars)
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
