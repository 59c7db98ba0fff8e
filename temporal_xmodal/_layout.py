"""The column-block data layout ``X = [image features | text features | time]``.

Every estimator of the library receives one 2-D ``X`` whose leading
``n_image_features`` columns are image features, whose next columns are text
features and whose **last column is the timestamp** (see ``DESIGN.md``, "Data
layout").  This module holds the helpers that build and split that layout.
"""

import numpy as np

from ._validation import check_time_argument


def stack_modalities(X_image, X_text, time=None):
    """Build ``X = [X_image | X_text | time]`` in the library's column layout.

    Parameters
    ----------
    X_image : array-like of shape (n_samples, n_image_features)
        Image features.
    X_text : array-like of shape (n_samples, n_text_features)
        Text features, row-aligned with ``X_image`` (row ``i`` of both is
        the same item).
    time : array-like of shape (n_samples,) or scalar, default=None
        Timestamp of each item on the user's own scale (fractional years,
        day index, ...).  A scalar is broadcast; ``None`` gives a constant
        column of zeros (for static data).

    Returns
    -------
    X : ndarray of shape (n_samples, n_image_features + n_text_features + 1)
        The stacked float64 matrix.  Pass ``n_image_features=X_image.shape[1]``
        to the estimators.

    Examples
    --------
    >>> import numpy as np
    >>> from temporal_xmodal import stack_modalities
    >>> X = stack_modalities(np.ones((3, 2)), np.zeros((3, 4)), [1990, 1991, 1992])
    >>> X.shape
    (3, 7)
    """
    X_image = _as_2d_float(X_image, "X_image")
    X_text = _as_2d_float(X_text, "X_text")
    n = X_image.shape[0]
    if X_text.shape[0] != n:
        raise ValueError(
            f"X_image and X_text must have the same number of rows; got {n} and "
            f"{X_text.shape[0]}."
        )
    t = np.zeros(n) if time is None else check_time_argument(time, n)
    return np.hstack([X_image, X_text, t[:, None]])


def _as_2d_float(A, name):
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-D; got {A.ndim}-D with shape {A.shape}.")
    return A
