"""SequentialCrossModal: modality-by-modality learning with a meta-learner (SCML).

Spec ``sequential_ticrc_cca.md`` §A (Song & Tan).  This module holds the
public estimator (parameters, entry points); inference is in
:mod:`temporal_xmodal.estimators._sequential_inference`, the stages in
:mod:`temporal_xmodal.estimators._sequential_stages`, their skorch nets in
:mod:`temporal_xmodal.training._sequential`, the modules in
:mod:`temporal_xmodal.nn.sequential`, eq. 10 in
:mod:`temporal_xmodal.losses.classification`.
"""

import contextlib
import io
import pickle
from numbers import Integral, Real

import torch
from sklearn.utils._param_validation import Interval, StrOptions
from skorch.utils import get_map_location

from .._validation import check_labels
from ..base import CrossModalEmbedder
from ..losses.classification import REDUCTIONS, SINGLE_LABEL_LOSSES
from ..nn.sequential import MODALITIES
from ._neural import COMMON_CONSTRAINTS
from ._sequential_inference import SequentialInference
from ._sequential_stages import (
    SequentialStages,
    StageInterrupted,
    TrainingInterruptedWarning,
    check_label_values,
)


class SequentialCrossModal(SequentialStages, SequentialInference, CrossModalEmbedder):
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
    stays a drop-in replacement).  The labels must recur across items: with
    pair identifiers as labels (every class once, as TICRC's) items of new
    pairs belong to no learnt class and are ranked at chance, so the first
    call warns.

    Interrupting: Ctrl-C during a stage stops the whole fit (the later
    stages are not run) and warns with a :class:`TrainingInterruptedWarning`
    instead of raising.  Interrupted in Stage I, the estimator is left
    unfitted (the next ``fit``/``partial_fit`` starts over); interrupted in a
    later stage, it is fitted and usable but partial: the interrupted stage
    keeps the weights it had reached (``nets_`` and ``stage_seconds_`` show
    how far training got).

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
        Where S, the plugs, M and every stage net compute ("auto": CUDA when
        available), resolved into ``device_`` at each call of the sequence.
        A model pickled on a GPU loads on a machine without one (on the CPU,
        with skorch's ``DeviceWarning``).
    random_state : int, RandomState or None, default=None
        Seeds initialisation, dropout, batches and the memory / meta-train
        sampling; same seed → same codes on CPU.
    verbose : int, default=0
        > 0 prints each stage's skorch epoch table.
    callbacks : list of skorch callbacks or None, default=None
        Extra callbacks given to every stage's net (they see each stage's
        ``on_train_begin`` … ``on_train_end``).
    keep_training_state : bool, default=False
        Keep, in each stage net of ``nets_``, what only more training of that
        net would need: its optimiser state, its batch generator and, for
        Stages III/IV, M's LSTM state over the coordinates of θ (8 MB per stage
        at the defaults).
        ``False`` drops them when the stage ends, so a pickled SCML holds
        the model, M, the memory and the stage histories only; inference,
        :meth:`transform_fused` and further :meth:`partial_fit` calls need
        nothing more (every stage builds a fresh net).
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
        ``old_loss``, ``new_loss``, ``update_l1`` per batch).  Their optimiser
        states are dropped unless ``keep_training_state``.
    stage_seconds_ : dict of str -> float
        Wall time of each stage.
    device_ : str
        The device the models are on (``device`` resolved).
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
    #: S, the plugs and M run in float32: features beyond its range are rejected (as the
    #: other networks do) at fit, partial_fit and every transform.
    _float32_features = True
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
        """Run the whole sequence (or the parallel paradigm) on the two blocks of X.

        Equals ``partial_fit(X, y)`` twice (same seed → same model).

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
        self._check_order()
        self._first_as_block = False
        Y = self._learn_categories(self._y_fit, labels)
        self._start()
        blocks = {"image": X_image, "text": X_text}
        first, second = self.modality_order
        with self._interruptible():
            if self.paradigm == "parallel":
                self._fit_parallel(blocks, Y)
            else:
                self._fit_first(first, blocks[first], Y)
                self._fit_second(second, blocks[second], Y)
        return self

    def partial_fit(self, X, y=None, modality=None):
        """Learn the next modality of ``modality_order``.

        The first call runs Stage I on the first modality and keeps only the
        episodic memory of it; the second runs Stages II–IV on the second.
        Later calls bring more items of the second modality: S is updated
        as in Stage IV (learned optimiser or SGD) on the memory and the new
        items (with ``update_rule="none"`` only the second plug trains).
        Works on an unpickled estimator too.

        Parameters
        ----------
        X : array-like
            Either the full layout ``[image | text | time]`` (``modality=None``:
            the block of the next modality is used), or the feature block of
            one modality alone (``modality`` given; no time column).  The
            calls may mix both forms; the block widths must agree.
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
        if self.paradigm == "parallel":
            raise ValueError("paradigm='parallel' trains both modalities at once: use fit.")
        expected = self.modality_order[min(stage, 1)]
        if modality is not None and modality != expected:
            raise ValueError(f"The next modality in modality_order={self.modality_order!r} "
                             f"is {expected!r}; got modality={modality!r}.")
        if stage == 0:
            self._first_as_block = modality is not None
        A = (self._next_block_of_layout(X, expected, stage) if modality is None
             else self._next_block(X, expected, stage))
        if stage == 0:
            check_label_values(y)
            labels = check_labels(y, A.shape[0], required=True,
                                  estimator_name=type(self).__name__)
            Y = self._learn_categories(y, labels)
            self._start()
        else:
            Y = self._labels_of_next(y, A.shape[0])
        with self._interruptible():
            if stage == 0:
                self._fit_first(expected, A, Y)
            elif stage == 1:
                self._fit_second(expected, A, Y)
            else:
                self._update_more(expected, A, Y)
        return self

    @contextlib.contextmanager
    def _interruptible(self):
        """Turn a stage's Ctrl-C into a :class:`TrainingInterruptedWarning`."""
        try:
            yield
        except StageInterrupted as exc:
            self._warn_interrupted(exc.stage)

    def _check_order(self):
        order = tuple(self.modality_order)
        if sorted(order) != sorted(MODALITIES):
            raise ValueError(f"modality_order must hold 'image' and 'text' once each; "
                             f"got {self.modality_order!r}.")

    # ------------------------------------------------------------ transform
    def __sklearn_is_fitted__(self):
        return getattr(self, "n_modalities_seen_", 0) >= 2

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags

    # ------------------------------------------------------------- pickling
    def __getstate__(self):
        """S, the plugs and M pickled through a device mapping, so that a model fitted on a
        GPU loads without one: as the stage net that holds them (skorch maps its modules),
        else apart."""
        state = dict(super().__getstate__())
        held, apart = {}, {}
        for key in _DEVICE_MODULES:
            module = state.get(key)
            if module is None:
                continue
            owner = _holder(state.get("nets_") or {}, module)
            if owner is None:
                apart[key] = module
            else:
                held[key] = owner
            del state[key]
        if held:
            state["_modules_in_nets"] = held
        if apart:
            state["_device_modules"] = pickle.dumps(apart)
        return state

    def __setstate__(self, state):
        device = state.get("device_")
        for key, (name, attr) in state.pop("_modules_in_nets", {}).items():
            state[key] = getattr(state["nets_"][name], attr)  # mapped by skorch
        blob = state.pop("_device_modules", None)
        if blob is not None:
            # skorch's choice, as for the stage nets: the CPU (with a DeviceWarning) when
            # the saving device is CUDA and none is available
            state.update(_DeviceUnpickler(io.BytesIO(blob), get_map_location(device)).load())
        if (device is not None and torch.device(device).type == "cuda"
                and not torch.cuda.is_available()):
            state["device_"] = "cpu"  # where the nets (and the modules) were loaded
        super().__setstate__(state)


#: The fitted torch modules of an SCML, pickled through a device mapping (``__getstate__``).
_DEVICE_MODULES = ("module_", "meta_learner_")


def _holder(nets, module):
    """``(stage, attribute)`` of the latest stage net holding ``module`` (None if none does)."""
    for name, net in reversed(list(nets.items())):
        for attr in ("target", "module_"):
            if getattr(net, attr, None) is module:
                return name, attr
    return None


class _DeviceUnpickler(pickle.Unpickler):
    """Unpickler that loads every tensor storage onto ``map_location``.

    A pickled tensor's storage is rebuilt by ``torch.storage._load_from_bytes``
    (``torch.load`` of its bytes, on the saving device); here it is loaded with
    ``map_location`` instead (skorch loads its nets the same way).
    """

    def __init__(self, file, map_location):
        super().__init__(file)
        self.map_location = map_location

    def find_class(self, module, name):
        if (module, name) == ("torch.storage", "_load_from_bytes"):
            return lambda b: torch.load(io.BytesIO(b), map_location=self.map_location,
                                        weights_only=True)
        return super().find_class(module, name)


__all__ = ["SequentialCrossModal", "TrainingInterruptedWarning"]
