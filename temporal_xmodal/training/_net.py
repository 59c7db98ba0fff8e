"""The skorch net every neural estimator trains through."""

import torch
from skorch import NeuralNet
from skorch.callbacks import EarlyStopping
from skorch.history import History


class TrainingInterruptedWarning(UserWarning):
    """Warned when training was interrupted (Ctrl-C) and the model is partial."""


class RecordsInterrupt:
    """Mixin of skorch nets: record a Ctrl-C in ``interrupted_``.

    skorch's ``partial_fit`` swallows ``KeyboardInterrupt`` and returns as if
    training had ended; the estimators must know, so the interrupt is
    recorded before skorch swallows it.
    """

    interrupted_ = False

    def fit_loop(self, X, y=None, epochs=None, **fit_params):
        """skorch's loop, recording a Ctrl-C in ``interrupted_``."""
        self.interrupted_ = False
        try:
            return super().fit_loop(X, y, epochs=epochs, **fit_params)
        except KeyboardInterrupt:
            # skorch's EarlyStopping ends training by raising KeyboardInterrupt too: that
            # is the planned stop of ``patience``, not the user's Ctrl-C
            self.interrupted_ = not self._stopped_early()
            raise

    def _stopped_early(self):
        """Whether an EarlyStopping callback has just run out of patience."""
        return any(isinstance(cb, EarlyStopping) and getattr(cb, "misses_", 0) >= cb.patience
                   for _, cb in getattr(self, "callbacks_", []))


class CrossModalNet(RecordsInterrupt, NeuralNet):
    """skorch ``NeuralNet`` whose criterion sees the whole batch.

    Our losses need more than ``(y_pred, y_true)``: the raw features (SAM's
    f_ms), the timestamps and texts (TempXNet's f_t).  The criterion is called
    as ``criterion(embeddings, labels, batch)`` where ``embeddings`` is the
    module's ``(z_image, z_text)`` and ``batch`` the batch dictionary.
    """

    def get_loss(self, y_pred, y_true, X=None, training=False):
        y_true = y_true.to(self.device) if torch.is_tensor(y_true) else y_true
        return self.criterion_(y_pred, y_true, X)

    # ---------------------------------------------- slim pickles (inference only)
    def inference_copy(self):
        """A shallow copy of the fitted net without what only more training needs.

        Left out: the optimiser and its state (Adam's moments: twice the
        weights), the criterion instance (its parameters stay), the callbacks
        (EarlyStopping's copy of the best weights, the LR scheduler that holds
        the optimiser), ``train_split`` (it holds the validation dataset, which
        shares the training features) and the per-batch rows of the history
        (the per-epoch rows stay).  The module, its weights and the device are
        shared with the original, which is left untouched.  :meth:`rearm`
        makes the copy trainable again.

        Returns
        -------
        net : CrossModalNet
        """
        slim = object.__new__(type(self))
        vars(slim).update(vars(self))
        slim.optimizer_ = slim.criterion_ = None
        slim.callbacks, slim.callbacks_ = [], []
        slim.train_split = None
        slim.history_ = History({**row, "batches": []} for row in self.history_)
        return slim

    def has_training_state(self):
        """Whether the net can continue training as is (False after :meth:`inference_copy`)."""
        return getattr(self, "optimizer_", None) is not None

    def rearm(self, callbacks):
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
        self._initialize_criterion()
        self._initialize_optimizer()
        # an LR schedule resumes at the recorded batch count, which torch allows only
        # when the optimiser knows its initial rate
        for group in self.optimizer_.param_groups:
            group.setdefault("initial_lr", group["lr"])
        return self


def embed_batches(module, tensors, device, *, modality=None, batch_size=4096, rows=None):
    """Embed tensors with a module in eval mode, chunk by chunk, without gradients.

    Parameters
    ----------
    module : torch.nn.Module
        Has ``embed_image(image, time_features=None)`` and
        ``embed_text(text, time_features=None)``.
    tensors : dict of str -> torch.Tensor
        ``image`` and/or ``text``, optionally ``time_features`` (other
        entries, such as the losses' ``time``, are ignored).
    device : str or torch.device
    modality : {"image", "text", None}
        Embed one modality, or both (returns a pair).
    batch_size : int, default=4096
    rows : torch.Tensor of int64 or None, default=None
        Embed only these rows of the tensors (gathered chunk by chunk, so a
        :class:`~temporal_xmodal.training.CrossModalDataset`'s rows are never
        copied whole); all rows when None.

    Returns
    -------
    embeddings : torch.Tensor or tuple of torch.Tensor
        On the CPU.
    """
    was_training = module.training
    module.eval()
    modalities = ("image", "text") if modality is None else (modality,)
    outputs = {m: [] for m in modalities}
    n = len(next(iter(tensors.values()))) if rows is None else len(rows)
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
                    chunk = tensors[m][index].to(device)
                    outputs[m].append(embed(chunk, **extra).cpu())
    finally:
        module.train(was_training)
    result = tuple(torch.cat(outputs[m]) for m in modalities)
    return result[0] if modality else result
