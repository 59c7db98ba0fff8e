"""BinnedProcrustesEmbedder: one static model per time bin, aligned by Procrustes.

DCM-Binned of the diachronic spec (``diachronic_and_binned.md`` §5): the
method of Hamilton et al. for diachronic word embeddings, adapted to the
cross-modal case ("DCM-Binned w/ Align [Hamilton]" in the thesis).
"""

import copy
import datetime
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.linalg import orthogonal_procrustes
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .._layout import stack_modalities
from ..base import LAYOUT_CONSTRAINTS, CrossModalEmbedder
from ..binning import TimeBins, TimeBinWarning
from ..time import (TimeRangeWarning, external_stacklevel, is_datetime_like, time_use,
                    to_duration, to_time_axis)
from ..training import TrainingInterruptedWarning
from ._binned_fit import fit_in_order, fit_start, shares_a_start
from ._tempxnet import TempXNetEmbedder


def default_base_estimator():
    """The DCM static cross-modal model (spec §2.1), used per bin by default.

    ``x_* → tanh(1024) → tanh(D = 200) → L2`` per modality, the bidirectional
    triplet loss with the counterpart as positive and other-category items as
    negatives (margin 1), no lr decay, batch 64, 25 epochs (spec §4).  This is
    :class:`TempXNetEmbedder` with ``temporal_weight=0`` (no temporal term).
    Deviations from spec §4: Adam at lr 1e-3 instead of SGD momentum 0.9 at lr 5e-3
    (which gives every TICRC caption the same score with pair labels; see
    :class:`TempXNetEmbedder`), the triplet sum is divided by the batch size
    (``loss_reduction="sum_per_anchor"``; the plain sum at lr 5e-3 trained markedly
    worse in our runs) and the checkpoint is chosen by validation mAP; pass
    ``TempXNetEmbedder(temporal_weight=0, optimizer="sgd", lr=5e-3, loss_reduction="sum",
    selection_metric="valid_loss", ...)`` for the literal setting.

    Returns
    -------
    estimator : TempXNetEmbedder
    """
    return TempXNetEmbedder(temporal_weight=0.0, embedding_dim=200, dropout=0.0, max_epochs=25,
                            batch_size=64, optimizer="adam", lr=1e-3, lr_decay=0.0)


class BinnedProcrustesEmbedder(CrossModalEmbedder):
    r"""One static cross-modal model per time bin, chained by orthogonal Procrustes.

    DCM-Binned (spec ``diachronic_and_binned.md`` §5; P1 §4.4, thesis §5.3.3,
    Algorithm 2, eqs. 5.7–5.8), i.e. "DCM-Binned w/ Align": the method of
    Hamilton et al. for diachronic word embeddings, adapted to image–text
    pairs.

    1. **Bins** (§5.1).  The training timestamps are cut into contiguous bins
       t = 0..T−1 (:class:`~temporal_xmodal.binning.TimeBins`); bins holding
       fewer than ``min_bin_size`` items are merged with a neighbour, with a
       :class:`~temporal_xmodal.binning.TimeBinWarning`, so no item is ever
       dropped.  "Adjacent" bins are consecutive *retained* bins, whatever the
       gap between them (A14).
    2. **Per-bin models** (§5.2).  A clone of ``base_estimator`` is fitted on
       the rows of each bin only, giving :math:`(f_V^{(t)}, f_T^{(t)})`.  Each
       bin gets its own seed drawn from ``random_state``.  With
       ``init="independent"`` (the paper) each bin starts from its own random
       initialisation; with ``init="global"`` (the default for bases that can
       continue training) one model is first fitted on all training rows and
       every bin's model continues training from it on its own rows (as Kim
       et al. (2014) initialise each period's word vectors from the previous
       one's).  A neural base selects its checkpoint on a validation split of
       its own bin (its ``validation_fraction``; A13).
    3. **Alignment** (§5.3, eq. 12 / 5.7).  With the bin-t training items
       :math:`X^{(t)}` (A12) and the L2-normalised embeddings the models
       output, stacked images over texts (:math:`2N_t \times D`),

       .. math::

           M_t^{(t)} = \begin{bmatrix} f_V^{(t)}(X_V^{(t)}) \\
                                        f_T^{(t)}(X_T^{(t)}) \end{bmatrix},\qquad
           M_{t+1}^{(t)} = \begin{bmatrix} f_V^{(t+1)}(X_V^{(t)}) \\
                                            f_T^{(t+1)}(X_T^{(t)}) \end{bmatrix},

       i.e. the *same* bin-t items under model t and under model t+1 (the
       text's pairing, not Algorithm 2's line 15, which pairs different items;
       A6), and

       .. math::

           \Omega_{t\to t+1} = \arg\min_{\Omega^\top\Omega = I}
               \lVert M_t^{(t)} R_t\, \Omega - M_{t+1}^{(t)} \rVert_F
           = U V^\top,\quad U\Sigma V^\top = \mathrm{svd}\big((M_t^{(t)} R_t)^\top
               M_{t+1}^{(t)}\big).

    4. **Chaining** (§5.4, eq. 5.8).  The reference frame is bin 0:
       :math:`R_0 = I` and :math:`R_{t+1} = \Omega_{t\to t+1}^\top`, so that
       :math:`M_{t+1} \leftarrow M_{t+1}\,\Omega^\top` lands in the frame of
       bin 0 through the already aligned bin t.
    5. **Projection** (§5.5).  An item x at time s is embedded by the model of
       its bin b(s) and rotated into the common frame:
       :math:`\tilde e = f_*^{(b(s))}(x)\, R_{b(s)}` (still unit norm, R is
       orthogonal).  Instants outside the training range use the nearest bin
       and warn (:class:`~temporal_xmodal.TimeRangeWarning`); instants in a
       gap between retained bins belong to the bin whose interval holds them.

    ``transform`` projects each row at its own time; ``transform_image`` /
    ``transform_text`` need ``time=`` (a scalar or one value per row), which
    is how an item is projected into any bin.

    Interrupting: Ctrl-C during the fit stops the whole fit (no further bin
    is fitted) and warns once with a
    :class:`~temporal_xmodal.training.TrainingInterruptedWarning` naming how
    many bins were fitted out of how many.  The bins are fitted and kept in
    time order, so the fitted ones are bins 0..k−1: they are aligned as
    usual, the last may be partial (a neural model interrupted during its
    own training keeps its best weights so far), times in the unfitted bins
    use bin k−1's model, and ``training_interrupted_`` is True: the
    estimator is *usable but partial*.  Interrupted before any bin was
    fitted, it is left *unfitted* (no fitted attribute; ``transform``
    raises ``NotFittedError``).  With ``n_jobs`` the interrupt reaches the
    main thread, which stops dispatching bins and keeps the bins completed
    in order before it; bins still running are discarded: loky and Dask
    workers are cancelled, but a worker *thread* (threading backend) cannot
    be stopped and finishes its bin in the background.

    Parameters
    ----------
    base_estimator : CrossModalEmbedder or None, default=None
        The per-bin model, cloned for every bin.  ``None`` is the DCM static
        model (spec §2.1 and §5.2): ``TempXNetEmbedder(temporal_weight=0.0,
        embedding_dim=200, dropout=0.0, max_epochs=25, batch_size=64,
        optimizer="adam", lr=1e-3, lr_decay=0.0)`` (see
        :func:`default_base_estimator` for its deviations), i.e. two tanh layers
        1024 → 200 and the triplet loss with the counterpart as positive and
        other-category items as negatives.  Any estimator of the library
        works (e.g. ``CCACrossModal(n_components=k)``); its
        ``n_image_features`` is overwritten with the resolved value and, when
        it has a ``random_state`` parameter, so is that (one seed per bin).
        Every bin's model must have the same ``embedding_dim_``: give
        dimension-adaptive bases an explicit size (e.g. CCA's
        ``n_components``), else ``fit`` raises.  The per-bin models (and the model
        of ``init="global"``) run on the base's device: its ``device``
        parameter, ``"auto"`` (CUDA when available) for the default base;
        the binned estimator has no device of its own.  The alignment is
        NumPy/SciPy on the models' embeddings, which come back on the host.
    bins : int, float, str, timedelta or array-like, default=10
        As :class:`~temporal_xmodal.binning.TimeBins`: an int is a number of
        equal-width bins over the training range, a float a bin width in
        ``time_unit`` (``1/12`` for months on the default years axis: the
        paper's granularity), a duration (``"1M"``, ``pandas.Timedelta``,
        ``numpy.timedelta64``) a bin width converted to the axis, an array
        explicit edges: finite, strictly increasing numbers on the axis, or
        dates.  Explicit edges must cover every training time (first edge
        <= earliest, last edge >= latest): ``fit`` raises a ``ValueError``
        naming how many rows fall outside them, and where, rather than clip
        them into the end bins.  At ``transform``, times outside the edges use
        the nearest bin and warn (see step 5).
    min_bin_size : int, default=100
        Bins with fewer training items are merged with their smaller
        neighbour (with a ``TimeBinWarning``); 100 is the paper's monthly
        filter (§5.1), applied here as a merge instead of a deletion.  At
        least 2 items per bin are always enforced (a model needs 2 rows).
        When X has fewer rows than this, all rows form one bin (with a
        warning).  Base models that need labels need at least two classes in
        every bin: use bins large enough for that.
    alignment : {"procrustes", "none"}, default="procrustes"
        ``"none"`` keeps every :math:`R_t = I`: the unaligned control
        ("DCM-Binned" without alignment).
    align_on : {"both", "image", "text"}, default="both"
        The bin-t items' embeddings the rotation is fitted on: images stacked
        over texts (``"both"``, the paper's 2N × D, A12), or one modality's
        N × D only (not in the paper).  Where one modality's meaning is stable
        over time and the other's drifts, model t+1 reads bin t's drifting
        items in its own era's sense, and fitting the rotation on the stable
        modality keeps that disagreement out of the alignment.  On the main
        job's demo (pictures stable, wordings pass between categories; 3
        seeds) ``"image"`` gives mAP 0.831 against about 0.80; on TICRC 0.206
        against 0.207 (``docs/estimators/binned.md``).
    init : {"auto", "global", "independent"}, default="auto"
        Where each bin's model starts.  ``"independent"``: its own random
        initialisation, as in the paper (§5.2): each bin learns from its
        share of the data alone (with 10 bins a tenth), so where nothing
        changes over time the binned model is much weaker than one model on
        all the data (-0.09 mAP against its constant-time control in
        ``benchmarks/bench_demo_time.py``'s static world).  ``"global"``: a
        clone of the base is first fitted on all training rows (seed from
        ``random_state``), and every bin's model continues training from its
        weights on the bin's rows (``warm_start``, a fresh optimiser, the
        base's ``max_epochs`` more epochs, checkpoint chosen on the bin's own
        validation split), so each bin keeps what all periods share and
        learns what is particular to its own; the bins also start in one
        frame, and Procrustes corrects what they learned apart.  It costs
        one extra fit on all rows.  ``"auto"``: ``"global"`` when the base
        estimator has a ``warm_start`` parameter (the neural estimators),
        else ``"independent"`` (e.g. :class:`CCACrossModal`, which cannot
        continue a fit).
    n_jobs : int or None, default=None
        Bins fitted in parallel with :class:`joblib.Parallel` (``None``: one
        process, ``-1``: all cores).  The per-bin seeds do not depend on it.
        Threads by default: they start at once and share X, where loky's
        worker processes first import torch (4 neural bins on 2 cores:
        ``n_jobs=1`` 3.95 s, 2 threads 2.78 s, loky 6.22 s on its first use and
        2.52 s once its workers run; read more in the scaling guide).  A
        backend set with ``joblib.parallel_config(backend=...)`` (loky, Dask)
        is used instead.  Ctrl-C stops the whole fit (see "Interrupting" above).
    random_state : int, RandomState or None, default=None
        Draws one seed per bin for the base estimators that have a
        ``random_state`` parameter.
    n_image_features : int, "auto" or None, default=None
        Leading image columns of X; ``None`` splits the non-time columns in
        half; ``"auto"`` reads the blocks from the column names (see
        :func:`~temporal_xmodal.make_crossmodal_transformer`).
    time_unit : {"years", "months", "weeks", "days", "hours", "minutes", "seconds"}, default="years"
        Unit of the time axis: dates are mapped to it, numbers are read in
        it, and duration parameters given as numbers are in it.

    Attributes
    ----------
    bins_ : TimeBins
        The fitted bins (``bins_.edges_``, ``bins_.counts_``, ``bins_.centers_``).
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
        rotation; the second is never larger, spec §13).
    embedding_dim_ : int
        Shared dimension D of the bins' models.
    training_interrupted_ : bool
        Whether Ctrl-C stopped the fit before every bin was fitted.
    n_features_in_, feature_names_in_, n_image_features_, n_text_features_, time_range_
        See :class:`~temporal_xmodal.base.CrossModalEmbedder`.

    Notes
    -----
    The spec's best readings are the behaviour here: alignment items are the
    bin's training items (A12), the pairing is the text's (A6), the frame is
    bin 0, per-bin model selection uses the bin's own validation split
    (A13), and adjacent means consecutive retained bins (A14).  Alignment is
    only local, so distant bins stay poorly aligned (§5.6).

    Examples
    --------
    >>> from temporal_xmodal import CCACrossModal
    >>> from temporal_xmodal.estimators._binned import BinnedProcrustesEmbedder
    >>> from temporal_xmodal.datasets import make_temporal_crossmodal
    >>> X, y, info = make_temporal_crossmodal(600, return_info=True, random_state=0)
    >>> model = BinnedProcrustesEmbedder(CCACrossModal(n_components=8), bins=3,
    ...                                  min_bin_size=50,
    ...                                  n_image_features=info.n_image_features).fit(X)
    >>> model.rotations_.shape
    (3, 8, 8)
    >>> model.transform_image(X[:5, :info.n_image_features], time=2.0).shape
    (5, 8)
    """

    time_use = "inference"
    _parameter_constraints = {
        "base_estimator": [HasMethods(["fit", "transform_image", "transform_text"]), None],
        "bins": [Interval(Integral, 1, None, closed="left"), str, datetime.timedelta,
                 np.timedelta64,
                 Interval(Real, 0, None, closed="neither"), "array-like"],
        "min_bin_size": [Interval(Integral, 1, None, closed="left")],
        "alignment": [StrOptions({"procrustes", "none"})],
        "align_on": [StrOptions({"both", "image", "text"})],
        "init": [StrOptions({"auto", "global", "independent"})],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        **LAYOUT_CONSTRAINTS,
    }

    def __init__(self, base_estimator=None, bins=10, min_bin_size=100, alignment="procrustes",
                 align_on="both", init="auto", n_jobs=None, random_state=None,
                 n_image_features=None, time_unit="years"):
        self.base_estimator = base_estimator
        self.bins = bins
        self.min_bin_size = min_bin_size
        self.alignment = alignment
        self.align_on = align_on
        self.init = init
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.n_image_features = n_image_features
        self.time_unit = time_unit

    # ------------------------------------------------------------ the base
    def _base(self):
        """An unfitted clone of the per-bin model (the DCM static model by default)."""
        if self.base_estimator is None:
            return default_base_estimator()
        return clone(self.base_estimator)

    @property
    def _requires_labels(self):
        """Labels are required exactly when the per-bin model requires them."""
        try:
            return bool(self._base().__sklearn_tags__().target_tags.required)
        except AttributeError:  # a base without sklearn tags: let it decide
            return False

    # ------------------------------------------------------------------ fit
    def _fit(self, X_image, X_text, time, labels):
        n = len(time)
        self.bins_ = self._fit_bins(time, n)
        self.n_bins_ = self.bins_.n_bins_
        index = self.bins_.transform(time)
        rows = [np.flatnonzero(index == b) for b in range(self.n_bins_)]

        base = self._base()
        params = base.get_params(deep=False)
        seeds = check_random_state(self.random_state).randint(
            np.iinfo(np.int32).max, size=self.n_bins_ + 1)
        update = {}
        if "n_image_features" in params:
            update["n_image_features"] = self.n_image_features_
        shared = shares_a_start(self.init, base, type(self).__name__)
        if shared:
            # one model on all rows (the last seed: the bins' seeds do not depend on init)
            start = fit_start(base, update, seeds[-1], stack_modalities(X_image, X_text, time),
                              labels)
            if start is None:
                return self._interrupted(0, during=" (during the fit on all rows that every "
                                                   "bin starts from, init='global')")
            update["warm_start"] = True

        def bin_model(b):
            est = copy.deepcopy(start) if shared else clone(base)
            if "random_state" in params:
                update["random_state"] = int(seeds[b])
            return est.set_params(**update)

        jobs = ((bin_model(b), stack_modalities(X_image[r], X_text[r], time[r]),
                 None if labels is None else labels[r]) for b, r in enumerate(rows))
        fitted, self.training_interrupted_ = fit_in_order(jobs, self.n_jobs)
        if not fitted:
            return self._interrupted(0)
        self.bin_estimators_ = fitted

        dims = [int(est.embedding_dim_) for est in self.bin_estimators_]
        if len(set(dims)) != 1:
            raise ValueError(
                f"The per-bin models of {type(self).__name__} have different embedding "
                f"dimensions {dims} (bin sizes {self.bins_.counts_.tolist()}); the bins must "
                "share one space. Give the base estimator an explicit dimension that every "
                "bin supports (e.g. CCACrossModal(n_components=k) with k below the smallest "
                "bin), or use larger bins (min_bin_size)."
            )
        D = dims[0]
        self.embedding_dim_ = D
        self._align(X_image, X_text, time, rows[:len(fitted)], D)
        if self.training_interrupted_:
            self._interrupted(len(fitted))
        return self

    def _interrupted(self, n_fitted, during=""):
        """Warn once that Ctrl-C stopped the fit; with no bin fitted, forget the fit."""
        state = ("the estimator is left unfitted (fit again to train it)" if n_fitted == 0 else
                 "the estimator is usable but partial: the fitted bins are aligned (the "
                 "last one may have stopped early) and times in the unfitted bins use the "
                 f"last fitted bin's model (bin {n_fitted - 1}); training_interrupted_ = True")
        warnings.warn(
            f"{type(self).__name__}: training was interrupted (Ctrl-C) after {n_fitted} of "
            f"{self.n_bins_} time bins were fitted{during}; {state}.", TrainingInterruptedWarning,
            stacklevel=external_stacklevel())
        if n_fitted == 0:
            for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
                delattr(self, name)
        return self

    def _fit_bins(self, time, n):
        """Fit the TimeBins; tiny X (fewer rows than min_bin_size) gives one bin."""
        min_size = max(int(self.min_bin_size), 2)
        bins = self.bins
        if isinstance(bins, (str, datetime.timedelta, np.timedelta64)):
            bins = to_duration(bins, self.time_unit, name="bins")
        elif is_datetime_like(bins):  # edges as dates, mapped to the axis as the time column is
            bins = to_time_axis(bins, self.time_unit, name="bins (the edges)")
        # explicit edges must cover every training time: TimeBins raises otherwise
        if n >= min_size:
            return TimeBins(bins, min_bin_size=min_size).fit(time)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TimeBinWarning)
            bins = TimeBins(bins, min_bin_size=n).fit(time)
        warnings.warn(
            f"{type(self).__name__}: X has {n} rows, fewer than min_bin_size={min_size}; "
            f"all rows form a single time bin ({bins.n_bins_} bin(s)).",
            TimeBinWarning, stacklevel=3)
        return bins

    def _align(self, X_image, X_text, time, rows, D):
        """Chain the rotations R_t (eqs. 12 / 5.7 and 5.8).

        NumPy/SciPy on the host: each model embeds on its own device and returns
        NumPy; the SVDs are D × D.
        """
        T = len(self.bin_estimators_)
        R = np.tile(np.eye(D), (T, 1, 1))
        residuals = np.zeros((max(T - 1, 0), 2))
        for t in range(T - 1):
            r = rows[t]
            A = self._stacked(t, X_image[r], X_text[r], time[r]) @ R[t]
            B = self._stacked(t + 1, X_image[r], X_text[r], time[r])
            if self.alignment == "procrustes":
                omega, _ = orthogonal_procrustes(A, B)
            else:
                omega = np.eye(D)
            R[t + 1] = omega.T
            residuals[t] = np.linalg.norm(A - B), np.linalg.norm(A @ omega - B)
        self.rotations_ = R
        self.alignment_residuals_ = residuals

    def _stacked(self, b, X_image, X_text, time):
        """:math:`[f_V^{(b)}(X_V); f_T^{(b)}(X_T)]`, shape (2N, D), L2-normalised rows, or
        one modality's (N, D) block (``align_on``)."""
        if self.align_on != "both":
            return self._bin_embed(b, self.align_on, X_image if self.align_on == "image"
                                   else X_text, time)
        return np.vstack([self._bin_embed(b, "image", X_image, time),
                          self._bin_embed(b, "text", X_text, time)])

    def _bin_embed(self, b, modality, A, time):
        """Model b's own (unrotated, L2-normalised) embedding of one modality."""
        est = self.bin_estimators_[b]
        t = time if time_use(est) == "inference" else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TimeRangeWarning)  # we warn once, at our level
            if modality == "image":
                return est.transform_image(A, time=t)
            return est.transform_text(A, time=t)

    # ------------------------------------------------------------ transform
    def _embed(self, modality, A, time):
        # after an interrupted fit, the unfitted (later) bins use the last fitted one
        index = np.minimum(self.bins_.transform(time), len(self.bin_estimators_) - 1)
        Z = np.empty((A.shape[0], self.embedding_dim_))
        for b in np.unique(index):
            r = np.flatnonzero(index == b)
            Z[r] = self._bin_embed(b, modality, A[r], time[r]) @ self.rotations_[b]
        return Z

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        base = self._base()
        if "random_state" in base.get_params(deep=False):
            base.set_params(random_state=self.random_state)
        try:
            tags.non_deterministic = base.__sklearn_tags__().non_deterministic
        except AttributeError:
            pass
        return tags
