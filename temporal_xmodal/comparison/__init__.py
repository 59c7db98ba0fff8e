"""The library's main job, ``python -m temporal_xmodal compare``: every estimator side by side.

:func:`run_compare` runs the job, :func:`compare_estimators` runs it on a user's data and
:func:`compare` fits and evaluates given estimators.  The names are imported on first use
(PEP 562), so that the command line reads its arguments without importing torch; the
modules are listed in docs/architecture.md.  Read more in the user guide: docs/index.md.
"""

import importlib

#: Each public name's module (relative to this package).
_OWNERS = {
    "DATASETS": ".job", "CompareInterrupted": ".job",
    "estimator_registry": ".settings", "left_out": ".settings",
    "load_comparison_data": ".settings",
    "compare": ".fits",
    "run_compare": ".driver", "compare_estimators": ".driver",
    "plot_results": ".plots",
    "load_user_data": ".user_data", "UserDataError": ".user_files",
}

__all__ = sorted(_OWNERS)


def __getattr__(name):
    if name not in _OWNERS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_OWNERS[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_OWNERS))
