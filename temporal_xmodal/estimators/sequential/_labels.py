"""The class labels of SCML: fixed by the first call of the sequence
(:func:`learn_categories`), every later call mapped onto them (:func:`labels_of_next`)."""


import numpy as np

from ..._input import check_labels
from ..._warnings import warn

#: Warning of a first call whose every class has one item (y = pair identifiers).
PAIR_LABELS_MESSAGE = (
    "every class of y has exactly one item ({n} classes for {n} items): y looks like pair "
    "identifiers.  SequentialCrossModal learns from shared class labels only, with no "
    "image–text pairing, so it cannot place items of classes it has not seen: retrieval of "
    "new pairs will be at chance.  Give it labels that recur across items (categories), "
    "or use an estimator that learns from the pairing.")


def check_label_values(y):
    """Reject labels that cannot be ordered into classes: ``None`` (a ``ValueError`` naming the
    rows) or mixed types (a ``TypeError``)."""
    if y is None:
        return
    y = np.asarray(y, dtype=object) if not hasattr(y, "dtype") else np.asarray(y)
    if y.dtype.kind != "O":
        return
    missing = np.flatnonzero(np.equal(y.ravel(), None))
    if missing.size:
        raise ValueError(
            f"y holds {missing.size} missing label(s) (None), e.g. at position(s) "
            f"{missing[:5].tolist()}; every item of SequentialCrossModal needs a class "
            "label.")
    try:
        np.unique(y)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in y.ravel()})
        raise TypeError(f"y mixes label types {kinds} that cannot be ordered into "
                        "classes; give labels of a single type.") from None


def label_matrix(codes, n_classes):
    """(n, C) float32 indicator of integer codes (1-D) or of a boolean indicator (2-D)."""
    codes = np.asarray(codes)
    if codes.ndim == 2:
        return codes.astype(np.float32)
    return np.eye(n_classes, dtype=np.float32)[codes]


def learn_categories(y, labels):
    """The categories of the first modality's labels (``y`` as given, ``labels`` validated):
    ``(multilabel, classes, n_classes, Y)``, ``Y`` the float32 indicator; warns when every
    class has one item (y looks like pair identifiers)."""
    multilabel = labels.ndim == 2
    if multilabel:
        classes, n_classes = None, labels.shape[1]
    else:
        classes = np.unique(np.asarray(y).ravel())
        n_classes = len(classes)
        if n_classes > 1 and n_classes == len(labels):
            warn(PAIR_LABELS_MESSAGE.format(n=n_classes), UserWarning)
    return multilabel, classes, n_classes, label_matrix(labels, n_classes)


def labels_of_next(y, n_samples, *, multilabel, classes, n_classes):
    """The float32 label indicator of a later call, over the first call's categories."""
    check_label_values(y)
    check_labels(y, n_samples, required=False, estimator_name="SequentialCrossModal")
    if y is None:
        raise ValueError("SequentialCrossModal.partial_fit requires y (class labels "
                         "or a multilabel indicator) with every modality.")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if multilabel:
        if y.ndim != 2 or y.shape[1] != n_classes:
            raise ValueError(f"y must be a multilabel indicator with {n_classes} "
                             f"columns, as with the first modality; got shape {y.shape}.")
        return y.astype(np.float32)
    if y.ndim != 1:
        raise ValueError("y must hold class labels (1-D), as with the first modality; "
                         f"got shape {y.shape}.")
    unseen = ~np.isin(y, classes)
    if unseen.any():
        raise ValueError(f"y holds {int(unseen.sum())} label(s) of classes not seen with "
                         f"the first modality: {np.unique(y[unseen])[:5].tolist()}.")
    return label_matrix(np.searchsorted(classes, y), n_classes)
