"""The training stages of SCML (Song & Tan), as plain functions.

Each takes the models, the data, a seed and its settings, fits one skorch net of
:mod:`temporal_xmodal.training` and returns it; the modules are updated in place, and every
parameter of S and the plugs is frozen when a stage returns.
"""

import copy
from dataclasses import dataclass

import numpy as np
import torch

from ...nn.layers import reseed
from ...training import ProgressLog, as_tensor
from ._loss import ClassificationLoss
from ._training import LearnedOptimizerNet, ModalityPoolIterator, ModalityPools, StageNet

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


@dataclass(frozen=True)
class NetSettings:
    """What every stage net shares: batches, device, callbacks and the loss (``criterion``: the
    parameters of :class:`ClassificationLoss`, Eq. 10)."""

    batch_size: int
    device: str
    verbose: int
    callbacks: list
    criterion: dict
    momentum: float
    keep_training_state: bool


@dataclass(frozen=True)
class MetaSettings:
    """The learned optimiser of Stages III and IV (Song & Tan, Eqs. 7–9); ``steps`` is T,
    ``steps_per_epoch`` ``None`` (T passes over the new-modality pool) or 1 (T single steps)."""

    lr: float
    steps: int
    steps_per_epoch: int | None
    l1_weight: float
    l1_reduction: str
    evaluate_at: str
    disentangle: bool
    use_memory: bool


def select_memory(modality, A, Y, n_memory, seed):
    """The episodic memory: ``n_memory`` random items of the first modality, a dict of
    ``modality``, ``X`` (float32) and ``labels``, in row order."""
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
    """skorch parameters every stage net shares (with ``verbose``, the progress table)."""
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
    """Fit a stage's net under its own seed and drop its training state unless kept."""
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
    """Fit ``net`` with only the ``trainable`` parts of ``module`` trainable; freeze all after."""
    _trainable(module, *trainable)
    try:
        return _fit(net, pools, seed, settings)
    finally:
        module.requires_grad_(False)


def stage_one(module, modality, A, Y, *, lr, max_epochs, seed, settings):
    """Stage I: the first modality's plug and S minimise Eq. 10 with SGD; returns the
    :class:`StageNet`."""
    return _fit_frozen(module, (module.plugs[modality], module.unified),
                       _stage_net(module, lr, max_epochs, seed, settings),
                       _pools({modality: (A, Y)}, modality), seed, settings)


def stage_two(module, modality, A, Y, *, lr, max_epochs, joint, seed, settings):
    """Stage II: the second modality's plug alone (S frozen), or with S when ``joint`` (the
    naive fine-tuning of Song & Tan, Fig. 5)."""
    plug = module.plugs[modality]
    return _fit_frozen(module, (plug, module.unified) if joint else (plug,),
                       _stage_net(module, lr, max_epochs, seed, settings),
                       _pools({modality: (A, Y)}, modality), seed, settings)


def stage_three(meta_learner, module, memory, modality, A, Y, *, seed, settings, meta):
    """Stage III: the meta-learner M learns to update a copy of S on the memory and the
    new-modality items ``(A, Y)`` (Song & Tan, Eqs. 7 and 9); S itself is not changed."""
    net = _learned_optimizer(meta_learner, copy.deepcopy(module), memory["modality"],
                             modality, True, seed, settings, meta)
    pools = _pools({**memory_pool(memory, meta.use_memory), modality: (A, Y)}, modality)
    try:
        return _fit(net, pools, seed, settings)
    finally:
        meta_learner.requires_grad_(False)


def stage_four(module, meta_learner, memory, modality, A, Y, *, rule, lr, seed, settings,
               meta):
    """Stage IV: S updated on the memory and ``(A, Y)``, the plugs frozen: by the learned
    optimiser θ ← θ + g (``rule="meta"``, Song & Tan, Eq. 4) or by SGD with ``lr``
    (``"sgd"``, SCML-M)."""
    pools = _pools({**memory_pool(memory, meta.use_memory), modality: (A, Y)}, modality)
    if rule == "meta":
        return _fit(_learned_optimizer(meta_learner, module, memory["modality"], modality,
                                       False, seed, settings, meta), pools, seed, settings)
    return _fit_frozen(module, (module.unified,),
                       _stage_net(module, lr, meta.steps, seed, settings,
                                  meta.steps_per_epoch), pools, seed, settings)


def parallel_stage(module, blocks, Y, driver, *, lr, max_epochs, seed, settings):
    """PCML: both plugs and S in one stage on unpaired batches of both modalities, ``driver``
    the pool an epoch passes over."""
    return _fit_frozen(module, (module,), _stage_net(module, lr, max_epochs, seed, settings),
                       _pools({m: (blocks[m], Y) for m in blocks}, driver), seed, settings)


__all__ = ["MetaSettings", "NetSettings", "STAGE_HEADERS", "STAGE_NAMES",
           "memory_pool", "parallel_stage", "select_memory", "stage_four", "stage_one",
           "stage_three", "stage_two"]
