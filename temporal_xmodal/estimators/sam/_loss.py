"""SAM: the triplet loss with scheduled adaptive margins (Semedo, thesis, Eqs. 3.6–3.11).

Each (anchor, negative) pair's margin moves, on a sigmoid schedule α over the epochs, from
m to an adaptive one built from the pair's input-space distance f_ms and the distance f_mc
of their categories' prototypes.  Margins carry no gradient.  Read more in
docs/estimators/sam.md ("Method").
"""

import math
from numbers import Integral, Real

import numpy as np
import torch
from scipy import sparse
from sklearn.utils._param_validation import (
    StrOptions,
    validate_parameter_constraints,
    validate_params,
)
from torch import nn

from ..._constraints import Interval
from ..._sparse_input import CSRWindow
from ...losses.triplet import NEGATIVE_MODES, REDUCTIONS, _negative_mask, _triplet_loss
from ...nn.towers import densify

SCHEDULES = ("sigmoid", "fixed", "always")
SEMANTIC_NORMALISATIONS = ("per_modality", "after_average", "batch")


@validate_params({"epoch": [Real], "slope": [Real],
                  "activation_epoch_fraction": [Interval(Real, 0, 1, closed="both")],
                  "n_epochs": [Interval(Real, 0, None, closed="left")]},
                 prefer_skip_nested_validation=True)
def margin_schedule(epoch, slope, activation_epoch_fraction, n_epochs):
    """α(t) = 1 / (1 + exp(−k (t − f_a n_e))), SAM's margin schedule (Semedo, thesis, Eq. 3.7).

    Parameters
    ----------
    epoch : int or float
        Current epoch t (0-based).
    slope : float
        k, per epoch.
    activation_epoch_fraction : float
        f_a in [0, 1].
    n_epochs : int
        n_e.

    Returns
    -------
    alpha : float
    """
    z = -slope * (epoch - activation_epoch_fraction * n_epochs)
    return 1.0 / (1.0 + math.exp(min(z, 700.0)))


class SemanticDistance:
    """f_ms: the pair's mean input-space distance, scaled to [0, 1] (Semedo, thesis, Eq. 3.9).

    f_ms(a, n) = (‖x_V^a − x_V^n‖ + ‖x_T^a − x_T^n‖) / 2; the larger, the larger the margin.

    Parameters
    ----------
    normalisation : {"per_modality", "after_average", "batch"}, default="per_modality"
        Min–max each modality's distances with training statistics, then average;
        average, then min–max; or min–max within each batch.
    max_pairs : int, default=200_000
        Random training pairs that estimate the min / max statistics.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the pair sample.

    Attributes
    ----------
    stats_ : tuple of float
        The min and max distances (per modality, or of the averages).
    n_features_ : tuple of int
        The image and text widths (sparse rows are densified to them).
    """

    _parameter_constraints = {
        "normalisation": [StrOptions(set(SEMANTIC_NORMALISATIONS))],
        "max_pairs": [Interval(Integral, 1, None, closed="left")],
        "random_state": [Interval(Integral, 0, None, closed="left"), np.random.Generator,
                         None],
    }

    def __init__(self, normalisation="per_modality", max_pairs=200_000, random_state=None):
        validate_parameter_constraints(
            self._parameter_constraints, {"normalisation": normalisation,
                                          "max_pairs": max_pairs,
                                          "random_state": random_state},
            caller_name=type(self).__name__)
        self.normalisation = normalisation
        self.max_pairs = max_pairs
        self.random_state = random_state

    def fit(self, X_image, X_text):
        """Estimate the min / max statistics from random training pairs (dense or sparse)."""
        rng = np.random.default_rng(self.random_state)
        n = X_image.shape[0]
        a = rng.integers(0, n, self.max_pairs if n * n > self.max_pairs else n * n)
        b = rng.integers(0, n, a.shape[0])
        keep = a != b
        d_img = _row_distances(X_image, a[keep], b[keep])
        d_txt = _row_distances(X_text, a[keep], b[keep])
        self.n_features_ = (X_image.shape[1], X_text.shape[1])
        if self.normalisation == "after_average":
            avg = (d_img + d_txt) / 2
            self.stats_ = (float(avg.min()), float(avg.max()))
        else:
            self.stats_ = (float(d_img.min()), float(d_img.max()),
                           float(d_txt.min()), float(d_txt.max()))
        return self

    @staticmethod
    def _minmax(D, lo, hi):
        span = (hi - lo).clamp(min=1e-12) if torch.is_tensor(hi) else max(hi - lo, 1e-12)
        return ((D - lo) / span).clamp(0.0, 1.0)

    def __call__(self, image, text):
        """f_ms of every pair of a batch (dense or sparse rows), shape (B, B), in [0, 1]."""
        widths = getattr(self, "n_features_", (None, None))
        image, text = densify(image, widths[0]), densify(text, widths[1])
        d_img = torch.cdist(image, image)
        d_txt = torch.cdist(text, text)
        if self.normalisation == "batch":
            return (self._minmax(d_img, d_img.min(), d_img.max())
                    + self._minmax(d_txt, d_txt.min(), d_txt.max())) / 2
        if self.normalisation == "after_average":
            return self._minmax((d_img + d_txt) / 2, *self.stats_)
        # (clamp(d, lo, lo + span) − lo) / span of each modality, averaged: the min–max
        # normalisation with its scales folded into one add (six kernels instead of eight);
        # each term is ≥ 0 exactly
        lo_i, hi_i, lo_t, hi_t = self.stats_
        span_i, span_t = max(hi_i - lo_i, 1e-12), max(hi_t - lo_t, 1e-12)
        return torch.add((d_img.clamp(lo_i, lo_i + span_i) - lo_i) * (0.5 / span_i),
                         d_txt.clamp(lo_t, lo_t + span_t) - lo_t, alpha=0.5 / span_t)


#: Pairs of rows whose distances are computed at once from a window of a sparse X.
_PAIR_CHUNK = 4096


def _row_distances(X, a, b):
    """``‖X[a] − X[b]‖`` row by row of a dense, scipy sparse or CSRWindow ``X``."""
    if isinstance(X, CSRWindow):
        return np.concatenate([
            _window_distances(X, a[s:s + _PAIR_CHUNK], b[s:s + _PAIR_CHUNK])
            for s in range(0, len(a), _PAIR_CHUNK)] or [np.zeros(0)])
    if sparse.issparse(X):
        X = sparse.csr_matrix(X)
        D = X[a] - X[b]
        return np.sqrt(np.asarray(D.multiply(D).sum(axis=1), dtype=np.float64).reshape(-1))
    return np.linalg.norm(X[a] - X[b], axis=1)


def _window_distances(X, a, b):
    if X.is_dense:  # as the dense block's: float32 rows
        return np.linalg.norm(X[a].toarray().astype(np.float32, copy=False)
                              - X[b].toarray().astype(np.float32, copy=False), axis=1)
    D = X[a] - X[b]
    return np.sqrt(np.asarray(D.multiply(D).sum(axis=1), dtype=np.float64).reshape(-1))


def category_distance_matrix(image_prototypes, text_prototypes):
    """f_mc: mean intra-modality cosine distance of prototypes (Semedo, thesis, Eqs. 3.10–3.11).

    f_mc(c, c') = ½ [d(p_V(c), p_V(c')) + d(p_T(c), p_T(c'))] with d = (1 − cos) / 2.

    Parameters
    ----------
    image_prototypes, text_prototypes : torch.Tensor of shape (C, D)
        Per-category mean of the L2-normalised embeddings.

    Returns
    -------
    distances : torch.Tensor of shape (C, C)
        Symmetric, zero diagonal, in [0, 1].
    """
    def cosine_distance(P):
        P = nn.functional.normalize(P, dim=1)
        return (1.0 - P @ P.T) / 2

    D = (cosine_distance(image_prototypes) + cosine_distance(text_prototypes)) / 2
    D = (D + D.T) / 2
    return D.fill_diagonal_(0.0).clamp(0.0, 1.0)


class SAMLoss(nn.Module):
    """Bidirectional triplet loss with scheduled adaptive margins (Semedo, thesis, Eq. 3.6).

    The criterion of :class:`~temporal_xmodal.SAMEmbedder`, called as ``loss(embeddings,
    labels, batch)``; :class:`~temporal_xmodal.training.ScheduledMargin` calls
    :meth:`refresh` at the start of every epoch.

    Parameters
    ----------
    margin : float, default=1.0
        m, every pair's margin while α = 0.
    adaptive_weight : float, default=0.25
        λ: weight of f_ms against f_mc.
    schedule : {"sigmoid", "fixed", "always"}, default="sigmoid"
        α(t) of :func:`margin_schedule`; "fixed": α ≡ 0; "always": α ≡ 1.
    schedule_slope : float, default=0.1
        k of :func:`margin_schedule`, per epoch.
    activation_epoch_fraction : float, default=0.4
        f_a of :func:`margin_schedule`.
    n_epochs : int, default=100
        n_e of :func:`margin_schedule`.
    semantic : SemanticDistance or None, default=None
        Fitted f_ms (needed unless ``schedule="fixed"`` or λ = 0).
    negatives : {"different_category", "all_non_matching"}, default="different_category"
        In-batch negatives (:func:`~temporal_xmodal.losses.negative_mask`).
    reduction : {"sum_per_anchor", "sum", "mean_active"}, default="sum_per_anchor"
        Of the hinges (:func:`~temporal_xmodal.losses.bidirectional_triplet_loss`).

    Attributes
    ----------
    alpha : float
        α of the current epoch.
    coefficients : torch.Tensor of shape (3,)
        α λ, α (1 − λ) and (1 − α) m of the current epoch (a non-persistent buffer).
    category_distances : torch.Tensor of shape (C, C) or None
        f_mc of the current epoch (a non-persistent buffer).
    """

    _parameter_constraints = {
        "schedule": [StrOptions(set(SCHEDULES))],
        "negatives": [StrOptions(set(NEGATIVE_MODES))],
        "reduction": [StrOptions(set(REDUCTIONS))],
    }

    def __init__(self, margin=1.0, adaptive_weight=0.25, schedule="sigmoid",
                 schedule_slope=0.1, activation_epoch_fraction=0.4, n_epochs=100,
                 semantic=None, negatives="different_category", reduction="sum_per_anchor"):
        super().__init__()
        validate_parameter_constraints(
            self._parameter_constraints,
            {"schedule": schedule, "negatives": negatives, "reduction": reduction},
            caller_name=type(self).__name__)
        self.margin = margin
        self.adaptive_weight = adaptive_weight
        self.schedule = schedule
        self.schedule_slope = schedule_slope
        self.activation_epoch_fraction = activation_epoch_fraction
        self.n_epochs = n_epochs
        self.semantic = semantic
        self.negatives = negatives
        self.reduction = reduction
        # f_mc, refreshed every epoch on the device of the prototypes; a buffer, so that it
        # follows the loss to the net's device and back (not in the state dict)
        self.register_buffer("category_distances", None, persistent=False)
        # α λ, α (1 − λ) and (1 − α) m of the current epoch, as a tensor on the loss's device:
        # a step reads the epoch's α without a Python number that changes (a compiled step's
        # graph is traced once, not once per epoch)
        self.register_buffer("coefficients", torch.zeros(3), persistent=False)
        self.alpha = None
        self._set_alpha(self._alpha(0))

    def _alpha(self, epoch):
        if self.schedule == "fixed":
            return 0.0
        if self.schedule == "always":
            return 1.0
        return margin_schedule(epoch, self.schedule_slope, self.activation_epoch_fraction,
                               self.n_epochs)

    @property
    def needs_prototypes(self):
        return self.alpha > 0 and self.adaptive_weight < 1

    def _set_alpha(self, alpha):
        if alpha != self.alpha:
            lam, m = self.adaptive_weight, float(self.margin)
            self.coefficients.copy_(torch.tensor([alpha * lam, alpha * (1 - lam),
                                                  (1 - alpha) * m]))
        self.alpha = alpha

    def refresh(self, epoch, image_prototypes=None, text_prototypes=None):
        """Start of an epoch: set α(epoch) and f_mc from the current prototypes."""
        self._set_alpha(self._alpha(epoch))
        if image_prototypes is not None:
            self.category_distances = category_distance_matrix(
                image_prototypes.detach(), text_prototypes.detach())

    def margins(self, labels, image, text):
        """Per-pair margins α (λ f_ms + (1 − λ) f_mc) + (1 − α) m of a batch (Semedo, thesis,
        Eqs. 3.7–3.8), shape (B, B), no gradient.
        """
        if self.schedule == "fixed":  # α ≡ 0: the static margin
            return torch.full((labels.shape[0],) * 2, float(self.margin), device=labels.device)
        lam, (c_semantic, c_cluster, c_static) = self.adaptive_weight, self.coefficients
        margins = c_static
        if lam > 0:
            margins = torch.addcmul(margins, self.semantic(image, text), c_semantic)
        if lam < 1:
            # mean of f_mc over the label pairs of the two items (multi-label data are our
            # extension; exact for single-label)
            shares = labels / labels.sum(1, keepdim=True).clamp(min=1)
            margins = torch.addcmul(margins, shares @ self.category_distances @ shares.T,
                                    c_cluster)
        return margins

    def forward(self, embeddings, labels, batch):
        z_image, z_text = embeddings
        with torch.no_grad():
            margins = self.margins(labels, batch["image"], batch["text"])
        return _triplet_loss(z_image, z_text, margins, _negative_mask(labels, self.negatives),
                             self.reduction)
