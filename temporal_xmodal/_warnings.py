"""Every warning of the library, at the user's line and naming the estimator the user built.

One owner of where a warning points (:func:`warn`, :func:`user_stacklevel`): the stack is
walked outward from the library's call and the first frame that is neither this package
nor the machinery between it and the user (scikit-learn's Pipeline, GridSearchCV and
parameter validation, joblib, skorch, torch, NumPy, pandas, Python's own library and
frozen modules) is the user's.  So a warning raised inside a fit that a ``Pipeline``
inside ``GridSearchCV`` made points at the user's ``search.fit(...)`` line.  Where no such
frame exists (a joblib worker process or thread, or the library's own command line), it
points at the line of scikit-learn or joblib that called the library's estimator: in a
``GridSearchCV(n_jobs=2)`` or ``cross_validate(n_jobs=2)`` worker, scikit-learn's
``estimator.fit(X_train, y_train)`` (or a Pipeline's call of its last step), the fit the
user asked for, where a line of the library would be an inner detail of it.  Without that
either (a thread started on a fit, ``python -m temporal_xmodal``, the comparison job's own
workers: only Python's own modules, or joblib running the library's job, call the library),
it points at the outermost frame of the library.

The message names the estimator the user built: the outermost estimator of this library
on the stack.  A warning raised by a model inside it (a bin's model inside
``BinnedProcrustesEmbedder``) reads ``"BinnedProcrustesEmbedder (its TempXNetEmbedder):
..."``, and one that names no estimator gets the builder's name first.

The warnings are plain :func:`warnings.warn_explicit` calls with the user's frame's
registry: Python's filters (``"default"``, ``"error"``, ``"ignore"``,
``warnings.resetwarnings()``, ``catch_warnings``) apply unchanged; nothing is remembered
here.
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

    torch's default is one thread per core; beside other busy processes the threads of one
    fit wait for each other's time slices, and a fit can run many times slower than on one
    thread (docs/scaling.md, "A busy machine").  The warning says so once per fit start;
    ``torch.set_num_threads(1)`` (or ``threadpoolctl.threadpool_limits(1)``) keeps the fit
    steady, and the same seed gives the same embeddings at a given thread count.
    """


def warn_if_busy(name, threads, load=None, cores=None):
    """Warn (:class:`BusyMachineWarning`) when a fit asks for ``threads`` > 1 torch threads on
    a machine whose 1-minute load average exceeds its cores plus those threads: more runnable
    work than cores even if the fit's own threads were all counted.

    Parameters
    ----------
    name : str
        The estimator, named in the message.
    threads : int
        The fit's torch threads (``torch.get_num_threads()``).
    load, cores : float and int or None, default=None
        The load average and the core count; ``None``: this machine's (no warning where the
        load average cannot be read).

    Returns
    -------
    warned : bool
    """
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

    Raised by ``fit`` when, over the last epochs of ``max_epochs``, the best
    validation figure rose by more than a tolerance (the fit's ``convergence_``
    holds the figures): raising ``max_epochs`` would likely still pay.  A
    subclass of scikit-learn's :class:`~sklearn.exceptions.ConvergenceWarning`,
    so ``warnings.filterwarnings("ignore", category=ConvergenceWarning)`` and
    ``warnings.simplefilter("error", ConvergenceWarning)`` apply to it.

    Read more in the user guide: docs/training.md.
    """


class CheckpointWarning(UserWarning):
    """A neural fit's validation figure could not choose the checkpoint.

    Raised by ``fit`` when the figure was the same at every epoch (too few validation
    rows, or all of one class) or NaN at every epoch (validation rows without a label),
    so the last epoch's weights are kept; or when it was NaN at some epochs, which were
    then no candidates.  The fit's ``fit_report_`` says the same (``kept_why``).

    Read more in the user guide: docs/training.md.
    """


def _directories(packages=_PLUMBING_PACKAGES):
    """Directories whose frames are machinery, not the user's (computed per call: cheap,
    and packages imported later are included)."""
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
    """Whether ``obj`` is an estimator of this library (a class of the package with ``fit``
    and ``get_params``); read by name, so this lowest layer imports none of the estimators."""
    cls = type(obj)
    return (cls.__module__.startswith("temporal_xmodal.") and hasattr(cls, "fit")
            and hasattr(cls, "get_params"))


def _walk(frame):
    """``(target frame, estimators on the stack outward)``: the user's frame; without one,
    the frame of scikit-learn or joblib that called a method of the library's estimators
    (past their decorators' wrappers), else the outermost frame of the library (None outside
    the library)."""
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
    """The ``stacklevel`` that makes a :func:`warnings.warn` call point at the user's line.

    For a ``warnings.warn`` call made by the caller of this function: the first frame
    outward that is neither this package nor the machinery between (see the module's
    docstring); without one, the line of scikit-learn or joblib that called an estimator of
    this package, else the outermost frame of this package.

    Returns
    -------
    stacklevel : int
    """
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
    """Warn at the user's line, naming the estimator the user built.

    A plain :func:`warnings.warn_explicit` at the frame :func:`user_stacklevel`
    finds (with that module's warning registry, so Python's filters decide
    alone), the message passed through :func:`name_the_builder`.

    Parameters
    ----------
    message : str
    category : type of Warning, default=UserWarning
    """
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
