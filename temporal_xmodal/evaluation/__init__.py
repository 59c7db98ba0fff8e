"""Diachronic evaluation protocols for any estimator of the library.

The six protocols of "Diachronic Cross-modal Embeddings" (Semedo &
Magalhães, ACM MM 2019):

* :func:`coarse_alignment`: full-ranking mAP over all items at their own time;
* :func:`local_alignment`: mAP@k of queries projected into every instant;
* :func:`temporally_bounded_retrieval`: mAP of queries ranking their own time
  bin only, with a per-bin :class:`ResultTable`;
* :func:`time_period_inference`: t-mAP@k, relevance within a time window;
* :func:`semantic_dispersion`: mean top-k similarity of a query per time bin;
* :func:`cross_modal_evolution`: the time bins holding a query's nearest items.

:func:`embed_split` embeds an evaluation set once; every protocol accepts the
:class:`EmbeddedSplit` it returns in place of ``X``.  The report of one
fitted estimator (the figures of ``python -m temporal_xmodal compare``) is
:func:`evaluate_estimator` (labelled relevance) or :func:`evaluate_undated`
(TICRC).  Plots (matplotlib, ``pip install temporal-xmodal[plots]``):
:func:`plot_per_bin_map`, :func:`plot_dispersion`.

Read more in the user guide: docs/evaluation.md.
"""

from ._table import ResultTable
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
