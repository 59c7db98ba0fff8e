"""The library's main job, ``python -m temporal_xmodal compare``: every estimator side by side.

* :mod:`~temporal_xmodal.comparison.registry`: the compared estimators, one
  line each, with how they use time (``time_use``);
* :mod:`~temporal_xmodal.comparison.data`: the data sets (synthetic, wiki,
  ticrc) as train / test splits and their blocks;
* :mod:`~temporal_xmodal.comparison.run`: the fits, the constant-time
  controls (Δ-time) and the end-to-end driver :func:`run_compare`;
* :mod:`~temporal_xmodal.comparison.table` and
  :mod:`~temporal_xmodal.comparison.plots`: the printed table and the figure.

The evaluation of one fitted estimator is
:func:`temporal_xmodal.evaluation.evaluate_estimator`; the command line is
:mod:`temporal_xmodal.cli`.

Read more in the user guide: docs/index.md.
"""

from ..evaluation.report import TEMPORAL_KEYS, evaluate_estimator, evaluate_undated
from .data import (
    DATASETS,
    MIN_SAMPLES,
    default_data_dir,
    load_comparison_data,
    synthetic_split,
    with_constant_time,
)
from .plots import plot_results
from .registry import (
    DATASET_PARAMS,
    DATASET_TRAINING,
    NOT_APPLICABLE,
    Entry,
    default_estimators,
    estimator_registry,
    set_matching_params,
)
from .run import DATE_PRIOR, compare, run_compare, undated_references
from .table import COLUMNS, DELTA_TIME_SCORE, UNDATED_COLUMNS, format_table

__all__ = [
    "COLUMNS", "DATASETS", "DATASET_PARAMS", "DATASET_TRAINING", "DATE_PRIOR",
    "DELTA_TIME_SCORE", "Entry", "MIN_SAMPLES", "NOT_APPLICABLE", "TEMPORAL_KEYS",
    "UNDATED_COLUMNS", "compare",
    "default_data_dir", "default_estimators", "estimator_registry", "evaluate_estimator",
    "evaluate_undated", "format_table", "load_comparison_data", "plot_results", "run_compare",
    "set_matching_params", "synthetic_split", "undated_references", "with_constant_time",
]
