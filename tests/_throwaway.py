"""A throw-away estimator, written as one configuration and registered in one entry: a
pytest plugin.

``python -m pytest -p _throwaway ...`` (with ``tests/`` on ``PYTHONPATH``) registers
:class:`TripletEmbedder` before the tests are collected, as a contributor's one new
:func:`~temporal_xmodal.estimators._registry.register` call and one line of tiny settings
in ``tests/_tiny.py`` would; the common tests (compliance, vocabulary, device guard) then
run it with the library's own estimators.  ``tests/test_registry.py`` runs them so and reads
which tests ran, and checks that docs/adding_an_estimator.md shows the estimator (between the
markers below) as it is here.
"""

from _tiny import NET, add_tiny
from temporal_xmodal.comparison.settings import COMPARED, CompareEntry
from temporal_xmodal.estimators._registry import RegisteredEstimator, register

# --- the estimator (docs/adding_an_estimator.md) ---
import torch

from temporal_xmodal.estimators._neural import NetConfig, NeuralCrossModalEmbedder
from temporal_xmodal.estimators._neural_params import COMMON_CONSTRAINTS
from temporal_xmodal.losses import bidirectional_triplet_loss, negative_mask
from temporal_xmodal.nn import TwoTowerNet


class TripletLoss(torch.nn.Module):  # the fixed-margin triplet loss over the negatives
    def __init__(self, margin, negatives, reduction):
        super().__init__()
        self.margin, self.negatives, self.reduction = margin, negatives, reduction

    def forward(self, embeddings, labels, batch):
        return bidirectional_triplet_loss(*embeddings, self.margin,
                                          negative_mask(labels, self.negatives), self.reduction)


class TripletEmbedder(NeuralCrossModalEmbedder):
    """Two towers trained with the plain triplet loss (time is ignored)."""
    time_role = "none"
    _parameter_constraints = dict(COMMON_CONSTRAINTS)
    def __init__(self, margin=1.0, negatives="different_category", loss_reduction="sum_per_anchor",
                 *, embedding_dim=64, hidden_dim=256, dropout=0.0, max_epochs=25, batch_size=64,
                 lr=1e-3, optimizer="adam", momentum=0.9, nesterov=False, lr_decay=0.0,
                 validation_fraction=0.1, patience=None, selection_metric="valid_map",
                 device="auto", random_state=None, verbose=0, callbacks=None, warm_start=False,
                 keep_training_state=False, compile_step="auto", n_image_features=None,
                 time_unit="years"):
        self.margin = margin
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
        self.compile_step = compile_step
        self.n_image_features = n_image_features
        self.time_unit = time_unit

    def _net_config(self, rows):
        return NetConfig(
            module=TwoTowerNet, module_params=self._towers(rows), criterion=TripletLoss,
            criterion_params={"margin": self.margin, "negatives": self.negatives,
                              "reduction": self.loss_reduction})
# --- end ---


#: The one entry that adds it, its line in the compare job, and its tiny settings (the
#: tests' own, ``tests/_tiny.py``).
ENTRY = register(RegisteredEstimator(
    "ThrowAway", TripletEmbedder,
    paper={"optimizer": "sgd"},
))
COMPARED[ENTRY.name] = CompareEntry("Throw-away", {"max_epochs": 1})
add_tiny(ENTRY.name, NET)
