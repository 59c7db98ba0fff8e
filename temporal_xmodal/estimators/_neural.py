"""The neural estimators' one fit: SAM, TempXNet and Diachronic are each a configuration
(:class:`NetConfig`), trained by :meth:`NeuralCrossModalEmbedder._fit`.  Read more in
docs/training.md and docs/adding_an_estimator.md."""

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import torch
from scipy import sparse
from skorch.helper import predefined_split

from .._sparse_input import CSRWindow
from .._warnings import warn
from ..base import CrossModalEmbedder
from ..base._embedder import output_dtype
from ..nn.layers import reseed
from ..nn.towers import block_standardization
from ..training import (BatchIterator, CheckpointSelection, CompiledStep, CrossModalNet,
                        InverseTimeDecay, LearningRateDecay, ProgressLog, RetrievalScoring,
                        TrainingDivergedError, TrainingRun, as_tensor, embed_batches,
                        input_block, make_dataset, seeded)
from ..training._report import ReportsFit
from ._neural_params import OPTIMIZERS, TMAP_WINDOW_SHARE

#: The library's optimisers, run fused on the CPU and CUDA (same update, one kernel per group).
_FUSED = tuple(OPTIMIZERS.values())


@dataclass(frozen=True)
class NetConfig:
    """What a neural estimator trains: the one value its ``_net_config`` returns.

    Parameters
    ----------
    module, criterion : type
        The torch module (``module(**batch)`` returns ``(z_image, z_text)``, then what its
        loss reads) and the loss (``criterion(outputs, labels, batch)``).
    module_params, criterion_params : dict
    time_encoding : TimeEncoding or None, default=None
        The network's time input, fitted on the training rows: the batches and
        projections get its ``time_features`` (a time-conditioned module); kept by a warm
        start.  ``None``: the batches carry the centred times alone (for the loss).
    param_groups : list of (str, dict), default=()
        skorch's ``optimizer__param_groups`` (e.g. the time pathway's learning rate).
    callbacks : list of (str, Callback), default=()
        The method's own callbacks (e.g. SAM's margin schedule).
    fitted : dict, default={}
        Fitted attributes the configuration learnt (e.g. TempXNet's ``correlation_``).
    """

    module: type
    module_params: dict
    criterion: type
    criterion_params: dict
    time_encoding: object = None
    param_groups: list = ()
    callbacks: list = ()
    fitted: dict = field(default_factory=dict)


class TrainingRows:
    """The training rows a configuration reads: ``time`` (centred, float64), ``labels`` (bool
    indicator) and, on first use, ``image`` and ``text`` (float32 training rows; a sparse
    block's window, nothing copied)."""

    def __init__(self, X_image, X_text, time, labels, rows):
        self._X_image, self._X_text, self._rows = X_image, X_text, rows
        keep = slice(None) if rows is None else rows
        self.time, self.labels = time[keep], labels[keep]

    @cached_property
    def image(self):
        return _training_block(self._X_image, self._rows)

    @cached_property
    def text(self):
        return _training_block(self._X_text, self._rows)

    def standardization(self):
        """Each modality's ``(centre, scale)`` over the training rows
        (:func:`~temporal_xmodal.nn.towers.block_standardization`)."""
        return {"image": block_standardization(self._X_image, self._rows),
                "text": block_standardization(self._X_text, self._rows)}


# ------------------------------------------------- use_time: the constant-time control
def training_times(estimator, time):
    """The times ``estimator`` trains on: ``time``, or with ``use_time=False`` ``len(time)``
    times at the control's instant (the axis origin); sets ``uses_time_`` first (a warm
    start keeps the first fit's)."""
    if not (estimator._continues() and hasattr(estimator, "uses_time_")):
        estimator.uses_time_ = bool(estimator.use_time)
    return time if estimator.uses_time_ else estimator.time_axis_.constant(len(time))


def projection_times(estimator, time, n):
    """The times ``n`` items are projected at: ``time`` (maybe None), or the control's."""
    return time if getattr(estimator, "uses_time_", True) else estimator.time_axis_.constant(n)


class NeuralCrossModalEmbedder(ReportsFit, CrossModalEmbedder):
    """Base of the neural estimators (not used directly): a subclass implements
    ``_net_config(rows) -> NetConfig`` (:class:`TrainingRows`).  Sparse X is read in place.

    Read more in the user guide: docs/training.md; subclassing: docs/adding_an_estimator.md.
    """

    _float32_features = True
    _accepts_sparse = True
    _reads_windows = True

    def _towers(self, rows):
        """The two-tower module parameters every neural estimator starts from (with
        ``standardize``, each modality's input standardisation from the training ``rows``)."""
        return {"n_image_features": self.n_image_features_,
                "n_text_features": self.n_text_features_, "hidden_dim": self.hidden_dim,
                "embedding_dim": self.embedding_dim, "dropout": self.dropout,
                "standardization": (rows.standardization() if getattr(self, "standardize", False)
                                    else None)}

    def _fit(self, X_image, X_text, time, labels):
        with TrainingRun(self) as run:
            continuing = self._continues() and hasattr(self, "net_")
            relevance = self.time_axis_.centre(time)  # valid_tmap's: the real times, always
            # the constant-time control trains on one instant; else the real times, centred once
            trained = training_times(self, time) if hasattr(self, "use_time") else time
            centred = relevance if trained is time else self.time_axis_.centre(trained)
            Y = torch.from_numpy(_bool_indicator(labels))  # 1 byte per entry; batches cast
            seed = run.draw_seed()
            train, valid = self._split_rows(len(Y), run.rng)
            config = None if continuing else self._net_config(
                TrainingRows(X_image, X_text, centred, Y.numpy(), train))
            if config is not None:
                for attribute, value in config.fitted.items():
                    setattr(self, attribute, value)
                if config.time_encoding is not None:  # fixed: a warm start keeps it
                    self.time_encoding_ = config.time_encoding
                    self.time_axis_.bind_encoding(config.time_encoding)
            # the datasets index the float32 features by row: nothing n × d is copied
            data_train = make_dataset(X_image, X_text, Y, self._batch_times(centred), rows=train)
            data_valid = data_train.subset(valid) if valid is not None else None
            if continuing:  # the current weights, optimiser state and history go on
                self._continue_net(data_valid, seed, relevance)
            else:
                self.net_ = self._build_net(config, data_valid, seed, relevance, run.device)
                with seeded(seed):  # the global generator: initialisation only, one at a time
                    self.net_.initialize()
            reseed(self.net_.module_, seed)  # dropout draws from the fit's own generators
            n_before = len(self.net_.history)
            try:
                self.net_.partial_fit(data_train)
            except TrainingDivergedError:
                del self.net_  # its weights are no longer finite: nothing fitted is left
                raise
            finally:
                data_train.release()  # the data's copy on the device, if it was moved there
            self.embedding_dim_ = self.embedding_dim
            self.fit_report_ = run.net_report(self.net_, n_before, metric=self.selection_metric,
                                              validating=valid is not None,
                                              max_epochs=self.max_epochs)
        return self

    @property
    def convergence_(self):
        """The kept epoch and how the fit ended, as a dictionary (a view of
        ``fit_report_``: :meth:`~temporal_xmodal.training.FitReport.convergence`)."""
        return self.fit_report_.convergence()

    @property
    def best_epoch_(self):
        """The epoch whose weights were kept (``fit_report_.kept_epoch``)."""
        return self.fit_report_.kept_epoch

    def _batch_times(self, centred):
        """The batch's time entries: ``time`` (centred float64, for the losses) and, with a
        time encoding, ``time_features`` (float32, the network's time input)."""
        if getattr(self, "time_encoding_", None) is None:
            return {"time": centred}
        return {"time": centred, "time_features": self.time_encoding_.transform(centred)}

    def _split_rows(self, n, rng):
        """Sorted training and validation row indices (``(None, None)``: all rows train): the
        fraction rounded, at least 2, none when fewer than 2 training rows would be left; a count
        other than asked warns."""
        asked = self.validation_fraction * n
        n_valid = 0 if self.validation_fraction == 0 else max(2, int(round(asked)))
        n_valid = n_valid if n - n_valid >= 2 else 0
        if self.validation_fraction > 0 and n_valid != int(round(asked)):
            warn(f"{type(self).__name__}: validation_fraction={self.validation_fraction:g} of "
                 f"{n} rows is {asked:.3g} rows; " + (
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

    def _build_net(self, config, data_valid, seed, relevance, device):
        optimizer = OPTIMIZERS.get(self.optimizer, self.optimizer)
        options = ({"optimizer__momentum": self.momentum,
                    "optimizer__nesterov": bool(self.nesterov and self.momentum > 0)}
                   if optimizer is torch.optim.SGD else {})
        if optimizer in _FUSED and torch.device(device).type in ("cpu", "cuda"):
            # one fused kernel per parameter group and step instead of ~8 per parameter
            # (torch's single-tensor loop, its CPU default) or 7 per group (foreach)
            options["optimizer__fused"] = True
        if config.param_groups:
            options["optimizer__param_groups"] = list(config.param_groups)
        # skorch's epoch table, with the fit's progress and time left; none built when quiet
        options["callbacks__print_log"] = ProgressLog(self.max_epochs) if self.verbose else None
        net = CrossModalNet(
            module=config.module, criterion=config.criterion, optimizer=optimizer,
            lr=self.lr, max_epochs=self.max_epochs, batch_size=self.batch_size,
            iterator_train=BatchIterator, iterator_train__shuffle=True,
            iterator_train__generator=torch.Generator().manual_seed(seed),
            iterator_valid=BatchIterator,
            train_split=predefined_split(data_valid) if data_valid is not None else None,
            callbacks=self._net_callbacks(config.callbacks, data_valid is not None, seed,
                                          relevance),
            device=device, verbose=self.verbose,
            **{f"module__{k}": v for k, v in config.module_params.items()},
            **{f"criterion__{k}": v for k, v in config.criterion_params.items()},
            compiled_step=self._compiled_step(device),
            kept_callbacks=tuple(name for name, _ in config.callbacks),  # stateless
            **options)
        return net

    def _continue_net(self, data_valid, seed, relevance):
        """Set the fitted net up to train on: the epochs and batch size follow the current
        parameters; a net loaded from a slim pickle gets a fresh optimiser, criterion and
        callbacks (the method's own, which the slim copy kept, and the fit's)."""
        if not self.net_.has_training_state():
            self.net_.restore_training_state(self._net_callbacks(
                self.net_.callbacks, data_valid is not None, seed, relevance))
        self.net_.set_params(
            train_split=predefined_split(data_valid) if data_valid is not None else None,
            max_epochs=self.max_epochs, batch_size=self.batch_size, verbose=self.verbose)
        # the epoch table and the checkpoint's messages follow the current verbose and
        # max_epochs (a warm start must not print the first fit's "5/2")
        self.net_.set_print_log(ProgressLog(self.max_epochs) if self.verbose else None)
        if "selection" in dict(self.net_.callbacks_):
            self.net_.set_params(callbacks__selection__sink=print if self.verbose else _silent,
                                 callbacks__selection__patience=self.max_epochs + 1
                                 if self.patience is None else self.patience)
        current = self.net_.compiled_step
        if self._compile_options(self.net_.device) != getattr(current, "options", None):
            self.net_.set_params(compiled_step=self._compiled_step(self.net_.device))

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

    def _net_callbacks(self, method, validating, seed, relevance):
        """The method's callbacks, LR decay, checkpoint selection and the user's; ``valid_tmap``
        reads the rows' real centred times ``relevance``."""
        callbacks = list(method)
        if self.lr_decay:
            callbacks.append(("lr_decay", LearningRateDecay(InverseTimeDecay(self.lr_decay))))
        if validating:
            tmap = self.selection_metric == "valid_tmap"
            callbacks.append(("valid_map", RetrievalScoring(
                random_state=seed, time_window=TMAP_WINDOW_SHARE * float(np.ptp(relevance)) if tmap
                else None, time=relevance if tmap else None)))
            callbacks.append(("selection", CheckpointSelection(
                monitor=self.selection_metric,
                lower_is_better=self.selection_metric == "valid_loss",
                patience=self.max_epochs + 1 if self.patience is None else self.patience,
                threshold=0.0, load_best=True, sink=print if self.verbose else _silent)))
        callbacks.extend(self.callbacks or [])
        return callbacks

    def __getstate__(self):
        """Pickle only what inference and a warm start need (see ``keep_training_state``)."""
        state = dict(super().__getstate__())  # object.__getstate__ is the live __dict__
        if "net_" in state and not getattr(self, "keep_training_state", False):
            state["net_"] = state["net_"].inference_copy()
        return state

    def _embed(self, modality, A, time):
        tensors = {modality: input_block(A, as_tensor)}
        time = projection_times(self, time, A.shape[0])  # the control: its one instant
        if time is not None:
            tensors.update({k: torch.as_tensor(v) for k, v in
                            self._batch_times(self.time_axis_.centre(time)).items()})
        Z = embed_batches(self.net_.module_, tensors, self.net_.device, modality=modality)
        # the network computes in float32: float32 input gets it as it is (no float64 copy of
        # the embeddings, scikit-learn's preserves_dtype), anything else float64
        return Z.numpy().astype(output_dtype(A), copy=False)

    def __sklearn_is_fitted__(self):
        """Fitted when it holds a net (a fit that diverged leaves none)."""
        return hasattr(self, "net_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def _training_block(A, rows):
    """A block's training rows: float32 rows of an array (a view when every row trains),
    or the window of the training rows of a sparse X's block (nothing copied)."""
    if isinstance(A, CSRWindow):
        return A if rows is None else A.take(rows)
    if sparse.issparse(A):
        A = A if rows is None else A[rows]
        return A.astype(np.float32, copy=False)
    return as_tensor(A, rows).numpy()


def _bool_indicator(labels):
    """(n, C) bool indicator of integer codes or an indicator (1 byte per entry)."""
    labels = np.asarray(labels)
    if labels.ndim == 2:
        return labels.astype(bool, copy=False)
    Y = np.zeros((len(labels), labels.max() + 1), dtype=bool)
    Y[np.arange(len(labels)), labels] = True
    return Y


def _silent(*args, **kwargs):
    """Sink for skorch messages when ``verbose=0``."""
