"""The skorch net every neural estimator trains through."""

import numpy as np
import torch
from skorch import NeuralNet


class CrossModalNet(NeuralNet):
    """skorch ``NeuralNet`` whose criterion sees the whole batch.

    Our losses need more than ``(y_pred, y_true)``: the raw features (SAM's
    f_ms), the timestamps and texts (TempXNet's f_t).  The criterion is called
    as ``criterion(embeddings, labels, batch)`` where ``embeddings`` is the
    module's ``(z_image, z_text)`` and ``batch`` the batch dictionary.
    """

    def get_loss(self, y_pred, y_true, X=None, training=False):
        y_true = y_true.to(self.device) if torch.is_tensor(y_true) else y_true
        return self.criterion_(y_pred, y_true, X)


def embed_batches(module, tensors, device, *, modality=None, batch_size=4096):
    """Embed tensors with a module in eval mode, chunk by chunk, without gradients.

    Parameters
    ----------
    module : torch.nn.Module
        Has ``embed_image(image, time)`` and ``embed_text(text, time)``.
    tensors : dict of str -> torch.Tensor
        ``image`` and/or ``text``, optionally ``time``.
    device : str or torch.device
    modality : {"image", "text", None}
        Embed one modality, or both (returns a pair).
    batch_size : int, default=4096

    Returns
    -------
    embeddings : torch.Tensor or tuple of torch.Tensor
        On the CPU.
    """
    was_training = module.training
    module.eval()
    modalities = ("image", "text") if modality is None else (modality,)
    outputs = {m: [] for m in modalities}
    n = len(next(iter(tensors.values())))
    try:
        with torch.no_grad():
            for start in range(0, n, batch_size):
                time = tensors.get("time")
                time = None if time is None else time[start:start + batch_size].to(device)
                for m in modalities:
                    embed = module.embed_image if m == "image" else module.embed_text
                    chunk = tensors[m][start:start + batch_size].to(device)
                    outputs[m].append(embed(chunk, time).cpu())
    finally:
        module.train(was_training)
    result = tuple(torch.cat(outputs[m]) for m in modalities)
    return result[0] if modality else result


def as_tensor(A, dtype=torch.float32):
    """float32 tensor view of an array (no copy when possible)."""
    return torch.as_tensor(np.asarray(A, dtype=np.float32), dtype=dtype)
