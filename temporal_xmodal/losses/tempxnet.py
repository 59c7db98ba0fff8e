"""TempXNet: triplet loss plus temporal soft-constraints (spec ``tempxnet.md`` §3).

    objective = (L + λ · L_temp) / b                                      (eq. 4.18)
    L_temp = Σ_i C_0(d_i) + C_1(d_i)                                      (eq. 4.6)
    C_0(d_i) = 1/|P_i| Σ_{j∈P_i} f_t(i, j) · (1 − f_s(i, j))              (eq. 4.9)
    C_1(d_i) = 1/|P_i| Σ_{j∈P_i} (1 − f_t(i, j)) · f_s(i, j)              (eq. 4.10)
    f_s(i, j) = 2 · (1/(s(v_i, t_j) + ε) + 1/(s(t_i, v_j) + ε))^(−1)      (eq. 4.11)

P_i are the batch items sharing a label with i; f_t is a temporal correlation
from :mod:`temporal_xmodal.losses.temporal_correlation`.

Normalisation of the temporal term (a deviation from the thesis)
----------------------------------------------------------------
Eq. 4.18 adds L_temp, a sum over anchors of *means* over positives, to L, a sum
over anchors of *sums* over negatives, so in a batch of 64 with a few
categories L is ~100× λ·L_temp and λ = 1 changes nothing measurable.
``temporal_normalisation`` puts the two terms on the same per-pair scale:

    "active_triplets"  λ · (L_temp / b) · n_active / r                 (default)
    "triplets"         λ · (L_temp / b) · n_triplets / r
    "literal"          λ · L_temp / b                                  (eq. 4.18)

L_temp / b is the mean over anchors of the per-anchor mean temporal term;
n_triplets counts the (anchor, negative) triplets of both directions in the
batch, n_active those with a positive hinge (a detached count), and r is the
divisor of the triplet reduction (b for "sum_per_anchor", 1 for "sum",
n_active for "mean_active").  With "active_triplets" the loss is
n_active / r · (mean active hinge + λ · mean temporal pair term): λ weighs one
temporal pair term against one active triplet, and the temporal term shrinks
with the triplet term as the triplets are satisfied.  "triplets" (all
triplets, a constant count) over-weights it late in training: on
``make_temporal_crossmodal`` at λ = 1 it lowers the category mAP from 0.88 to
0.78, while "active_triplets" keeps it and raises the time-window mAP@50 from
0.51 to 0.60 (``benchmarks/bench_tempxnet_synthetic.py``).
"""

import torch
from torch import nn

from .triplet import bidirectional_triplet_loss, negative_mask, shared_label_mask

SIMILARITY_MODES = ("clamp", "literal", "shift")
TEMPORAL_NORMALISATIONS = ("active_triplets", "triplets", "literal")


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
    """Triplet loss with a fixed margin plus the weighted temporal term (eq. 4.18).

    Parameters
    ----------
    correlation : TemporalCorrelation
        Fitted f_t (recency, category KDE or word density).
    margin : float, default=1.0
    temporal_weight : float, default=1.0
        λ; 0 gives the static triplet control.
    eps : float, default=1e-6
    similarity_mode : {"clamp", "literal", "shift"}, default="clamp"
    exclude_self : bool, default=False
        Drop j = i from P_i (the text includes it; ambiguity 4).
    negatives : {"different_category", "all_non_matching"}
    reduction : {"sum_per_anchor", "sum", "mean_active"}
        Of the triplet term (eq. 4.18's 1/b is "sum_per_anchor").
    temporal_normalisation : {"active_triplets", "triplets", "literal"}, default="active_triplets"
        Scale of the temporal term against the triplet term (module docstring);
        "literal" is the thesis' λ · L_temp / b (no 1/b with reduction "sum").
    """

    def __init__(self, correlation=None, margin=1.0, temporal_weight=1.0, eps=1e-6,
                 similarity_mode="clamp", exclude_self=False,
                 negatives="different_category", reduction="sum_per_anchor",
                 temporal_normalisation="active_triplets"):
        super().__init__()
        if temporal_normalisation not in TEMPORAL_NORMALISATIONS:
            raise ValueError(f"temporal_normalisation must be one of {TEMPORAL_NORMALISATIONS}; "
                             f"got {temporal_normalisation!r}.")
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
        mask = negative_mask(labels, self.negatives)
        triplet = bidirectional_triplet_loss(z_image, z_text, self.margin, mask, self.reduction)
        positives = shared_label_mask(labels)
        if self.exclude_self:
            positives.fill_diagonal_(False)
        f_t = self.correlation.batch_matrix(
            batch["time"], labels, batch.get("text"), dtype=z_image.dtype,
            tables={name: getattr(self, f"table_{name}") for name in self._table_names})
        f_s = cross_modality_similarity(z_image, z_text, self.eps, self.similarity_mode)
        temporal = temporal_soft_constraint(f_t, f_s, positives)
        b = z_image.shape[0]
        if self.temporal_normalisation == "literal":
            return triplet, temporal if self.reduction == "sum" else temporal / b
        with torch.no_grad():
            needs_active = (self.temporal_normalisation == "active_triplets"
                            or self.reduction == "mean_active")
            active = _active_triplets(z_image, z_text, self.margin, mask) if needs_active else None
            count = 2 * mask.sum() if self.temporal_normalisation == "triplets" else active
            divisor = {"sum_per_anchor": b, "sum": 1}.get(self.reduction) or active.clamp(min=1)
        return triplet, temporal / b * (count / divisor)

    def forward(self, embeddings, labels, batch):
        if self.temporal_weight == 0:
            z_image, z_text = embeddings
            return bidirectional_triplet_loss(z_image, z_text, self.margin,
                                              negative_mask(labels, self.negatives),
                                              self.reduction)
        triplet, temporal = self.terms(embeddings, labels, batch)
        return triplet + self.temporal_weight * temporal


def _active_triplets(z_image, z_text, margin, mask):
    """Number of (anchor, negative) triplets of both directions with a positive hinge."""
    S = z_image @ z_text.T
    positive = S.diagonal()[:, None]
    return (((margin - positive + S) > 0) & mask).sum() \
        + (((margin - positive + S.T) > 0) & mask).sum()
