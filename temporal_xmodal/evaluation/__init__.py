"""Diachronic evaluation protocols (spec ``diachronic_and_binned.md`` §8) for any estimator.

* :func:`coarse_alignment` (§8.1, Op #1): full-ranking mAP, ``{"i2t", "t2i", "mean"}``;
* :func:`local_alignment` (§8.2-8.3, Op #3): mAP@k of queries projected into every
  instant, ``{"i2t", "t2i", "mean"}``;
* :func:`temporally_bounded_retrieval` (§8.4, Op #4): same-bin mAP, the dict plus a
  per-bin :class:`ResultTable`;
* :func:`time_period_inference` (§8.5, Op #1): t-mAP@k, ``{"i2t", "t2i", "mean"}``;
* :func:`semantic_dispersion` (§8.6, Op #2): mean top-k similarity per bin, an
  array (n_queries, n_bins) and the bin centres;
* :func:`cross_modal_evolution` (§8.7, Op #1 + bin ranking): a :class:`ResultTable`
  of the top bins per query.

:func:`embed_split` embeds an evaluation set once; every protocol accepts the
:class:`EmbeddedSplit` it returns in place of ``X`` (``estimator`` may then be
None and ``y`` is taken from the split).

Report of one fitted estimator (the figures of ``python -m temporal_xmodal compare``):
:func:`evaluate_estimator` (labelled relevance), :func:`evaluate_undated` (TICRC).

Undated captions and dated queries: :class:`DatePriorRetrieval` fuses any estimator's
scores with a caption → date prior (:class:`CaptionDatePrior`).

Plots (matplotlib, ``pip install temporal-xmodal[plots]``): :func:`plot_per_bin_map`,
:func:`plot_dispersion`.
"""

from ._table import ResultTable
from .date_prior import CaptionDatePrior, DatePriorRetrieval
from .dispersion import cross_modal_evolution, semantic_dispersion
from .embedded import EmbeddedSplit, embed_split
from .plotting import plot_dispersion, plot_per_bin_map
from .report import evaluate_estimator, evaluate_undated
from .protocols import (
    coarse_alignment,
    local_alignment,
    temporally_bounded_retrieval,
    time_period_inference,
)

__all__ = [
    "CaptionDatePrior",
    "DatePriorRetrieval",
    "EmbeddedSplit",
    "ResultTable",
    "coarse_alignment",
    "cross_modal_evolution",
    "embed_split",
    "evaluate_estimator",
    "evaluate_undated",
    "local_alignment",
    "plot_dispersion",
    "plot_per_bin_map",
    "semantic_dispersion",
    "temporally_bounded_retrieval",
    "time_period_inference",
]
