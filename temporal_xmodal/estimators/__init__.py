"""The estimators: one module per method, and the caption → date prior any of them can be
fused with (undated captions, dated queries).

The estimators exported here are those of the registry (:func:`all_estimators`,
``_registry.py``): registering an estimator exports it, here and at the package's top level.
"""

from ._caption_prior import CaptionDatePrior, date_prior_scores
from ._date_prior import DatePriorRetrieval, query_time_scores
from ._registry import all_estimators

#: Class name -> class of every registered estimator.
_ESTIMATORS = {entry.estimator.__name__: entry.estimator for entry in all_estimators()}
globals().update(_ESTIMATORS)

__all__ = [*_ESTIMATORS, "CaptionDatePrior", "DatePriorRetrieval", "all_estimators",
           "date_prior_scores", "query_time_scores"]
