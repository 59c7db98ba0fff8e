"""SequentialCrossModal: modality-by-modality learning with a meta-learner (SCML).

The class holds the state; the stages (:mod:`._stages`), inference (:mod:`._inference`),
labels (:mod:`._labels`) and pickling (:mod:`._pickling`) are plain functions.
"""

from numbers import Integral, Real
from time import perf_counter

import numpy as np
from sklearn.utils._param_validation import StrOptions, validate_params
from sklearn.utils.validation import check_is_fitted

from ..._docs import fill_doc
from ..._input import check_features, check_labels
from ..._constraints import Arrangement, Interval
from ...base import CrossModalEmbedder
from ._loss import REDUCTIONS, SINGLE_LABEL_LOSSES
from ._net import MODALITIES, MetaLearner, SequentialNet
from ...training import TrainingRun, seeded
from ...training._report import ReportsFit
from .._neural_params import COMMON_CONSTRAINTS
from ._inference import (binary_codes, class_probabilities, fused_codes,
                         fused_database_score, hidden)
from ._labels import check_label_values, labels_of_next, learn_categories
from ._pickling import pack_modules, unpack_modules
from ._stages import (STAGE_HEADERS, STAGE_NAMES, MetaSettings, NetSettings,
                      parallel_stage, select_memory, stage_four, stage_one, stage_three,
                      stage_two)

_N_SEEDS = 5


@fill_doc
class SequentialCrossModal(ReportsFit, CrossModalEmbedder):
    """Sequential Cross-Modal Learning (SCML): one modality now, the other later.

    The two modalities arrive one after the other, each with class labels only (no
    image–text pairing is used).  A plug per modality maps its features to a common width; a
    unified model S gives the code h ∈ (−1, 1)^K and a classifier.  Four stages train them:
    the first plug and S on the first modality (then only an episodic memory of it is kept),
    the second plug, a meta-learner that learns to update S without forgetting the first
    modality, and S updated by it (Song & Tan, "Sequential Learning for Cross-modal
    Retrieval").  An item is embedded as the binary code sign(h) of its own modality (Hamming
    ranking) or as h.  Time is ignored: the column is required and dropped.

    Read more in the user guide: docs/estimators/sequential.md.

    Parameters
    ----------
    modality_order : tuple of str, default=("text", "image")
        Arrival order.
    update_rule : {"meta", "sgd", "none"}, default="meta"
        Stage IV: the learned optimiser (SCML), plain SGD with ``lr`` on memory and new
        data (SCML-M), or no update (the model after Stage II).
    paradigm : {"sequential", "parallel"}, default="sequential"
        "parallel" (PCML) trains both plugs and S in one stage on unpaired batches.
    stage2_scope : {"plug", "joint"}, default="plug"
        Stage II trains the new plug only, or the plug and S jointly (naive fine-tuning).
    positive_weight : float or "auto", default="auto"
        w_p of Eq. 10; "auto" is 1 for single-label y and 20 for a multilabel indicator.
    loss_reduction : {"mean", "sum"}, default="mean"
        Reduction of Eq. 10 over the batch.
    single_label_loss : {"cross_entropy", "literal"}, default="cross_entropy"
        Softmax loss for single-label y: cross-entropy, or Eq. 10 applied to the softmax.
    codes : {"sign", "continuous"}, default="sign"
        Embed as binary codes sign(h) (sign(0) = +1) or as h.
    database_codes : {"single_modality", "fused"}, default="single_modality"
        What :meth:`score` retrieves from: the other modality's codes, or the fused codes of
        both (:meth:`transform_fused`).
    n_memory : int, default=200
        Size of the episodic memory of the first modality (0: no memory).
    n_meta_train : int, default=200
        New-modality items the meta-learner trains on (Stage III).
    meta_lr : float, default=1e-4
        Adam learning rate of the meta-learner (Stage III).
    meta_steps : int or None, default=None
        T of Stages III and IV; ``None``: ``max_epochs``.
    meta_steps_unit : {"epochs", "steps"}, default="epochs"
        T counts passes over the new-modality pool or single optimisation steps.
    l1_weight : float, default=0.01
        λ of the L1 penalty on the learned update (Eq. 7).
    l1_reduction : {"sum", "mean"}, default="sum"
        ‖g‖₁ summed or averaged over coordinates.
    meta_loss_at : {"updated", "current"}, default="updated"
        Task terms of the meta-loss at θ + g, or at θ as Eq. 9 is written.
    preprocessing_p : float, default=10.0
        p of the gradient preprocessing (Eq. 8).
    lstm_hidden : int, default=20
        Hidden units of the meta-learner's LSTM.
    lstm_layers : int, default=2
        Layers of the meta-learner's LSTM.
    output_scale : float, default=0.01
        Scale of the meta-learner's output.
    disentangle : bool or "auto", default="auto"
        Feed the meta-learner positive- and negative-label gradients and losses separately;
        "auto": for multilabel y.
    embedding_dim : int, default=64
        Code length K, the dimension of the common space (``transform`` returns 2 K
        columns); the default is Song & Tan's (Tables 2, 4 and 5).
    hidden_dim : int, default=1024
        Hidden width of each plug.
    common_dim : int, default=128
        Plug output width d.
    dropout : float, default=0.5
        Drop rate of the plugs' hidden layers and of S's input.
    max_epochs : int, default=150
        Stage I epochs; Stage II uses as many, and T defaults to it.
    batch_size : int, default=64
        Items of each modality per step.
    lr : float, default=0.01
        SGD learning rate of Stage I (and of the SGD Stage IV and PCML).
    stage2_lr : float, default=0.1
        SGD learning rate of Stage II.
    momentum : float, default=0.0
        SGD momentum.
    device : {"auto", "cpu", "cuda", ...}, default="auto"
        Where S, the plugs, M and every stage net compute ("auto": CUDA when available),
        resolved into ``device_`` at each call of the sequence.
    random_state : int, RandomState or None, default=None
        Seeds initialisation, dropout, batches and the memory and meta-train sampling; the
        same seed gives the same codes on the CPU.
    verbose : int, default=0
        > 0 prints each stage's skorch epoch table.
    callbacks : list of skorch callbacks or None, default=None
        Extra callbacks given to every stage's net.
    keep_training_state : bool, default=False
        Keep, in each stage net of ``nets_``, what only more training of that net would need
        (optimiser state, batch generator, the meta-learner's LSTM state).
    {layout_parameters}

    Attributes
    ----------
    module_ : SequentialNet
        Plugs and S.
    meta_learner_ : MetaLearner or None
        The meta-learner M after Stage III (``update_rule="meta"``).
    memory_ : dict
        The episodic memory: ``modality``, ``X`` and ``labels`` (label indicator) of
        ``n_memory`` first-modality items.
    nets_ : dict of str -> skorch.NeuralNet
        The net of every stage run (``stage1`` … ``stage4`` or ``parallel``), with its
        history.
    fit_report_ : FitReport
        The stages run so far, one child report each:
        :class:`~temporal_xmodal.training.FitReport`.
    stage_seconds_ : dict of str -> float
        Wall time of each stage, in seconds.
    device_ : str
        The device the models are on.
    n_modalities_seen_ : int
        Calls of the sequence so far (≥ 2: both modalities learnt).
    classes_ : ndarray or None
        Class labels (single-label y).
    n_classes_ : int
        C, outputs of the classifier head.
    multilabel_ : bool
        Whether y was a multilabel indicator.
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

    time_role = "none"
    #: S, the plugs and M run in float32: features beyond its range are rejected.
    _float32_features = True
    _parameter_constraints = {
        "modality_order": [Arrangement(MODALITIES)],
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
        "keep_training_state": ["boolean"],
        **{key: COMMON_CONSTRAINTS[key] for key in (
            "embedding_dim", "hidden_dim", "dropout", "max_epochs", "batch_size", "lr",
            "momentum", "device", "random_state", "verbose", "callbacks", "n_image_features",
            "time_unit")},
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
                 device="auto", random_state=None, verbose=0, callbacks=None,
                 keep_training_state=False, n_image_features=None, time_unit="years"):
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
        self.callbacks = callbacks
        self.keep_training_state = keep_training_state
        self.n_image_features = n_image_features
        self.time_unit = time_unit

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Run the whole sequence (or the parallel paradigm) on the two blocks of X: equals
        ``partial_fit(X, y)`` twice.

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
        check_label_values(y)
        self._y_fit = y  # the base passes codes to _fit; classes_ keeps the labels
        try:
            return super().fit(X, y)
        finally:
            self._y_fit = None

    def _fit(self, X_image, X_text, time, labels):
        self._first_as_block = False
        Y = self._learn_categories(self._y_fit, labels)
        blocks = {"image": X_image, "text": X_text}
        first, second = self.modality_order
        with TrainingRun(self) as run:
            self._start(run)
            if self.paradigm == "parallel":
                self._fit_parallel(run, blocks, Y)
            else:
                self._fit_first(run, first, blocks[first], Y)
                self._fit_second(run, second, blocks[second], Y)
        return self

    def partial_fit(self, X, y=None, modality=None):
        """Learn the next modality of ``modality_order``.

        The first call runs Stage I on the first modality and keeps only the episodic memory of
        it; the second runs Stages II–IV on the second.  Later calls bring more items of the
        second modality: S is updated as in Stage IV (with ``update_rule="none"``, the second
        plug trains).

        Parameters
        ----------
        X : array-like
            The full layout ``[image | text | time]`` (``modality=None``: the next modality's
            block is used), or one modality's feature block alone (``modality`` given).
        y : array-like of shape (n_samples,) or (n_samples, n_labels)
            Labels of these items, over the same categories in every call.
        modality : {"image", "text"} or None, default=None
            The modality of a single-block X; must be the next one in ``modality_order``.

        Returns
        -------
        self : object
        """
        stage = getattr(self, "n_modalities_seen_", 0)
        if stage == 0:
            self._validate_params()
        if self.paradigm == "parallel":
            raise ValueError("paradigm='parallel' trains both modalities at once: use fit.")
        expected = self.modality_order[min(stage, 1)]
        if modality is not None and modality != expected:
            raise ValueError(f"The next modality in modality_order={self.modality_order!r} "
                             f"is {expected!r}; got modality={modality!r}.")
        if stage == 0:
            self._first_as_block = modality is not None
        A = (self._block_of_layout(X, expected, stage) if modality is None
             else self._block(X, expected, stage))
        if stage == 0:
            check_label_values(y)
            labels = check_labels(y, A.shape[0], required=True,
                                  estimator_name=type(self).__name__)
            Y = self._learn_categories(y, labels)
        else:
            Y = labels_of_next(y, A.shape[0], multilabel=self.multilabel_,
                               classes=self.classes_, n_classes=self.n_classes_)
        with TrainingRun(self) as run:
            if stage == 0:
                self._start(run)
                self._fit_first(run, expected, A, Y)
            elif stage == 1:
                self._fit_second(run, expected, A, Y)
            else:
                self._update_more(run, expected, A, Y)
        return self

    # ---------------------------------------------------------------- inputs
    def _learn_categories(self, y, labels):
        self.multilabel_, self.classes_, self.n_classes_, Y = learn_categories(y, labels)
        return Y

    def _block_of_layout(self, X, modality, stage):
        """The ``modality`` block of a full ``[image | text | time]`` X."""
        relearn = stage == 1 and self._first_as_block
        first = self.modality_order[0]
        width = getattr(self, f"n_{first}_features_", None)
        X_image, X_text, _ = self._validate_layout(X, reset=stage == 0 or relearn)
        got = getattr(self, f"n_{first}_features_")
        if relearn and got != width:  # the first modality came as a block alone
            setattr(self, f"n_{first}_features_", width)
            raise ValueError(
                f"X splits into {got} {first} columns (n_image_features="
                f"{self.n_image_features!r}) but the first partial_fit call gave "
                f"X_{first} with {width} columns; set n_image_features to match, or "
                f"pass the {modality} block alone with modality={modality!r}.")
        return X_image if modality == "image" else X_text

    def _block(self, X, modality, stage):
        """A single-modality block (no time column), checked against the layout."""
        A = check_features(X, name=f"X_{modality}", float32=self._float32_features,
                           ensure_min_samples=2).astype(np.float64, copy=False)
        if stage >= 2 or (stage == 1 and not self._first_as_block):
            known = getattr(self, f"n_{modality}_features_")
            if A.shape[1] != known:
                raise ValueError(f"X_{modality} has {A.shape[1]} columns but "
                                 f"{type(self).__name__} learnt {known} {modality} features "
                                 "(pass that block only, without the time column).")
            return A
        setattr(self, f"n_{modality}_features_", A.shape[1])
        if stage == 1:  # both blocks came alone: the layout is [image | text | time]
            self.n_features_in_ = self.n_image_features_ + self.n_text_features_ + 1
        return A

    # ---------------------------------------------------------------- set-up
    def _start(self, run):
        """Seeds, device and S (first call); plugs are added as modalities arrive."""
        self._seeds = run.rng.randint(np.iinfo(np.int32).max, size=_N_SEEDS)
        self.embedding_dim_ = self.embedding_dim
        with seeded(self._seeds[-1]):
            self.module_ = SequentialNet(None, None, self.hidden_dim, self.common_dim,
                                         self.embedding_dim, self.n_classes_, self.dropout)
        self.nets_, self.stage_seconds_ = {}, {}
        self.meta_learner_ = None
        self.memory_ = None
        self.n_modalities_seen_ = 0
        self._place(run)

    def _place(self, run):
        """The fit's device (``device_``); S, the plugs and M moved there."""
        self.device_ = run.device
        for module in (self.module_, self.meta_learner_):
            if module is not None:
                module.to(self.device_)

    def _disentangle(self):
        return self.multilabel_ if self.disentangle == "auto" else bool(self.disentangle)

    def _net_settings(self):
        w = self.positive_weight
        if w == "auto":
            w = 20.0 if self.multilabel_ else 1.0
        criterion = {"multilabel": self.multilabel_, "positive_weight": float(w),
                     "reduction": self.loss_reduction,
                     "single_label_loss": self.single_label_loss}
        return NetSettings(self.batch_size, self.device_, self.verbose, self.callbacks,
                           criterion, self.momentum, self.keep_training_state)

    def _meta_settings(self):
        T = self.max_epochs if self.meta_steps is None else self.meta_steps
        return MetaSettings(self.meta_lr, T, 1 if self.meta_steps_unit == "steps" else None,
                            self.l1_weight, self.l1_reduction, self.meta_loss_at,
                            self._disentangle(), self.n_memory > 0)

    def _new_meta_learner(self):
        with seeded(self._seeds[2] + 1):
            return MetaLearner(n_inputs=4 * (2 if self._disentangle() else 1),
                               hidden_size=self.lstm_hidden, num_layers=self.lstm_layers,
                               p=self.preprocessing_p,
                               output_scale=self.output_scale).to(self.device_)

    # ---------------------------------------------------------------- stages
    def _run_stage(self, run, name, stage, *args, **kwargs):
        """Run one stage; record its net, time and report; end the fit there when Ctrl-C stopped
        it."""
        if self.verbose:  # a title over the stage's epoch table
            print(f"{type(self).__name__} {STAGE_HEADERS[name]}", flush=True)
        start = perf_counter()
        net = stage(*args, settings=self._net_settings(), **kwargs)
        self.nets_[name] = net
        self.stage_seconds_[name] = perf_counter() - start
        # every stage trains all its epochs (no validation split): the last weights are kept
        self.fit_report_ = run.report(
            (STAGE_NAMES[s], run.stage_report(n)) for s, n in self.nets_.items())
        done = [STAGE_NAMES[s] for s in self.nets_ if s != name]
        run.stop_after(net, f"during {STAGE_NAMES[name]} (completed before it: "
                            f"{done or 'none'})",
                       "it is left unfitted (the next fit or partial_fit starts over)"
                       if self.n_modalities_seen_ < 2 else
                       "it is usable but partial: the stopped stage kept the weights it "
                       "had reached and the later stages were not run")

    def _fit_first(self, run, modality, A, Y):
        """Stage I on the first modality; keep the episodic memory."""
        with seeded(self._seeds[0] + 1):
            self.module_.add_plug(modality, A.shape[1])
        self.memory_ = select_memory(modality, A, Y, self.n_memory, self._seeds[-1])
        self._run_stage(run, "stage1", stage_one, self.module_, modality, A, Y, lr=self.lr,
                        max_epochs=self.max_epochs, seed=self._seeds[0])
        self.n_modalities_seen_ = 1

    def _fit_second(self, run, modality, A, Y):
        """Stages II–IV on the second modality (the first is seen only via the memory)."""
        self._place(run)
        with seeded(self._seeds[1] + 1):
            self.module_.add_plug(modality, A.shape[1])
        self.n_modalities_seen_ = 2  # both plugs exist: usable even if stopped below
        self._run_stage(run, "stage2", stage_two, self.module_, modality, A, Y, lr=self.stage2_lr,
                        max_epochs=self.max_epochs, joint=self.stage2_scope == "joint",
                        seed=self._seeds[1])
        if self.update_rule == "meta":
            rng = np.random.default_rng(self._seeds[-1] + 1)
            subset = rng.choice(len(A), size=min(self.n_meta_train, len(A)), replace=False)
            self.meta_learner_ = self._new_meta_learner()
            self._run_stage(run, "stage3", stage_three, self.meta_learner_, self.module_,
                            self.memory_, modality, A[subset], Y[subset],
                            seed=self._seeds[2], meta=self._meta_settings())
        if self.update_rule != "none":
            self._update_unified(run, modality, A, Y, self._seeds[3])

    def _update_more(self, run, modality, A, Y):
        """More items of the second modality after the sequence: Stage IV again (or Stage II on the
        plug with ``update_rule="none"``)."""
        self._place(run)
        seed = self._seeds[3] + self.n_modalities_seen_
        self.n_modalities_seen_ += 1
        if self.update_rule != "none":
            self._update_unified(run, modality, A, Y, seed)
            return
        self._run_stage(run, "stage2", stage_two, self.module_, modality, A, Y, lr=self.stage2_lr,
                        max_epochs=self.max_epochs, joint=False, seed=seed)

    def _update_unified(self, run, modality, A, Y, seed):
        self._run_stage(run, "stage4", stage_four, self.module_, self.meta_learner_, self.memory_,
                        modality, A, Y, rule=self.update_rule, lr=self.lr, seed=seed,
                        meta=self._meta_settings())

    def _fit_parallel(self, run, blocks, Y):
        """PCML: both plugs and S in one stage."""
        with seeded(self._seeds[0] + 1):
            for m in self.modality_order:
                self.module_.add_plug(m, blocks[m].shape[1])
        self.n_modalities_seen_ = 2
        self._run_stage(run, "parallel", parallel_stage, self.module_, blocks, Y,
                        self.modality_order[0], lr=self.lr, max_epochs=self.max_epochs,
                        seed=self._seeds[0])

    # ------------------------------------------------------------ inference
    def _hidden(self, modality, A):
        return hidden(self.module_, modality, A, self.device_)

    def _embed(self, modality, A, time):
        h = self._hidden(modality, A)
        return binary_codes(h) if self.codes == "sign" else h

    def transform_fused(self, X):
        """Unified binary codes sign(h_image + h_text) of items observed in both modalities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)

        Returns
        -------
        codes : ndarray of shape (n_samples, embedding_dim_)
            L2-normalised ±1 codes (ranked by dot product, i.e. by Hamming distance).
        """
        X_image, X_text, _ = self._validate_transform(X)
        return fused_codes(self._hidden("image", X_image), self._hidden("text", X_text))

    @validate_params({"X_modality": ["array-like"],
                      "modality": [StrOptions(set(MODALITIES))]},
                     prefer_skip_nested_validation=True)
    def class_probabilities(self, X_modality, modality):
        """S's classifier output for one modality's feature block.

        Parameters
        ----------
        X_modality : array-like of shape (n_samples, n_<modality>_features_)
        modality : {"image", "text"}

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes_)
            Softmax (single-label) or per-label sigmoid (multilabel) probabilities;
            columns follow ``classes_``.
        """
        check_is_fitted(self)
        A = self._check_modality_block(X_modality, modality, dtype=np.float32)
        return class_probabilities(self.module_, modality, A, self.device_, self.multilabel_)

    def score(self, X, y=None):
        """Mean of image→text and text→image retrieval quality over the rows of X; with
        ``database_codes="fused"`` each direction retrieves from the rows' fused codes.

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
        labels = check_labels(y, Z.shape[0], required=False)
        return fused_database_score(Z, self.transform_fused(X), labels)

    # ------------------------------------------------------------ protocol
    def __sklearn_is_fitted__(self):
        return getattr(self, "n_modalities_seen_", 0) >= 2

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags

    def __getstate__(self):
        """S, the plugs and M pickled through a device mapping (:mod:`._pickling`)."""
        return pack_modules(super().__getstate__())

    def __setstate__(self, state):
        super().__setstate__(unpack_modules(state))


__all__ = ["SequentialCrossModal"]
