"""Diachronic evaluation protocols (Semedo & Magalhães, ACM MM 2019) for any estimator.

:func:`coarse_alignment`, :func:`local_alignment`, :func:`temporally_bounded_retrieval`,
:func:`time_period_inference`, :func:`semantic_dispersion` and :func:`cross_modal_evolution`;
:func:`embed_split` embeds an evaluation set once for all of them; :func:`evaluate_estimator` and
:func:`evaluate_undated` give the figures of ``python -m temporal_xmodal compare``; the plots need
matplotlib (``pip install temporal-xmodal[plots]``).  Read more in docs/evaluation.md.
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
