"""SAMEmbedder: two-tower net with scheduled adaptive margins."""

from numbers import Real

from sklearn.utils._param_validation import StrOptions

from ..._docs import fill_doc
from ..._constraints import Interval
from ...nn import TwoTowerNet
from ...training import ScheduledMargin
from .._neural import NetConfig, NeuralCrossModalEmbedder
from .._neural_params import COMMON_CONSTRAINTS
from ._loss import SCHEDULES, SEMANTIC_NORMALISATIONS, SAMLoss, SemanticDistance


@fill_doc
class SAMEmbedder(NeuralCrossModalEmbedder):
    """Cross-modal embedding with scheduled adaptive margins (SAM).

    Two towers, one per modality, trained with a bidirectional triplet loss whose
    margin for each (anchor, negative) pair moves, on a sigmoid schedule over the
    epochs, from a static margin to an adaptive one built from the pair's input
    features and the categories' embedding prototypes (Semedo & Magalhães,
    "Cross-Modal Subspace Learning with Scheduled Adaptive Margin Constraints",
    ACM MM 2019).  Time is ignored; labels are required.

    Read more in the user guide: docs/estimators/sam.md.

    Parameters
    ----------
    margin : float, default=1.0
        Static margin m.
    adaptive_weight : float, default=0.25
        λ, the weight of the semantic component f_ms of the adaptive margin against
        the cluster component f_mc.
    activation_epoch_fraction : float, default=0.4
        f_a: the adaptive margin takes over around epoch f_a · ``max_epochs``.
    schedule_slope : float, default=0.1
        k, the slope of the sigmoid schedule α(t), per epoch.
    margin_schedule : {"sigmoid", "fixed", "always"}, default="sigmoid"
        α(t): the sigmoid; α ≡ 0 (the static triplet loss, the fixed-margin control); or α ≡ 1.
    semantic_normalisation : {"per_modality", "after_average", "batch"}, default="per_modality"
        How the input-space distances f_ms are scaled to [0, 1]
        (:class:`~temporal_xmodal.estimators.sam.SemanticDistance`).
    {triplet_parameters}
    {training_parameters}

    Attributes
    ----------
    {neural_attributes}

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

    time_role = "none"
    _embedding_dim_source = ("D = 200: the SAM paper, Semedo & Magalhães, ACM MM 2019, "
                             "stated for NUS-WIDE-10k and used for every data set")
    _parameter_constraints = {
        **COMMON_CONSTRAINTS,
        "adaptive_weight": [Interval(Real, 0, 1, closed="both")],
        "activation_epoch_fraction": [Interval(Real, 0, 1, closed="both")],
        "schedule_slope": [Interval(Real, 0, None, closed="neither")],
        "margin_schedule": [StrOptions(set(SCHEDULES))],
        "semantic_normalisation": [StrOptions(set(SEMANTIC_NORMALISATIONS))],
    }

    def __init__(self, margin=1.0, adaptive_weight=0.25, activation_epoch_fraction=0.4,
                 schedule_slope=0.1, margin_schedule="sigmoid",
                 semantic_normalisation="per_modality", negatives="different_category",
                 loss_reduction="sum_per_anchor", *, embedding_dim=200, hidden_dim=1024,
                 dropout=0.1, standardize=True, max_epochs=100, batch_size=200, lr=1e-4,
                 optimizer="adam",
                 momentum=0.9, nesterov=True, lr_decay=1e-6, validation_fraction=0.1,
                 patience=None, selection_metric="valid_map", device="auto",
                 random_state=None, verbose=0, callbacks=None, warm_start=False,
                 keep_training_state=False, compile_step="auto",
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
        self.standardize = standardize
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
        self.compile_step = compile_step
        self.n_image_features = n_image_features
        self.time_unit = time_unit

    def _net_config(self, rows):
        semantic = None
        if self.margin_schedule != "fixed" and self.adaptive_weight > 0:
            semantic = SemanticDistance(self.semantic_normalisation,
                                        random_state=0).fit(rows.image, rows.text)
        return NetConfig(
            module=TwoTowerNet, module_params=self._towers(rows),
            criterion=SAMLoss,
            criterion_params={
                "margin": self.margin, "adaptive_weight": self.adaptive_weight,
                "schedule": self.margin_schedule, "schedule_slope": self.schedule_slope,
                "activation_epoch_fraction": self.activation_epoch_fraction,
                "n_epochs": self.max_epochs, "semantic": semantic,
                "negatives": self.negatives, "reduction": self.loss_reduction},
            callbacks=[("margin_schedule", ScheduledMargin())])
