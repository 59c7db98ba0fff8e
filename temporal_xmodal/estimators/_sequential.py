"""SequentialCrossModal: modality-by-modality learning with a meta-learner (SCML).

Spec ``sequential_ticrc_cca.md`` §A (Song & Tan).  The stages are skorch nets
of :mod:`temporal_xmodal.training._sequential`; the modules are in
:mod:`temporal_xmodal.nn.sequential`, eq. 10 in
:mod:`temporal_xmodal.losses.classification`.
"""

import contextlib
import copy
import time
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted

from .._validation import check_labels
from ..base import CrossModalEmbedder, l2_normalize
from ..losses.classification import REDUCTIONS, SINGLE_LABEL_LOSSES, ClassificationLoss
from ..metrics import mean_average_precision, mean_reciprocal_rank
from ..nn.sequential import MODALITIES, MetaLearner, SequentialNet
from ..training import embed_batches
from ..training import as_tensor
from ..training._sequential import (
    LearnedOptimizerNet,
    ModalityPoolIterator,
    ModalityPools,
    StageNet,
)
from ._neural import COMMON_CONSTRAINTS, resolve_device

_STAGES = ("stage1", "stage2", "stage3", "stage4")


@contextlib.contextmanager
def _seeded(seed):
    """Run a block under torch's global RNG seeded with ``seed``, then restore it."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        yield


class SequentialCrossModal(CrossModalEmbedder):
    r"""Sequential Cross-Modal Learning (SCML): one modality now, the other later.

    The two modalities arrive one after the other, each with class labels
    only (no image–text pairing is used for training).  A plug per modality
    maps features to a common width d = 128; a unified model S (128 → 128 →
    K, tanh, then a classifier K → C) is shared.  Training runs four stages
    (spec §A.5):

    I.   the first modality's plug P₁ and S minimise eq. 10 with SGD; then
         ``n_memory`` random items of the first modality are kept as the
         episodic memory and the rest is discarded;
    II.  the second plug P₂ is trained with SGD (lr ``stage2_lr``) with S
         frozen;
    III. the meta-learner M (a coordinatewise 2-layer LSTM, §A.4) learns, on
         a copy of S, to update θ so that the loss on new-modality data
         (an ``n_meta_train`` subset) and on the memory both fall, with an L1
         penalty λ‖g‖₁ on the update (eq. 7):

         .. math::

             L = \sum_t l^{(n)}_t(\theta_t + g_t) + l^{(o)}_t(\theta_t + g_t)
                 + \lambda \|g_t\|_1,\quad
             [g_t, h_{t+1}] = M([\nabla^{(o)}_{\theta_t}, \nabla^{(n)}_{\theta_t},
                                 l^{(o)}_t, l^{(n)}_t], h_t; \phi)

    IV.  S is updated by the learned optimiser θ_{t+1} = θ_t + g_t on the
         memory and the full new-modality data; plugs stay frozen.

    The embedding of an item is h = tanh(…) ∈ (−1, 1)^K of its own modality,
    or its binary code sign(h) (``codes="sign"``, the paper's Hamming
    retrieval; the L2-normalised codes rank exactly as Hamming distance).
    Time is ignored (the column is required and dropped, so the estimator
    stays a drop-in replacement).

    Sequential use: ``partial_fit(X_first, y_first, modality="text")`` runs
    Stage I and keeps only the memory; a later
    ``partial_fit(X_second, y_second, modality="image")`` runs Stages II–IV,
    seeing the first modality only through the memory.  ``fit(X, y)`` runs the
    whole sequence on the two blocks of X.

    Defaults are the paper's Wiki settings (spec §A.6) except the plug width
    (``hidden_dim=1024``, the MIRFLICKR/NUS-WIDE value; Wiki used 4096).

    Parameters
    ----------
    modality_order : tuple of str, default=("text", "image")
        Arrival order; Wiki's SCML trains text first (Table 5).
    update_rule : {"meta", "sgd", "none"}, default="meta"
        Stage IV: the learned optimiser (SCML), plain SGD with lr ``lr`` on
        memory + new data (SCML-M, "w.o. meta"), or no update at all (the
        model after Stage II, "w.o. F").
    paradigm : {"sequential", "parallel"}, default="sequential"
        "parallel" (PCML, Table 5) trains both plugs and S jointly in one
        stage on unpaired batches of both modalities (A-20).
    stage2_scope : {"plug", "joint"}, default="plug"
        Stage II trains the new plug only, or the plug and S jointly (the
        naive sequential fine-tuning whose forgetting Fig. 5 shows).
    positive_weight : float or "auto", default="auto"
        w_p of eq. 10; "auto" is 1 for single-label y and 20 for a
        multilabel indicator (§A.6).
    loss_reduction : {"mean", "sum"}, default="mean"
        Reduction of eq. 10 over the batch (A-5).
    single_label_loss : {"cross_entropy", "literal"}, default="cross_entropy"
        Softmax loss for single-label y (A-4).
    codes : {"sign", "continuous"}, default="sign"
        Embed as binary codes sign(h) (sign(0) = +1, A-2) or as h.
    database_codes : {"single_modality", "fused"}, default="single_modality"
        What :meth:`score` retrieves from: the other modality's codes, or the
        fused codes of both modalities (:meth:`transform_fused`, A-14/A-15).
    n_memory : int, default=200
        Size of the episodic memory of the first modality (0: "w.o. mem").
    n_meta_train : int, default=200
        Size of the new-modality subset used to train M (Stage III).
    meta_lr : float, default=1e-4
        Adam learning rate of φ in Stage III.
    meta_steps : int or None, default=None
        T of Stages III and IV; ``None``: ``max_epochs`` (the paper's "same
        epochs of stage I").
    meta_steps_unit : {"epochs", "steps"}, default="epochs"
        T counts passes over the new-data pool (best reading of A-9) or
        single optimisation steps (literal reading).
    l1_weight : float, default=0.01
        λ of eq. 7 (A-10: 0.01 per §4.4 for Wiki; 0.1 per the implementation
        details and for the multi-label data sets).
    l1_reduction : {"sum", "mean"}, default="sum"
        ‖g‖₁ summed or averaged over coordinates (A-8).
    meta_loss_at : {"updated", "current"}, default="updated"
        Task terms of the meta-loss at θ_t + g_t (best reading) or θ_t as
        eq. 9 is written (A-7).
    preprocessing_p : float, default=10.0
        p of the gradient preprocessing (eq. 8).
    lstm_hidden : int, default=20
    lstm_layers : int, default=2
    output_scale : float, default=0.01
        Scale of M's output (A-6).  0.01 is the L2L reference code's value;
        the spec's reading 1.0 made Stage IV unstable on Wikipedia (3 of 5
        seeds lost 0.05–0.35 of first-modality accuracy; see the docs).
    disentangle : bool or "auto", default="auto"
        Feed M positive- and negative-label gradients and losses separately;
        "auto": for multilabel y (§A.3).
    embedding_dim : int, default=64
        Code length K.
    hidden_dim : int, default=1024
        Hidden width of each plug.
    common_dim : int, default=128
        Plug output width d.
    dropout : float, default=0.5
        Drop rate of the plugs' hidden layers and of S's input (A-12).
    max_epochs : int, default=150
        Stage I epochs; Stage II uses as many, and T defaults to it.
    batch_size : int, default=64
    lr : float, default=0.01
        SGD learning rate of Stage I (and of the SGD Stage IV and PCML).
    stage2_lr : float, default=0.1
        SGD learning rate of Stage II.
    momentum : float, default=0.0
        SGD momentum (the paper gives none).
    device : {"auto", "cpu", "cuda", ...}, default="auto"
    random_state : int, RandomState or None, default=None
        Seeds initialisation, dropout, batches and the memory / meta-train
        sampling; same seed → same codes on CPU.
    verbose : int, default=0
        > 0 prints each stage's skorch epoch table.
    n_image_features : int, "auto" or None, default=None
        Leading image columns of X; ``None`` splits the non-time columns in
        half; ``"auto"`` reads the blocks from the column names (see
        :func:`~temporal_xmodal.make_crossmodal_transformer`).
    time_unit : {"years", "months", "weeks", "days", "hours", "minutes", "seconds"}, default="years"
        Unit of the time axis: dates are mapped to it, numbers are read in
        it, and duration parameters given as numbers are in it.

    Attributes
    ----------
    module_ : SequentialNet
        Plugs and S.
    meta_learner_ : MetaLearner or None
        M after Stage III (``update_rule="meta"``).
    memory_ : dict
        The episodic memory: ``modality``, ``X`` and ``labels`` (label
        indicator) of ``n_memory`` first-modality items.
    nets_ : dict of str -> skorch.NeuralNet
        The net of every stage run (``stage1`` … ``stage4`` or ``parallel``);
        ``nets_[s].history`` holds its losses (and, for the learned optimiser,
        ``old_loss``, ``new_loss``, ``update_l1`` per batch).
    stage_seconds_ : dict of str -> float
        Wall time of each stage.
    n_modalities_seen_ : int
        Calls of the sequence so far (≥ 2: both modalities learnt).
    classes_ : ndarray or None
        Class labels (single-label y).
    n_classes_ : int
        C, outputs of the classifier head.
    multilabel_ : bool
    embedding_dim_, n_features_in_, n_image_features_, n_text_features_
        See :class:`~temporal_xmodal.base.CrossModalEmbedder`.

    Examples
    --------
    >>> from temporal_xmodal import SequentialCrossModal
    >>> from temporal_xmodal.datasets import make_temporal_crossmodal
    >>> X, y, info = make_temporal_crossmodal(300, return_info=True, random_state=0)
    >>> d = info.n_image_features
    >>> scml = SequentialCrossModal(max_epochs=2, hidden_dim=32, random_state=0,
    ...                             n_image_features=d)
    >>> scml = scml.partial_fit(X[:, d:-1], y, modality="text")   # text arrives
    >>> scml = scml.partial_fit(X[:, :d], y, modality="image")    # later: images
    >>> scml.transform(X).shape
    (300, 128)
    """

    time_use = "none"
    _parameter_constraints = {
        "modality_order": [tuple, list],
        "update_rule": [StrOptions({"meta", "sgd", "none"})],
        "paradigm": [StrOptions({"sequential", "parallel"})],
        "stage2_scope": [StrOptions({"plug", "joint"})],
        "positive_weight": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "loss_reduction": [StrOptions(set(REDUCTIONS))],
        "single_label_loss": [StrOptions(set(SINGLE_LABEL_LOSSES))],
        "codes": [StrOptions({"sign", "continuous"})],
        "database_codes": [StrOptions({"single_modality", "fused"})],
        "n_memory": [Interval(Integral, 0, None, closed="left")],
        "n_meta_train": [Interval(Integral, 1, None, closed="left")],
        "meta_lr": [Interval(Real, 0, None, closed="neither")],
        "meta_steps": [Interval(Integral, 1, None, closed="left"), None],
        "meta_steps_unit": [StrOptions({"epochs", "steps"})],
        "l1_weight": [Interval(Real, 0, None, closed="left")],
        "l1_reduction": [StrOptions({"sum", "mean"})],
        "meta_loss_at": [StrOptions({"updated", "current"})],
        "preprocessing_p": [Interval(Real, 0, None, closed="neither")],
        "lstm_hidden": [Interval(Integral, 1, None, closed="left")],
        "lstm_layers": [Interval(Integral, 1, None, closed="left")],
        "output_scale": [Interval(Real, 0, None, closed="neither")],
        "disentangle": ["boolean", StrOptions({"auto"})],
        "common_dim": [Interval(Integral, 1, None, closed="left")],
        "stage2_lr": [Interval(Real, 0, None, closed="neither")],
        **{key: COMMON_CONSTRAINTS[key] for key in (
            "embedding_dim", "hidden_dim", "dropout", "max_epochs", "batch_size", "lr",
            "momentum", "device", "random_state", "verbose", "n_image_features", "time_unit")},
    }

    def __init__(self, modality_order=("text", "image"), update_rule="meta",
                 paradigm="sequential", stage2_scope="plug", positive_weight="auto",
                 loss_reduction="mean", single_label_loss="cross_entropy", codes="sign",
                 database_codes="single_modality", n_memory=200, n_meta_train=200,
                 meta_lr=1e-4, meta_steps=None, meta_steps_unit="epochs", l1_weight=0.01,
                 l1_reduction="sum", meta_loss_at="updated", preprocessing_p=10.0,
                 lstm_hidden=20, lstm_layers=2, output_scale=0.01, disentangle="auto", *,
                 embedding_dim=64, hidden_dim=1024, common_dim=128, dropout=0.5,
                 max_epochs=150, batch_size=64, lr=0.01, stage2_lr=0.1, momentum=0.0,
                 device="auto", random_state=None, verbose=0, n_image_features=None,
                 time_unit="years"):
        self.modality_order = modality_order
        self.update_rule = update_rule
        self.paradigm = paradigm
        self.stage2_scope = stage2_scope
        self.positive_weight = positive_weight
        self.loss_reduction = loss_reduction
        self.single_label_loss = single_label_loss
        self.codes = codes
        self.database_codes = database_codes
        self.n_memory = n_memory
        self.n_meta_train = n_meta_train
        self.meta_lr = meta_lr
        self.meta_steps = meta_steps
        self.meta_steps_unit = meta_steps_unit
        self.l1_weight = l1_weight
        self.l1_reduction = l1_reduction
        self.meta_loss_at = meta_loss_at
        self.preprocessing_p = preprocessing_p
        self.lstm_hidden = lstm_hidden
        self.lstm_layers = lstm_layers
        self.output_scale = output_scale
        self.disentangle = disentangle
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim
        self.common_dim = common_dim
        self.dropout = dropout
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.stage2_lr = stage2_lr
        self.momentum = momentum
        self.device = device
        self.random_state = random_state
        self.verbose = verbose
        self.n_image_features = n_image_features
        self.time_unit = time_unit

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Run the whole sequence (or the parallel paradigm) on the two blocks of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            ``[image features | text features | time]``; time is ignored.
        y : array-like of shape (n_samples,) or (n_samples, n_labels)
            Class labels or a multilabel indicator (required).

        Returns
        -------
        self : object
        """
        self._reset()
        if self.paradigm == "parallel":
            self._validate_params()
            X_image, X_text, _ = self._validate_layout(X)
            Y = self._encode_labels(y, len(X_image), first=True)
            self._start()
            self._fit_parallel({"image": X_image, "text": X_text}, Y)
            return self
        self.partial_fit(X, y)
        return self.partial_fit(X, y)

    def partial_fit(self, X, y=None, modality=None):
        """Learn the next modality of ``modality_order``.

        The first call runs Stage I on the first modality and keeps only the
        episodic memory of it; the second runs Stages II–IV on the second.
        Later calls bring more items of the second modality: S is updated
        as in Stage IV (learned optimiser or SGD) on the memory and the new
        items (with ``update_rule="none"`` only the second plug trains).

        Parameters
        ----------
        X : array-like
            Either the full layout ``[image | text | time]`` (``modality=None``:
            the block of the next modality is used), or the feature block of
            one modality alone (``modality`` given; no time column).
        y : array-like of shape (n_samples,) or (n_samples, n_labels)
            Labels of these items, over the same categories in both calls.
        modality : {"image", "text"} or None, default=None
            The modality of a single-block X; must be the next one in
            ``modality_order`` (the second one after both were learnt).

        Returns
        -------
        self : object
        """
        stage = getattr(self, "n_modalities_seen_", 0)
        if stage == 0:
            self._validate_params()
            self._check_order()
        if self.paradigm == "parallel" and stage != 1:  # stage 1 is never reached in parallel
            raise ValueError("paradigm='parallel' trains both modalities at once: use fit.")
        expected = self.modality_order[min(stage, 1)]
        if modality is None:
            X_image, X_text, _ = self._validate_layout(X, reset=stage == 0)
            A = X_image if expected == "image" else X_text
        else:
            if modality != expected:
                raise ValueError(f"The next modality in modality_order={self.modality_order!r} "
                                 f"is {expected!r}; got modality={modality!r}.")
            if stage >= 2:
                A = self._check_modality_block(X, modality, ensure_min_samples=2)
            else:
                A = check_array(X, dtype=np.float64, ensure_min_samples=2,
                                input_name=f"X_{modality}")
                setattr(self, f"n_{modality}_features_", A.shape[1])
            if stage == 1:
                self.n_features_in_ = self.n_image_features_ + self.n_text_features_ + 1
        Y = self._encode_labels(y, A.shape[0], first=stage == 0)
        if stage == 0:
            self._start()
            self._fit_first(expected, A, Y)
        elif stage == 1:
            self._fit_second(expected, A, Y)
        else:
            self._update_more(expected, A, Y)
        self.n_modalities_seen_ = stage + 1
        return self

    def _reset(self):
        for attr in ("n_modalities_seen_", "n_features_in_", "n_image_features_",
                     "n_text_features_", "feature_names_in_", "module_"):
            if hasattr(self, attr):
                delattr(self, attr)

    def _check_order(self):
        order = tuple(self.modality_order)
        if sorted(order) != sorted(MODALITIES):
            raise ValueError(f"modality_order must hold 'image' and 'text' once each; "
                             f"got {self.modality_order!r}.")

    def _encode_labels(self, y, n_samples, first):
        """Label indicator (n, C), with the categories fixed by the first call."""
        check_labels(y, n_samples, required=True, estimator_name=type(self).__name__)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if first:
            self.multilabel_ = y.ndim == 2
            self.classes_ = None if self.multilabel_ else np.unique(y)
            self.n_classes_ = y.shape[1] if self.multilabel_ else len(self.classes_)
        if self.multilabel_:
            if y.ndim != 2 or y.shape[1] != self.n_classes_:
                raise ValueError(f"y must be a multilabel indicator with {self.n_classes_} "
                                 "columns, as in the first modality.")
            return y.astype(np.float32)
        if y.ndim != 1:
            raise ValueError("y must hold class labels, as in the first modality.")
        unseen = ~np.isin(y, self.classes_)
        if unseen.any():
            raise ValueError(f"y holds classes not seen with the first modality: "
                             f"{np.unique(y[unseen])[:5].tolist()}.")
        return np.eye(self.n_classes_, dtype=np.float32)[np.searchsorted(self.classes_, y)]

    # --------------------------------------------------------------- stages
    def _start(self):
        """Seeds, device and S (first call); plugs are added as modalities arrive."""
        rng = check_random_state(self.random_state)
        self._seeds = rng.randint(np.iinfo(np.int32).max, size=len(_STAGES) + 1)
        self.device_ = resolve_device(self.device)
        self.embedding_dim_ = self.embedding_dim
        with _seeded(self._seeds[-1]):
            self.module_ = SequentialNet(None, None, self.hidden_dim, self.common_dim,
                                         self.embedding_dim, self.n_classes_, self.dropout)
        self.nets_, self.stage_seconds_ = {}, {}
        self.meta_learner_ = None
        self.memory_ = None

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
                              for m, (X, Y) in data.items()},
                             driver)

    def _run(self, name, net, dataset, seed):
        """Fit a stage's net under its own seed and record its time."""
        start = time.perf_counter()
        with _seeded(seed):
            net.fit(dataset, None)
        self.nets_[name] = net
        self.stage_seconds_[name] = time.perf_counter() - start
        return net

    def _iterator_params(self, seed, steps_per_epoch=None):
        return {"iterator_train": ModalityPoolIterator,
                "iterator_train__generator": torch.Generator().manual_seed(int(seed)),
                "iterator_train__steps_per_epoch": steps_per_epoch}

    def _stage_net(self, lr, max_epochs, seed, steps_per_epoch=None):
        """A :class:`StageNet` minimising eq. 10 with SGD over the trainable parameters."""
        return StageNet(
            module=self.module_, criterion=ClassificationLoss, optimizer=torch.optim.SGD,
            lr=lr, optimizer__momentum=self.momentum, max_epochs=max_epochs,
            batch_size=self.batch_size, train_split=None, device=self.device_,
            verbose=self.verbose, **self._iterator_params(seed, steps_per_epoch),
            **{f"criterion__{k}": v for k, v in self._criterion().items()})

    def _fit_first(self, modality, A, Y):
        """Stage I on the first modality, then keep the episodic memory."""
        with _seeded(self._seeds[0] + 1):
            self.module_.add_plug(modality, A.shape[1])
        self._trainable(self.module_.plugs[modality], self.module_.unified)
        self._run("stage1", self._stage_net(self.lr, self.max_epochs, self._seeds[0]),
                  self._pools({modality: (A, Y)}, modality), self._seeds[0])
        rng = np.random.default_rng(self._seeds[-1])
        keep = np.sort(rng.choice(len(A), size=min(self.n_memory, len(A)), replace=False))
        self.memory_ = {"modality": modality, "X": A[keep].astype(np.float32),
                        "labels": Y[keep]}

    def _meta_steps(self):
        T = self.max_epochs if self.meta_steps is None else self.meta_steps
        return T, (1 if self.meta_steps_unit == "steps" else None)

    def _fit_second(self, modality, A, Y):
        """Stages II–IV on the second modality (the first is seen only via the memory)."""
        with _seeded(self._seeds[1] + 1):
            plug = self.module_.add_plug(modality, A.shape[1])
        self._trainable(*((plug, self.module_.unified) if self.stage2_scope == "joint"
                          else (plug,)))
        self._run("stage2", self._stage_net(self.stage2_lr, self.max_epochs, self._seeds[1]),
                  self._pools({modality: (A, Y)}, modality), self._seeds[1])
        self.module_.requires_grad_(False)
        if self.update_rule == "meta":
            rng = np.random.default_rng(self._seeds[-1] + 1)
            subset = rng.choice(len(A), size=min(self.n_meta_train, len(A)), replace=False)
            with _seeded(self._seeds[2] + 1):
                learner = MetaLearner(n_inputs=4 * (2 if self._disentangle() else 1),
                                      hidden_size=self.lstm_hidden,
                                      num_layers=self.lstm_layers, p=self.preprocessing_p,
                                      output_scale=self.output_scale)
            # Stage III trains M on a copy of S (S itself is not changed, §A.5)
            self._run("stage3", self._learned_optimizer(learner, copy.deepcopy(self.module_),
                                                        modality, True, self._seeds[2]),
                      self._pools({**self._memory(), modality: (A[subset], Y[subset])},
                                  modality), self._seeds[2])
            self.meta_learner_ = learner.requires_grad_(False)
        if self.update_rule != "none":
            self._update_unified(modality, A, Y, self._seeds[3])

    def _update_more(self, modality, A, Y):
        """A further batch of the second modality after the sequence (``partial_fit``).

        S is updated as in Stage IV (learned optimiser or SGD, on the memory and
        the new items); with ``update_rule="none"`` only the plug is trained.
        """
        seed = self._seeds[3] + self.n_modalities_seen_
        if self.update_rule == "none":
            self._trainable(self.module_.plugs[modality])
            self._run("stage2", self._stage_net(self.stage2_lr, self.max_epochs, seed),
                      self._pools({modality: (A, Y)}, modality), seed)
            self.module_.requires_grad_(False)
        else:
            self._update_unified(modality, A, Y, seed)

    def _update_unified(self, modality, A, Y, seed):
        """Stage IV: S updated on the memory and ``(A, Y)``, plugs frozen."""
        pools = self._pools({**self._memory(), modality: (A, Y)}, modality)
        if self.update_rule == "sgd":
            T, steps_per_epoch = self._meta_steps()
            self._trainable(self.module_.unified)
            self._run("stage4", self._stage_net(self.lr, T, seed, steps_per_epoch), pools, seed)
            self.module_.requires_grad_(False)
        else:
            self._run("stage4", self._learned_optimizer(self.meta_learner_, self.module_,
                                                        modality, False, seed), pools, seed)

    def _memory(self):
        if not self.n_memory:
            return {}
        return {self.memory_["modality"]: (self.memory_["X"], self.memory_["labels"])}

    def _disentangle(self):
        return self.multilabel_ if self.disentangle == "auto" else bool(self.disentangle)

    def _learned_optimizer(self, learner, target, new, meta_train, seed):
        T, steps_per_epoch = self._meta_steps()
        return LearnedOptimizerNet(
            learner, criterion=ClassificationLoss, optimizer=torch.optim.Adam, lr=self.meta_lr,
            max_epochs=T, batch_size=self.batch_size, train_split=None, device=self.device_,
            verbose=self.verbose, target=target, old_modality=self.memory_["modality"],
            new_modality=new, l1_weight=self.l1_weight, l1_reduction=self.l1_reduction,
            evaluate_at=self.meta_loss_at, meta_train=meta_train,
            disentangle=self._disentangle(), use_memory=self.n_memory > 0,
            **self._iterator_params(seed, steps_per_epoch),
            **{f"criterion__{k}": v for k, v in self._criterion().items()})

    def _fit_parallel(self, blocks, Y):
        """PCML: both plugs and S in one stage on unpaired batches of both modalities."""
        first = self.modality_order[0]
        with _seeded(self._seeds[0] + 1):
            for m in self.modality_order:
                self.module_.add_plug(m, blocks[m].shape[1])
        self._trainable(self.module_)
        self._run("parallel", self._stage_net(self.lr, self.max_epochs, self._seeds[0]),
                  self._pools({m: (blocks[m], Y) for m in MODALITIES}, first), self._seeds[0])
        self.module_.requires_grad_(False)
        self.n_modalities_seen_ = 2

    # ------------------------------------------------------------ transform
    def __sklearn_is_fitted__(self):
        return getattr(self, "n_modalities_seen_", 0) >= 2

    def _embed(self, modality, A, time):
        h = self._hidden(modality, A)
        return np.where(h >= 0, 1.0, -1.0) if self.codes == "sign" else h

    def _hidden(self, modality, A):
        """h ∈ (−1, 1)^K of one modality (eval mode)."""
        h = embed_batches(self.module_, {modality: as_tensor(A)}, self.device_,
                          modality=modality)
        return h.numpy().astype(np.float64)

    def transform_fused(self, X):
        """Unified binary codes of items observed in both modalities (A-14).

        Per bit, ``+1`` when P(b=+1 | image) · P(b=+1 | text) ≥
        P(b=−1 | image) · P(b=−1 | text) with P(b=+1 | x) = (1 + h)/2, which for
        two modalities is ``sign(h_image + h_text)`` (spec §A.7).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)

        Returns
        -------
        codes : ndarray of shape (n_samples, embedding_dim_)
            L2-normalised ±1 codes (ranked by dot product = by Hamming distance).
        """
        X_image, X_text, _ = self._validate_transform(X)
        h = self._hidden("image", X_image) + self._hidden("text", X_text)
        return l2_normalize(np.where(h >= 0, 1.0, -1.0))

    def class_probabilities(self, X_modality, modality):
        """S's classifier output for one modality's feature block.

        Parameters
        ----------
        X_modality : array-like of shape (n_samples, n_<modality>_features_)
        modality : {"image", "text"}

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes_)
            Softmax (single-label) or per-label sigmoid (multilabel)
            probabilities; columns follow ``classes_``.
        """
        check_is_fitted(self)
        if modality not in MODALITIES:
            raise ValueError(f"modality must be 'image' or 'text'; got {modality!r}.")
        A = self._check_modality_block(X_modality, modality, dtype=np.float32)
        self.module_.eval()
        with torch.no_grad():
            logits = self.module_(**{modality: as_tensor(A).to(self.device_)})[modality]
        proba = torch.sigmoid(logits) if self.multilabel_ else torch.softmax(logits, dim=1)
        return proba.cpu().numpy().astype(np.float64)

    def score(self, X, y=None):
        """Mean of image→text and text→image retrieval quality over the rows of X.

        With ``database_codes="single_modality"`` as
        :meth:`CrossModalEmbedder.score`; with ``"fused"`` each direction's
        queries (one modality) retrieve from the fused codes of the rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
        y : array-like, default=None
            Labels (mAP); ``None``: counterpart MRR.

        Returns
        -------
        score : float
        """
        if self.database_codes == "single_modality":
            return super().score(X, y)
        Z = self.transform(X)
        F = self.transform_fused(X)
        d = Z.shape[1] // 2
        labels = check_labels(y, Z.shape[0], required=False)
        metric = (mean_reciprocal_rank if labels is None
                  else lambda q, g: mean_average_precision(q, g, labels, labels))
        return float(np.mean([metric(Z[:, :d], F), metric(Z[:, d:], F)]))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags

