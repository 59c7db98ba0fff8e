"""The skorch net every neural estimator trains through, and :func:`seeded` initialisation
(one fit at a time, from torch's global CPU generator; docs/training.md, "Seeding and
determinism")."""

import math
import threading
from contextlib import contextmanager

import torch
from skorch import NeuralNet
from skorch.callbacks import EarlyStopping
from skorch.dataset import get_len, unpack_data
from skorch.history import History

from .._device import move
from ._data import DeviceBatches
from ._sparse import SparseRows


class TrainingDivergedError(ValueError):
    """Raised by ``fit`` when a training loss is not finite (the weights went with it)."""


class RecordsInterrupt:
    """Mixin of skorch nets: record in ``interrupted_`` whether a Ctrl-C ended training (which
    skorch's ``partial_fit`` swallows; an ``EarlyStopping`` stop is no Ctrl-C)."""

    interrupted_ = False

    def fit_loop(self, X, y=None, epochs=None, **fit_params):
        """skorch's ``fit_loop``; a Ctrl-C that stops it is recorded in ``interrupted_``,
        with the interrupted epoch's losses settled and its steps counted."""
        self.interrupted_ = False
        try:
            return super().fit_loop(X, y, epochs, **fit_params)
        except KeyboardInterrupt:
            self._settle_losses()
            self._count_interrupted_steps()
            self.interrupted_ = not self._stopped_early()
            raise  # skorch's partial_fit ends the training (on_train_end)

    def _settle_losses(self):
        """Turn the last epoch's batch losses, kept as device tensors, into floats (one sync)."""
        if not len(self.history):
            return
        pending = [(row, key) for row in self.history[-1].get("batches", ())
                   for key, value in row.items() if torch.is_tensor(value)]
        if pending:
            values = torch.stack([row[key].detach().to(torch.float64).reshape(())
                                  for row, key in pending]).tolist()
            for (row, key), value in zip(pending, values):
                row[key] = value

    def _count_interrupted_steps(self):
        """Record the interrupted epoch's training steps (``train_batch_count``), so that a warm
        start resumes a batch-stepped schedule at the step reached."""
        if len(self.history) and "train_batch_count" not in self.history[-1]:
            self.history.record("train_batch_count", sum(
                "train_loss" in row for row in self.history[-1].get("batches", ())))

    def _stopped_early(self):
        return any(isinstance(cb, EarlyStopping) and getattr(cb, "misses_", 0) >= cb.patience
                   for _, cb in getattr(self, "callbacks_", []))


class CrossModalNet(RecordsInterrupt, NeuralNet):
    """skorch ``NeuralNet`` whose criterion sees the whole batch.

    The criterion is called as ``criterion(embeddings, labels, batch)``: ``embeddings`` is the
    module's ``(z_image, z_text)``, ``batch`` the batch dictionary.  Read more in the user
    guide: docs/training.md.

    Parameters
    ----------
    *args, **kwargs
        skorch's :class:`~skorch.NeuralNet` parameters.
    compiled_step : CompiledStep or None, default=None
        Runs forward and loss as one compiled graph; None: eager.
    kept_callbacks : tuple of str, default=()
        The callbacks an :meth:`inference_copy` keeps (a method's own, stateless).

    Notes
    -----
    What it overrides of skorch's ``NeuralNet`` (everything else is skorch's):

    ========================  ==============================================================
    ``fit_loop``              records the Ctrl-C that ``partial_fit`` swallows
                              (``interrupted_``) and counts the interrupted epoch's steps
    ``run_single_epoch``      keeps each batch loss as a device tensor (no host sync per step)
    ``on_epoch_end``          the epoch's one host sync; a non-finite loss raises
                              :class:`TrainingDivergedError`
    ``train_step_single``     moves the batch once (the losses read it); the compiled step
    ``validation_step``       moves the batch once
    ``get_loss``              ``criterion(embeddings, labels, batch)``
    ``get_iterator``          our iterators deliver their batches on the net's device
    ``initialize``            the callbacks travel with skorch's device mapping on unpickling
    ========================  ==============================================================
    """

    def initialize(self):
        """skorch's initialisation; the callbacks (which hold tensors) also unpickle through
        skorch's device mapping."""
        super().initialize()
        if "callbacks" not in self.cuda_dependent_attributes_:
            # a prefix: ``callbacks`` (the instances given) and ``callbacks_`` (in use)
            self.cuda_dependent_attributes_ = [*self.cuda_dependent_attributes_, "callbacks"]
        return self

    def get_loss(self, y_pred, y_true, X=None, training=False):
        """``criterion(embeddings, labels, batch)``; the batch is already on the net's device."""
        return self.criterion_(y_pred, y_true, X)

    # ------------------------------------------------- the batch on the device
    def get_iterator(self, dataset, training=False):
        """skorch's iterator; ours (:class:`DeviceBatches`) deliver their batches on the
        net's device."""
        iterator = super().get_iterator(dataset, training=training)
        if isinstance(iterator, DeviceBatches):
            iterator.device = self.device
        return iterator

    def __init__(self, *args, compiled_step=None, kept_callbacks=(), **kwargs):
        """skorch's parameters, with ``compiled_step`` and ``kept_callbacks`` (see the class)."""
        super().__init__(*args, **kwargs)
        self.compiled_step = compiled_step
        self.kept_callbacks = tuple(kept_callbacks)

    def set_print_log(self, print_log):
        """Replace the epoch table (skorch's ``callbacks__print_log``; None: none) for the next fit."""
        self.callbacks__print_log = print_log
        self.initialize_callbacks()
        return self

    def train_step_single(self, batch, **fit_params):
        """skorch's step (forward, loss, backward) with the batch moved to the device once, the
        module and the loss reading that copy; with ``compiled_step``, its compiled graph."""
        batch = move(batch, self.device)
        self._set_training(True)
        Xi, yi = unpack_data(batch)
        compiled = self.compiled_step
        result = None if compiled is None or fit_params else compiled(
            self.module_, self.criterion_, Xi, yi)
        if result is None:  # eager (or the compiler gave up: eager from now on)
            y_pred = self.infer(Xi, **fit_params)
            loss = self.criterion_(y_pred, yi, Xi)
            loss.backward()
            return {"loss": loss, "y_pred": y_pred}
        loss, y_pred = result
        loss.backward()
        # a CUDA-graph replay reuses its output memory: the recorded loss is a copy
        return {"loss": loss.detach().clone(), "y_pred": y_pred}

    def validation_step(self, batch, **fit_params):
        return super().validation_step(move(batch, self.device), **fit_params)

    def run_single_epoch(self, iterator, training, prefix, step_fn, **fit_params):
        """skorch's epoch loop, recording each batch's loss as a device tensor (settled to floats
        by :meth:`on_epoch_end`; a callback reading one during the epoch gets a 0-dim tensor)."""
        if iterator is None:
            return
        batch_count = 0
        for batch in iterator:
            self.notify("on_batch_begin", batch=batch, training=training)
            step = step_fn(batch, **fit_params)
            self.history.record_batch(prefix + "_loss", step["loss"].detach())
            self.history.record_batch(prefix + "_batch_size", get_len(batch[0])
                                      if isinstance(batch, (tuple, list)) else get_len(batch))
            self.notify("on_batch_end", batch=batch, training=training, **step)
            batch_count += 1
        self.history.record(prefix + "_batch_count", batch_count)

    def on_epoch_end(self, net, **kwargs):
        """Settle the epoch's batch losses before the callbacks read them; a loss that is
        not finite stops the fit (:class:`TrainingDivergedError`)."""
        self._settle_losses()
        for i, row in enumerate(self.history[-1].get("batches", ())):
            loss = row.get("train_loss")
            if loss is not None and not math.isfinite(loss):
                raise TrainingDivergedError(
                    f"Training diverged: the training loss was {loss} at batch {i + 1} of "
                    f"epoch {len(self.history)}, so the weights are no longer finite. Lower "
                    "lr, or the loss's weights and margins (e.g. intra_balance, "
                    "temporal_weight, margin).")
        super().on_epoch_end(net, **kwargs)

    # ---------------------------------------------- slim pickles (inference only)
    def inference_copy(self):
        """A shallow copy of the fitted net without what only more training needs (optimiser,
        criterion instance, callbacks but ``kept_callbacks``, ``train_split``, the history's
        batch rows); it shares the module with the original, which is left untouched."""
        slim = object.__new__(type(self))
        vars(slim).update(vars(self))
        slim.optimizer_ = slim.criterion_ = None
        # the method's callbacks are (name, callback) pairs; a user's may be bare callbacks
        slim.callbacks = [item for item in self.callbacks
                          if isinstance(item, tuple) and item[0] in self.kept_callbacks]
        slim.callbacks_ = []
        slim.train_split = None
        slim.history_ = History({**row, "batches": []} for row in self.history_)
        return slim

    def has_training_state(self):
        """Whether the net can continue training as is (False after :meth:`inference_copy`)."""
        return getattr(self, "optimizer_", None) is not None

    def restore_training_state(self, callbacks):
        """Rebuild what :meth:`inference_copy` left out, with ``callbacks`` (the net's, as built):
        a fresh optimiser over the current weights and the criterion; returns the net."""
        self.callbacks = callbacks
        self._initialize_callbacks()
        # skorch's public builders: its private ones would announce "Re-initializing ..."
        self.initialize_criterion()
        self.criterion_ = self.criterion_.to(self.device)
        self.initialize_optimizer()
        # an LR schedule resumes at the recorded batch count, which torch allows only
        # when the optimiser knows its initial rate
        for group in self.optimizer_.param_groups:
            group.setdefault("initial_lr", group["lr"])
        return self


def embed_batches(module, tensors, device, *, modality=None, batch_size=4096, rows=None,
                  out_device="cpu"):
    """Embed tensors with a module in eval mode, chunk by chunk, without gradients.

    Parameters
    ----------
    module : torch.nn.Module
        Has ``embed_image`` and ``embed_text`` (``(x, time_features=None)``).
    tensors : dict of str -> torch.Tensor or SparseRows
        ``image`` and/or ``text``, optionally ``time_features``; on the host or ``device``.
    device : str or torch.device
        Where the module computes.
    modality : {"image", "text", None}
        One modality, or both (a pair).
    batch_size : int, default=4096
    rows : torch.Tensor of int64 or None, default=None
        Embed only these rows; all rows when None.
    out_device : str, torch.device or None, default="cpu"
        Where the embeddings are returned; ``None``: on ``device``.

    Returns
    -------
    embeddings : torch.Tensor or tuple of torch.Tensor
    """
    was_training = module.training
    module.eval()
    modalities = ("image", "text") if modality is None else (modality,)
    batch_size = min(batch_size, _sparse_batch_rows(tensors, modalities))
    outputs = {m: [] for m in modalities}
    n = len(next(iter(tensors.values()))) if rows is None else len(rows)
    if rows is not None:
        rows = rows.to(next(iter(tensors.values())).device)
    try:
        with torch.no_grad():
            for start in range(0, n, batch_size):
                index = (slice(start, start + batch_size) if rows is None
                         else rows[start:start + batch_size])
                extra = {}
                if "time_features" in tensors:
                    extra["time_features"] = tensors["time_features"][index].to(device)
                for m in modalities:
                    embed = module.embed_image if m == "image" else module.embed_text
                    chunk = move(tensors[m][index], device)  # a tensor or sparse rows
                    z = embed(chunk, **extra)
                    outputs[m].append(z if out_device is None else z.to(out_device))
    finally:
        module.train(was_training)
    result = tuple(torch.cat(outputs[m]) for m in modalities)
    return result[0] if modality else result


#: Bytes of the temporaries of one gathered batch of a sparse block's rows
#: (:func:`embed_batches`).
_SPARSE_BATCH_BYTES = 32 * 2 ** 20


def _sparse_batch_rows(tensors, modalities):
    """The most rows of a batch whose gather from the sparse blocks among ``tensors`` stays
    within :data:`_SPARSE_BATCH_BYTES`."""
    per_row = sum(29 * block.width + (4 * block.n_features if block.dense else 0)
                  for m in modalities
                  if isinstance(block := tensors.get(m), SparseRows))
    return max(64, _SPARSE_BATCH_BYTES // per_row) if per_row else 2 ** 62


_lock = threading.RLock()


@contextmanager
def seeded(seed):
    """Run a block under torch's global CPU generator seeded with ``seed`` (an int), alone; then
    restore it."""
    with _lock, torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(int(seed))
        yield
