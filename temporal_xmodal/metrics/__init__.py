"""Cross-modal retrieval metrics: mAP (full and @k), nDCG@k, MRR, recall@k.

Vectorised and memory-bounded: every metric is a reducer of one chunked scan
engine (query blocks x gallery chunks within ``working_memory`` MiB, sized
for the CPU's caches or a GPU's memory).  Full-ranking AP equals
:func:`sklearn.metrics.average_precision_score` exactly, ties included, with
optional time-window relevance.  :func:`retrieval_metrics_at_k` gives the @k
figures (and MRR) from a chunked top-k instead of full rankings, for galleries
of 10^6 items; :func:`mean_average_precision_torch` the full-ranking mAP with
torch ops on the embeddings' device.

Read more in the user guide: docs/metrics.md.
"""

from ._at_k import retrieval_metrics_at_k
from ._counterpart import counterpart_reciprocal_ranks, random_mrr
from ._full_ranking import iter_score_blocks
from ._full_ranking_torch import mean_average_precision_torch
from ._ranking import (
    average_precision_per_query,
    ndcg_per_query,
    recall_per_query,
    reciprocal_rank_per_query,
)
from ._retrieval import (
    cross_modal_scores,
    mean_average_precision,
    mean_reciprocal_rank,
    ndcg_at_k,
    recall_at_k,
)

__all__ = [
    "average_precision_per_query",
    "counterpart_reciprocal_ranks",
    "cross_modal_scores",
    "iter_score_blocks",
    "mean_average_precision",
    "mean_average_precision_torch",
    "mean_reciprocal_rank",
    "ndcg_at_k",
    "ndcg_per_query",
    "random_mrr",
    "recall_at_k",
    "recall_per_query",
    "reciprocal_rank_per_query",
    "retrieval_metrics_at_k",
]

#: Public names that moved out of this module, and their new home (kept as a pointer for one
#: release: importing them from here raises an ImportError that names it).
_MOVED = {name: "temporal_xmodal.scoring" for name in (
    "SCORERS", "RetrievalScorer", "DateAwareMRRScorer", "make_retrieval_scorer")}


def __getattr__(name):
    """A moved public name raises an ImportError naming its new home (see ``_MOVED``)."""
    if name in _MOVED:
        raise ImportError(
            f"{name} moved from temporal_xmodal.metrics to {_MOVED[name]}: "
            f"`from {_MOVED[name]} import {name}`.", name=name, path=__file__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
