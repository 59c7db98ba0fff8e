"""The neural estimators' common part: building and fitting the skorch net.

Every neural estimator (SAM, TempXNet, and the later temporal ones) inherits
:class:`NeuralCrossModalEmbedder` and only says which torch module and which
loss it trains; the training loop, validation split, early stopping,
seeding, device selection and warm start live here once.
"""

import warnings
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from skorch.callbacks import EarlyStopping, LRScheduler
from skorch.helper import predefined_split

from .._parallel import limit_worker_threads
from ..time import external_stacklevel
from ..base import LAYOUT_CONSTRAINTS, LAYOUT_PARAMETERS_DOC, CrossModalEmbedder
from ..nn import TwoTowerNet
from ..nn.dropout import reseed
from ..training import (
    BatchIterator,
    CrossModalNet,
    InverseTimeDecay,
    RetrievalScoring,
    TrainingInterruptedWarning,
    as_tensor,
    embed_batches,
    make_dataset,
    seeded,
)

_OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}
_SELECTION = ("valid_map", "valid_loss")

#: sklearn parameter constraints shared by the neural estimators.
COMMON_CONSTRAINTS = {
    "embedding_dim": [Interval(Integral, 1, None, closed="left")],
    "hidden_dim": [Interval(Integral, 1, None, closed="left")],
    "dropout": [Interval(Real, 0, 1, closed="left")],
    "max_epochs": [Interval(Integral, 1, None, closed="left")],
    "batch_size": [Interval(Integral, 2, None, closed="left")],
    "lr": [Interval(Real, 0, None, closed="neither")],
    "optimizer": [StrOptions(set(_OPTIMIZERS)), type],
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
    **LAYOUT_CONSTRAINTS,
    "margin": [Interval(Real, 0, None, closed="left")],
    "negatives": [StrOptions({"different_category", "all_non_matching"})],
    "loss_reduction": [StrOptions({"sum_per_anchor", "sum", "mean_active"})],
}

#: Shared parameter documentation, appended to each neural estimator's docstring.
COMMON_PARAMETERS_DOC = """
    embedding_dim : int
        Dimension D of the common space.
    hidden_dim : int, default=1024
        Width of each tower's hidden layer.
    dropout : float
        Dropout on the hidden layer.
    max_epochs : int
        Training epochs (n_e of the schedules).
    batch_size : int
        Mini-batch size b; in-batch negatives come from the same batch.
    lr : float, default=1e-4
        Learning rate η.  The papers' SGD at 5e-3 is one argument away:
        ``est.set_params(**paper_settings(est))`` (:func:`~temporal_xmodal.paper_settings`).
    optimizer : {"sgd", "adam", "adamw"} or torch.optim.Optimizer subclass, default="adam"
        Adam trains every neural estimator on real features; at the papers'
        SGD lr 5e-3 some collapse (every TICRC caption gets the same
        embedding) or fall below CCA.
    momentum : float, default=0.9
        SGD momentum (ignored by other optimisers).
    nesterov : bool
        Nesterov momentum for SGD.
    lr_decay : float, default=1e-6
        Keras-style decay η / (1 + decay · iteration) (0 disables it).
    validation_fraction : float, default=0.1
        Fraction of the training rows held out to select the checkpoint
        (and stop early); 0 trains on everything for ``max_epochs``.
    patience : int or None, default=None
        Stop after this many epochs without improvement of
        ``selection_metric``; ``None`` trains all epochs.  Either way the
        best epoch's weights are restored.
    selection_metric : {"valid_map", "valid_loss"}, default="valid_map"
        Validation figure for checkpoint selection (mAP by default; the
        thesis' "lowest validation error" is ``"valid_loss"``).
    device : {"auto", "cpu", "cuda", ...}, default="auto"
        "auto" uses CUDA when available.
    random_state : int, RandomState or None, default=None
        Seeds weight initialisation, shuffling, dropout and the validation
        split; same seed → same embeddings on CPU.
    verbose : int, default=0
        > 0 prints skorch's epoch table.
    callbacks : list of skorch callbacks or None, default=None
        Extra callbacks, appended to ours.
    warm_start : bool, default=False
        Continue training the existing net on the next ``fit``.  X must have
        the fitted layout (checked before anything changes); the time axis and
        encoding stay those of the first fit, and new times outside its range
        warn (:class:`~temporal_xmodal.time.TimeRangeWarning`).  ``time_range_``
        widens to the new times; a time-conditioned model (Diachronic) still
        encodes times outside the first fit's range by extrapolation, so its
        projections there keep warning, against that range.  After
        loading a pickle saved without ``keep_training_state``, training
        continues from the weights, the epoch history and the time encoding
        with a fresh optimiser, criterion and callbacks (Adam's moments and
        checkpoint selection start over), so it is not bit-identical to
        continuing the original in memory.
    keep_training_state : bool, default=False
        Whether a pickle (``pickle``, ``joblib.dump``, ``copy.deepcopy``)
        keeps what only more training needs: the optimiser state (Adam: twice
        the weights), the callbacks (the best checkpoint's copy of the
        weights, the LR scheduler), the criterion instance, the validation
        split (which holds the training features) and the per-batch history.
        ``False`` pickles the weights, the criterion's parameters, the
        per-epoch history and the fitted attributes: all that inference and
        a warm start need.  The estimator in memory is never trimmed.
""" + LAYOUT_PARAMETERS_DOC + """

    Attributes
    ----------
    net_ : skorch.NeuralNet
        The fitted net; ``net_.history`` holds the per-epoch losses,
        ``valid_map`` and (SAM) α.
    embedding_dim_ : int
    best_epoch_ : int
        Epoch (1-based, counted over ``net_.history``) whose weights are
        kept: the best of ``selection_metric`` among the last fit's epochs
        when validating, else the last.  When it is the last of the fit's
        ``max_epochs`` (≥ 2) epochs, the figure was still improving and
        ``fit`` warns with a :class:`~sklearn.exceptions.ConvergenceWarning`.
        After a Ctrl-C (``training_interrupted_``) it is the best among the
        epochs that finished their validation; when the interrupt came before
        the fit's first validation figure (during its first epoch) there is
        none to choose by, and it is the last, unfinished epoch of
        ``net_.history``: the model holds that epoch's partial weights.
    training_interrupted_ : bool
        Whether Ctrl-C stopped the last fit; ``fit`` then warns with a
        :class:`~temporal_xmodal.training.TrainingInterruptedWarning` saying
        which weights the (usable) model holds.  A following fit with
        ``warm_start=True`` continues from them.
    n_features_in_, feature_names_in_, n_image_features_, n_text_features_, time_axis_, time_range_
        See :class:`~temporal_xmodal.base.CrossModalEmbedder`.
"""


def resolve_device(device):
    """``"auto"`` → ``"cuda"`` when available, else ``"cpu"``; other values pass through."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


class NeuralCrossModalEmbedder(CrossModalEmbedder):
    """Base of the neural estimators (not used directly).

    Subclasses implement :meth:`_loss` (the criterion class and its
    parameters, possibly fitted on the training data) and may override
    :meth:`_module` and :meth:`_callbacks`.
    """

    _float32_features = True
    #: Whether :meth:`_loss` reads the training features (otherwise it gets
    #: ``None`` for them, and the fit copies nothing of size n × d).
    _loss_uses_features = True

    def _module(self):
        """The torch module class and its constructor parameters."""
        return TwoTowerNet, {
            "n_image_features": self.n_image_features_,
            "n_text_features": self.n_text_features_,
            "hidden_dim": self.hidden_dim,
            "embedding_dim": self.embedding_dim,
            "dropout": self.dropout,
        }

    def _loss(self, X_image, X_text, time, labels):  # pragma: no cover - abstract
        """The criterion class and its parameters, from the training rows.

        ``X_image``, ``X_text``: float32 features (``None`` when the class sets
        ``_loss_uses_features = False``); ``time``: centred times;
        ``labels``: bool indicator (n_train, C).
        """
        raise NotImplementedError

    def _callbacks(self):
        """Method-specific callbacks (e.g. SAM's margin schedule)."""
        return []

    def _optimizer_params(self):
        """Extra skorch ``optimizer__*`` parameters (e.g. parameter groups)."""
        return {}

    def _time_inputs(self, centred):
        """Batch entries derived from centred times: ``time`` (float64) for the losses."""
        return {"time": centred}

    # ------------------------------------------------------------------ fit
    def _fit(self, X_image, X_text, time, labels):
        with limit_worker_threads():
            return self._fit_net(X_image, X_text, time, labels)

    def _fit_net(self, X_image, X_text, time, labels):
        # Memory: the training and validation datasets share the (float32)
        # features and index them by row; nothing of size n × d is copied
        # (docs/training.md, "Memory").
        Y = torch.from_numpy(_bool_indicator(labels))
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        train, valid = self._split_rows(len(Y), rng)
        centred = self.time_axis_.centre(time)
        continuing = self._continues() and hasattr(self, "net_")
        if not continuing:
            self._fit_time_encoding(centred if train is None else centred[train])
        data_train = make_dataset(X_image, X_text, Y, self._time_inputs(centred), rows=train)
        data_valid = data_train.subset(valid) if valid is not None else None
        if continuing:
            # continue from the current weights, optimiser state and history
            # (epochs and batch size follow the estimator's current parameters);
            # a net loaded from a slim pickle first gets a fresh optimiser,
            # criterion and callbacks
            if not self.net_.has_training_state():
                self.net_.rearm(self._net_callbacks(data_valid is not None, seed))
            self.net_.set_params(
                train_split=(predefined_split(data_valid) if data_valid is not None
                             else None),
                max_epochs=self.max_epochs, batch_size=self.batch_size)
        else:
            self.net_ = self._build_net(X_image, X_text, train, centred, Y, data_valid, seed)
            with seeded(seed):  # the global generator: initialisation only, one fit at a time
                self.net_.initialize()
        reseed(self.net_.module_, seed)  # dropout draws from the fit's own generators
        n_before = len(self.net_.history)
        try:
            self.net_.partial_fit(data_train)
        finally:
            data_train.release()  # the data's copy on the device, if it was moved there
        self.embedding_dim_ = self.embedding_dim
        self.training_interrupted_ = bool(getattr(self.net_, "interrupted_", False))
        self.best_epoch_ = self._best_epoch(data_valid is not None, n_before)
        if self.training_interrupted_:
            warnings.warn(self._interrupt_message(data_valid is not None, n_before),
                          TrainingInterruptedWarning, stacklevel=external_stacklevel())
        return self

    def _interrupt_message(self, validating, n_before):
        """What a Ctrl-C left: where training stopped and which weights the model holds.

        An epoch is finished when its figure is recorded (the validation figure when
        validating, else the training loss); a Ctrl-C before that leaves it unfinished.
        """
        history = self.net_.history
        n = len(history)
        fit = "this warm-start fit" if n_before else "the fit"
        if n <= n_before:
            return (f"{type(self).__name__}: training was interrupted (Ctrl-C) before the "
                    f"first epoch of {fit} began; the model is usable but unchanged by {fit}: "
                    "it holds the weights the fit started from"
                    + ("." if n_before else " (the initialisation)."))
        finished = (self.selection_metric if validating else "train_loss") in history[-1]
        where = f"after {n} epoch(s)" if finished else f"during epoch {n}"
        if validating and not self._scored_epochs(n_before):
            where = f"during the first epoch of {fit} (epoch {n}), before its validation"
            state = ("there is no validation figure to choose a checkpoint by, so it holds "
                     f"the partial weights of that unfinished first epoch (best_epoch_ = {n})")
        elif validating:
            figure = {"valid_map": "mAP", "valid_loss": "loss"}[self.selection_metric]
            state = (f"it holds the weights of epoch {self.best_epoch_} (best_epoch_), the "
                     f"best validation {figure} so far")
        elif finished:
            state = f"it holds the weights of the last epoch ({n})"
        else:
            state = f"it holds the partial weights of the unfinished epoch {n}"
        return (f"{type(self).__name__}: training was interrupted (Ctrl-C) {where}; the "
                f"model is usable but partial: {state}. Fit again with warm_start=True to "
                "continue training.")

    def _scored_epochs(self, n_before):
        """``(epoch, figure)`` of this fit's epochs that recorded ``selection_metric``.

        Epochs are 1-based over ``net_.history``; an epoch interrupted (Ctrl-C) before
        its validation figure has none and is left out.
        """
        key = self.selection_metric
        return [(n_before + 1 + i, row[key])
                for i, row in enumerate(self.net_.history[n_before:]) if key in row]

    def _best_epoch(self, validating, n_before):
        """Epoch (1-based, over the whole history) whose weights are kept; warns when the
        selection figure was still improving at the last of at least 2 epochs of this fit.

        The checkpoint selection starts over with every fit (a warm start, a bin continuing
        from a global model), so the best is sought among this fit's epochs (after the
        first ``n_before``) only, and among those that recorded the figure: an epoch
        interrupted (Ctrl-C) before its validation has none.  Without any (no
        validation, or a Ctrl-C before this fit's first figure) it is the last epoch of
        the history, whose (possibly partial) weights the model holds.
        """
        n = len(self.net_.history)
        scored = self._scored_epochs(n_before) if validating else []
        if not scored:
            # no validation, or a Ctrl-C before this fit's first validation figure: the
            # weights are those at the end (or the interruption) of the last epoch
            return n
        values = np.asarray([value for _, value in scored], dtype=float)
        best = scored[int(np.argmin(values) if self.selection_metric == "valid_loss"
                          else np.argmax(values))][0]  # the first best, as kept
        if (best == n and n - n_before >= 2 and n == n_before + self.max_epochs
                and not self.training_interrupted_):
            figure = {"valid_map": "mAP", "valid_loss": "loss"}[self.selection_metric]
            warnings.warn(
                f"{type(self).__name__}: the validation {figure} was still improving at the "
                f"last epoch ({n}); the model may be short of convergence. "
                "Raise max_epochs: the best epoch's weights are kept, so more epochs mostly "
                "cost time.", ConvergenceWarning, stacklevel=external_stacklevel())
        return best

    def _fit_time_encoding(self, centred):
        """Fit the network's time encoding (time-conditioned models override)."""

    def _split_rows(self, n, rng):
        """Sorted training and validation row indices; ``(None, None)``: all rows train."""
        n_valid = int(round(self.validation_fraction * n))
        if self.validation_fraction == 0 or n_valid < 2 or n - n_valid < 2:
            return None, None
        order = rng.permutation(n)
        return np.sort(order[n_valid:]), np.sort(order[:n_valid])

    def _build_net(self, X_image, X_text, train, centred, Y, data_valid, seed):
        module, module_params = self._module()
        features = (None, None)
        if self._loss_uses_features:
            # the training rows' features as float32 arrays (views when all rows train)
            features = tuple(as_tensor(A, train).numpy() for A in (X_image, X_text))
        rows = slice(None) if train is None else train
        loss, loss_params = self._loss(*features, centred[rows], Y[rows].numpy())
        optimizer = _OPTIMIZERS.get(self.optimizer, self.optimizer)
        optimizer_params = ({"optimizer__momentum": self.momentum,
                             "optimizer__nesterov": bool(self.nesterov and self.momentum > 0)}
                            if optimizer is torch.optim.SGD else {})
        optimizer_params.update(self._optimizer_params())
        callbacks = self._net_callbacks(data_valid is not None, seed)
        return CrossModalNet(
            module=module,
            criterion=loss,
            optimizer=optimizer,
            lr=self.lr,
            max_epochs=self.max_epochs,
            batch_size=self.batch_size,
            iterator_train=BatchIterator,
            iterator_train__shuffle=True,
            iterator_train__generator=torch.Generator().manual_seed(seed),
            iterator_valid=BatchIterator,
            train_split=predefined_split(data_valid) if data_valid is not None else None,
            callbacks=callbacks,
            device=resolve_device(self.device),
            verbose=self.verbose,
            **{f"module__{k}": v for k, v in module_params.items()},
            **{f"criterion__{k}": v for k, v in loss_params.items()},
            **optimizer_params,
        )

    def _net_callbacks(self, validating, seed):
        """The net's callbacks: the method's, LR decay, checkpoint selection, the user's."""
        callbacks = list(self._callbacks())
        if self.lr_decay:
            callbacks.append(("lr_decay", LRScheduler(
                policy=torch.optim.lr_scheduler.LambdaLR,
                lr_lambda=InverseTimeDecay(self.lr_decay), step_every="batch")))
        if validating:
            callbacks.append(("valid_map", RetrievalScoring(random_state=seed)))
            callbacks.append(("selection", EarlyStopping(
                monitor=self.selection_metric,
                lower_is_better=self.selection_metric == "valid_loss",
                patience=self.max_epochs + 1 if self.patience is None else self.patience,
                threshold=0.0, load_best=True, sink=print if self.verbose else _silent)))
        callbacks.extend(self.callbacks or [])
        return callbacks

    # ------------------------------------------------------------ pickling
    def __getstate__(self):
        """Pickle only what inference and a warm start need (see ``keep_training_state``)."""
        state = dict(super().__getstate__())  # object.__getstate__ is the live __dict__
        if "net_" in state and not getattr(self, "keep_training_state", False):
            state["net_"] = state["net_"].inference_copy()
        return state

    # ------------------------------------------------------------ transform
    def _embed(self, modality, A, time):
        tensors = {modality: as_tensor(A)}
        if time is not None:
            tensors.update({k: torch.as_tensor(v) for k, v in
                            self._time_inputs(self.time_axis_.centre(time)).items()})
        Z = embed_batches(self.net_.module_, tensors, self.net_.device, modality=modality)
        return Z.numpy().astype(np.float64)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags


def _bool_indicator(labels):
    """(n, C) bool indicator from :func:`check_labels`' integer codes or boolean indicator.

    Batches are cast to float32 one at a time; the whole indicator is held
    as 1 byte per entry (a float32 indicator of 700,000 items and 100
    categories would take 280 MB).
    """
    labels = np.asarray(labels)
    if labels.ndim == 2:
        return labels.astype(bool, copy=False)
    Y = np.zeros((len(labels), labels.max() + 1), dtype=bool)
    Y[np.arange(len(labels)), labels] = True
    return Y


def _silent(*args, **kwargs):
    """Sink for skorch messages when ``verbose=0``."""
