"""Every warning of the library, at the user's line and naming the estimator the user built.

:func:`warn` walks the stack outward to the first frame that is neither this package nor
the machinery between it and the user (scikit-learn, joblib, skorch, torch, NumPy, pandas,
Python's own library); without one, scikit-learn's or joblib's line that called the
library's estimator, else the outermost frame of the library.  Python's filters apply
unchanged.  Read more in docs/index.md ("Bad input").
"""

import os
import sys
import sysconfig
import warnings

from sklearn.exceptions import ConvergenceWarning

__all__ = ["BusyMachineWarning", "CheckpointWarning", "StillImprovingWarning", "user_stacklevel", "warn",
           "warn_if_busy"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
#: The packages between the library and the user's line.
_PLUMBING_PACKAGES = ("sklearn", "joblib", "skorch", "torch", "threadpoolctl", "numpy",
                      "pandas", "scipy", "loky")
#: Those that run a user's fit in a worker (GridSearchCV, cross_validate, Pipeline, Parallel):
#: without a user's frame, their line that called the library's estimator stands for it.
_RUNNERS = ("sklearn", "joblib")
#: Their decorators' wrappers (``_fit_context``, ``validate_params``, ``set_output``,
#: ``_deprecate_positional_args``): a frame between the call and the method, not the call.
_WRAPPERS = ("wrapper", "wrapped", "inner_f")


class BusyMachineWarning(UserWarning):
    """A fit on several threads starts on a machine that other work keeps busy.

    Warned once per fit start; ``torch.set_num_threads(1)`` keeps the fit steady.

    Read more in the user guide: docs/scaling.md ("A busy machine").
    """


def warn_if_busy(name, threads, load=None, cores=None):
    """Warn (:class:`BusyMachineWarning`) and return True when a fit of ``name`` asks for
    ``threads`` > 1 on a machine whose 1-minute ``load`` average exceeds its ``cores`` plus
    those threads (``None``: this machine's; no warning where it cannot be read)."""
    try:
        load = os.getloadavg()[0] if load is None else load
    except (AttributeError, OSError):  # pragma: no cover - Windows: no load average
        return False
    cores = (os.cpu_count() or 1) if cores is None else cores
    if threads <= 1 or load <= cores + threads:
        return False
    warn(f"{name}: the machine is busy (1-minute load average {load:.1f} on {cores} cores) and "
         f"this fit runs {threads} torch threads; beside other work a fit on several threads "
         "can run many times slower than on one (docs/scaling.md, \"A busy machine\"). "
         "torch.set_num_threads(1) before fitting keeps it steady.", BusyMachineWarning)
    return True


class StillImprovingWarning(ConvergenceWarning):
    """A neural fit ended while its validation figure was still improving.

    Warned by ``fit`` when the best validation figure rose by more than a tolerance over
    the last epochs: raising ``max_epochs`` would likely still pay.  A
    :class:`~sklearn.exceptions.ConvergenceWarning`.

    Read more in the user guide: docs/training.md.
    """


class CheckpointWarning(UserWarning):
    """A neural fit's validation figure could not choose the checkpoint.

    Warned by ``fit`` when the figure was the same or NaN at every epoch (the last epoch's
    weights are kept), or NaN at some epochs (no candidates); ``fit_report_.kept_why``
    says the same.

    Read more in the user guide: docs/training.md.
    """


def _directories(packages=_PLUMBING_PACKAGES):
    """Directories whose frames are machinery, not the user's (per call: later imports
    count)."""
    dirs = []
    for name in packages:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            dirs.append(os.path.dirname(os.path.abspath(path)) + os.sep)
    return tuple(dirs)


_STDLIB = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep


def _is_library(filename):
    return filename.startswith(_PACKAGE)


def _is_plumbing(filename, dirs):
    if filename.startswith("<frozen "):
        return True
    if filename.startswith(dirs):
        return True
    return filename.startswith(_STDLIB) and not any(
        part in filename for part in ("site-packages", "dist-packages"))


def _is_library_estimator(obj):
    """Whether ``obj`` is an estimator of this library (read by its class's module and
    methods: this layer imports no estimator)."""
    cls = type(obj)
    return (cls.__module__.startswith("temporal_xmodal.") and hasattr(cls, "fit")
            and hasattr(cls, "get_params"))


def _walk(frame):
    """``(target frame, estimators on the stack outward)``: the frame a warning points at
    (the module docstring's rule; None outside the library)."""
    dirs = _directories()
    outermost, estimators = None, []
    while frame is not None:
        filename = _filename(frame)
        if _is_library(filename):
            outermost = frame
            owner = frame.f_locals.get("self")
            if _is_library_estimator(owner) and (
                    not estimators or estimators[-1] is not owner):
                estimators.append(owner)
        elif not _is_plumbing(filename, dirs):
            return frame, estimators
        frame = frame.f_back
    if outermost is None or not _is_library_estimator(outermost.f_locals.get("self")):
        return outermost, estimators  # no library frame, or the library's own job
    runners = _directories(_RUNNERS)
    caller = outermost.f_back
    while (caller is not None and caller.f_code.co_name in _WRAPPERS
           and _filename(caller).startswith(runners)):
        caller = caller.f_back
    if caller is not None and _filename(caller).startswith(runners):
        return caller, estimators  # e.g. sklearn's `estimator.fit(X_train, y_train)`
    return outermost, estimators


def _filename(frame):
    filename = frame.f_code.co_filename
    # "<frozen runpy>", "<string>" stay as they are
    return filename if filename.startswith("<") else os.path.abspath(filename)


def user_stacklevel():
    """The ``stacklevel`` (int) that makes the caller's :func:`warnings.warn` call point
    where :func:`warn` would."""
    frame, level = sys._getframe(1), 1
    target, _ = _walk(frame)
    while frame is not None and frame is not target:
        frame, level = frame.f_back, level + 1
    return level if frame is not None else 1


def name_the_builder(message, estimators):
    """``message`` naming the outermost estimator (the one the user built) first."""
    if not estimators:
        return message
    builder = type(estimators[-1]).__name__
    if message.startswith(builder):
        return message
    for inner in estimators[:-1]:
        name = type(inner).__name__
        if name != builder and message.startswith(name + ":"):
            return f"{builder} (its {name}):" + message[len(name) + 1:]
    return f"{builder}: {message}"


def warn(message, category=UserWarning):
    """Warn ``message`` (of ``category``) at the user's line, naming the estimator the user
    built (:func:`name_the_builder`): a plain :func:`warnings.warn_explicit` there."""
    target, estimators = _walk(sys._getframe(1))
    target = target or sys._getframe(1)
    message = name_the_builder(str(message), estimators)
    module_globals = target.f_globals
    registry = module_globals.setdefault("__warningregistry__", {})
    # no module_globals: a `python -m` __main__'s loader cannot serve its source to
    # linecache ("loader ... cannot handle __main__"); the file name suffices
    warnings.warn_explicit(message, category, target.f_code.co_filename, target.f_lineno,
                           module=module_globals.get("__name__", "<string>"),
                           registry=registry)
