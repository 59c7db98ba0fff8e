"""The training stages of :class:`SequentialCrossModal` (SCML), as a mixin.

Spec ``sequential_ticrc_cca.md`` §A.5: Stage I on the first modality, the
episodic memory, Stage II (new plug), Stage III (meta-learner M on a copy of
S), Stage IV (S updated by M or by SGD), and the parallel paradigm (PCML).
Each stage is a skorch net of :mod:`temporal_xmodal.training._sequential`;
this module builds them from the estimator's parameters, seeds them, runs
them on the estimator's device and stops the sequence when one is
interrupted (Ctrl-C).  The models are initialised on the CPU (the same draws
on every device) and placed on ``device_`` at once; every call of the
sequence resolves ``device`` again, so a later ``partial_fit`` follows it.

The label checks used at every entry point of the sequence live here too:
the categories are fixed by the first modality's call and later calls are
mapped onto them.
"""

import copy
import time
import warnings

import numpy as np
import torch
from sklearn.utils import check_random_state

from .._validation import check_features, check_labels
from ..losses.classification import ClassificationLoss
from ..nn.sequential import MetaLearner, SequentialNet
from ..nn.dropout import reseed
from ..time import external_stacklevel
from ..training import TrainingInterruptedWarning, as_tensor, seeded
from ..training._sequential import (
    LearnedOptimizerNet,
    ModalityPoolIterator,
    ModalityPools,
    StageNet,
)
from ._neural import resolve_device

#: Human names of the stage nets, for messages.
STAGE_NAMES = {"stage1": "Stage I", "stage2": "Stage II", "stage3": "Stage III",
               "stage4": "Stage IV", "parallel": "the parallel stage (PCML)"}
_N_SEEDS = 5
#: Warning of a first call whose every class has one item (y = pair identifiers).
PAIR_LABELS_MESSAGE = (
    "every class of y has exactly one item ({n} classes for {n} items): y looks like pair "
    "identifiers.  SequentialCrossModal learns from shared class labels only, with no "
    "image–text pairing, so it cannot place items of classes it has not seen: retrieval of "
    "new pairs will be at chance (TICRC, pair labels: held-out caption MRR 0.017, random "
    "0.016).  Give it labels that recur across items (categories), or use an estimator "
    "that learns from the pairing.")


class StageInterrupted(Exception):
    """Raised inside the estimator when a stage net was interrupted; caught by
    ``fit`` / ``partial_fit``, which warn and return."""

    def __init__(self, stage):
        super().__init__(stage)
        self.stage = stage


def check_label_values(y):
    """Reject labels that cannot be ordered into classes (``None``, mixed types).

    Parameters
    ----------
    y : array-like or None

    Raises
    ------
    ValueError
        If object labels hold ``None`` (rows named).
    TypeError
        If the labels mix types that cannot be compared (e.g. str and int).
    """
    if y is None:
        return
    y = np.asarray(y, dtype=object) if not hasattr(y, "dtype") else np.asarray(y)
    if y.dtype.kind != "O":
        return
    missing = np.flatnonzero(np.equal(y.ravel(), None))
    if missing.size:
        raise ValueError(
            f"y holds {missing.size} missing label(s) (None), e.g. at position(s) "
            f"{missing[:5].tolist()}; every item of SequentialCrossModal needs a class "
            "label.")
    try:
        np.unique(y)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in y.ravel()})
        raise TypeError(f"y mixes label types {kinds} that cannot be ordered into "
                        "classes; give labels of a single type.") from None


def label_matrix(codes, n_classes):
    """(n, C) float32 indicator of integer codes (1-D) or a boolean indicator (2-D).

    Unlike :func:`~temporal_xmodal.estimators._neural.label_indicator`, the
    width is ``n_classes`` even when the batch lacks the last classes.
    """
    codes = np.asarray(codes)
    if codes.ndim == 2:
        return codes.astype(np.float32)
    return np.eye(n_classes, dtype=np.float32)[codes]


class SequentialStages:
    """Inputs and stages I–IV, PCML of :class:`SequentialCrossModal` (mixin)."""

    # ---------------------------------------------------------------- labels
    def _learn_categories(self, y, labels):
        """Fix the categories from the first modality's labels (validated codes)."""
        self.multilabel_ = labels.ndim == 2
        if self.multilabel_:
            self.classes_ = None
            self.n_classes_ = labels.shape[1]
        else:
            self.classes_ = np.unique(np.asarray(y).ravel())
            self.n_classes_ = len(self.classes_)
            if self.n_classes_ > 1 and self.n_classes_ == len(labels):
                warnings.warn(PAIR_LABELS_MESSAGE.format(n=self.n_classes_), UserWarning,
                              stacklevel=external_stacklevel())
        return label_matrix(labels, self.n_classes_)

    def _labels_of_next(self, y, n_samples):
        """Label indicator of a later call, over the first call's categories."""
        check_label_values(y)
        check_labels(y, n_samples, required=False, estimator_name=type(self).__name__)
        if y is None:
            raise ValueError("SequentialCrossModal.partial_fit requires y (class labels "
                             "or a multilabel indicator) with every modality.")
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if self.multilabel_:
            if y.ndim != 2 or y.shape[1] != self.n_classes_:
                raise ValueError(f"y must be a multilabel indicator with {self.n_classes_} "
                                 "columns, as with the first modality; got shape "
                                 f"{y.shape}.")
            return y.astype(np.float32)
        if y.ndim != 1:
            raise ValueError("y must hold class labels (1-D), as with the first modality; "
                             f"got shape {y.shape}.")
        unseen = ~np.isin(y, self.classes_)
        if unseen.any():
            raise ValueError(f"y holds {int(unseen.sum())} label(s) of classes not seen with "
                             f"the first modality: {np.unique(y[unseen])[:5].tolist()}.")
        return label_matrix(np.searchsorted(self.classes_, y), self.n_classes_)

    # ---------------------------------------------------------------- inputs
    def _next_block_of_layout(self, X, modality, stage):
        """The ``modality`` block of a full ``[image | text | time]`` X."""
        if stage != 1 or not self._first_as_block:
            X_image, X_text, _ = self._validate_layout(X, reset=stage == 0)
            return X_image if modality == "image" else X_text
        # the first modality came as a block alone: learn the layout now and
        # check it agrees with that block's width
        first = self.modality_order[0]
        width = getattr(self, f"n_{first}_features_")
        X_image, X_text, _ = self._validate_layout(X, reset=True)
        got = getattr(self, f"n_{first}_features_")
        if got != width:
            setattr(self, f"n_{first}_features_", width)
            raise ValueError(
                f"X splits into {got} {first} columns (n_image_features="
                f"{self.n_image_features!r}) but the first partial_fit call gave "
                f"X_{first} with {width} columns; set n_image_features to match, or "
                f"pass the {modality} block alone with modality={modality!r}.")
        return X_image if modality == "image" else X_text

    def _next_block(self, X, modality, stage):
        """A single-modality block (no time column), checked against the layout."""
        A = check_features(X, name=f"X_{modality}", float32=self._float32_features,
                           ensure_min_samples=2).astype(np.float64, copy=False)
        if stage >= 2 or (stage == 1 and not self._first_as_block):
            known = getattr(self, f"n_{modality}_features_")
            if A.shape[1] == known:
                return A
            raise ValueError(f"X_{modality} has {A.shape[1]} columns but "
                             f"{type(self).__name__} learnt {known} {modality} features "
                             "(pass that block only, without the time column).")
        setattr(self, f"n_{modality}_features_", A.shape[1])
        if stage == 1:  # both blocks came alone: the layout is [image | text | time]
            self.n_features_in_ = self.n_image_features_ + self.n_text_features_ + 1
        return A

    # ---------------------------------------------------------------- set-up
    def _start(self):
        """Seeds, device and S (first call); plugs are added as modalities arrive."""
        rng = check_random_state(self.random_state)
        self._seeds = rng.randint(np.iinfo(np.int32).max, size=_N_SEEDS)
        self.embedding_dim_ = self.embedding_dim
        with seeded(self._seeds[-1]):
            self.module_ = SequentialNet(None, None, self.hidden_dim, self.common_dim,
                                         self.embedding_dim, self.n_classes_, self.dropout)
        self.nets_, self.stage_seconds_ = {}, {}
        self.meta_learner_ = None
        self.memory_ = None
        self.n_modalities_seen_ = 0
        self._place()

    def _place(self):
        """Resolve ``device`` (``"auto"``: CUDA when available) into ``device_`` and move
        S, the plugs and M there; every stage net trains on ``device_``."""
        self.device_ = resolve_device(self.device)
        for module in (self.module_, self.meta_learner_):
            if module is not None:
                module.to(self.device_)

    def _criterion(self):
        w = self.positive_weight
        if w == "auto":
            w = 20.0 if self.multilabel_ else 1.0
        return {"multilabel": self.multilabel_, "positive_weight": float(w),
                "reduction": self.loss_reduction,
                "single_label_loss": self.single_label_loss}

    def _trainable(self, *modules):
        """Freeze every parameter of ``module_`` except those of ``modules``."""
        self.module_.requires_grad_(False)
        for m in modules:
            m.requires_grad_(True)

    def _pools(self, data, driver):
        return ModalityPools({m: (as_tensor(np.ascontiguousarray(X)), as_tensor(Y))
                              for m, (X, Y) in data.items()}, driver)

    def _net_params(self, seed, steps_per_epoch=None):
        """skorch parameters every stage net shares (batches, device, callbacks, eq. 10)."""
        return {"iterator_train": ModalityPoolIterator,
                "iterator_train__generator": torch.Generator().manual_seed(int(seed)),
                "iterator_train__steps_per_epoch": steps_per_epoch,
                "batch_size": self.batch_size, "train_split": None, "device": self.device_,
                "verbose": self.verbose, "callbacks": list(self.callbacks or []),
                "criterion": ClassificationLoss,
                **{f"criterion__{k}": v for k, v in self._criterion().items()}}

    def _run(self, name, net, dataset, seed):
        """Fit a stage's net under its own seed; record it and its time.

        Raises :class:`StageInterrupted` when the net was interrupted (skorch
        swallows ``KeyboardInterrupt`` and returns), so the sequence stops.
        """
        start = time.perf_counter()
        for module in (net.module, getattr(net, "target", None)):
            if isinstance(module, torch.nn.Module):  # dropout draws from the fit's seeds
                reseed(module, seed)
        try:
            net.fit(dataset, None)
        finally:
            dataset.release()  # the pools' copies on the device, if they were moved there
        if not self.keep_training_state:
            net.release_training_state()
        self.nets_[name] = net
        self.stage_seconds_[name] = time.perf_counter() - start
        if net.interrupted_:
            raise StageInterrupted(name)
        return net

    def _warn_interrupted(self, stage):
        done = [STAGE_NAMES[s] for s in self.nets_ if s != stage]
        state = ("it is left unfitted (the next fit or partial_fit starts over)"
                 if self.n_modalities_seen_ < 2 else
                 "it is usable but partial: the interrupted stage kept the weights it "
                 "had reached and the later stages were not run")
        warnings.warn(f"SequentialCrossModal training was interrupted during "
                      f"{STAGE_NAMES[stage]} (completed before it: {done or 'none'}); "
                      f"{state}.", TrainingInterruptedWarning, stacklevel=3)

    def _stage_net(self, lr, max_epochs, seed, steps_per_epoch=None):
        """A :class:`StageNet` minimising eq. 10 with SGD over the trainable parameters."""
        return StageNet(module=self.module_, optimizer=torch.optim.SGD, lr=lr,
                        optimizer__momentum=self.momentum, max_epochs=max_epochs,
                        **self._net_params(seed, steps_per_epoch))

    def _meta_steps(self):
        T = self.max_epochs if self.meta_steps is None else self.meta_steps
        return T, (1 if self.meta_steps_unit == "steps" else None)

    def _memory(self):
        if not self.n_memory:
            return {}
        return {self.memory_["modality"]: (self.memory_["X"], self.memory_["labels"])}

    def _disentangle(self):
        return self.multilabel_ if self.disentangle == "auto" else bool(self.disentangle)

    def _learned_optimizer(self, learner, target, new, meta_train, seed):
        T, steps_per_epoch = self._meta_steps()
        return LearnedOptimizerNet(
            learner, optimizer=torch.optim.Adam, lr=self.meta_lr, max_epochs=T,
            target=target, old_modality=self.memory_["modality"], new_modality=new,
            l1_weight=self.l1_weight, l1_reduction=self.l1_reduction,
            evaluate_at=self.meta_loss_at, meta_train=meta_train,
            disentangle=self._disentangle(), use_memory=self.n_memory > 0,
            **self._net_params(seed, steps_per_epoch))

    # ---------------------------------------------------------------- stages
    def _fit_first(self, modality, A, Y):
        """Stage I on the first modality, then keep the episodic memory."""
        with seeded(self._seeds[0] + 1):
            self.module_.add_plug(modality, A.shape[1])
        self._trainable(self.module_.plugs[modality], self.module_.unified)
        rng = np.random.default_rng(self._seeds[-1])
        keep = np.sort(rng.choice(len(A), size=min(self.n_memory, len(A)), replace=False))
        self.memory_ = {"modality": modality, "X": A[keep].astype(np.float32),
                        "labels": Y[keep]}
        self._run("stage1", self._stage_net(self.lr, self.max_epochs, self._seeds[0]),
                  self._pools({modality: (A, Y)}, modality), self._seeds[0])
        self.n_modalities_seen_ = 1

    def _fit_second(self, modality, A, Y):
        """Stages II–IV on the second modality (the first is seen only via the memory)."""
        self._place()
        with seeded(self._seeds[1] + 1):
            plug = self.module_.add_plug(modality, A.shape[1])
        self._trainable(*((plug, self.module_.unified) if self.stage2_scope == "joint"
                          else (plug,)))
        self.n_modalities_seen_ = 2  # both plugs exist: usable even if interrupted below
        try:
            self._run("stage2", self._stage_net(self.stage2_lr, self.max_epochs,
                                                self._seeds[1]),
                      self._pools({modality: (A, Y)}, modality), self._seeds[1])
        finally:
            self.module_.requires_grad_(False)
        if self.update_rule == "meta":
            rng = np.random.default_rng(self._seeds[-1] + 1)
            subset = rng.choice(len(A), size=min(self.n_meta_train, len(A)), replace=False)
            with seeded(self._seeds[2] + 1):
                self.meta_learner_ = MetaLearner(
                    n_inputs=4 * (2 if self._disentangle() else 1),
                    hidden_size=self.lstm_hidden, num_layers=self.lstm_layers,
                    p=self.preprocessing_p, output_scale=self.output_scale).to(self.device_)
            try:  # Stage III trains M on a copy of S (S itself is not changed, §A.5)
                self._run("stage3", self._learned_optimizer(
                    self.meta_learner_, copy.deepcopy(self.module_), modality, True,
                    self._seeds[2]),
                    self._pools({**self._memory(), modality: (A[subset], Y[subset])},
                                modality), self._seeds[2])
            finally:
                self.meta_learner_.requires_grad_(False)
        if self.update_rule != "none":
            self._update_unified(modality, A, Y, self._seeds[3])

    def _update_more(self, modality, A, Y):
        """A further batch of the second modality after the sequence (``partial_fit``).

        S is updated as in Stage IV (learned optimiser or SGD, on the memory and
        the new items); with ``update_rule="none"`` only the plug is trained.
        """
        self._place()
        seed = self._seeds[3] + self.n_modalities_seen_
        self.n_modalities_seen_ += 1
        if self.update_rule != "none":
            self._update_unified(modality, A, Y, seed)
            return
        self._trainable(self.module_.plugs[modality])
        try:
            self._run("stage2", self._stage_net(self.stage2_lr, self.max_epochs, seed),
                      self._pools({modality: (A, Y)}, modality), seed)
        finally:
            self.module_.requires_grad_(False)

    def _update_unified(self, modality, A, Y, seed):
        """Stage IV: S updated on the memory and ``(A, Y)``, plugs frozen."""
        pools = self._pools({**self._memory(), modality: (A, Y)}, modality)
        if self.update_rule == "meta":
            self._run("stage4", self._learned_optimizer(self.meta_learner_, self.module_,
                                                        modality, False, seed), pools, seed)
            return
        T, steps_per_epoch = self._meta_steps()
        self._trainable(self.module_.unified)
        try:
            self._run("stage4", self._stage_net(self.lr, T, seed, steps_per_epoch), pools,
                      seed)
        finally:
            self.module_.requires_grad_(False)

    def _fit_parallel(self, blocks, Y):
        """PCML: both plugs and S in one stage on unpaired batches of both modalities."""
        first = self.modality_order[0]
        with seeded(self._seeds[0] + 1):
            for m in self.modality_order:
                self.module_.add_plug(m, blocks[m].shape[1])
        self._trainable(self.module_)
        self.n_modalities_seen_ = 2
        try:
            self._run("parallel", self._stage_net(self.lr, self.max_epochs, self._seeds[0]),
                      self._pools({m: (blocks[m], Y) for m in blocks}, first),
                      self._seeds[0])
        finally:
            self.module_.requires_grad_(False)


__all__ = ["SequentialStages", "StageInterrupted", "TrainingInterruptedWarning",
           "check_label_values", "label_matrix"]
