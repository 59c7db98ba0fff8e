"""BinnedProcrustesEmbedder: one static model per time bin, aligned by Procrustes."""

import warnings
from numbers import Integral

import numpy as np
import torch
from sklearn.base import clone
from sklearn.utils._param_validation import HasMethods, StrOptions

from ..._validation import Interval
from ...base import LAYOUT_CONSTRAINTS, LAYOUT_PARAMETERS_DOC, CrossModalEmbedder
from ...base._embedder import output_dtype
from ...time import TimeBins, TimeBinWarning
from ...training import FitReport
from ..._interrupts import report_interrupt
from .._tempxnet import TempXNetEmbedder
from ..._constraints import USE_TIME_CONSTRAINT
from .._neural import projection_times, training_times
from .._use_time import USE_TIME_ATTRIBUTES_DOC
from ._alignment import bin_embedding, chain_rotations
from ._fit import fit_bin_models, fit_time_bins


def default_base_estimator():
    """The static cross-modal model fitted per bin by default.

    :class:`~temporal_xmodal.estimators.TempXNetEmbedder` without its temporal
    term: ``x → tanh(1024) → tanh(200) → L2`` per modality, the bidirectional
    triplet loss with the counterpart as positive and other-category items as
    negatives (margin 1), batch 64, 25 epochs (Semedo & Magalhães, "Diachronic
    Cross-modal Embeddings", ACM MM 2019).  It trains with Adam at lr 1e-3, a
    loss divided by the batch size and a checkpoint chosen by validation mAP,
    where the paper uses SGD, a summed loss and the validation loss; the page
    lists the literal setting.

    Read more in the user guide: docs/estimators/binned.md.

    Returns
    -------
    estimator : TempXNetEmbedder
    """
    return TempXNetEmbedder(temporal_weight=0.0, embedding_dim=200, dropout=0.0, max_epochs=25,
                            batch_size=64, optimizer="adam", lr=1e-3, lr_decay=0.0)


class BinnedProcrustesEmbedder(CrossModalEmbedder):
    __doc__ = r"""One static cross-modal model per time bin, chained by orthogonal Procrustes.

    DCM-Binned (Semedo & Magalhães, "Diachronic Cross-modal Embeddings", ACM
    MM 2019, §4.4; Semedo, thesis, Algorithm 2, Eqs. 5.7–5.8): the training
    times are cut into bins (:class:`~temporal_xmodal.time.TimeBins`), a clone
    of ``base_estimator`` is fitted on each bin's rows, and every bin's space
    is rotated into bin 0's frame by orthogonal Procrustes between adjacent
    bins.  An item at time s is embedded by the model of its bin b(s) and
    rotated: :math:`\tilde e = f^{(b(s))}(x)\, R_{b(s)}`.  Times outside the
    training range use the nearest bin and warn
    (:class:`~temporal_xmodal.TimeRangeWarning`).

    ``transform`` projects each row at its own time; ``transform_image`` /
    ``transform_text`` need ``time=`` (a scalar or one value per row).
    Ctrl-C during the fit stops it as a whole: the bins fitted so far (in
    time order) are aligned and kept, ``training_interrupted_`` is True, and
    before any bin was fitted the estimator is left unfitted.

    Read more in the user guide: docs/estimators/binned.md.

    Parameters
    ----------
    base_estimator : CrossModalEmbedder or None, default=None
        The per-bin model, cloned for every bin; ``None`` is
        :func:`default_base_estimator`.  Its ``n_image_features`` is set to
        the resolved value and, when it has a ``random_state``, so is that
        (one seed per bin); ``embedding_dim``, ``max_epochs`` and ``device``
        below, when set, override its own.  Every bin's model must have the
        same ``embedding_dim_`` (give dimension-adaptive bases such as CCA an
        explicit ``embedding_dim``), else ``fit`` raises.
    bins : int, float, str, timedelta or array-like, default=5
        As :class:`~temporal_xmodal.time.TimeBins`, the same reading as the
        evaluation protocols' ``bins``: an int is a number of equal-width bins
        over the training range, a float a bin width in ``time_unit``, a
        duration (``"1M"``, ``"6M"``, ``pandas.Timedelta``,
        ``numpy.timedelta64``) a bin width converted to ``time_unit``, an array
        explicit edges (numbers on the axis or dates) that must cover every
        training time (``fit`` raises a ``ValueError`` naming the rows outside
        them).  Five bins buy the demo world +0.11 time-window mAP@50 at no
        category-mAP cost (docs/estimators/binned.md, "Defaults"); the paper's
        monthly bins are ``paper_settings``.
    min_bin_size : int, default=100
        Bins with fewer training items are merged with their smaller
        neighbour (with a :class:`~temporal_xmodal.time.TimeBinWarning`); at
        least 2 items per bin are enforced.  With fewer rows than this, all
        rows form one bin (with a warning).
    alignment : {"procrustes", "none"}, default="procrustes"
        ``"none"`` keeps every rotation the identity: the unaligned control.
    align_on : {"both", "image", "text"}, default="both"
        The bin-t items' embeddings the rotation is fitted on: images stacked
        over texts (``"both"``, the paper) or one modality only.
    init : {"auto", "global", "independent"}, default="auto"
        Where each bin's model starts: ``"independent"`` from its own random
        initialisation (the paper); ``"global"`` from one clone of the base
        fitted on all training rows, which every bin continues on its own rows
        (needs a base with ``warm_start``); ``"auto"``: ``"global"`` when the
        base has ``warm_start``, else ``"independent"``.
    fine_tune_epochs : int or None, default=3
        Epochs each bin's model trains on its own rows when it continues the
        shared start (``init="global"``, or ``"auto"`` with a base that has
        ``warm_start``), at most the base's ``max_epochs``; ``None``: as many as
        the base's ``max_epochs``.  Fewer
        keep the bins closer to the one model they start from, whose space they
        share, so that retrieval across bins loses less.  Ignored when each bin
        starts from its own initialisation.  The default keeps each bin near
        the shared start: with every bin continuing for the base's 25 epochs,
        a world whose content drifts lost 0.05 category mAP against the
        control (docs/estimators/binned.md, "Defaults").
    n_jobs : int or None, default=None
        Bins fitted in parallel with :class:`joblib.Parallel` (threads unless
        ``joblib.parallel_config`` names a backend).  The per-bin seeds do not
        depend on it.
    random_state : int, RandomState or None, default=None
        Draws one seed per bin for bases that have a ``random_state``.
    embedding_dim : int or None, default=None
        Dimension D of the common space, set on every bin's model.  ``None``
        keeps the base's: D = 200 for the default base, the width of the
        DCM paper (Semedo & Magalhães, ACM MM 2019), which also fixes
        :class:`~temporal_xmodal.DiachronicEmbedder`'s default.
    max_epochs : int or None, default=None
        Training epochs of every bin's model (each bin's own fit; with
        ``init="global"`` the shared start trains as many), set on the base.
        ``None`` keeps the base's (25 for the default base).  A base without
        epochs (e.g. :class:`~temporal_xmodal.CCACrossModal`, solved in closed
        form) raises a ``ValueError`` when it is set.
    device : str or torch.device, default="auto"
        Where the per-bin models compute, set on every bin's model.
        ``"auto"`` keeps the base's device, itself ``"auto"`` (CUDA when
        available) unless the base says otherwise; any other value (``"cpu"``,
        ``"cuda"``, ...) overrides it.  The Procrustes rotations are D × D and
        computed in NumPy.
    use_time : bool, default=True
        ``True``: bins over the training times, one model each (the published
        method).  ``False``: the constant-time control: one bin, the base
        model on every row (a base with its own ``use_time`` is fitted with
        ``use_time=False``).  Whether the bins pay on your data is a model
        selection: ``GridSearchCV(est, {"use_time": [True, False]},
        scoring=SCORERS["tmap@50"])`` (docs/time.md, "Does time pay?").""" + LAYOUT_PARAMETERS_DOC.replace(
    "duration parameters given as numbers", "bin widths given as numbers") + r"""

    Attributes
    ----------
    bins_ : TimeBins
        The fitted bins (``edges_``, ``counts_``, ``centers_``, in ``time_unit``).
    n_bins_ : int
        Number of retained bins T (after merging).
    bin_estimators_ : list of CrossModalEmbedder
        The fitted per-bin models, in time order (fewer than ``n_bins_``
        after an interrupted fit).
    rotations_ : ndarray of shape (len(bin_estimators_), embedding_dim_, embedding_dim_)
        :math:`R_t`; ``rotations_[0]`` is the identity.
    alignment_residuals_ : ndarray of shape (len(bin_estimators_) - 1, 2)
        For each adjacent pair, :math:`\lVert M_t R_t - M_{t+1}\rVert_F` and
        :math:`\lVert M_t R_t\,\Omega - M_{t+1}\rVert_F` (before and after the
        rotation; the second is never larger).
    embedding_dim_ : int
        Shared dimension D of the bins' models.
    fit_report_ : FitReport
        One child report for the model on all rows every bin continued (``"all
        rows"``, with ``init`` sharing a start) and one per fitted bin (``"bin 0"``,
        ...; a closed-form base's is empty):
        :class:`~temporal_xmodal.training.FitReport`.
    training_interrupted_ : bool
        Whether Ctrl-C stopped the fit before every bin was fitted.
""" + USE_TIME_ATTRIBUTES_DOC + r"""    n_features_in_, feature_names_in_, n_image_features_, n_text_features_, time_range_
        See :class:`~temporal_xmodal.base.CrossModalEmbedder`.

    Examples
    --------
    >>> from temporal_xmodal import BinnedProcrustesEmbedder, CCACrossModal
    >>> from temporal_xmodal.datasets import make_temporal_crossmodal
    >>> X, y, info = make_temporal_crossmodal(600, return_info=True, random_state=0)
    >>> model = BinnedProcrustesEmbedder(CCACrossModal(), bins=3, min_bin_size=50,
    ...                                  embedding_dim=8,
    ...                                  n_image_features=info.n_image_features).fit(X)
    >>> model.rotations_.shape
    (3, 8, 8)
    >>> model.transform_image(X[:5, :info.n_image_features], time=2.0).shape
    (5, 8)
    """

    time_role = "inference"
    _parameter_constraints = {
        "base_estimator": [HasMethods(["fit", "transform_image", "transform_text"]), None],
        "bins": TimeBins._parameter_constraints["bins"],
        "min_bin_size": [Interval(Integral, 1, None, closed="left")],
        "alignment": [StrOptions({"procrustes", "none"})],
        "align_on": [StrOptions({"both", "image", "text"})],
        "init": [StrOptions({"auto", "global", "independent"})],
        "fine_tune_epochs": [Interval(Integral, 1, None, closed="left"), None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "embedding_dim": [Interval(Integral, 1, None, closed="left"), None],
        "max_epochs": [Interval(Integral, 1, None, closed="left"), None],
        "device": [str, torch.device],
        "use_time": USE_TIME_CONSTRAINT,
        **LAYOUT_CONSTRAINTS,
    }

    def __init__(self, base_estimator=None, bins=5, min_bin_size=100, alignment="procrustes",
                 align_on="both", init="auto", fine_tune_epochs=3, n_jobs=None,
                 random_state=None, *,
                 embedding_dim=None, max_epochs=None, device="auto", use_time=True,
                 n_image_features=None, time_unit="years"):
        self.base_estimator = base_estimator
        self.bins = bins
        self.min_bin_size = min_bin_size
        self.alignment = alignment
        self.align_on = align_on
        self.init = init
        self.fine_tune_epochs = fine_tune_epochs
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.embedding_dim = embedding_dim
        self.max_epochs = max_epochs
        self.device = device
        self.use_time = use_time
        self.n_image_features = n_image_features
        self.time_unit = time_unit

    def _base(self):
        """An unfitted clone of the per-bin model (the default static model when None)."""
        if self.base_estimator is None:
            return default_base_estimator()
        return clone(self.base_estimator)

    def _bin_base(self):
        """The unfitted per-bin model with ``embedding_dim``, ``max_epochs`` and ``device``
        set where this estimator sets them (a base without the parameter raises)."""
        base = self._base()
        requested = {name: value for name, value in (
            ("embedding_dim", self.embedding_dim), ("max_epochs", self.max_epochs),
            ("device", None if isinstance(self.device, str) and self.device == "auto"
             else self.device)) if value is not None}
        params = base.get_params(deep=False)
        for name, value in requested.items():
            if name not in params:
                why = (" (it is solved in closed form: it trains no epochs)"
                       if name == "max_epochs" and "embedding_dim" in params else "")
                keep = "'auto'" if name == "device" else "None"
                raise ValueError(
                    f"{type(self).__name__}({name}={value!r}) sets the per-bin model's "
                    f"{name}, but the base estimator {type(base).__name__} has no {name} "
                    f"parameter{why}. Leave {name}={keep}, or configure the base estimator "
                    "itself.")
        if not self.uses_time_ and "use_time" in params:
            requested["use_time"] = False  # the control's base is its own control, by name
        return base.set_params(**requested)

    @property
    def _requires_labels(self):
        """Labels are required exactly when the per-bin model requires them."""
        try:
            return bool(self._base().__sklearn_tags__().target_tags.required)
        except AttributeError:  # a base without sklearn tags: let it decide
            return False

    # ------------------------------------------------------------------ fit
    def _fit(self, X_image, X_text, time, labels):
        owner = type(self).__name__
        trained = training_times(self, time)  # the constant-time control: one instant, one bin
        with warnings.catch_warnings():
            if not self.uses_time_:  # bins that leave training rows out raise on the real
                warnings.simplefilter("ignore", TimeBinWarning)  # times, as the model's would
                fit_time_bins(self.bins, self.min_bin_size, self.time_unit, time, owner)
            self.bins_ = fit_time_bins(self.bins, self.min_bin_size, self.time_unit, trained,
                                       owner)
        time = trained
        self.n_bins_ = self.bins_.n_bins_
        index = self.bins_.transform(time)
        rows = [np.flatnonzero(index == b) for b in range(self.n_bins_)]
        fitted, self.training_interrupted_, start = fit_bin_models(
            self._bin_base(), rows, X_image, X_text, time, labels, init=self.init,
            fine_tune_epochs=self.fine_tune_epochs,
            n_jobs=self.n_jobs, random_state=self.random_state,
            n_image_features=self.n_image_features_, owner=owner, bins=self.bins_)
        if fitted is None:
            return self._interrupted(0, during=" (during the fit on all rows that every "
                                               "bin starts from, init='global')")
        if not fitted:
            return self._interrupted(0)
        self.bin_estimators_ = fitted
        starts = [] if start is None else [("all rows", getattr(start, "fit_report_", None))]
        self.fit_report_ = FitReport.of_children(
            starts + [(f"bin {b}", getattr(est, "fit_report_", None))
                      for b, est in enumerate(fitted)], interrupted=self.training_interrupted_)
        dims = [int(est.embedding_dim_) for est in fitted]
        if len(set(dims)) != 1:
            raise ValueError(
                f"The per-bin models of {owner} have different embedding dimensions {dims} "
                f"(bin sizes {self.bins_.counts_.tolist()}); the bins must share one space. "
                f"Set an explicit dimension that every bin supports ({owner}(embedding_dim=k) "
                "with k below the smallest bin for a CCACrossModal base), or use larger bins "
                "(min_bin_size).")
        self.embedding_dim_ = dims[0]
        self.rotations_, self.alignment_residuals_ = chain_rotations(
            fitted, X_image, X_text, time, rows[:len(fitted)], self.embedding_dim_,
            alignment=self.alignment, align_on=self.align_on)
        if self.training_interrupted_:
            self._interrupted(len(fitted))
        return self

    def _interrupted(self, n_fitted, during=""):
        """Warn once that Ctrl-C stopped the fit; with no bin fitted, forget the fit."""
        state = ("the estimator is left unfitted (fit again to train it)" if n_fitted == 0 else
                 "the estimator is usable but partial: the fitted bins are aligned (the "
                 "last one may have stopped early) and times in the unfitted bins use the "
                 f"last fitted bin's model (bin {n_fitted - 1}); training_interrupted_ = True")
        n_bins = self.n_bins_
        if n_fitted == 0:
            for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
                delattr(self, name)
        report_interrupt(
            f"{type(self).__name__}: training was interrupted (Ctrl-C) after {n_fitted} of "
            f"{n_bins} time bins were fitted{during}; {state}.")
        return self

    # ------------------------------------------------------------ transform
    def _embed(self, modality, A, time):
        # after an interrupted fit, the unfitted (later) bins use the last fitted one
        time = projection_times(self, time, A.shape[0])
        index = np.minimum(self.bins_.transform(time), len(self.bin_estimators_) - 1)
        Z = np.empty((A.shape[0], self.embedding_dim_), dtype=output_dtype(A))
        for b in np.unique(index):
            r = np.flatnonzero(index == b)
            Z[r] = bin_embedding(self.bin_estimators_[b], modality, A[r], time[r]) \
                @ self.rotations_[b]
        return Z

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]  # see _embed
        base = self._base()
        if "random_state" in base.get_params(deep=False):
            base.set_params(random_state=self.random_state)
        try:
            tags.non_deterministic = base.__sklearn_tags__().non_deterministic
        except AttributeError:
            pass
        return tags
