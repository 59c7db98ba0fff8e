"""The neural estimators' shared parameters: constraints and documentation.

SAM, TempXNet and Diachronic share two dozen training parameters.  Their scikit-learn
constraints (:data:`COMMON_CONSTRAINTS`) and their documentation are written here once;
:func:`document_shared_parameters` writes the documentation into each estimator's docstring
with that estimator's defaults.  Each ``__init__`` stores its arguments itself, one
``self.x = x`` line per parameter, as every scikit-learn and skorch estimator does.
"""

import inspect
import textwrap
from numbers import Integral, Real

import torch
from sklearn.utils._param_validation import StrOptions

from .._validation import Interval
from ..base import LAYOUT_CONSTRAINTS, LAYOUT_PARAMETERS_DOC
from ..losses.triplet import NEGATIVE_MODES, REDUCTIONS
from ._use_time import USE_TIME_ATTRIBUTES_DOC, USE_TIME_DOC

OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}
_SELECTION = ("valid_map", "valid_tmap", "valid_loss")
#: ``selection_metric="valid_tmap"``: the relevant period's half-width, as a fraction of the
#: span of the fit's times (the compare job's and the benchmarks' t-mAP@50 window).
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

#: The shared parameters, documented once: (name, type, description).  Each estimator's
#: docstring gets them with its own defaults (:func:`document_shared_parameters`).
_SHARED_PARAMETERS = (
    ("embedding_dim", "int", "Dimension D of the common space (``transform`` returns 2 D "
                             "columns).  The default is the width the estimator's paper "
                             "fixes{width_source}; the six estimators take the same "
                             "``embedding_dim``, so pass one value to all for outputs of one "
                             "width."),
    ("hidden_dim", "int", "Width of each modality's hidden layer."),
    ("dropout", "float", "Dropout probability on the hidden layer."),
    ("standardize", "bool", "Centre each input feature on the training rows and divide each "
                            "modality's block by one scale, the root mean square of its "
                            "centred features (so a block's relative feature scales, a "
                            "TF-IDF vocabulary's say, stay), as the first operation of the "
                            "network (one fused multiply-add on buffers: no copy of X).  "
                            "CLIP-like vectors share a large offset per modality and vary "
                            "little around it (docs/estimators/diachronic.md, \"Input "
                            "standardisation\", measures what it changes).  "
                            "``False``: the features as they are (the papers')."),
    ("max_epochs", "int", "Training epochs per ``fit``."),
    ("batch_size", "int", "Mini-batch size b; in-batch negatives come from the same batch."),
    ("lr", "float", "Learning rate η.  The papers' SGD at 5e-3 is one argument away: "
                    "``est.set_params(**paper_settings(est))`` "
                    "(:func:`~temporal_xmodal.paper_settings`)."),
    ("optimizer", '{"sgd", "adam", "adamw"} or torch.optim.Optimizer subclass',
     "The optimiser."),
    ("momentum", "float", "SGD momentum (ignored by other optimisers)."),
    ("nesterov", "bool", "Nesterov momentum for SGD."),
    ("lr_decay", "float", "Keras-style decay: the learning rate at optimiser step i is "
                          "η / (1 + lr_decay · i); 0 disables it."),
    ("validation_fraction", "float", "Fraction of the training rows held out to select the "
                                     "checkpoint (and stop early); 0 trains on every row for "
                                     "``max_epochs`` epochs."),
    ("patience", "int or None", "Stop after this many epochs without improvement of "
                                "``selection_metric``; ``None`` trains every epoch.  Either "
                                "way the best epoch's weights are restored."),
    ("selection_metric", '{"valid_map", "valid_tmap", "valid_loss"}',
     "Validation figure that selects the checkpoint: category mAP; time-window mAP@50 "
     "(relevant = same category within 5 % of the training times' span of the query, each "
     "item at its own time: the time-period inference of Semedo & Magalhães, ACM MM 2019; "
     "a constant-time control is scored with its rows' real times); or the loss."),
    ("device", "str or torch.device", '``"auto"`` uses CUDA when available.'),
    ("random_state", "int, RandomState or None", "Seeds weight initialisation, shuffling, "
                                                 "dropout and the validation split; the same "
                                                 "seed gives the same embeddings on the CPU."),
    ("verbose", "int", "> 0 prints skorch's epoch table, with the fit's progress (epoch n "
                       "of ``max_epochs``) and the time left; without colour codes when the "
                       "output is not a terminal."),
    ("callbacks", "list of skorch callbacks or None", "Extra callbacks, appended to the "
                                                       "library's."),
    ("warm_start", "bool", "Continue training the fitted net on the next ``fit``; X must have "
                           "the fitted layout, and the time axis stays the first fit's."),
    ("compile_step", 'bool, "auto" or dict', "Run each training step's forward and loss as "
                                              "one graph compiled by ``torch.compile`` "
                                              "(replayed as a CUDA graph on CUDA); ``\"auto\"``: "
                                              "on CUDA only, where it pays (on the CPU the "
                                              "compile time outweighs the gain); a dict: "
                                              "``torch.compile``'s keyword arguments.  Falls "
                                              "back to the eager step with a warning when "
                                              "torch cannot compile it (docs/training.md)."),
    ("keep_training_state", "bool", "Whether a pickle keeps what only more training needs "
                                    "(optimiser state, callbacks, validation split); "
                                    "``False`` keeps what inference and a warm start need "
                                    "(docs/saving.md)."),
)

#: The triplet options of the two-tower estimators (SAM, TempXNet).
_TRIPLET_PARAMETERS = (
    ("negatives", '{"different_category", "all_non_matching"}',
     "In-batch negatives of an anchor: the items that share no label with it, or every "
     "other item."),
    ("loss_reduction", '{"sum_per_anchor", "sum", "mean_active"}',
     "A batch's hinges summed and divided by the batch size, summed, or averaged over the "
     "positive ones."),
)

_SHARED_ATTRIBUTES = """    net_ : skorch.NeuralNet
        The fitted net; ``net_.history`` holds the per-epoch losses and
        ``valid_map``.
    embedding_dim_ : int
        Dimension D of the common space.
    best_epoch_ : int
        Epoch (1-based, over ``net_.history``) whose weights are kept: the
        best of ``selection_metric`` among the last fit's epochs when
        validating, else the last.  When the fit ran all its ``max_epochs``
        (≥ 2) epochs and was still improving (``convergence_``),
        ``fit`` warns with a :class:`~temporal_xmodal.StillImprovingWarning`
        (a :class:`~sklearn.exceptions.ConvergenceWarning`; one text per class,
        so a grid search shows it once).
    convergence_ : dict
        How the last fit ended: ``best_epoch``, ``last_epoch``, ``metric``
        (the selection figure; ``None`` without validation), ``best_score``
        (its value at ``best_epoch``; ``None`` without validation),
        ``recent_gain`` (how much the best figure of the last 5 epochs beat the
        best before them, in the figure's units, positive when better; with
        at most 6 epochs, against the first epoch's) and ``still_improving``
        (``recent_gain`` above 0.01 of mAP or 1 % of a loss: the
        ``StillImprovingWarning``).
    training_interrupted_ : bool
        Whether Ctrl-C stopped the last fit; ``fit`` then warns with a
        :class:`~temporal_xmodal.training.TrainingInterruptedWarning` saying
        which weights the (usable) model holds.
    fit_report_ : FitReport
        The last fit's outcome in one object (epochs run, the epoch kept and
        why, its figure, still improving, interrupted):
        :class:`~temporal_xmodal.training.FitReport`.  ``best_epoch_``,
        ``convergence_`` and ``training_interrupted_`` say the same; callers
        read it instead of catching the warnings.
    n_features_in_, feature_names_in_, n_image_features_, n_text_features_, time_axis_, time_range_
        See :class:`~temporal_xmodal.base.CrossModalEmbedder`.
"""


def document_shared_parameters(cls):
    """Class decorator: complete a neural estimator's docstring.

    The ``[shared parameters]``, ``[triplet parameters]`` and ``[shared attributes]`` lines
    of ``cls.__doc__`` become the documentation of the shared parameters, of the two-tower
    estimators' triplet options (with the defaults of ``cls.__init__``) and of the fitted
    attributes every neural estimator has; ``[use_time parameter]`` and ``[use_time
    attributes]`` those of ``use_time`` (:mod:`._use_time`).
    ``cls._embedding_dim_source``, when set, says where the default ``embedding_dim`` comes
    from (a paper and its section).
    """
    if cls.__doc__ is None:  # python -OO
        return cls
    defaults = {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()}

    def entries(table):
        lines = []
        for name, kind, text in table:
            default = defaults[name]
            default = f'"{default}"' if isinstance(default, str) else repr(default)
            if "{width_source}" in text:
                source = getattr(cls, "_embedding_dim_source", "")
                text = text.replace("{width_source}", f" ({source})" if source else "")
            lines.append(f"    {name} : {kind}, default={default}\n"
                         + textwrap.fill(text, 88, initial_indent=" " * 8,
                                         subsequent_indent=" " * 8) + "\n")
        return "".join(lines)

    doc = cls.__doc__.replace("    [shared parameters]\n", entries(_SHARED_PARAMETERS)
                              + LAYOUT_PARAMETERS_DOC.lstrip("\n") + "\n")
    if "    [triplet parameters]\n" in doc:
        doc = doc.replace("    [triplet parameters]\n", entries(_TRIPLET_PARAMETERS))
    doc = doc.replace("    [use_time parameter]\n", USE_TIME_DOC)
    doc = doc.replace("    [use_time attributes]\n", USE_TIME_ATTRIBUTES_DOC)
    cls.__doc__ = doc.replace("    [shared attributes]\n", _SHARED_ATTRIBUTES)
    return cls
