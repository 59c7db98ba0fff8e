"""skorch callbacks of the training loop (one concern each)."""

from skorch.callbacks import Callback

from ..metrics import cross_modal_scores
from ._net import embed_batches


class RetrievalScoring(Callback):
    """Record validation retrieval mAP (mean of I→T and T→I) as ``valid_map``.

    The validation metric used for checkpoint selection and early stopping
    (SAM ambiguity A7: mAP is comparable across epochs, unlike a loss whose
    margins change every epoch).
    """

    def on_epoch_end(self, net, dataset_valid=None, **kwargs):
        if dataset_valid is None:
            return
        z_img, z_txt = embed_batches(net.module_, dataset_valid.X, net.device)
        labels = dataset_valid.y.numpy() > 0
        score = cross_modal_scores(z_img.numpy(), z_txt.numpy(), labels, metrics=("map",))
        net.history.record("valid_map", score["map"])


class ScheduledMargin(Callback):
    """SAM: at the start of every epoch set α(t) and refresh the category prototypes.

    Prototypes are the per-category means of the L2-normalised embeddings of
    the training set from a full pass in eval mode (spec ``sam.md`` A3).  α is
    written to the history (column ``alpha``).
    """

    def on_epoch_begin(self, net, dataset_train=None, **kwargs):
        loss = net.criterion_
        epoch = len(net.history) - 1
        loss.refresh(epoch)
        if loss.needs_prototypes:
            z_img, z_txt = embed_batches(net.module_, dataset_train.X, net.device)
            labels = dataset_train.y
            counts = labels.sum(0).clamp(min=1)[:, None]
            loss.refresh(epoch, (labels.T @ z_img) / counts, (labels.T @ z_txt) / counts)
        net.history.record("alpha", float(loss.alpha))


class InverseTimeDecay:
    """Keras-style learning-rate decay: η_t = η / (1 + decay · iteration) (SAM §4).

    Parameters
    ----------
    decay : float
    """

    def __init__(self, decay):
        self.decay = decay

    def __call__(self, iteration):
        return 1.0 / (1.0 + self.decay * iteration)


