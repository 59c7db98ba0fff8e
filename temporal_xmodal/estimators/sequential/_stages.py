"""The training stages of SCML, as plain functions.

Stage I (:func:`stage_one`) trains the first plug and S on the first modality; a few
items of it are kept as the episodic memory (:func:`select_memory`); Stage II
(:func:`stage_two`) trains the second plug; Stage III (:func:`stage_three`) trains the
meta-learner M on a copy of S; Stage IV (:func:`stage_four`) updates S with M (or with
SGD); the parallel paradigm (:func:`parallel_stage`) trains everything at once
(Song & Tan; PCML: Table 5).

Every stage takes the models, the data, a seed and the settings it needs, fits one skorch
net of :mod:`temporal_xmodal.training` (:class:`~temporal_xmodal.training.StageNet` or
:class:`~temporal_xmodal.training.LearnedOptimizerNet`) on the device of
:class:`NetSettings` and returns it; the modules are updated in place.  A stage leaves
every parameter of S and the plugs frozen when it returns.  The estimator records each
returned net and stops the sequence when one was interrupted (:class:`StageInterrupted`).
"""

import copy
from dataclasses import dataclass

import numpy as np
import torch

from ...losses.classification import ClassificationLoss
from ...nn.layers import reseed
from ...training import (
    LearnedOptimizerNet,
    ProgressLog,
    ModalityPoolIterator,
    ModalityPools,
    StageNet,
    as_tensor,
)

#: Human names of the stage nets, for messages.
STAGE_NAMES = {"stage1": "Stage I", "stage2": "Stage II", "stage3": "Stage III",
               "stage4": "Stage IV", "parallel": "the parallel stage (PCML)"}

#: The line ``verbose`` prints before each stage net's epoch table.
STAGE_HEADERS = {
    "stage1": "stage 1/4 (Stage I): the first modality's plug and S",
    "stage2": "stage 2/4 (Stage II): the second modality's plug",
    "stage3": "stage 3/4 (Stage III): the learned optimiser M on the memory and new items",
    "stage4": "stage 4/4 (Stage IV): S updated on the memory and the new items",
    "parallel": "stage 1/1 (the parallel stage, PCML): both plugs and S",
}


class StageInterrupted(Exception):
    """A stage net was interrupted (Ctrl-C): the sequence stops after it."""

    def __init__(self, stage):
        super().__init__(stage)
        self.stage = stage


@dataclass(frozen=True)
class NetSettings:
    """What every stage net shares: batches, device, callbacks and the loss.

    ``criterion`` holds the parameters of
    :class:`~temporal_xmodal.losses.classification.ClassificationLoss` (Song & Tan, Eq. 10).
    """

    batch_size: int
    device: str
    verbose: int
    callbacks: list
    criterion: dict
    momentum: float
    keep_training_state: bool


@dataclass(frozen=True)
class MetaSettings:
    """The learned optimiser of Stages III and IV (Song & Tan, Eq. 7-9).

    ``steps`` is T; ``steps_per_epoch`` is ``None`` (T passes over the new-modality pool)
    or 1 (T single steps).
    """

    lr: float
    steps: int
    steps_per_epoch: int | None
    l1_weight: float
    l1_reduction: str
    evaluate_at: str
    disentangle: bool
    use_memory: bool


def select_memory(modality, A, Y, n_memory, seed):
    """The episodic memory: ``n_memory`` random items of the first modality.

    Returns
    -------
    memory : dict
        ``modality``, ``X`` (float32) and ``labels`` of the kept items, in row order.
    """
    rng = np.random.default_rng(seed)
    keep = np.sort(rng.choice(len(A), size=min(n_memory, len(A)), replace=False))
    return {"modality": modality, "X": A[keep].astype(np.float32), "labels": Y[keep]}


def memory_pool(memory, use_memory):
    """The memory as a ``{modality: (X, labels)}`` pool (empty without memory)."""
    if not use_memory:
        return {}
    return {memory["modality"]: (memory["X"], memory["labels"])}


def _pools(data, driver):
    return ModalityPools({m: (as_tensor(np.ascontiguousarray(X)), as_tensor(Y))
                          for m, (X, Y) in data.items()}, driver)


def _trainable(module, *parts):
    """Freeze every parameter of ``module`` except those of ``parts``."""
    module.requires_grad_(False)
    for part in parts:
        part.requires_grad_(True)


def _net_params(settings, seed, max_epochs, steps_per_epoch=None):
    """skorch parameters every stage net shares; ``verbose``: the epoch table with the
    stage's progress and time left, as the other neural estimators print it."""
    progress = {"callbacks__print_log": ProgressLog(max_epochs)} if settings.verbose else {}
    return {**progress, "iterator_train": ModalityPoolIterator,
            "iterator_train__generator": torch.Generator().manual_seed(int(seed)),
            "iterator_train__steps_per_epoch": steps_per_epoch,
            "batch_size": settings.batch_size, "train_split": None,
            "device": settings.device, "verbose": settings.verbose,
            "callbacks": list(settings.callbacks or []),
            "criterion": ClassificationLoss,
            **{f"criterion__{k}": v for k, v in settings.criterion.items()}}


def _stage_net(module, lr, max_epochs, seed, settings, steps_per_epoch=None):
    """A :class:`StageNet` minimising Eq. 10 with SGD over the trainable parameters."""
    return StageNet(module=module, optimizer=torch.optim.SGD, lr=lr,
                    optimizer__momentum=settings.momentum, max_epochs=max_epochs,
                    **_net_params(settings, seed, max_epochs, steps_per_epoch))


def _learned_optimizer(learner, target, old, new, meta_train, seed, settings, meta):
    return LearnedOptimizerNet(
        learner, optimizer=torch.optim.Adam, lr=meta.lr, max_epochs=meta.steps,
        target=target, old_modality=old, new_modality=new, l1_weight=meta.l1_weight,
        l1_reduction=meta.l1_reduction, evaluate_at=meta.evaluate_at, meta_train=meta_train,
        disentangle=meta.disentangle, use_memory=meta.use_memory,
        **_net_params(settings, seed, meta.steps, meta.steps_per_epoch))


def _fit(net, pools, seed, settings):
    """Fit a stage's net under its own seed (dropout included) and drop its training
    state unless kept."""
    for module in (net.module, getattr(net, "target", None)):
        if isinstance(module, torch.nn.Module):  # dropout draws from the fit's seeds
            reseed(module, seed)
    try:
        net.fit(pools, None)
    finally:
        pools.release()  # the pools' copies on the device, if they were moved there
    if not settings.keep_training_state:
        net.release_training_state()
    return net


def _fit_frozen(module, trainable, net, pools, seed, settings):
    """Fit ``net`` with only ``trainable`` parts of ``module`` left trainable; freeze
    everything afterwards."""
    _trainable(module, *trainable)
    try:
        return _fit(net, pools, seed, settings)
    finally:
        module.requires_grad_(False)


def stage_one(module, modality, A, Y, *, lr, max_epochs, seed, settings):
    """Stage I: the first modality's plug and S minimise Eq. 10 with SGD.

    Parameters
    ----------
    module : SequentialNet
        Holds the plug of ``modality``.
    modality : {"image", "text"}
    A : ndarray of shape (n_samples, n_features)
    Y : ndarray of shape (n_samples, n_classes)
        Label indicator.
    lr : float
    max_epochs : int
    seed : int
    settings : NetSettings

    Returns
    -------
    net : StageNet
    """
    return _fit_frozen(module, (module.plugs[modality], module.unified),
                       _stage_net(module, lr, max_epochs, seed, settings),
                       _pools({modality: (A, Y)}, modality), seed, settings)


def stage_two(module, modality, A, Y, *, lr, max_epochs, joint, seed, settings):
    """Stage II: the second modality's plug alone (S frozen), or with S (``joint``).

    Parameters are those of :func:`stage_one`; ``joint`` trains S too (the naive
    sequential fine-tuning of Song & Tan, Fig. 5).

    Returns
    -------
    net : StageNet
    """
    plug = module.plugs[modality]
    return _fit_frozen(module, (plug, module.unified) if joint else (plug,),
                       _stage_net(module, lr, max_epochs, seed, settings),
                       _pools({modality: (A, Y)}, modality), seed, settings)


def stage_three(meta_learner, module, memory, modality, A, Y, *, seed, settings, meta):
    """Stage III: M learns to update a copy of S on the memory and new-modality items.

    S itself is not changed (Song & Tan, Eq. 7 and 9).

    Parameters
    ----------
    meta_learner : MetaLearner
        Trained in place; frozen when the stage returns.
    module : SequentialNet
    memory : dict
        The episodic memory (:func:`select_memory`).
    modality : {"image", "text"}
        The new modality.
    A, Y : ndarray
        The new-modality items M trains on, and their label indicator.
    seed : int
    settings : NetSettings
    meta : MetaSettings

    Returns
    -------
    net : LearnedOptimizerNet
    """
    net = _learned_optimizer(meta_learner, copy.deepcopy(module), memory["modality"],
                             modality, True, seed, settings, meta)
    pools = _pools({**memory_pool(memory, meta.use_memory), modality: (A, Y)}, modality)
    try:
        return _fit(net, pools, seed, settings)
    finally:
        meta_learner.requires_grad_(False)


def stage_four(module, meta_learner, memory, modality, A, Y, *, rule, lr, seed, settings,
               meta):
    """Stage IV: S updated on the memory and ``(A, Y)`` with the plugs frozen.

    ``rule="meta"``: by the learned optimiser θ ← θ + g of ``meta_learner`` (Song & Tan,
    Eq. 4); ``rule="sgd"``: by SGD with ``lr`` for as long (SCML-M).

    Parameters are those of :func:`stage_three`, plus ``rule`` and ``lr``.

    Returns
    -------
    net : LearnedOptimizerNet or StageNet
    """
    pools = _pools({**memory_pool(memory, meta.use_memory), modality: (A, Y)}, modality)
    if rule == "meta":
        return _fit(_learned_optimizer(meta_learner, module, memory["modality"], modality,
                                       False, seed, settings, meta), pools, seed, settings)
    return _fit_frozen(module, (module.unified,),
                       _stage_net(module, lr, meta.steps, seed, settings,
                                  meta.steps_per_epoch), pools, seed, settings)


def parallel_stage(module, blocks, Y, driver, *, lr, max_epochs, seed, settings):
    """PCML: both plugs and S in one stage on unpaired batches of both modalities.

    Parameters
    ----------
    module : SequentialNet
        Holds both plugs.
    blocks : dict of str -> ndarray
        The feature block of each modality.
    Y : ndarray of shape (n_samples, n_classes)
    driver : {"image", "text"}
        The pool an epoch passes over.
    lr, max_epochs, seed, settings
        As in :func:`stage_one`.

    Returns
    -------
    net : StageNet
    """
    return _fit_frozen(module, (module,), _stage_net(module, lr, max_epochs, seed, settings),
                       _pools({m: (blocks[m], Y) for m in blocks}, driver), seed, settings)


__all__ = ["MetaSettings", "NetSettings", "STAGE_HEADERS", "STAGE_NAMES", "StageInterrupted",
           "memory_pool", "parallel_stage", "select_memory", "stage_four", "stage_one",
           "stage_three", "stage_two"]
