"""BinnedProcrustesEmbedder: one static model per time bin, aligned by Procrustes."""

import warnings
from numbers import Integral

import numpy as np
import torch
from sklearn.base import clone
from sklearn.utils._param_validation import HasMethods, StrOptions

from ..._docs import fill_doc
from ..._constraints import Interval
from ...base import LAYOUT_CONSTRAINTS, CrossModalEmbedder
from ...base._embedder import output_dtype
from ...time import TimeBins, TimeBinWarning
from ...training import TrainingRun
from ...training._report import ReportsFit
from ..tempxnet import TempXNetEmbedder
from ..._constraints import USE_TIME_CONSTRAINT
from .._neural import projection_times, training_times
from ._alignment import bin_embedding, chain_rotations
from ._fit import fit_bin_models, fit_time_bins


def default_base_estimator():
    """The static cross-modal model fitted per bin by default: a
    :class:`~temporal_xmodal.estimators.TempXNetEmbedder` without its temporal term, D = 200,
    25 epochs (Semedo & Magalhães, ACM MM 2019), trained with Adam; docs/estimators/binned.md
    lists the paper's literal settings.

    Returns
    -------
    estimator : TempXNetEmbedder
    """
    return TempXNetEmbedder(temporal_weight=0.0, embedding_dim=200, dropout=0.0, max_epochs=25,
                            batch_size=64, optimizer="adam", lr=1e-3, lr_decay=0.0)


@fill_doc
class BinnedProcrustesEmbedder(ReportsFit, CrossModalEmbedder):
    r"""One static cross-modal model per time bin, chained by orthogonal Procrustes.

    DCM-Binned (Semedo & Magalhães, "Diachronic Cross-modal Embeddings", ACM MM 2019,
    §4.4; Semedo, thesis, Algorithm 2, Eqs. 5.7–5.8): the training times are cut into bins
    (:class:`~temporal_xmodal.time.TimeBins`), a clone of ``base_estimator`` is fitted on
    each bin's rows, and every bin's space is rotated into bin 0's frame by orthogonal
    Procrustes between adjacent bins.  An item at time s is embedded by the model of its
    bin b(s) and rotated: :math:`\tilde e = f^{(b(s))}(x)\, R_{b(s)}`.  Times outside the
    training range use the nearest bin and warn (:class:`~temporal_xmodal.TimeRangeWarning`).

    ``transform_image`` / ``transform_text`` need ``time=`` (a scalar or one value per
    row).  Ctrl-C stops the whole fit; the bins fitted so far are aligned and kept.

    Read more in the user guide: docs/estimators/binned.md.

    Parameters
    ----------
    base_estimator : CrossModalEmbedder or None, default=None
        The per-bin model, cloned for every bin (with the resolved ``n_image_features``
        and one seed per bin); ``None`` is :func:`default_base_estimator`.  Every bin's
        model must have the same ``embedding_dim_``, else ``fit`` raises.
    bins : int, float, str, timedelta or array-like, default=5
        As :class:`~temporal_xmodal.time.TimeBins`: a number of equal-width bins, a bin
        width (a float in ``time_unit``, or a duration such as ``"1M"``), or explicit edges
        that cover every training time.
    min_bin_size : int, default=100
        Bins with fewer training items (at least 2) are merged with their smaller
        neighbour, with a :class:`~temporal_xmodal.time.TimeBinWarning`.
    alignment : {"procrustes", "none"}, default="procrustes"
        ``"none"`` keeps every rotation the identity: the unaligned control.
    align_on : {"both", "image", "text"}, default="both"
        The bin-t items' embeddings the rotation is fitted on: images stacked over texts
        (``"both"``, the paper) or one modality only.
    init : {"auto", "global", "independent"}, default="auto"
        Where each bin's model starts: its own initialisation (``"independent"``, the
        paper), or one base fitted on all rows, continued on the bin's rows (``"global"``,
        needs a base with ``warm_start``); ``"auto"``: ``"global"`` when the base has
        ``warm_start``.
    fine_tune_epochs : int or None, default=3
        Epochs each bin's model continues the shared start for, at most the base's
        ``max_epochs`` (``None``: the base's ``max_epochs``).
    n_jobs : int or None, default=None
        Bins fitted in parallel with :class:`joblib.Parallel` (threads unless
        ``joblib.parallel_config`` names a backend).
    random_state : int, RandomState or None, default=None
        Draws one seed per bin for bases that have a ``random_state``.
    embedding_dim : int or None, default=None
        Dimension D of the common space, set on every bin's model; ``None`` keeps the
        base's (D = 200 for the default base, the DCM paper's).
    max_epochs : int or None, default=None
        Training epochs of every bin's model (and of the shared start); ``None`` keeps the
        base's.  A base without epochs raises a ``ValueError`` when it is set.
    device : str or torch.device, default="auto"
        Where the per-bin models compute: ``"auto"`` keeps the base's device, any other
        value overrides it.  The rotations are computed in NumPy.
    use_time : bool, default=True
        ``True``: bins over the training times, one model each (the published method).
        ``False``: the constant-time control, one bin with the base model on every row (a
        base with its own ``use_time`` is fitted with ``use_time=False``).  Read more in
        docs/time.md, "Does time pay?".
    {layout_parameters}

    Attributes
    ----------
    bins_ : TimeBins
        The fitted bins (``edges_``, ``counts_``, ``centers_``, in ``time_unit``).
    n_bins_ : int
        Number of retained bins T (after merging).
    bin_estimators_ : list of CrossModalEmbedder
        The fitted per-bin models, in time order (fewer than ``n_bins_`` after an
        interrupted fit).
    rotations_ : ndarray of shape (len(bin_estimators_), embedding_dim_, embedding_dim_)
        :math:`R_t`; ``rotations_[0]`` is the identity.
    alignment_residuals_ : ndarray of shape (len(bin_estimators_) - 1, 2)
        Each adjacent pair's Frobenius residual before and after the rotation.
    embedding_dim_ : int
        Shared dimension D of the bins' models.
    fit_report_ : FitReport
        One child report for the shared start (``"all rows"``) and one per fitted bin
        (``"bin 0"``, ...): :class:`~temporal_xmodal.training.FitReport`.
    training_interrupted_ : bool
        Whether Ctrl-C stopped the fit before every bin was fitted.
    {uses_time_}
    {layout_attributes}

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
        with TrainingRun(self, threads=False) as run:  # each bin's model sets its threads
            self._fit_bins(run, X_image, X_text, time, labels)
        return self

    def _fit_bins(self, run, X_image, X_text, time, labels):
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
        fitted, start = fit_bin_models(
            run, self._bin_base(), rows, X_image, X_text, time, labels, init=self.init,
            fine_tune_epochs=self.fine_tune_epochs,
            n_jobs=self.n_jobs, n_image_features=self.n_image_features_, owner=owner, bins=self.bins_)
        if not fitted:  # Ctrl-C before any bin was fitted: forget the fit
            n_bins = self.n_bins_
            for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
                delattr(self, name)
            run.partial(f"after 0 of {n_bins} time bins were fitted" + (
                " (during the fit on all rows that every bin starts from, init='global')"
                if fitted is None else ""),
                "the estimator is left unfitted (fit again to train it)")
            return
        self.bin_estimators_ = fitted
        starts = [] if start is None else [("all rows", getattr(start, "fit_report_", None))]
        self.fit_report_ = run.report(
            starts + [(f"bin {b}", getattr(est, "fit_report_", None))
                      for b, est in enumerate(fitted)])
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
        if run.stopped:
            run.partial(
                f"after {len(fitted)} of {self.n_bins_} time bins were fitted",
                "the estimator is usable but partial: the fitted bins are aligned (the last "
                "one may have stopped early) and times in the unfitted bins use the last "
                f"fitted bin's model (bin {len(fitted) - 1})")

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
