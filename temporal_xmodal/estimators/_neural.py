"""The neural estimators' common part: building and fitting the skorch net.

Every neural estimator (SAM, TempXNet, Diachronic) inherits
:class:`NeuralCrossModalEmbedder` and only says which torch module and which
loss it trains; the training loop, validation split, checkpoint selection,
seeding, device selection and warm start live here once (docs/training.md).
Their shared parameters are declared in :mod:`._neural_params`.
"""


from functools import partial

import numpy as np
import torch
from sklearn.utils import check_random_state
from skorch.helper import predefined_split

from .._device import resolve_device
from .._parallel import limit_worker_threads
from ..base import CrossModalEmbedder
from ..nn import TwoTowerNet
from ..nn.dropout import reseed
from ..training import (
    BatchIterator,
    CheckpointSelection,
    CompiledStep,
    CrossModalNet,
    InverseTimeDecay,
    LearningRateDecay,
    RetrievalScoring,
    as_tensor,
    embed_batches,
    make_dataset,
    seeded,
)
from ._checkpoint import best_epoch, interrupt_message, report_interrupt
from ._neural_params import OPTIMIZERS, TMAP_WINDOW
from ._use_time import fit_using_time, projection_times
from .._warnings import warn


#: The library's optimisers, run fused on the CPU and CUDA (same update, one kernel per group).
_FUSED = tuple(OPTIMIZERS.values())


class NeuralCrossModalEmbedder(CrossModalEmbedder):
    """Base of the neural estimators (not used directly).

    Subclasses implement :meth:`_loss` (the criterion class and its
    parameters, possibly fitted on the training data) and may override
    :meth:`_module`, :meth:`_callbacks`, :meth:`_optimizer_params`,
    :meth:`_time_inputs` and :meth:`_fit_time_encoding`.

    Read more in the user guide: docs/training.md.
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
            if not hasattr(self, "use_time"):  # a static method: time plays no part
                return self._fit_net(X_image, X_text, time, labels)
            # the control trains on one instant, but its checkpoint is judged on the same
            # question as the model's: relevance read at the rows' real times
            return fit_using_time(self, partial(self._fit_net, relevance_time=time),
                                  X_image, X_text, time, labels)

    def _fit_net(self, X_image, X_text, time, labels, relevance_time=None):
        """Fit the net on ``time``; ``valid_tmap`` reads ``relevance_time`` (default
        ``time``): the real times when ``time`` is the constant-time control's."""
        # Memory: the training and validation datasets share the (float32)
        # features and index them by row; nothing of size n × d is copied
        # (docs/training.md, "Memory").
        Y = torch.from_numpy(_bool_indicator(labels))
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        train, valid = self._split_rows(len(Y), rng)
        centred = self.time_axis_.centre(time)
        relevance = (centred if relevance_time is None or relevance_time is time
                     else self.time_axis_.centre(relevance_time))
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
                self.net_.rearm(self._net_callbacks(data_valid is not None, seed, relevance))
            self.net_.set_params(
                train_split=(predefined_split(data_valid) if data_valid is not None
                             else None),
                max_epochs=self.max_epochs, batch_size=self.batch_size)
            current = self.net_.compiled_step_
            if self._compile_options(self.net_.device) != getattr(current, "options", None):
                # else keep the graphs already compiled
                self.net_.compiled_step_ = self._compiled_step(self.net_.device)
        else:
            self.net_ = self._build_net(X_image, X_text, train, centred, Y, data_valid, seed,
                                         relevance)
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
        self.best_epoch_, self.convergence_ = self._best_epoch(data_valid is not None, n_before)
        if self.training_interrupted_:
            report_interrupt(interrupt_message(
                self.net_.history, self.selection_metric, n_before,
                validating=data_valid is not None, best=self.best_epoch_,
                name=type(self).__name__))
        return self

    def _best_epoch(self, validating, n_before):
        """The epoch whose weights are kept and the fit's convergence summary
        (:func:`._checkpoint.best_epoch`)."""
        return best_epoch(self.net_.history, self.selection_metric, n_before,
                          validating=validating, max_epochs=self.max_epochs,
                          interrupted=self.training_interrupted_, name=type(self).__name__)

    def _fit_time_encoding(self, centred):
        """Fit the network's time encoding (time-conditioned models override)."""

    def _n_valid(self, n):
        """Validation rows of a fit on ``n`` rows: ``validation_fraction · n`` rounded, at
        least 2 (the fewest that rank), 0 when fewer than 2 training rows would be left."""
        if self.validation_fraction == 0:
            return 0
        n_valid = max(2, int(round(self.validation_fraction * n)))
        return n_valid if n - n_valid >= 2 else 0

    def _holds_out_rows(self, n):
        """Whether a fit on ``n`` rows holds out validation rows."""
        return self._n_valid(n) > 0

    def _split_rows(self, n, rng):
        """Sorted training and validation row indices; ``(None, None)``: all rows train.

        A fraction that rounds below 2 rows holds out 2, and one too large to leave 2
        training rows holds out none; either way the fit warns (nothing changes silently).
        """
        n_valid, asked = self._n_valid(n), self.validation_fraction * n
        if self.validation_fraction > 0 and n_valid != int(round(asked)):
            name = type(self).__name__
            warn(f"{name}: validation_fraction={self.validation_fraction:g} of {n} rows is "
                 f"{asked:.3g} rows; " + (
                     f"{n_valid} are held out to select the checkpoint (the fewest that "
                     "rank)" if n_valid else
                     "too few rows to hold out validation rows and keep 2 training rows: "
                     "all rows train for max_epochs epochs and the last epoch is kept") +
                 ". validation_fraction=0 trains on every row without selection.",
                 UserWarning)
        if not n_valid:
            return None, None
        order = rng.permutation(n)
        return np.sort(order[n_valid:]), np.sort(order[:n_valid])

    def _build_net(self, X_image, X_text, train, centred, Y, data_valid, seed, relevance):
        module, module_params = self._module()
        features = (None, None)
        if self._loss_uses_features:
            # the training rows' features as float32 arrays (views when all rows train)
            features = tuple(as_tensor(A, train).numpy() for A in (X_image, X_text))
        rows = slice(None) if train is None else train
        loss, loss_params = self._loss(*features, centred[rows], Y[rows].numpy())
        optimizer = OPTIMIZERS.get(self.optimizer, self.optimizer)
        device = resolve_device(self.device)
        optimizer_params = ({"optimizer__momentum": self.momentum,
                             "optimizer__nesterov": bool(self.nesterov and self.momentum > 0)}
                            if optimizer is torch.optim.SGD else {})
        if optimizer in _FUSED and torch.device(device).type in ("cpu", "cuda"):
            # one fused kernel per parameter group and step instead of ~8 per parameter
            # (torch's single-tensor loop, its CPU default) or 7 per group (foreach)
            optimizer_params["optimizer__fused"] = True
        optimizer_params.update(self._optimizer_params())
        callbacks = self._net_callbacks(data_valid is not None, seed, relevance)
        net = CrossModalNet(
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
            device=device,
            verbose=self.verbose,
            **{f"module__{k}": v for k, v in module_params.items()},
            **{f"criterion__{k}": v for k, v in loss_params.items()},
            **optimizer_params,
        )
        net.compiled_step_ = self._compiled_step(device)
        return net

    def _compile_options(self, device):
        """``torch.compile``'s options for the step on ``device``; None: the eager step."""
        on_cuda = torch.device(device).type == "cuda"
        if self.compile_step is False or (self.compile_step == "auto" and not on_cuda):
            return None
        if isinstance(self.compile_step, dict):
            return dict(self.compile_step)
        return {"mode": "reduce-overhead"} if on_cuda else {}

    def _compiled_step(self, device):
        """The net's :class:`~temporal_xmodal.training.CompiledStep`, or None (eager)."""
        options = self._compile_options(device)
        return None if options is None else CompiledStep(options, name=type(self).__name__)

    def _net_callbacks(self, validating, seed, relevance):
        """The net's callbacks: the method's, LR decay, checkpoint selection, the user's.

        ``valid_tmap`` reads the rows' real (centred) times ``relevance``, also for a
        constant-time control, whose net sees one instant: its window is
        :data:`._neural_params.TMAP_WINDOW` of their span."""
        callbacks = list(self._callbacks())
        if self.lr_decay:
            callbacks.append(("lr_decay", LearningRateDecay(InverseTimeDecay(self.lr_decay))))
        if validating:
            tmap = self.selection_metric == "valid_tmap"
            callbacks.append(("valid_map", RetrievalScoring(
                random_state=seed, time_window=TMAP_WINDOW * float(np.ptp(relevance)) if tmap
                else None, time=relevance if tmap else None)))
            callbacks.append(("selection", CheckpointSelection(
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
        time = projection_times(self, time, A.shape[0])
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
