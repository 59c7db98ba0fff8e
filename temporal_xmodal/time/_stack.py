"""Warnings that point at the user's line, not at the library."""


def external_stacklevel():
    """The ``stacklevel`` that makes a warning point at the first caller outside the library.

    Frames of this package and of scikit-learn's wrappers (output containers,
    ``_fit_context``, ``validate_params``) are skipped, so a warning raised deep
    inside ``fit`` or ``transform`` names the user's line.

    Returns
    -------
    stacklevel : int
        For a :func:`warnings.warn` call made by the caller of this function.
    """
    import os
    import sys

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    wrappers = tuple(os.path.join("sklearn", *path) for path in (
        ("utils", "_set_output.py"), ("utils", "_param_validation.py"), ("base.py",)))
    frame, level = sys._getframe(1), 1
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not (filename.startswith(package) or filename.endswith(wrappers)):
            return level
        frame, level = frame.f_back, level + 1
    return level
