"""Training stages of Sequential Cross-Modal Learning (Song & Tan) as skorch nets: a
:class:`StageNet` for the stages that minimise Eq. 10, a :class:`LearnedOptimizerNet` for
Stages III and IV (Eq. 9), fitted on :class:`ModalityPools`.  Read more in
docs/estimators/sequential.md."""

import math

import torch

from ..._device import move
from ...training import CrossModalNet
from ...training._data import DeviceBatches
from ...training._placement import DeviceCopies


class ModalityPools(torch.utils.data.Dataset):
    """Unpaired per-modality pools of features and labels.

    Parameters
    ----------
    pools : dict of str -> (torch.Tensor, torch.Tensor)
        ``modality -> (features (n_m, d_m), labels (n_m, C))`` on the host; of any sizes.
    driver : str
        The pool an epoch passes over; every other pool is sampled alongside (same batch
        size, random rows).
    """

    def __init__(self, pools, driver):
        if driver not in pools:
            raise ValueError(f"driver {driver!r} is not one of the pools {sorted(pools)}.")
        self.pools = pools
        self.driver = driver
        self._copies = DeviceCopies()  # the pools on devices (:meth:`place`)

    def __len__(self):
        return len(self.pools[self.driver][0])

    def __getitem__(self, i):
        X, Y = self.pools[self.driver]
        return {self.driver: X[i], f"{self.driver}_labels": Y[i]}

    def place(self, device, placement="auto"):
        """Copy the pools to ``device`` once (:meth:`._placement.DeviceCopies.place`)."""
        return self._copies.place(self.pools, device, placement)

    def tensors(self, device=None):
        """The pools on ``device`` if placed there (:meth:`place`), else the host's."""
        return self.pools if device is None else self._copies.get(device, self.pools)

    def release(self):
        """Drop the copies on the devices."""
        self._copies.clear()


class ModalityPoolIterator(DeviceBatches):
    """Batches of a :class:`ModalityPools`, one batch of every pool per step:
    ``({m: features, f"{m}_labels": labels, ...}, None)``.

    Parameters
    ----------
    dataset : ModalityPools
    batch_size : int, default=64
    shuffle : bool, default=True
        Shuffle the driver pool every epoch.
    generator : torch.Generator or None
        Source of every step's rows, on the CPU.
    steps_per_epoch : int or None, default=None
        ``None``: one pass over the driver pool per epoch; an int: that many random batches.
    device : str, torch.device or None, default=None
        Where the batches are delivered; ``None`` leaves them on the host.
    placement : {"auto", "device", "staged"}, default="auto"
        As :class:`~temporal_xmodal.training.BatchIterator`'s.
    """

    def __init__(self, dataset, batch_size=64, shuffle=True, generator=None,
                 steps_per_epoch=None, device=None, placement="auto"):
        super().__init__(device, placement)
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.generator = generator
        self.steps_per_epoch = steps_per_epoch

    def __len__(self):
        if self.steps_per_epoch is not None:
            return self.steps_per_epoch
        return math.ceil(len(self.dataset) / self.batch_size)

    def _sample(self, n, size):
        """``size`` random rows of a pool of ``n`` (cycling when the pool is smaller)."""
        reps = math.ceil(size / n)
        return torch.cat([torch.randperm(n, generator=self.generator)
                          for _ in range(reps)])[:size]

    def _steps(self):
        """Every step's rows of every pool (CPU int64)."""
        n = len(self.dataset)
        if self.steps_per_epoch is None:
            order = (torch.randperm(n, generator=self.generator) if self.shuffle
                     else torch.arange(n))
            driver_rows = [order[s:s + self.batch_size] for s in range(0, n, self.batch_size)]
        else:
            driver_rows = [self._sample(n, min(self.batch_size, n))
                           for _ in range(self.steps_per_epoch)]
        driver = self.dataset.driver
        return [{m: rows if m == driver else self._sample(len(X), len(rows))
                 for m, (X, _) in self.dataset.pools.items()} for rows in driver_rows]

    def _batch(self, rows):
        """``({m: features, f"{m}_labels": labels, ...}, None)`` of every pool's rows."""
        batch = {}
        for m, (X, Y) in rows.items():
            batch[m], batch[f"{m}_labels"] = X, Y
        return batch, None


class StageState:
    """Mixin of the stage nets: they drop their training-only state, and their modules
    (``module``, given as instances) unpickle through skorch's device mapping."""

    cuda_dependent_attributes_ = ["module"]

    def release_training_state(self):
        """Drop the optimiser and the batch generator; the history, modules and criterion stay."""
        self.optimizer_ = None
        self.iterator_train__generator = None
        return self


class StageNet(StageState, CrossModalNet):
    """:class:`CrossModalNet` that optimises only the parameters left trainable
    (``requires_grad``): a stage freezes S or the plugs."""

    def get_all_learnable_params(self):
        for name, param in super().get_all_learnable_params():
            if param.requires_grad:
                yield name, param


def _flat(tensors):
    return torch.cat([t.reshape(-1) for t in tensors])


def _unflat(flat, shapes):
    """Split a flat parameter vector back into tensors of ``shapes`` (views), in order."""
    chunks = torch.split(flat, [math.prod(s) for s in shapes])
    return [c.view(s) for c, s in zip(chunks, shapes)]


class LearnedOptimizerNet(StageState, CrossModalNet):
    """skorch net of SCML Stages III and IV: S updated by the meta-learner M (parameters φ).

    Each training step (Song & Tan, Eq. 9): with a batch B_o of the episodic memory and B_n
    of the new modality, the losses l^(o), l^(n) and their gradients with respect to θ_t, the
    parameters of S (Eq. 10); ``[g_t, h_{t+1}] = M(inputs, h_t)``; θ' = θ_t + g_t; with
    ``meta_train``, one optimiser step of φ on L_t = l^(n)(B_n; θ') + l^(o)(B_o; θ') +
    λ‖g_t‖₁ (Eq. 7); θ_{t+1} ← θ', h_{t+1} detached.  The plugs stay frozen.

    Parameters
    ----------
    module : MetaLearner
    target : SequentialNet
        The frozen plugs and S, whose parameters are updated in place.
    old_modality, new_modality : str
        Keys of the memory and new-data pools.
    l1_weight : float, default=0.01
        λ of Eq. 7.
    l1_reduction : {"sum", "mean"}, default="sum"
        ‖g‖₁ as a sum or a mean over coordinates.
    evaluate_at : {"updated", "current"}, default="updated"
        The meta-loss's task terms at θ_t + g_t, or at θ_t as Eq. 9 is written.
    meta_train : bool, default=True
        Stage III (train φ) or Stage IV (φ frozen).
    disentangle : bool, default=False
        Feed positive- and negative-label gradients and losses separately.
    use_memory : bool, default=True
        ``False``: the old-modality inputs and loss are zeros (ablation "w.o. mem").
    **kwargs
        Passed to :class:`~temporal_xmodal.training.CrossModalNet`; ``criterion`` is a
        :class:`~temporal_xmodal.estimators.sequential.ClassificationLoss`.
    """

    #: pickled through skorch's device mapping
    cuda_dependent_attributes_ = ["module", "target", "state_"]

    def __init__(self, module, *args, target=None, old_modality="text", new_modality="image",
                 l1_weight=0.01, l1_reduction="sum", evaluate_at="updated", meta_train=True,
                 disentangle=False, use_memory=True, **kwargs):
        # set before NeuralNet.__init__: skorch only lets torch modules be
        # attributes outside its initialize methods during the first init
        self.target = target
        self.old_modality = old_modality
        self.new_modality = new_modality
        self.l1_weight = l1_weight
        self.l1_reduction = l1_reduction
        self.evaluate_at = evaluate_at
        self.meta_train = meta_train
        self.disentangle = disentangle
        self.use_memory = use_memory
        super().__init__(module, *args, **kwargs)

    def release_training_state(self):
        """Drop φ's optimiser and M's hidden state over the coordinates of θ."""
        self.state_ = None
        return super().release_training_state()

    # ---------------------------------------------------------------- hooks
    def on_train_begin(self, net, X=None, y=None, **kwargs):
        super().on_train_begin(net, X=X, y=y, **kwargs)
        self.target.to(self.device).train()  # S and the plugs on the net's device
        n = sum(p.numel() for p in self.target.unified.parameters())
        self.state_ = self.module_.initial_state(n, device=self.device)

    def _task_losses(self, u, labels, params):
        """Eq. 10 of plug outputs ``u`` under S with parameters ``params`` (in S's order)."""
        logits = self.target.unified.logits_at(u, params)
        out = self.criterion_.loss(logits, labels, split=self.disentangle)
        return list(out) if self.disentangle else [out]

    def train_step(self, batch, **fit_params):
        """One step of the learned optimiser on S (and of φ when ``meta_train``)."""
        Xi, _ = batch
        Xi = move(Xi, self.device)  # once; a no-op for batches delivered there
        # Stage IV (φ frozen) runs M's LSTM in inference mode: it has no dropout, so the
        # update is the same, without the workspace a backward pass would need
        self.module_.train(self.meta_train)
        S = self.target.unified
        params = list(S.parameters())
        shapes = [p.shape for p in params]
        theta = _flat(p.detach() for p in params)
        modalities = ((self.old_modality, self.new_modality) if self.use_memory
                      else (self.new_modality,))
        with torch.no_grad():
            u = {m: self.target.plugs[m](Xi[m]) for m in modalities}

        # step 2: losses and gradients at θ_t (constants for M)
        theta_t = theta.clone().requires_grad_(True)
        params_t = _unflat(theta_t, shapes)
        losses, grads = {}, {}
        for m in modalities:
            losses[m] = self._task_losses(u[m], Xi[f"{m}_labels"], params_t)
            # a part that does not depend on θ (the negative part of a
            # single-label cross-entropy is 0) has gradient 0
            grads[m] = [torch.autograd.grad(l, theta_t, retain_graph=True)[0]
                        if l.requires_grad else torch.zeros_like(theta)
                        for l in losses[m]]
        n_parts = 2 if self.disentangle else 1
        if not self.use_memory:
            zero = torch.zeros_like(theta)
            grads[self.old_modality] = [zero] * n_parts
            losses[self.old_modality] = [torch.zeros((), device=theta.device)] * n_parts
        order = (self.old_modality, self.new_modality)
        # M's inputs per coordinate: the gradients, then the losses, which are the same
        # for every coordinate (preprocessed once by M and broadcast)
        inputs = torch.stack([g for m in order for g in grads[m]], dim=1)
        shared = torch.stack([l.detach() for m in order for l in losses[m]])

        # steps 3-5
        with torch.set_grad_enabled(self.meta_train):
            g, state = self.module_(inputs, self.state_, shared)
            l1 = g.abs().sum() if self.l1_reduction == "sum" else g.abs().mean()
        if self.meta_train:
            if self.evaluate_at == "updated":
                params_next = _unflat(theta + g, shapes)
                task = sum(sum(self._task_losses(u[m], Xi[f"{m}_labels"], params_next))
                           for m in modalities)
            else:
                task = sum(sum(losses[m]) for m in modalities).detach()
            loss = task + self.l1_weight * l1
            self.optimizer_.zero_grad()
            loss.backward()
            self.optimizer_.step()
        else:
            loss = sum(sum(losses[m]) for m in modalities).detach()

        # step 6: θ_{t+1} = θ_t + g_t, truncated state
        with torch.no_grad():
            for p, new in zip(params, _unflat(theta + g.detach(), shapes)):
                p.copy_(new)
        self.state_ = tuple(s.detach() for s in state)
        # device tensors, settled into floats with the batch losses when the epoch ends
        for key, m in (("old_loss", self.old_modality), ("new_loss", self.new_modality)):
            self.history.record_batch(key, sum(l.detach() for l in losses[m]))
        self.history.record_batch("update_l1", l1.detach())
        return {"loss": loss.detach(), "y_pred": None}


__all__ = ["StageState", "LearnedOptimizerNet", "ModalityPoolIterator", "ModalityPools",
           "StageNet"]
