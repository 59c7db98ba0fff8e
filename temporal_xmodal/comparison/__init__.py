"""The library's main job, ``python -m temporal_xmodal compare``: every estimator side by side.

* :mod:`~temporal_xmodal.comparison.registry`: the compared estimators, one
  line each, with how they use time (``time_role``);
* :mod:`~temporal_xmodal.comparison.data`: the data sets (synthetic, wiki,
  ticrc) as train / test splits and their blocks;
* :mod:`~temporal_xmodal.comparison.run`: the fits and the constant-time
  controls (Δ-time), stopped as a whole by Ctrl-C (:class:`CompareInterrupted`);
* :mod:`~temporal_xmodal.comparison.driver`: the end-to-end driver
  :func:`run_compare` (data, fits, table, JSON and plots after every fit,
  ``resume``);
* :mod:`~temporal_xmodal.comparison.job`: what one run is (its options'
  vocabulary and its key) and its output folder: ``results.json`` written
  atomically after every fit, the finished fits ``--resume`` reads back, the
  refusal to overwrite another run's results.  It imports nothing heavy: the
  command line checks all of it before importing torch; nor does
  :mod:`~temporal_xmodal.comparison.estimate`, the time estimate printed first;
* :mod:`~temporal_xmodal.comparison.seeds`: the job over several seeds (``--seeds``),
  the table of the means and each figure's spread;
* :mod:`~temporal_xmodal.comparison.user_data`: a user's own file or frame
  (``compare --data FILE``) read and checked into the same splits;
  :mod:`~temporal_xmodal.comparison.frame`: :func:`compare_estimators`, the
  job on it in one call, the table returned as a DataFrame;
* :mod:`~temporal_xmodal.comparison.notes`: the answer on the table's first
  lines and the notes under it;
* :mod:`~temporal_xmodal.comparison.table` and
  :mod:`~temporal_xmodal.comparison.plots`: the printed table and the figure.

The names below are imported on first use (PEP 562), so that the command line
reads its arguments and the output folder without importing torch.

The evaluation of one fitted estimator is
:func:`temporal_xmodal.evaluation.evaluate_estimator`; the command line is
:mod:`temporal_xmodal.cli`.

Read more in the user guide: docs/index.md.
"""

import importlib

#: Public name -> the module that owns it (relative to this package).
_OWNERS = {
    "TEMPORAL_KEYS": "..evaluation.report", "evaluate_estimator": "..evaluation.report",
    "evaluate_undated": "..evaluation.report",
    "DATASETS": ".job", "MIN_SAMPLES": ".job", "COMPARED_NAMES": ".job",
    "CompareInterrupted": ".run",
    "default_data_dir": ".job", "load_comparison_data": ".data", "synthetic_split": ".data",
    "with_constant_time": ".data",
    "plot_results": ".plots",
    "Entry": ".registry", "left_out": ".registry", "default_estimators": ".registry",
    "estimator_registry": ".registry", "set_matching_params": ".registry",
    "training_epochs": ".registry",
    "DATE_PRIOR": ".run", "compare": ".run", "run_compare": ".driver",
    "undated_references": ".run",
    "COLUMNS": ".table", "DELTA_TIME_SCORE": ".table", "UNDATED_COLUMNS": ".table",
    "format_table": ".table",
    "compare_estimators": ".frame", "results_frame": ".frame",
    "UserDataError": ".user_data", "load_user_data": ".user_data", "read_table": ".user_data",
    "answer_lines": ".notes",
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
