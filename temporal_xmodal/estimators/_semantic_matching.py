"""SemanticMatchingCrossModal: each item embedded as its class posteriors, one classifier
per modality (Rasiwasia et al., ACM MM 2010), with an optional time-interacted classifier."""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import StrOptions

from .._constraints import USE_TIME_CONSTRAINT
from .._device import resolve_device
from .._docs import fill_doc
from .._constraints import Interval
from ..base import LAYOUT_CONSTRAINTS, CrossModalEmbedder
from ..time import TimeEncoding
from ._neural import projection_times, training_times

__all__ = ["SemanticMatchingCrossModal", "interacted_design"]

#: Bytes of a dense row chunk of a sparse block embedded by a model fitted on dense X.
_CENTRED_CHUNK_BYTES = 32 * 2 ** 20


def interacted_design(A, bins, n_bins, weight):
    """The time-interacted design ``[A | weight · A ⊗ onehot(bin)]`` as a CSR matrix.

    Row ``i`` holds its features in the shared block and, scaled by ``weight``, in the block
    of its bin; a linear model on it has shared weights ``w`` and a deviation
    ``weight · v_b`` per bin, so an L2 penalty penalises a bin's deviation ``1 / weight²``
    times as much as the shared weights.

    Parameters
    ----------
    A : ndarray or scipy sparse CSR matrix of shape (n, d)
    bins : ndarray of int of shape (n,)
        Each row's bin, in ``[0, n_bins)``.
    n_bins : int
    weight : float

    Returns
    -------
    design : scipy.sparse.csr_matrix of shape (n, d * (1 + n_bins))
    """
    n, d = A.shape
    width = d * (1 + n_bins)
    if sp.issparse(A):
        return _sparse_interacted_design(A, bins, n_bins, weight)
    index = np.int32 if max(width, 2 * n * d) < np.iinfo(np.int32).max else np.int64
    data = np.empty((n, 2 * d), dtype=A.dtype)
    data[:, :d] = A
    np.multiply(A, weight, out=data[:, d:])
    columns = np.empty((n, 2 * d), dtype=index)
    columns[:, :d] = np.arange(d, dtype=index)
    columns[:, d:] = (d * (1 + np.asarray(bins, dtype=index)))[:, None] + np.arange(
        d, dtype=index)
    indptr = np.arange(0, 2 * d * n + 1, 2 * d, dtype=index)
    return sp.csr_matrix((data.ravel(), columns.ravel(), indptr), shape=(n, width))


def _sparse_interacted_design(A, bins, n_bins, weight):
    """:func:`interacted_design` of a CSR ``A``: its stored values in the shared block and,
    times ``weight``, in each row's bin block (``2 · nnz`` stored values)."""
    A = sp.csr_matrix(A)
    n, d = A.shape
    width = d * (1 + n_bins)
    index = np.int32 if max(width, 2 * A.nnz) < np.iinfo(np.int32).max else np.int64
    counts = np.diff(A.indptr)
    shift = d * (1 + np.repeat(np.asarray(bins, dtype=index), counts))
    shared = sp.csr_matrix((A.data, A.indices.astype(index), A.indptr.astype(index)),
                           shape=(n, width))
    deviation = sp.csr_matrix((A.data * weight, A.indices.astype(index) + shift,
                               A.indptr.astype(index)), shape=(n, width))
    return (shared + deviation).tocsr()


@fill_doc
class SemanticMatchingCrossModal(CrossModalEmbedder):
    r"""Semantic matching: every item embedded as its class posteriors.

    The class-posterior reference of cross-modal retrieval (semantic matching, SM;
    Rasiwasia et al., "A New Approach to Cross-Modal Multimedia Retrieval", ACM MM 2010):
    one logistic regression per modality is trained on the labels (one-vs-rest for a
    multilabel indicator), and an item is embedded as its class probabilities
    :math:`(P(c_1 \mid x), \dots, P(c_K \mid x))`.  With ``use_time=True`` each
    classifier is time-interacted (ours): its logit for class :math:`c` at time :math:`t`
    is :math:`w_c^\top x + \mathrm{time\_weight}\cdot v_{c,b(t)}^\top x + b_c`, a
    deviation :math:`v_{c,b}` per time bin under one L2 penalty (:func:`interacted_design`);
    ``use_time=False`` is Rasiwasia et al.'s static model.  The labels are required.

    Read more in the user guide: docs/estimators/semantic_matching.md.

    Parameters
    ----------
    embedding_dim : int or None, default=None
        Dimension of the common space.  ``None``: one per class (or label), the posteriors
        themselves.  An int ``D`` no larger than the number of classes: the posteriors
        projected on their ``D`` leading uncentred principal axes (both modalities'
        training rows pooled); a larger ``D`` raises a ``ValueError``.
    C : float, default=1.0
        Inverse strength of the L2 penalty of every logistic regression (scikit-learn's
        ``C``).
    time_bins : int, default=5
        Equal-width bins of the training times, each with its deviation (empty bins join
        a neighbour); used with ``use_time=True``.
    time_weight : float, default=0.5
        Scale of the per-bin copy of the features: a bin's deviation is penalised
        ``1 / time_weight**2`` times as much as the shared weights.
    standardize : bool, default=True
        Centre each feature and scale it to unit variance on the training rows, per
        modality, before its classifier (a sparse block is scaled only).
    max_iter : int, default=1000
        Iterations of each logistic regression's L-BFGS solver.
    class_weight : dict, "balanced" or None, default=None
        Passed to every logistic regression.
    use_time : bool, default=True
        ``True``: the time-interacted classifiers, each item read at its own time or at
        ``time=``.  ``False``: the constant-time control, Rasiwasia et al.'s static SM
        (every time set to one instant).  Read more in docs/time.md, "Does time pay?".
    device : str or torch.device, default="auto"
        Checked as every estimator's, then unused (scikit-learn runs on the CPU).
    random_state : int, RandomState or None, default=None
        Unused (L-BFGS is deterministic); accepted as every estimator's.
    {layout_parameters}

    Attributes
    ----------
    classes_ : ndarray
        The class labels (single-label ``y``) or the label columns (multilabel ``y``: their
        indices), in the order of the embedding's dimensions.
    embedding_dim_ : int
        Dimension of the common space: the number of classes (or labels), or
        ``embedding_dim``.
    components_ : ndarray of shape (n_classes, embedding_dim_) or None
        The principal axes the posteriors are projected on (``None`` with
        ``embedding_dim=None``).
    image_classifier_, text_classifier_ : LogisticRegression or OneVsRestClassifier
        Each modality's fitted classifier.
    n_iter_ : int
        The most L-BFGS iterations any of the logistic regressions ran.
    image_scaler_, text_scaler_ : StandardScaler or None
        Each modality's standardisation (``None`` without ``standardize``).
    time_encoding_ : TimeEncoding or None
        The one-hot bins of a time-interacted fit; ``None`` for the control, and when the
        training times fill a single bin (then the model is the static one).
    {uses_time_}
    {layout_attributes}

    Examples
    --------
    >>> from temporal_xmodal import SemanticMatchingCrossModal
    >>> from temporal_xmodal.datasets import make_temporal_crossmodal
    >>> X, y, info = make_temporal_crossmodal(500, return_info=True, random_state=0)
    >>> sm = SemanticMatchingCrossModal(n_image_features=info.n_image_features).fit(X, y)
    >>> sm.transform(X).shape == (500, 2 * len(sm.classes_))
    True
    """

    time_role = "inference"
    _accepts_sparse = True
    _parameter_constraints = {
        "embedding_dim": [Interval(Integral, 1, None, closed="left"), None],
        "C": [Interval(Real, 0, None, closed="neither")],
        "time_bins": [Interval(Integral, 1, None, closed="left")],
        "time_weight": [Interval(Real, 0, None, closed="neither")],
        "standardize": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "use_time": USE_TIME_CONSTRAINT,
        "device": [str, torch.device],
        "random_state": ["random_state"],
        **LAYOUT_CONSTRAINTS,
    }

    def __init__(self, embedding_dim=None, *, C=1.0, time_bins=5, time_weight=0.5,
                 standardize=True, max_iter=1000, class_weight=None, use_time=True,
                 device="auto", random_state=None, n_image_features=None, time_unit="years"):
        self.embedding_dim = embedding_dim
        self.C = C
        self.time_bins = time_bins
        self.time_weight = time_weight
        self.standardize = standardize
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.use_time = use_time
        self.device = device
        self.random_state = random_state
        self.n_image_features = n_image_features
        self.time_unit = time_unit

    def _classifier(self, multilabel):
        clf = LogisticRegression(C=self.C, max_iter=self.max_iter,
                                 class_weight=self.class_weight)
        return OneVsRestClassifier(clf) if multilabel else clf

    def _fit(self, X_image, X_text, time, labels):
        resolve_device(self.device)  # a bad device fails as it does for every estimator
        time = training_times(self, time)
        multilabel = labels.ndim == 2
        self.classes_ = (np.arange(labels.shape[1]) if multilabel else np.unique(labels))
        n_classes = len(self.classes_)
        if self.embedding_dim is not None and self.embedding_dim > n_classes:
            raise ValueError(
                f"embedding_dim={self.embedding_dim} exceeds the {n_classes} classes of y: "
                "semantic matching embeds an item as its class posteriors, one dimension "
                "per class (embedding_dim=None keeps them all).")
        self.time_encoding_ = None
        if self.uses_time_:
            encoding = TimeEncoding("onehot", n_bins=self.time_bins).fit(
                self.time_axis_.centre(time))
            if encoding.bins_.n_bins_ > 1:  # one bin (all times equal): the static model
                self.time_encoding_ = encoding
                self.time_axis_.bind_encoding(encoding)
        target = labels.astype(np.intp) if multilabel else labels
        gram = 0.0  # of the training posteriors, for the principal axes of embedding_dim
        for modality, A in (("image", X_image), ("text", X_text)):
            # a sparse block is scaled, not centred (centring would densify it)
            scaler = (StandardScaler(with_mean=not sp.issparse(A)).fit(A)
                      if self.standardize else None)
            setattr(self, f"{modality}_scaler_", scaler)
            design = self._design(modality, A, time)
            classifier = self._classifier(multilabel).fit(design, target)
            setattr(self, f"{modality}_classifier_", classifier)
            if self.embedding_dim is not None:
                P = classifier.predict_proba(design)
                gram = gram + P.T @ P
        self.components_ = None
        if self.embedding_dim is not None:  # uncentred principal axes of the posteriors
            _, vectors = np.linalg.eigh(gram)
            self.components_ = vectors[:, ::-1][:, :self.embedding_dim]
        self.embedding_dim_ = n_classes if self.components_ is None else self.embedding_dim
        self.n_iter_ = max(_iterations(self.image_classifier_), _iterations(self.text_classifier_))
        return self

    def _design(self, modality, A, time):
        """A modality's classifier input: standardised, time-interacted when fitted so."""
        scaler = getattr(self, f"{modality}_scaler_")
        if scaler is not None:
            A = scaler.transform(A)
        else:
            A = A.astype(np.float64) if sp.issparse(A) else np.asarray(A, dtype=np.float64)
        if self.time_encoding_ is None:
            return A
        bins = self.time_encoding_.bins_.transform(self.time_axis_.centre(time))
        return interacted_design(A, bins, self.time_encoding_.bins_.n_bins_, self.time_weight)

    def _embed(self, modality, A, time):
        time = projection_times(self, time, A.shape[0])
        classifier = getattr(self, f"{modality}_classifier_")
        scaler = getattr(self, f"{modality}_scaler_")
        if sp.issparse(A) and scaler is not None and scaler.with_mean:
            # fitted on dense (centred) features: a sparse block is centred by row chunks
            rows = max(1, _CENTRED_CHUNK_BYTES // (8 * A.shape[1]))
            P = np.vstack([classifier.predict_proba(self._design(
                modality, A[s:s + rows].toarray(), None if time is None else time[s:s + rows]))
                for s in range(0, A.shape[0], rows)])
        else:
            P = classifier.predict_proba(self._design(modality, A, time))
        components = getattr(self, "components_", None)
        return P if components is None else P @ components


def _iterations(classifier):
    """The most L-BFGS iterations of a fitted logistic regression (or one-vs-rest set)."""
    parts = getattr(classifier, "estimators_", [classifier])
    return int(max(np.max(getattr(c, "n_iter_", 0)) for c in parts))
