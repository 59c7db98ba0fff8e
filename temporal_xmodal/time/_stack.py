"""Warnings that point at the user's line, not at the library."""

from .._warnings import user_stacklevel


def external_stacklevel():
    """The ``stacklevel`` that makes a warning point at the first caller outside the library.

    Frames of this package and of the machinery between it and the user
    (scikit-learn's Pipeline and searches, joblib, ...) are skipped, so a warning
    raised deep inside ``fit`` or ``transform`` names the user's line; see
    :func:`temporal_xmodal._warnings.user_stacklevel`, which this delegates to
    (new warning sites call :func:`temporal_xmodal._warnings.warn`).

    Returns
    -------
    stacklevel : int
        For a :func:`warnings.warn` call made by the caller of this function.
    """
    return max(user_stacklevel() - 1, 1)  # counted from this function's caller
