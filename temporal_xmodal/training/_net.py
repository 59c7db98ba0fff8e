"""The skorch net every neural estimator trains through, and its seeded initialisation.

**Seeding** (:func:`seeded`): one fit initialises at a time, so that threads running fits at
once agree.  A fit's weights are initialised from torch's global random generator seeded with the fit's
seed.  That generator is one per process, so two fits initialising at once in threads
(joblib's threading backend, Dask worker threads) would draw from each other's streams:
:func:`seeded` holds a process-wide lock for the (short) initialisation.  Training then draws
only from generators the fit owns: the batch order (``iterator_train__generator``) and
dropout (:class:`temporal_xmodal.nn.layers.Dropout`, seeded by
:func:`temporal_xmodal.nn.layers.reseed`).

Only the CPU generator is seeded: skorch builds the modules on the CPU and then moves them to
the fit's device, so initialisation draws from it alone (a GPU fit starts from the CPU fit's
weights).  ``torch.manual_seed`` would also reseed every CUDA, MPS and XPU generator of the
caller, which ``fork_rng(devices=[])`` saves and restores for the CPU only.
"""

import math
import threading
from contextlib import contextmanager

import torch
from skorch import NeuralNet
from skorch.callbacks import EarlyStopping
from skorch.dataset import get_len, unpack_data
from skorch.history import History

from .._device import move
from .._interrupts import TrainingInterruptedWarning  # noqa: F401 - exported here
from ._data import DeviceBatches
from ._sparse import SparseRows


class TrainingDivergedError(ValueError):
    """Raised by ``fit`` when a training loss is not finite (the weights went with it)."""


class RecordsInterrupt:
    """Mixin of skorch nets: record in ``interrupted_`` whether a Ctrl-C ended training.

    skorch's ``partial_fit`` swallows ``KeyboardInterrupt`` and returns as if training had
    ended; the estimators must know.  So this is skorch's ``partial_fit`` (initialise,
    ``on_train_begin``, the loop, ``on_train_end``) with the interrupt recorded where it
    swallows it.  skorch's ``EarlyStopping`` ends training by raising ``KeyboardInterrupt``
    too: that is the planned stop of ``patience``, not the user's Ctrl-C.
    """

    interrupted_ = False

    def partial_fit(self, X, y=None, classes=None, **fit_params):
        """skorch's ``partial_fit``, recording a Ctrl-C in ``interrupted_``."""
        if not self.initialized_:
            self.initialize()
        routing_method = fit_params.pop("_routing_method", "partial_fit")
        self.interrupted_ = False
        self.notify("on_train_begin", X=X, y=y)
        try:
            self.fit_loop(X, y, _routing_method=routing_method, **fit_params)
        except KeyboardInterrupt:
            self._settle_losses()
            self._count_interrupted_steps()
            self.interrupted_ = not self._stopped_early()
        self.notify("on_train_end", X=X, y=y)
        return self

    def _settle_losses(self):
        """Turn the losses of the last epoch's batches into floats (one host sync).

        :meth:`CrossModalNet.run_single_epoch` records them as tensors on the device, so
        that a training step never waits for the device; nets without it have none.
        """
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
        """Record the interrupted epoch's training steps as a finished epoch does
        (``train_batch_count``), so that a warm start continues a batch-stepped schedule at
        the step it reached: skorch counts every batch of every row (validation included)
        when a row lacks it, and a slim pickle keeps the rows but not their batches."""
        if len(self.history) and "train_batch_count" not in self.history[-1]:
            self.history.record("train_batch_count", sum(
                "train_loss" in row for row in self.history[-1].get("batches", ())))

    def _stopped_early(self):
        """Whether an EarlyStopping callback has just run out of patience."""
        return any(isinstance(cb, EarlyStopping) and getattr(cb, "misses_", 0) >= cb.patience
                   for _, cb in getattr(self, "callbacks_", []))


class CrossModalNet(RecordsInterrupt, NeuralNet):
    """skorch ``NeuralNet`` whose criterion sees the whole batch.

    Our losses need more than ``(y_pred, y_true)``: the raw features (SAM's
    f_ms), the timestamps and texts (TempXNet's f_t).  The criterion is called
    as ``criterion(embeddings, labels, batch)`` where ``embeddings`` is the
    module's ``(z_image, z_text)`` and ``batch`` the batch dictionary.  Each
    batch reaches the net's device once; batch losses stay there until the
    epoch ends; a Ctrl-C is recorded in ``interrupted_``.

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
    What it overrides of skorch's ``NeuralNet``, and why (everything else is skorch's):

    ========================  ==============================================================
    ``partial_fit``           skorch's body (initialise, ``on_train_begin``, the loop,
                              ``on_train_end``) with the Ctrl-C it swallows recorded
                              (``interrupted_``) and the interrupted epoch's steps counted,
                              so that a warm start resumes its LR schedule there
    ``run_single_epoch``      skorch's loop with each batch loss kept as a device tensor:
                              ``loss.item()`` per batch would make the host wait every step
    ``on_epoch_end``          the epoch's one host sync (the losses become floats); a
                              non-finite loss stops the fit (:class:`TrainingDivergedError`)
    ``train_step_single``     the batch moved once (skorch moves a copy for the module only,
                              and our losses read the batch); the compiled step when given
    ``validation_step``       the batch moved once
    ``get_loss``              ``criterion(embeddings, labels, batch)``: the losses need the
                              whole batch (features, times, texts)
    ``get_iterator``          our iterators deliver their batches on the net's device
    ``initialize``            the callbacks travel with skorch's device mapping on unpickling
    ========================  ==============================================================

    Read more in the user guide: docs/training.md.
    """

    def initialize(self):
        """skorch's initialisation; the callbacks also pickle through skorch's device mapping.

        skorch restores the module, criterion and optimiser onto the CPU when a pickle made
        on a GPU is loaded without one; the callbacks hold tensors too (EarlyStopping's copy
        of the best weights, the LR scheduler's optimiser), so they travel with them.
        """
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
        """skorch's parameters, and two of ours (constructor parameters, not attributes set
        from outside): ``compiled_step``, a
        :class:`~temporal_xmodal.training.CompiledStep` that runs forward and loss (None:
        eager), and ``kept_callbacks``, the names of the callbacks an
        :meth:`inference_copy` keeps (a method's own, which hold no state: they read the net
        every epoch, as SAM's margin schedule does)."""
        super().__init__(*args, **kwargs)
        self.compiled_step = compiled_step
        self.kept_callbacks = tuple(kept_callbacks)

    def train_step_single(self, batch, **fit_params):
        """skorch's step (forward, loss, backward) with the batch moved to the device once.

        skorch moves a copy of the batch for the module only and hands the loss the
        original, so a loss that reads the batch (margins, times, correlations) would mix
        devices.  Batches of a :class:`DeviceBatches` iterator arrive on the device: nothing
        moves.  With ``compiled_step``, forward and loss run as its compiled graph.
        """
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
        """skorch's validation step with the batch moved to the device once."""
        return super().validation_step(move(batch, self.device), **fit_params)

    def run_single_epoch(self, iterator, training, prefix, step_fn, **fit_params):
        """skorch's epoch loop, recording each batch's loss as a device tensor.

        skorch records ``loss.item()`` per batch, a host sync that makes the host wait for
        every step; here the losses stay on the device until the epoch ends
        (:meth:`on_epoch_end`: one sync), when the history's batch rows get their floats.
        A callback that reads a batch loss during the epoch gets a 0-dim tensor
        (``float()`` of it works).
        """
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
        """A shallow copy of the fitted net without what only more training needs.

        Left out: the optimiser and its state (Adam's moments: twice the
        weights), the criterion instance (its parameters stay), the callbacks
        (EarlyStopping's copy of the best weights, the LR scheduler that holds
        the optimiser) but those named in ``kept_callbacks``, ``train_split`` (it holds the validation dataset, which
        shares the training features) and the per-batch rows of the history
        (the per-epoch rows stay).  The module, its weights and the device are
        shared with the original, which is left untouched.  :meth:`restore_training_state`
        makes the copy trainable again.

        Returns
        -------
        net : CrossModalNet
        """
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
        """Rebuild what :meth:`inference_copy` left out, to continue training.

        A fresh optimiser over the current weights, the criterion from its
        stored parameters, and ``callbacks``; the weights and the per-epoch
        history are kept (so schedules such as SAM's margin and the LR decay
        resume where they were).

        Parameters
        ----------
        callbacks : list
            The net's callbacks, as given when it was built.

        Returns
        -------
        self : CrossModalNet
        """
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
        Has ``embed_image(image, time_features=None)`` and
        ``embed_text(text, time_features=None)``.
    tensors : dict of str -> torch.Tensor or SparseRows
        ``image`` and/or ``text``, optionally ``time_features`` (other
        entries, such as the losses' ``time``, are ignored); on the host or
        on ``device``.
    device : str or torch.device
        Where the module computes.
    modality : {"image", "text", None}
        Embed one modality, or both (returns a pair).
    batch_size : int, default=4096
    rows : torch.Tensor of int64 or None, default=None
        Embed only these rows of the tensors (gathered chunk by chunk, so a
        :class:`~temporal_xmodal.training.CrossModalDataset`'s rows are never
        copied whole); all rows when None.
    out_device : str, torch.device or None, default="cpu"
        Where the embeddings are returned; ``None``: on ``device`` (no copy back, e.g.
        for figures computed on the device during training).

    Returns
    -------
    embeddings : torch.Tensor or tuple of torch.Tensor
        On ``out_device``.
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


#: Bytes of the temporaries of one gathered batch of a sparse block's rows in
#: :func:`embed_batches` (a dense window's batch: 2,048 image columns stored per row take
#: about 67 KiB a row: some 500 rows).
_SPARSE_BATCH_BYTES = 32 * 2 ** 20


def _sparse_batch_rows(tensors, modalities):
    """The most rows of a batch whose gather from the sparse blocks among ``tensors``
    (:class:`~temporal_xmodal.training.SparseRows`) stays within
    :data:`_SPARSE_BATCH_BYTES`: about 29 bytes per row and stored position, and the dense
    batch of a dense window."""
    per_row = sum(29 * block.width + (4 * block.n_features if block.dense else 0)
                  for m in modalities
                  if isinstance(block := tensors.get(m), SparseRows))
    return max(64, _SPARSE_BATCH_BYTES // per_row) if per_row else 2 ** 62


_lock = threading.RLock()


@contextmanager
def seeded(seed):
    """Run a block under torch's global CPU generator seeded with ``seed``, alone; then
    restore it.  The caller's device generators are neither seeded nor touched.

    Parameters
    ----------
    seed : int
    """
    with _lock, torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(int(seed))
        yield
