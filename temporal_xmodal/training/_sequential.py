"""Training stages of Sequential Cross-Modal Learning, as skorch nets.

SCML (Song & Tan, "Sequential Learning for Cross-modal Retrieval") trains in four
stages on data that arrive one modality at a time.  Every stage is a skorch net fitted on a
:class:`ModalityPools` data set:

* Stages I and II, the SGD control of Stage IV (SCML-M) and the parallel
  paradigm (PCML) minimise Song & Tan's Eq. 10 with a :class:`StageNet`: the standard
  skorch loop, restricted to the parameters left trainable
  (``requires_grad``) so a stage can freeze S or the plugs;
* Stages III and IV run the learned optimiser with a
  :class:`LearnedOptimizerNet`, whose ``train_step`` is the step-by-step
  (truncated) optimisation of Song & Tan, Eq. 9.  skorch owns the epochs, the batches,
  the Adam optimiser of φ, the history and the callbacks.

Both nets are :class:`~temporal_xmodal.training.CrossModalNet` subclasses: the batch
reaches the net's device once, before module and loss, and the batch losses (and the
learned optimiser's ``old_loss``, ``new_loss``, ``update_l1``) stay on the device until the
epoch ends, so a training step never waits for the device.  The
:class:`ModalityPoolIterator` delivers its batches on the net's device: the pools (the
episodic memory among them) move there once per fit when they fit
(:meth:`ModalityPools.place`), otherwise each batch is gathered into pinned memory and
copied without blocking.  The rows come from the same CPU generator either way, so a fit
draws the same batches on every device.
"""

import math

import torch

from .._device import move
from ._data import DeviceBatches
from ._net import CrossModalNet, RecordsInterrupt
from ._placement import DeviceCopies


class ModalityPools(torch.utils.data.Dataset):
    """Unpaired per-modality pools of features and labels.

    Parameters
    ----------
    pools : dict of str -> (torch.Tensor, torch.Tensor)
        ``modality -> (features (n_m, d_m), labels (n_m, C))`` on the host.  The pools
        need not be aligned or of equal size.
    driver : str
        The pool an epoch passes over; every other pool is sampled alongside
        (same batch size, random rows).
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
    """Batches of a :class:`ModalityPools`: one batch of every pool per step.

    Drop-in for skorch's ``iterator_train``.  Each step yields
    ``({m: features, f"{m}_labels": labels, ...}, None)`` with the same number
    of rows per pool (skorch requires consistent lengths); the losses read the
    labels from the batch.

    Parameters
    ----------
    dataset : ModalityPools
    batch_size : int, default=64
    shuffle : bool, default=True
        Shuffle the driver pool every epoch.
    generator : torch.Generator or None
        Source of every step's rows, on the CPU whatever ``device``.
    steps_per_epoch : int or None, default=None
        ``None``: one pass over the driver pool per epoch.  An integer: that
        many steps, each on a random batch of the driver pool (T counted in
        single steps uses 1 step per epoch).
    device : str, torch.device or None, default=None
        Where the batches are delivered (the stage nets set their own);
        ``None`` leaves them on the host.
    placement : {"auto", "device", "staged"}, default="auto"
        Where they are gathered: from the pools copied to ``device`` once
        (:meth:`ModalityPools.place`; "auto": when they fit), or staged: on the
        host, into pinned memory (:func:`~temporal_xmodal._device.pinned_staging`),
        and copied without blocking, one batch ahead (``"staged"``: on any
        device, the CPU included).  Every path gathers with the one
        :func:`~temporal_xmodal.training._data.gather`.

    Any other keyword (a misspelled ``iterator_train__<option>`` of a stage net) raises a
    ``TypeError`` naming it.
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
        """Every step's rows of every pool (CPU int64), drawn in the order of the host loop."""
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


class InterruptibleStage(RecordsInterrupt):
    """Mixin of the stage nets: record a Ctrl-C (:class:`RecordsInterrupt`) and drop
    training-only state.

    The stages pass their modules as instances (``module=S``), which skorch keeps in
    ``module`` beside ``module_``: both are pickled through skorch's device mapping, so a
    net fitted on a GPU loads on a machine without one.
    """

    cuda_dependent_attributes_ = ["module"]

    def release_training_state(self):
        """Drop what only further training of this net would need (the optimiser
        and its state, the batch generator); the history, the modules and the
        criterion stay."""
        self.optimizer_ = None
        self.iterator_train__generator = None
        return self


class StageNet(InterruptibleStage, CrossModalNet):
    """:class:`CrossModalNet` that optimises only the parameters left trainable.

    A stage freezes modules by setting ``requires_grad = False`` before
    fitting (Stage II freezes S; the SGD Stage IV freezes the plugs); the
    optimiser is built over the remaining parameters only.
    """

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


class LearnedOptimizerNet(InterruptibleStage, CrossModalNet):
    """skorch net of SCML Stages III and IV: S updated by the meta-learner M.

    The module is the :class:`~temporal_xmodal.nn.sequential.MetaLearner`
    (parameters φ).  Each training step (Song & Tan, Eq. 9):

    1. takes a batch B_o of the episodic memory (old modality) and a batch
       B_n of the new modality (one :class:`ModalityPoolIterator` step);
    2. computes l^(o), l^(n) and the flattened gradients ∇^(o), ∇^(n) of
       Eq. 10 with respect to θ_t, the parameters of S (split into
       positive/negative parts for multi-label data), detached;
    3. runs M once on all coordinates: ``[g_t, h_{t+1}] = M(inputs, h_t)``;
    4. θ' = θ_t + g_t;
    5. with ``meta_train``: L_t = l^(n)(B_n; θ') + l^(o)(B_o; θ') + λ‖g_t‖₁
       (Eq. 7, evaluated at θ' by default: ``evaluate_at``), and φ takes one step of the
       net's optimiser (Adam, lr 1e-4);
    6. θ_{t+1} ← θ' (detached), h_{t+1} detached (truncation length 1).

    Plugs stay frozen; the hidden state starts at zero at ``fit``.  The target
    and the state live on the net's device (moved and created at
    ``on_train_begin``) and are pickled through skorch's device mapping, as
    the module and the criterion are; a step does not synchronise with the
    host (its records stay on the device until the epoch ends).

    Parameters
    ----------
    module : MetaLearner
    target : SequentialNet
        Holds the frozen plugs and S, whose parameters are updated in place.
    old_modality, new_modality : str
        Keys of the memory and new-data pools.
    l1_weight : float, default=0.01
        λ of Eq. 7.
    l1_reduction : {"sum", "mean"}, default="sum"
        ‖g‖₁ as a sum or a mean over coordinates.
    evaluate_at : {"updated", "current"}, default="updated"
        Where the meta-loss's task terms are evaluated: θ_t + g_t, or θ_t as
        Eq. 9 is written (then only the L1 term trains φ).
    meta_train : bool, default=True
        Stage III (train φ) or Stage IV (apply M with φ frozen).
    disentangle : bool, default=False
        Feed positive- and negative-label gradients and losses separately
        (for multi-label data: 8 raw inputs per coordinate).
    use_memory : bool, default=True
        ``False``: the old-modality inputs and loss are zeros (ablation
        "w.o. mem").
    **kwargs
        Passed to :class:`~temporal_xmodal.training.CrossModalNet`; ``criterion`` must be a
        :class:`~temporal_xmodal.losses.classification.ClassificationLoss`
        (its :meth:`~temporal_xmodal.losses.classification.ClassificationLoss.loss`
        gives Eq. 10).
    """

    #: pickled through skorch's device mapping (a net fitted on a GPU loads without one)
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
        """Drop φ's optimiser and M's hidden state over the coordinates of θ
        (2 · layers · hidden · dim(θ) floats, 8 MB at the defaults)."""
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


__all__ = ["InterruptibleStage", "LearnedOptimizerNet", "ModalityPoolIterator", "ModalityPools",
           "StageNet"]
