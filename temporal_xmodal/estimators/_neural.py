"""The neural estimators' one fit: SAM, TempXNet and Diachronic are each a configuration.

An estimator of this family says what it trains in one :class:`NetConfig`, built by its
``_net_config(rows)`` from the training rows and from durations already resolved
(``window_``, ``decay_``, …).  :meth:`NeuralCrossModalEmbedder._fit` reads top to bottom:
the constant-time control (:func:`training_times`, which Binned shares), the validation
split, the configuration, the skorch net, its training, the checkpoint it kept
(:func:`convergence`).  Seeding, devices, the compiled step and Ctrl-C are the training
package's (docs/training.md).
"""

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import torch
from scipy import sparse
from sklearn.utils import check_random_state
from skorch.helper import predefined_split

from .._device import resolve_device, training_threads
from .._sparse_input import CSRWindow
from .._interrupts import interrupt_message, report_interrupt
from .._warnings import CheckpointWarning, StillImprovingWarning, warn
from ..base import CrossModalEmbedder
from ..base._embedder import output_dtype
from ..nn.layers import reseed
from ..nn.towers import block_standardization
from ..training import (BatchIterator, CheckpointSelection, CompiledStep, CrossModalNet,
                        FitReport, InverseTimeDecay, LearningRateDecay, ProgressLog,
                        RetrievalScoring,
                        TrainingDivergedError, as_tensor, cannot_rank, embed_batches,
                        input_block, kept_epoch, make_dataset, seeded)
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
    """The training rows a configuration reads: ``time`` (centred, float64), ``labels``
    (bool indicator) and, each on first use, ``image`` and ``text`` (float32 features:
    views when every row trains, else copies of the training rows; a sparse X's block is
    the window of its training rows, :class:`~temporal_xmodal._sparse_input.CSRWindow`,
    nothing copied)."""

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


class NeuralCrossModalEmbedder(CrossModalEmbedder):
    """Base of the neural estimators (not used directly): a subclass implements
    ``_net_config(rows) -> NetConfig`` (:class:`TrainingRows`; docs/adding_an_estimator.md).

    Sparse X is accepted and read in place: each block is a window of X's CSR arrays
    (nothing of X copied), each batch's rows are gathered from it, a dense block's (the
    image columns) into a dense batch, a sparse block's padded, for a sparse product in the
    tower's first layer; ``transform`` embeds a sparse X in row chunks (docs/scaling.md,
    "Sparse text").

    Read more in the user guide: docs/training.md.
    """

    _float32_features = True
    _accepts_sparse = True
    _reads_windows = True

    def _towers(self, rows):
        """The two-tower module parameters every neural estimator starts from; with
        ``standardize`` (a parameter of SAM, TempXNet and Diachronic; an estimator without it
        takes its inputs as they are), each modality's input standardisation from the
        training ``rows``."""
        return {"n_image_features": self.n_image_features_,
                "n_text_features": self.n_text_features_, "hidden_dim": self.hidden_dim,
                "embedding_dim": self.embedding_dim, "dropout": self.dropout,
                "standardization": (rows.standardization() if getattr(self, "standardize", False)
                                    else None)}

    def _fit(self, X_image, X_text, time, labels):
        name = type(self).__name__
        continuing = self._continues() and hasattr(self, "net_")
        relevance = self.time_axis_.centre(time)  # valid_tmap's: the real times, always
        if hasattr(self, "use_time"):  # the constant-time control trains on one instant
            time = training_times(self, time)
        centred = self.time_axis_.centre(time)
        Y = torch.from_numpy(_bool_indicator(labels))  # 1 byte per entry; batches cast
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        train, valid = self._split_rows(len(Y), rng)
        with training_threads(name):
            config = None if continuing else self._net_config(
                TrainingRows(X_image, X_text, centred, Y.numpy(), train))
            if config is not None:
                for attribute, value in config.fitted.items():
                    setattr(self, attribute, value)
                if config.time_encoding is not None:  # fixed: a warm start keeps it
                    self.time_encoding_ = config.time_encoding
                    self.time_axis_.bind_encoding(config.time_encoding)
            # the datasets index the float32 features by row: nothing n × d is copied
            data_train = make_dataset(X_image, X_text, Y, self._batch_times(centred),
                                      rows=train)
            data_valid = data_train.subset(valid) if valid is not None else None
            if continuing:  # the current weights, optimiser state and history go on
                self._continue_net(data_valid, seed, relevance)
            else:
                self.net_ = self._build_net(config, data_valid, seed, relevance)
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
            self.training_interrupted_ = bool(self.net_.interrupted_)
            selection = dict(self.net_.callbacks_).get("selection")
            self.convergence_ = convergence(
                self.net_.history, self.selection_metric, n_before,
                validating=valid is not None, max_epochs=self.max_epochs,
                interrupted=self.training_interrupted_, name=name,
                kept=getattr(selection, "kept_epoch_", None))
            self.best_epoch_ = self.convergence_["best_epoch"]
            self.fit_report_ = FitReport.from_summary(
                self.convergence_, epochs=len(self.net_.history) - n_before,
                max_epochs=self.max_epochs, interrupted=self.training_interrupted_)
            if self.training_interrupted_:
                report_interrupt(interrupt_message(
                    self.net_.history, self.selection_metric, n_before,
                    validating=valid is not None, best=self.best_epoch_, name=name))
        return self

    def _batch_times(self, centred):
        """The batch's time entries: ``time`` (centred float64, for the losses) and, with a
        time encoding, ``time_features`` (float32, the network's time input)."""
        if getattr(self, "time_encoding_", None) is None:
            return {"time": centred}
        return {"time": centred, "time_features": self.time_encoding_.transform(centred)}

    def _split_rows(self, n, rng):
        """Sorted training and validation row indices; ``(None, None)``: all rows train.

        ``validation_fraction · n`` rounded, at least 2 (the fewest that rank), none when
        fewer than 2 training rows would be left; a count other than asked warns.
        """
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

    def _build_net(self, config, data_valid, seed, relevance):
        optimizer = OPTIMIZERS.get(self.optimizer, self.optimizer)
        device = resolve_device(self.device)
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
        # max_epochs (issue 57, 12: a warm start printed the first fit's "5/2"); skorch's
        # initialize_callbacks reads the table from the attribute its constructor set
        self.net_.callbacks__print_log = ProgressLog(self.max_epochs) if self.verbose else None
        self.net_.initialize_callbacks()
        selection = dict(self.net_.callbacks_).get("selection")
        if selection is not None:
            selection.sink = print if self.verbose else _silent
            selection.patience = self.max_epochs + 1 if self.patience is None else self.patience
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
        """The method's callbacks, LR decay, checkpoint selection and the user's.

        ``valid_tmap`` reads the rows' real (centred) times ``relevance``, with a window of
        :data:`._neural_params.TMAP_WINDOW_SHARE` of their span."""
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


# ----------------------------------------------------------- the checkpoint kept
#: A fit is *still improving* when its best validation figure rose by more than ``TOL``
#: over its last ``N_ITER_NO_CHANGE`` epochs (as scikit-learn's ``tol`` / ``n_iter_no_change``
#: judge an MLP): an absolute 0.01 of mAP (a point of mAP, about the spread of the figure
#: between seeds), or 1 % of a loss.
TOL = 0.01
N_ITER_NO_CHANGE = 5


def convergence(history, metric, n_before, *, validating, max_epochs, interrupted, name,
                kept=None):
    """The epoch whose weights a fit kept and how it ended (the estimator's ``convergence_``).

    Epochs are 1-based over the whole history; a warm start selects among its own, after
    the first ``n_before``.  The kept epoch is ``kept``, the one
    :class:`~temporal_xmodal.training.CheckpointSelection` decided (its ``kept_epoch_``);
    for a history alone, the same rule (:func:`~temporal_xmodal.training.kept_epoch`): the
    first best of ``metric`` among the epochs that recorded it, or the last when there is
    none or ``cannot_rank`` (the same figure, or NaN, at every epoch, with a warning).  A fit that ran all its ``max_epochs`` (≥ 2) uninterrupted is *still improving*
    when its best over the last :data:`N_ITER_NO_CHANGE` epochs beats the best before them by
    more than :data:`TOL` (:func:`recent_gain`): a
    :class:`~temporal_xmodal.StillImprovingWarning` naming ``name`` (one text per class).

    Returns
    -------
    summary : dict
        ``best_epoch``, ``last_epoch``, ``metric``, ``best_score``, ``recent_gain``
        (positive when better; ``metric`` … ``None`` without validation),
        ``still_improving`` and ``cannot_rank``.
    """
    n = len(history)
    scored = ([(n_before + 1 + i, row[metric]) for i, row in enumerate(history[n_before:])
               if metric in row] if validating else [])
    summary = {"best_epoch": n, "last_epoch": n, "metric": None, "best_score": None,
               "recent_gain": None, "still_improving": False, "cannot_rank": False}
    if not scored:
        return summary
    values = np.asarray([value for _, value in scored], dtype=float)
    if kept is not None:  # the epoch CheckpointSelection kept (the fit's one decision)
        i = next((k for k, (epoch, _) in enumerate(scored) if epoch == kept), len(values) - 1)
    else:  # the same rule, for a history alone
        i = kept_epoch(values, lower_is_better=metric == "valid_loss")
    best = scored[i][0]
    summary["cannot_rank"] = cannot_rank(values)
    if summary["cannot_rank"]:  # a tie or NaN at every epoch: the last weights are kept
        best, i = n, len(values) - 1
    nan = np.isnan(values)
    gain = recent_gain(values[~nan], lower_is_better=metric == "valid_loss")
    complete = n - n_before >= 2 and n == n_before + max_epochs and not interrupted
    tolerance = (TOL * max(float(np.nanmax(np.abs(values))), 1e-12)
                 if metric == "valid_loss" and not nan.all() else TOL)
    summary.update(best_epoch=best, metric=metric, best_score=float(values[i]),
                   recent_gain=gain, still_improving=bool(complete and gain > tolerance))
    if nan.all():
        warn(f"{name}: the validation figure {metric} was NaN at every epoch (validation "
             f"rows without a label?), so it cannot choose the checkpoint: the last epoch's "
             f"weights are kept (best_epoch_ = {best}). Give every validation row a label, "
             f"or use selection_metric='valid_loss'.", CheckpointWarning)
    elif nan.any():
        warn(f"{name}: the validation figure {metric} was NaN at {int(nan.sum())} of "
             f"{len(values)} epochs; the checkpoint was chosen among the others (epoch "
             f"{best}).", CheckpointWarning)
    elif summary["cannot_rank"]:
        warn(f"{name}: the validation figure {metric} was {summary['best_score']:.4g} at "
             f"every epoch, so it cannot choose the checkpoint (too few validation rows, or "
             f"all of one class); the last epoch's weights are kept. Raise "
             f"validation_fraction, or use selection_metric='valid_loss'.", CheckpointWarning)
    if summary["still_improving"]:
        warn(still_improving_message(name), StillImprovingWarning)
    return summary


def recent_gain(values, *, lower_is_better=False):
    """How much the last :data:`N_ITER_NO_CHANGE` figures improved on the best before them.

    Positive when better (a lower loss, a higher mAP); 0.0 for a single figure.  With at
    most ``N_ITER_NO_CHANGE + 1`` figures the reference is the first one.
    """
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return 0.0
    cut = max(1, len(values) - N_ITER_NO_CHANGE)
    before, recent = values[:cut], values[cut:]
    if lower_is_better:
        return float(before.min() - recent.min())
    return float(recent.max() - before.max())


def still_improving_message(name):
    """The :class:`~temporal_xmodal.StillImprovingWarning` text of ``name``'s fits."""
    return (f"{name}: the validation figure was still improving: its best over the most "
            f"recent epochs ({N_ITER_NO_CHANGE} of them, or every epoch after the first in a "
            f"fit of {N_ITER_NO_CHANGE + 1} or fewer) beat the earlier best by more than "
            f"{TOL:g}; the model may be short of convergence. "
            "Raise max_epochs (the best epoch's weights are kept, so more epochs mostly cost "
            "time). Each fit's best and last epoch, its figure and recent_gain are in "
            "convergence_ (docs/training.md).")


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
    """(n, C) bool indicator of integer codes or an indicator: 1 byte per entry (a float32
    one of 700,000 items × 100 categories would take 280 MB; batches are cast one by one)."""
    labels = np.asarray(labels)
    if labels.ndim == 2:
        return labels.astype(bool, copy=False)
    Y = np.zeros((len(labels), labels.max() + 1), dtype=bool)
    Y[np.arange(len(labels)), labels] = True
    return Y


def _silent(*args, **kwargs):
    """Sink for skorch messages when ``verbose=0``."""
