"""The neural estimators' shared parameter constraints (:data:`COMMON_CONSTRAINTS`).

Their documentation is :mod:`temporal_xmodal._docs`'s table.
"""

from numbers import Integral, Real

import torch
from sklearn.utils._param_validation import StrOptions

from .._constraints import Interval
from ..base import LAYOUT_CONSTRAINTS
from ..losses.triplet import NEGATIVE_MODES, REDUCTIONS

OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}
_SELECTION = ("valid_map", "valid_tmap", "valid_loss")
#: ``selection_metric="valid_tmap"``: the relevant period's half-width, a share of the span
#: of the fit's times.
TMAP_WINDOW_SHARE = 0.05

#: sklearn parameter constraints shared by the neural estimators.
COMMON_CONSTRAINTS = {
    "embedding_dim": [Interval(Integral, 1, None, closed="left")],
    "hidden_dim": [Interval(Integral, 1, None, closed="left")],
    "dropout": [Interval(Real, 0, 1, closed="left")],
    "standardize": ["boolean"],
    "max_epochs": [Interval(Integral, 1, None, closed="left")],
    "batch_size": [Interval(Integral, 2, None, closed="left")],
    "lr": [Interval(Real, 0, None, closed="neither")],
    "optimizer": [StrOptions(set(OPTIMIZERS)), type],
    "momentum": [Interval(Real, 0, 1, closed="left")],
    "nesterov": ["boolean"],
    "lr_decay": [Interval(Real, 0, None, closed="left")],
    "validation_fraction": [Interval(Real, 0, 1, closed="left")],
    "patience": [Interval(Integral, 1, None, closed="left"), None],
    "selection_metric": [StrOptions(set(_SELECTION))],
    "device": [str, torch.device],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
    "callbacks": [list, None],
    "warm_start": ["boolean"],
    "keep_training_state": ["boolean"],
    "compile_step": ["boolean", StrOptions({"auto"}), dict],
    **LAYOUT_CONSTRAINTS,
    "margin": [Interval(Real, 0, None, closed="left")],
    "negatives": [StrOptions(set(NEGATIVE_MODES))],
    "loss_reduction": [StrOptions(set(REDUCTIONS))],
}
