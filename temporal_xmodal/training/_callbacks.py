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
    """Record validation retrieval mAP (mean of I→T and T→I) as ``valid_map``, and with a
    ``time_window`` the time-window mAP@50 as ``valid_tmap``.

    skorch's :class:`~skorch.callbacks.EpochScoring` with its cache: both figures are
    scored on the embeddings the epoch's validation pass computed (``y_pred`` of every
    validation batch, on the net's device), so no second pass embeds the validation rows.
    The validation figures used for checkpoint selection and early stopping:
    mAP is comparable across epochs, unlike a loss whose margins change every
    epoch (SAM's).  ``valid_tmap`` is the time-aware question of the
    diachronic papers (time-period inference, Semedo & Magalhães, ACM MM
    2019): relevant = same category and ``|Δt| <= time_window``, each item at
    its own time, the first 50 ranks.

    Read more in the user guide: docs/training.md.

    Parameters
    ----------
    max_queries : int or None, default=5000
        Validation sets larger than this are scored with this many query
        items per direction (a fixed random sample, the same every epoch)
        against the whole validation set as gallery: exact mAP costs
        n_valid² similarity pairs per epoch (70,000 validation items: 4.9·10⁹),
        the sample ``max_queries · n_valid``.  ``None`` scores every item.
    random_state : int, default=0
        Seed of the query sample.
    time_window : float or None, default=None
        Half-width of the relevant period of ``valid_tmap``, on the axis of the
        batches' ``"time"`` entry (centred times in the estimator's
        ``time_unit``); ``None`` records no ``valid_tmap``.
    time : ndarray of shape (n_rows,) or None, default=None
        The times of ``valid_tmap``'s relevance for every row of the data
        (indexed by the validation set's rows), on that axis; ``None``: the
        batches' ``"time"`` entry.  A constant-time control, trained on one
        instant, is judged with its rows' real times.
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
    """Both modalities' embeddings and the label indicator of a dataset's rows, on the
    net's device (from the dataset's copy there when it has one)."""
    device = torch.device(net.device)
    X, _ = dataset.tensors(device)
    z_img, z_txt = embed_batches(net.module_, X, device, rows=dataset.rows, out_device=None)
    return z_img, z_txt, dataset.labels(device)


def _cross_modal_map(z_img, z_txt, labels, queries, time=None, window=None):
    """Mean of image → text and text → image mAP, ``queries`` (a slice or sorted row
    indices) against every item; with a ``window``, time-window mAP@50 (relevant = a shared
    label and ``|Δt| <= window``, ``time`` the items' times).

    On the CPU with NumPy (:func:`~temporal_xmodal.metrics.mean_average_precision`); on
    another device with the same definition in torch there, so that no embedding leaves it.
    The time-window figure is NumPy's on the host (one copy of the validation embeddings per
    epoch, after the epoch's last step).
    """
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
    """SAM: at the start of every epoch set α(t) and refresh the category prototypes.

    Prototypes are the per-category means of the L2-normalised embeddings of
    the training set from a full pass in eval mode (Semedo, thesis, Eqs. 3.10–3.11), computed
    on the net's device.  α is written to the history (column ``alpha``).

    Read more in the user guide: docs/estimators/sam.md.
    """

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
    """Keras-style learning-rate decay: η_t = η / (1 + decay · iteration).

    The "decay 1e-6" of SAM's and TempXNet's SGD (Semedo, thesis, §3.5.3 and §4.6.3), read as
    Keras' time-based decay: the factor of η at optimiser step ``iteration``
    (:class:`LearningRateDecay` applies it every batch).

    Read more in the user guide: docs/training.md ("Learning-rate decay").

    Parameters
    ----------
    decay : float
        The decay per optimiser step (iteration).

    Examples
    --------
    >>> from temporal_xmodal.training import InverseTimeDecay
    >>> InverseTimeDecay(0.5)(2)
    0.5
    """

    def __init__(self, decay):
        self.decay = decay

    def __call__(self, iteration):
        return 1.0 / (1.0 + self.decay * iteration)


class LearningRateDecay(LRScheduler):
    """skorch's :class:`~skorch.callbacks.LRScheduler`, stepped every batch, with torch's
    ``LambdaLR``: every parameter group's rate is η · ``factor(it)`` at training step ``it``.

    ``it`` counts the training batches of the net's whole history, so a warm start continues
    the schedule; skorch's own resumes a batch-stepped schedule at the epoch count
    (``last_epoch=len(history) - 1``, the one thing overridden here).  η is each group's
    ``initial_lr`` (set from its ``lr`` the first time).  The rate of each batch is recorded as
    ``event_lr`` (the first group's).  The rate stays a Python float, which a fused or
    compiled step reads without a sync.

    Read more in the user guide: docs/training.md ("Learning-rate decay").

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
    """Whether a fit's validation figures cannot rank its epochs: none is a number (NaN at
    every epoch: validation rows without a label), or at least two and the numbers all
    equal (the rule :class:`CheckpointSelection` and the estimators' convergence summary
    share, through :func:`kept_epoch`)."""
    finite = np.asarray(values, dtype=float)
    finite = finite[~np.isnan(finite)]
    return bool(len(values) and not len(finite)
                or len(finite) >= 2 and finite.max() == finite.min())


def kept_epoch(values, *, lower_is_better):
    """The position among ``values`` (a fit's validation figures, one per epoch) of the
    epoch whose weights are kept: the first best number (NaN epochs are no candidates, as
    skorch's :class:`~skorch.callbacks.EarlyStopping` never counts them as improvements), or
    the last epoch when the figures :func:`cannot_rank` the epochs."""
    values = np.asarray(values, dtype=float)
    if not len(values) or cannot_rank(values):
        return len(values) - 1
    return int(np.nanargmin(values) if lower_is_better else np.nanargmax(values))


class CheckpointSelection(EarlyStopping):
    """skorch's :class:`~skorch.callbacks.EarlyStopping` (``load_best``) that keeps the
    last epoch's weights when the monitored figure cannot rank the epochs.

    A figure equal at every epoch of the fit (two validation pairs that are always found
    first, every validation row of one class: mAP 1.0 throughout) has its "best" at the
    first epoch only by a tie; restoring that epoch would throw the training away.  Such
    a fit keeps its last weights, and the estimator says so (its ``fit_report_`` and a
    warning, :func:`~temporal_xmodal.estimators._neural.convergence`).

    The one place that decides which epoch is kept (:func:`kept_epoch`), recorded as
    ``kept_epoch_`` (1-based over the net's history; the last epoch when no epoch of this fit
    was scored); skorch's copy of its best weights is the store, which by construction holds
    that epoch (a strict improvement, NaN never one).
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
    """skorch's epoch table (``print_log``) with the fit's progress: ``progress`` (epoch n of
    the fit's N) and ``left`` (the time left at the mean epoch duration so far, as m:ss), and
    without ANSI colour codes when the output is not a terminal (a log file, a notebook's
    captured stream).

    Parameters
    ----------
    max_epochs : int
        Epochs of the fit (a warm start counts its own).
    sink : callable, default=print
        Where each table line goes.
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
    """Whether standard output is a terminal (ANSI colours shown as colours)."""
    return bool(getattr(sys.stdout, "isatty", lambda: False)())


def clock(seconds):
    """Seconds as a clock reading: ``"0:45"``, ``"3:20"``, ``"1:05:00"``."""
    seconds = int(round(seconds))
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"
