"""SAMEmbedder: two-tower net with scheduled adaptive margins (spec ``sam.md``)."""

from numbers import Real

from sklearn.utils._param_validation import Interval, StrOptions

from ..losses.sam import SAMLoss, SemanticDistance
from ..training import ScheduledMargin
from ._neural import COMMON_CONSTRAINTS, COMMON_PARAMETERS_DOC, NeuralCrossModalEmbedder


class SAMEmbedder(NeuralCrossModalEmbedder):
    __doc__ = r"""Cross-modal embedding with Scheduled Adaptive Margins (SAM).

    Two independent tanh towers (eq. 3.12) trained with a bidirectional
    triplet loss whose per-pair margin moves from the static margin m to an
    adaptive one as training proceeds (eqs. 3.6–3.11):

    .. math::

        f_m = \alpha(t)\,[\lambda f_{ms} + (1-\lambda) f_{mc}] + (1-\alpha(t))\,m,\qquad
        \alpha(t) = \frac{1}{1 + e^{-k(t - f_a n_e)}}

    f_ms is the normalised input-space distance of anchor and negative,
    f_mc the distance between their categories' embedding prototypes
    (refreshed every epoch).  Positives are the item's own counterpart;
    negatives are in-batch items of another category.  Time is ignored.
    Defaults are the thesis' values (spec ``sam.md`` §4): embedding_dim=200,
    hidden_dim=1024, dropout=0.1, max_epochs=100, batch_size=200, SGD with
    Nesterov momentum 0.9, lr=5e-3, lr_decay=1e-6.

    Parameters
    ----------
    margin : float, default=1.0
        Static margin m.
    adaptive_weight : float, default=0.25
        λ, weight of the semantic term f_ms against the cluster term f_mc
        (0.25: Pascal, the thesis' sensitivity study; 0.05: NUS-WIDE, Wikipedia).
    activation_epoch_fraction : float, default=0.4
        f_a: the adaptive margin takes over around epoch f_a · max_epochs
        (0.4: Pascal; 0.9: NUS-WIDE).
    schedule_slope : float, default=0.1
        k, the slope of the sigmoid schedule.
    margin_schedule : {"sigmoid", "fixed", "always"}, default="sigmoid"
        "fixed" keeps α ≡ 0: the static triplet loss with margin m (the
        fixed-margin control); "always" uses α ≡ 1 (Table 3.4's ablation with
        ``adaptive_weight=1``).
    semantic_normalisation : {"per_modality", "after_average", "batch"}, default="per_modality"
        How f_ms is scaled to [0, 1] (ambiguity A1).
    negatives : {"different_category", "all_non_matching"}, default="different_category"
        In-batch negatives (A4).
    loss_reduction : {"sum_per_anchor", "sum", "mean_active"}, default="sum_per_anchor"
        Sum of hinges divided by the batch size (A6).""" + COMMON_PARAMETERS_DOC + """
    Examples
    --------
    >>> from temporal_xmodal import SAMEmbedder
    >>> from temporal_xmodal.datasets import make_temporal_crossmodal
    >>> X, y, info = make_temporal_crossmodal(300, return_info=True, random_state=0)
    >>> sam = SAMEmbedder(max_epochs=2, embedding_dim=16, hidden_dim=32, random_state=0,
    ...                   n_image_features=info.n_image_features).fit(X, y)
    >>> sam.transform(X).shape
    (300, 32)
    """

    time_use = "none"
    _parameter_constraints = {
        **COMMON_CONSTRAINTS,
        "adaptive_weight": [Interval(Real, 0, 1, closed="both")],
        "activation_epoch_fraction": [Interval(Real, 0, 1, closed="both")],
        "schedule_slope": [Interval(Real, 0, None, closed="neither")],
        "margin_schedule": [StrOptions({"sigmoid", "fixed", "always"})],
        "semantic_normalisation": [StrOptions({"per_modality", "after_average", "batch"})],
    }

    def __init__(self, margin=1.0, adaptive_weight=0.25, activation_epoch_fraction=0.4,
                 schedule_slope=0.1, margin_schedule="sigmoid",
                 semantic_normalisation="per_modality", negatives="different_category",
                 loss_reduction="sum_per_anchor", *, embedding_dim=200, hidden_dim=1024,
                 dropout=0.1, max_epochs=100, batch_size=200, lr=1e-4, optimizer="adam",
                 momentum=0.9, nesterov=True, lr_decay=1e-6, validation_fraction=0.1,
                 patience=None, selection_metric="valid_map", device="auto",
                 random_state=None, verbose=0, callbacks=None, warm_start=False,
                 keep_training_state=False,
                 n_image_features=None,
                 time_unit="years"):
        self.margin = margin
        self.adaptive_weight = adaptive_weight
        self.activation_epoch_fraction = activation_epoch_fraction
        self.schedule_slope = schedule_slope
        self.margin_schedule = margin_schedule
        self.semantic_normalisation = semantic_normalisation
        self.negatives = negatives
        self.loss_reduction = loss_reduction
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim
        self.dropout = dropout
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.optimizer = optimizer
        self.momentum = momentum
        self.nesterov = nesterov
        self.lr_decay = lr_decay
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.selection_metric = selection_metric
        self.device = device
        self.random_state = random_state
        self.verbose = verbose
        self.callbacks = callbacks
        self.warm_start = warm_start
        self.keep_training_state = keep_training_state
        self.n_image_features = n_image_features
        self.time_unit = time_unit

    def _loss(self, X_image, X_text, time, labels):
        semantic = None
        if self.margin_schedule != "fixed" and self.adaptive_weight > 0:
            semantic = SemanticDistance(self.semantic_normalisation,
                                        random_state=0).fit(X_image, X_text)
        return SAMLoss, {
            "margin": self.margin,
            "adaptive_weight": self.adaptive_weight,
            "schedule": self.margin_schedule,
            "schedule_slope": self.schedule_slope,
            "activation_epoch_fraction": self.activation_epoch_fraction,
            "n_epochs": self.max_epochs,
            "semantic": semantic,
            "negatives": self.negatives,
            "reduction": self.loss_reduction,
        }

    def _callbacks(self):
        return [("margin_schedule", ScheduledMargin())]
