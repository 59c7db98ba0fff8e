"""skorch callbacks of the training loop (one concern each)."""

import sys

import numpy as np
import torch
from skorch.callbacks import Callback, EarlyStopping, EpochScoring, LRScheduler, PrintLog
from torch.optim.lr_scheduler import LambdaLR
from skorch.utils import Ansi

from ..metrics import mean_average_precision, mean_average_precision_torch
from ._net import embed_batches


class RetrievalScoring(EpochScoring):
    """Record validation retrieval mAP (mean of I→T and T→I) as ``valid_map`` and, with a
    ``time_window``, the time-window mAP@50 as ``valid_tmap``.

    Scored on the cache of the epoch's validation pass.  ``valid_tmap``: relevant = same
    category and ``|Δt| <= time_window``, each item at its own time (time-period inference,
    Semedo & Magalhães, ACM MM 2019).  Read more in the user guide: docs/training.md.

    Parameters
    ----------
    max_queries : int or None, default=5000
        Larger validation sets are scored with this many query items per direction (a fixed
        sample) against all of them; ``None`` scores every item.
    random_state : int, default=0
        Seed of the query sample.
    time_window : float or None, default=None
        Half-width of ``valid_tmap``'s relevant period, in the centred times' unit;
        ``None`` records no ``valid_tmap``.
    time : ndarray of shape (n_rows,) or None, default=None
        ``valid_tmap``'s times of every row of the data; ``None``: the batches' ``"time"``.
    """

    def __init__(self, max_queries=5000, random_state=0, time_window=None, time=None):
        super().__init__(scoring=None, lower_is_better=False, name="valid_map",
                         use_caching=True)
        self.max_queries = max_queries
        self.random_state = random_state
        self.time_window = time_window
        self.time = time

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        self.queries_ = None

    def on_epoch_end(self, net, dataset_valid=None, **kwargs):
        if dataset_valid is None or not self.y_preds_:
            return
        # the validation batches in the rows' order (the validation iterator does not
        # shuffle); a module's outputs begin with (z_image, z_text), what the loss may add
        # (e.g. Diachronic's same-time scores) follows
        z_img = torch.cat([out[0] for out in self.y_preds_])
        z_txt = torch.cat([out[1] for out in self.y_preds_])
        labels = torch.cat(self.y_trues_) > 0
        self._initialize_cache()  # the epoch's references go
        n = len(labels)
        queries = slice(None)
        if self.max_queries is not None and n > self.max_queries:
            if self.queries_ is None or self.queries_.max() >= n:
                rng = np.random.default_rng(self.random_state)
                self.queries_ = np.sort(rng.choice(n, self.max_queries, replace=False))
            queries = self.queries_
        net.history.record("valid_map", _cross_modal_map(z_img, z_txt, labels, queries))
        if self.time_window is not None:
            time = (dataset_valid.X["time"].numpy() if self.time is None
                    else np.asarray(self.time))
            time = time if dataset_valid.rows is None else time[dataset_valid.rows.numpy()]
            net.history.record("valid_tmap", _cross_modal_map(
                z_img, z_txt, labels, queries, time, self.time_window))


def _embed_on_device(net, dataset):
    """Both modalities' embeddings and the label indicator of a dataset's rows, on the net's
    device."""
    device = torch.device(net.device)
    X, _ = dataset.tensors(device)
    z_img, z_txt = embed_batches(net.module_, X, device, rows=dataset.rows, out_device=None)
    return z_img, z_txt, dataset.labels(device)


def _cross_modal_map(z_img, z_txt, labels, queries, time=None, window=None):
    """Mean of I→T and T→I mAP of ``queries`` (a slice or sorted rows) against every item;
    with a ``window``, time-window mAP@50.  On a device other than the CPU, in torch there
    (the time-window figure always in NumPy)."""
    options = {}
    if z_img.device.type == "cpu" or window is not None:
        score = mean_average_precision
        z_img, z_txt, labels = (a.detach().cpu().numpy() for a in (z_img, z_txt, labels))
        if window is not None:
            options = {"k": 50, "query_time": time[queries], "gallery_time": time,
                       "time_window": window}
    else:
        score = mean_average_precision_torch
        if not isinstance(queries, slice):
            queries = torch.as_tensor(queries, device=z_img.device)
    return 0.5 * (score(z_img[queries], z_txt, labels[queries], labels, **options)
                  + score(z_txt[queries], z_img, labels[queries], labels, **options))


class ScheduledMargin(Callback):
    """SAM: at the start of every epoch set α(t) (recorded as ``alpha``) and refresh the category
    prototypes, the per-category means of the L2-normalised training embeddings (Semedo,
    thesis, Eqs. 3.10–3.11).  Read more in the user guide: docs/estimators/sam.md."""

    def on_epoch_begin(self, net, dataset_train=None, **kwargs):
        loss = net.criterion_
        epoch = len(net.history) - 1
        loss.refresh(epoch)
        if loss.needs_prototypes:
            z_img, z_txt, labels = _embed_on_device(net, dataset_train)
            labels = labels.to(z_img.dtype)
            counts = labels.sum(0).clamp(min=1)[:, None]
            loss.refresh(epoch, (labels.T @ z_img) / counts, (labels.T @ z_txt) / counts)
        net.history.record("alpha", float(loss.alpha))


class InverseTimeDecay:
    """Keras-style learning-rate decay: η_t = η / (1 + decay · iteration), the "decay 1e-6" of
    SAM's and TempXNet's SGD (Semedo, thesis, §3.5.3 and §4.6.3).

    Parameters
    ----------
    decay : float
        The decay per optimiser step.
    """

    def __init__(self, decay):
        self.decay = decay

    def __call__(self, iteration):
        return 1.0 / (1.0 + self.decay * iteration)


class LearningRateDecay(LRScheduler):
    """skorch's :class:`~skorch.callbacks.LRScheduler` with torch's ``LambdaLR``, stepped every
    batch: each group's rate is ``initial_lr · factor(it)``, ``it`` counting the training
    batches of the net's whole history (a warm start continues); recorded as ``event_lr``.

    Parameters
    ----------
    factor : callable
        ``factor(iteration) -> float`` (e.g. :class:`InverseTimeDecay`).
    """

    def __init__(self, factor):
        self.factor = factor
        super().__init__(policy=LambdaLR, step_every="batch", event_name="event_lr")

    def _get_scheduler(self, net, policy, **kwargs):
        return policy(net.optimizer_, lr_lambda=self.factor, last_epoch=self.batch_idx_ - 1)


def cannot_rank(values):
    """Whether validation figures cannot rank a fit's epochs: NaN at every epoch, or at least
    two numbers, all equal."""
    finite = np.asarray(values, dtype=float)
    finite = finite[~np.isnan(finite)]
    return bool(len(values) and not len(finite)
                or len(finite) >= 2 and finite.max() == finite.min())


def kept_epoch(values, *, lower_is_better):
    """The position among ``values`` (one validation figure per epoch) of the epoch whose
    weights are kept: the first best number (NaN is no candidate), or the last when the
    figures :func:`cannot_rank` the epochs."""
    values = np.asarray(values, dtype=float)
    if not len(values) or cannot_rank(values):
        return len(values) - 1
    return int(np.nanargmin(values) if lower_is_better else np.nanargmax(values))


class CheckpointSelection(EarlyStopping):
    """skorch's :class:`~skorch.callbacks.EarlyStopping` (``load_best``) that keeps the last
    epoch's weights when the monitored figure cannot rank the epochs.

    The one decision of the kept epoch (:func:`kept_epoch`), recorded as ``kept_epoch_``
    (1-based over the net's history; the last epoch when no epoch of this fit was scored).
    """

    def on_train_begin(self, net, **kwargs):
        super().on_train_begin(net, **kwargs)
        self.first_row_ = len(net.history)

    def on_train_end(self, net, **kwargs):
        scored = [(self.first_row_ + 1 + i, row[self.monitor])
                  for i, row in enumerate(net.history[self.first_row_:]) if self.monitor in row]
        values = [value for _, value in scored]
        if not scored or cannot_rank(values):  # none, a tie or NaN at every epoch
            self.kept_epoch_ = len(net.history)  # the last weights stay
            return
        self.kept_epoch_ = scored[kept_epoch(values, lower_is_better=self.lower_is_better)][0]
        if self.best_epoch_ != self.kept_epoch_:
            raise RuntimeError(f"checkpoint selection: skorch kept epoch {self.best_epoch_}, "
                               f"the rule epoch {self.kept_epoch_}")
        super().on_train_end(net, **kwargs)


class ProgressLog(PrintLog):
    """skorch's epoch table with the fit's ``progress`` and the time ``left`` (m:ss), without
    colour codes when the output is not a terminal.

    Parameters
    ----------
    max_epochs : int
        Epochs of the fit.
    sink : callable, default=print
    """

    def __init__(self, max_epochs, sink=print, **kwargs):
        super().__init__(sink=sink, **kwargs)
        self.max_epochs = max_epochs

    def on_train_begin(self, net, **kwargs):
        self.first_ = len(net.history)
        return super().on_train_begin(net, **kwargs)

    def on_epoch_end(self, net, **kwargs):
        durations = [row.get("dur", 0.0) for row in net.history[self.first_:]]
        done = len(durations)
        net.history.record("progress", f"{done}/{self.max_epochs}")
        net.history.record("left", clock(
            float(np.mean(durations)) * max(self.max_epochs - done, 0)))
        return super().on_epoch_end(net, **kwargs)

    def format_row(self, row, key, color):
        if not _colour_terminal():
            return super().format_row(row, key, "").replace(Ansi.ENDC.value, "")
        return super().format_row(row, key, color)


def _colour_terminal():
    return bool(getattr(sys.stdout, "isatty", lambda: False)())


def clock(seconds):
    """Seconds as a clock reading: ``"0:45"``, ``"3:20"``, ``"1:05:00"``."""
    seconds = int(round(seconds))
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"
