"""DiachronicEmbedder: time-conditioned cross-modal projections (DCM-Continuous)."""

from numbers import Integral, Real

from sklearn.utils._param_validation import StrOptions

from ..._constraints import USE_TIME_CONSTRAINT
from ..._docs import fill_doc
from ..._constraints import Interval
from ..._validation import Duration
from ...time import TimeEncoding
from .._neural import NetConfig, NeuralCrossModalEmbedder
from .._neural_params import COMMON_CONSTRAINTS
from ._loss import DiachronicRankingLoss
from ._net import CONDITIONINGS, DiachronicNet


@fill_doc
class DiachronicEmbedder(NeuralCrossModalEmbedder):
    """Diachronic cross-modal embedding: projections f(x, t) conditioned on time.

    Each modality has an encoding layer; a time layer shared by both modalities
    embeds the instant, which conditions each modality's output layer, so any
    item can be projected at any instant.  Trained with the joint diachronic
    ranking loss (DCM-Continuous of Semedo & Magalhães, "Diachronic Cross-modal
    Embeddings", ACM MM 2019).  Time is used in training and at inference;
    labels are required.

    Read more in the user guide: docs/estimators/diachronic.md.

    Parameters
    ----------
    window : float, str or timedelta, default="5%"
        w, a duration (:func:`~temporal_xmodal.time.to_duration`; ``"<p>%"``: of the
        training span): no L_intra constraint between same-category items with ``|Δt| ≤ w``.
    decay : float, str or timedelta, default=0.0
        λ of ρ(Δt) = 1 − exp(−λ|Δt|), a rate per ``time_unit``
        (:func:`~temporal_xmodal.time.to_rate`; a duration or share is ρ's half-life).
        0 switches L_intra off.
    margin : float, default=1.0
        m, the margin of the other-category triplets.
    intra_margin : float or None, default=0.3
        Margin of the same-category triplets (L_intra); ``None``: ``margin``.
    intra_balance : float or None, default=None
        ``None``: every pair of the batch counts once; β: L_intra weighs β times
        L_inter per pair (:class:`~temporal_xmodal.estimators.diachronic.DiachronicRankingLoss`).
    time_dim : int, default=200
        Units of the shared time layer.
    time_encoding : {"minmax", "zscore", "raw", "onehot", "sinusoidal"}, default="onehot"
        The network's time input (:class:`~temporal_xmodal.time.TimeEncoding`, fitted
        on the training times).
    time_bins : int, default=20
        Bins of "onehot", frequencies of "sinusoidal".
    loss_reduction : {"sum_per_anchor", "sum", "mean_active"}, default="sum_per_anchor"
        A batch's triplet terms summed over B, summed, or averaged over the positive ones.
    conditioning : {"film", "concat"}, default="film"
        How time enters the output layer
        (:class:`~temporal_xmodal.estimators.diachronic.DiachronicNet`).
    time_dropout : float, default=0.25
        Probability, in training, of zeroing an item's time embedding (the static path).
    time_lr_scale : float, default=3.0
        Learning rate of the time pathway (time layer and FiLM) relative to ``lr``.
    same_time_anchors : int, default=0
        Anchors per batch whose negatives are projected at the anchor's time; 0:
        every item at its own time (the paper's loss).
    {use_time}
    {training_parameters}

    Attributes
    ----------
    time_encoding_ : TimeEncoding
        The network's time input, fitted on the first fit's training rows.
    window_ : float
        ``window`` in ``time_unit``, as the loss uses it.
    decay_ : float
        ``decay`` as a rate per ``time_unit``, as the loss uses it.
    {uses_time_}
    {neural_attributes}

    Examples
    --------
    >>> from temporal_xmodal import DiachronicEmbedder
    >>> from temporal_xmodal.datasets import make_temporal_crossmodal
    >>> X, y, info = make_temporal_crossmodal(300, return_info=True, random_state=0)
    >>> dcm = DiachronicEmbedder(window=0.5, decay=1.0, max_epochs=2, hidden_dim=32,
    ...                          random_state=0, n_image_features=info.n_image_features)
    >>> dcm = dcm.fit(X, y)
    >>> dcm.transform_text(X[:3, info.n_image_features:-1], time=2.0).shape
    (3, 200)
    """

    time_role = "inference"
    _embedding_dim_source = "D = 200: Semedo & Magalhães, ACM MM 2019, the DCM paper"
    _durations = ("window", "decay")
    _parameter_constraints = {
        **COMMON_CONSTRAINTS,
        "window": [Interval(Real, 0, None, closed="left"), Duration(window=True)],
        "decay": [Interval(Real, 0, None, closed="left"), Duration("rate")],
        "intra_margin": [Interval(Real, 0, None, closed="left"), None],
        "intra_balance": [Interval(Real, 0, None, closed="left"), None],
        "time_dim": [Interval(Integral, 1, None, closed="left")],
        "time_encoding": [StrOptions(set(TimeEncoding.ENCODINGS))],
        "time_bins": [Interval(Integral, 1, None, closed="left")],
        "conditioning": [StrOptions(set(CONDITIONINGS))],
        "time_dropout": [Interval(Real, 0, 1, closed="left")],
        "time_lr_scale": [Interval(Real, 0, None, closed="neither")],
        "same_time_anchors": [Interval(Integral, 0, None, closed="left")],
        "use_time": USE_TIME_CONSTRAINT,
    }

    def __init__(self, window="5%", decay=0.0, margin=1.0, intra_margin=0.3,
                 intra_balance=None, time_dim=200,
                 time_encoding="onehot", time_bins=20, loss_reduction="sum_per_anchor",
                 conditioning="film", time_dropout=0.25, time_lr_scale=3.0,
                 same_time_anchors=0, *,
                 use_time=True,
                 embedding_dim=200, hidden_dim=1024, dropout=0.0, standardize=True,
                 max_epochs=25,
                 batch_size=64, lr=3e-4, optimizer="adam", momentum=0.9, nesterov=False,
                 lr_decay=0.0, validation_fraction=0.1, patience=None,
                 selection_metric="valid_map", device="auto", random_state=None, verbose=0,
                 callbacks=None, warm_start=False,
                 keep_training_state=False, compile_step="auto", n_image_features=None,
                 time_unit="years"):
        self.window = window
        self.decay = decay
        self.margin = margin
        self.intra_margin = intra_margin
        self.intra_balance = intra_balance
        self.time_dim = time_dim
        self.time_encoding = time_encoding
        self.time_bins = time_bins
        self.loss_reduction = loss_reduction
        self.conditioning = conditioning
        self.time_dropout = time_dropout
        self.time_lr_scale = time_lr_scale
        self.same_time_anchors = same_time_anchors
        self.use_time = use_time
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

    def _idle_parameters(self):
        if self.decay_ != 0:
            return {}
        why = ("L_intra, the same-category time term they shape, is off (decay=0, the "
               "default). Set decay (e.g. decay='5%') to switch it on")
        return dict.fromkeys(("window", "intra_margin", "intra_balance"), why)

    def _net_config(self, rows):
        self._warn_idle_parameters()
        encoding = TimeEncoding(self.time_encoding, self.time_bins).fit(rows.time)
        time_lr = self.lr * self.time_lr_scale  # the time pathway: time layer and FiLM
        return NetConfig(
            module=DiachronicNet,
            module_params={**self._towers(rows), "time_dim": self.time_dim,
                           "n_time_features": encoding.n_features_out_,
                           "conditioning": self.conditioning,
                           "time_dropout": self.time_dropout,
                           "same_time_anchors": self.same_time_anchors},
            criterion=DiachronicRankingLoss,
            criterion_params={"margin": self.margin, "intra_margin": self.intra_margin,
                              "window": self.window_, "decay": self.decay_,
                              "reduction": self.loss_reduction,
                              "intra_balance": self.intra_balance},
            time_encoding=encoding,
            param_groups=([] if self.time_lr_scale == 1 else
                          [("time_layer.*", {"lr": time_lr}), ("*_film.*", {"lr": time_lr})]))
