"""One modality embedded through a fitted estimator or a Pipeline ending in one: through a
Pipeline, ``X`` is whole rows as ``pipe.fit`` took them or one ``image`` / ``text`` block's
own columns (docs/search.md, "Search through a Pipeline")."""

import numpy as np
from scipy import sparse
import torch
from sklearn.utils._param_validation import HasMethods

from .._pipelines import final_estimator
from .._stacking import _preview, refuse_raw_columns
from ..base import CrossModalEmbedder

_METHODS = ("transform_image", "transform_text")


def _is_pipeline(estimator):
    return bool(getattr(estimator, "steps", None))


class EmbedderConstraint(HasMethods):
    """An object with ``transform_image`` and ``transform_text``, or a Pipeline ending in one."""

    def __init__(self):
        super().__init__(list(_METHODS))

    def is_satisfied_by(self, val):
        return all(callable(getattr(final_estimator(val), m, None)) for m in _METHODS)

    def __str__(self):
        return ("a fitted cross-modal estimator (an object implementing 'transform_image' and "
                "'transform_text') or a Pipeline ending in one")


#: The ``estimator`` constraint of the search and exploration functions.
EMBEDDER = [EmbedderConstraint()]


def estimator_device(estimator):
    """The torch device an estimator (or a Pipeline's last step) computes on: its net's, its
    ``device_``, its first bin model's; else the CPU."""
    estimator = final_estimator(estimator)
    device = getattr(getattr(estimator, "net_", None), "device", None)
    if device is None:
        device = getattr(estimator, "device_", None)
    if device is None and getattr(estimator, "bin_estimators_", None):
        return estimator_device(estimator.bin_estimators_[0])
    return torch.device(device) if device is not None else torch.device("cpu")


def _block_columns(pipe, modality):
    """The raw columns and fitted transformer of ``modality``'s block of a Pipeline's one
    ColumnTransformer; None otherwise."""
    if len(pipe.steps) != 2:
        return None
    for name, transformer, columns in getattr(pipe.steps[0][1], "transformers_", ()):
        if name == modality and transformer != "drop":
            return list(columns), transformer
    return None


def _through_pipeline(pipe, X, modality):
    """``(block, own_time)``: X read through the Pipeline's fitted preprocessing."""
    final = final_estimator(pipe)
    if len(pipe.steps) == 1:
        return X, None
    names_in = getattr(pipe, "feature_names_in_", None)
    n_in = getattr(pipe, "n_features_in_", None)
    columns = getattr(X, "columns", None)
    shape = getattr(X, "shape", None) if sparse.issparse(X) else np.shape(X)
    n_columns = shape[1] if shape is not None and len(shape) == 2 else None
    whole = (set(map(str, names_in)) <= set(map(str, columns))
             if columns is not None and names_in is not None else n_columns == n_in)
    if whole:
        Xt = pipe[:-1].transform(X)
        X_image, X_text, time = final._validate_transform(Xt)
        return (X_image if modality == "image" else X_text), time
    block = _block_columns(pipe, modality)
    if block is not None:
        raw, transformer = block
        if columns is not None:
            fits = list(map(str, columns)) == list(map(str, raw))
        elif sparse.issparse(X):
            raise TypeError(
                f"A sparse {modality} block cannot go through the Pipeline's column "
                f"selection ({_preview(raw)}, read by name from a DataFrame): pass whole "
                "rows as pipe.fit took them (sparse X is read as CSR), or the block as a "
                "DataFrame (X.toarray() in pandas.DataFrame(..., columns=...)).")
        else:
            fits = n_columns == len(raw)
            if fits:
                import pandas as pd  # a ColumnTransformer selecting by name implies pandas

                X = pd.DataFrame(np.asarray(X), columns=raw)
        if fits:
            A = X[raw] if transformer == "passthrough" else transformer.transform(X[raw])
            return (A if sparse.issparse(A) else np.asarray(A)), None
    step = pipe.steps[0][0]
    shape = f"{len(columns)} columns ({_preview(columns)})" if columns is not None else \
        f"shape {np.shape(X)}"
    own = (f", or the {modality} block's own columns ({_preview(block[0])})"
           if block is not None else "")
    raise ValueError(
        f"X has {shape}, which the Pipeline's preprocessing ({step!r}) cannot read: give "
        f"whole rows as pipe.fit took them ({n_in} columns"
        + (f": {_preview(names_in)}" if names_in is not None else "") + f"){own}.")


def embed(estimator, X, modality, time):
    """``X`` embedded in ``modality`` by an estimator or a Pipeline ending in one, ``time`` passed
    unchanged to ``transform_<modality>`` (``None`` through a Pipeline with whole rows: each
    row at its own time)."""
    final = final_estimator(estimator)
    transform = final.transform_image if modality == "image" else final.transform_text
    if _is_pipeline(estimator):
        X, own_time = _through_pipeline(estimator, X, modality)
        time = own_time if time is None else time
        if isinstance(final, CrossModalEmbedder):  # the Pipeline's own preprocessing: not
            return final._transform_modality(X, time, modality, preprocessed=True)  # pipe[-1]
        return transform(X, time=time)
    refuse_raw_columns(final, X, modality)
    return transform(X, time=time)
