"""Warnings that point at the user's line, not at the library."""

def external_stacklevel():
    """The ``stacklevel`` that makes a warning point at the first caller outside the library.

    Frames of this package and of scikit-learn's output wrappers are skipped,
    so a warning raised deep inside ``transform`` names the user's line.

    Returns
    -------
    stacklevel : int
        For a :func:`warnings.warn` call made by the caller of this function.
    """
    import os
    import sys

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not (filename.startswith(package) or filename.endswith(
                os.path.join("sklearn", "utils", "_set_output.py"))):
            return level
        frame, level = frame.f_back, level + 1
    return level
