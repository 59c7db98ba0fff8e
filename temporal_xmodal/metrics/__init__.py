"""Cross-modal retrieval metrics: mAP (full and @k), nDCG@k, MRR, recall@k.

Vectorised and memory-bounded (queries are processed in blocks), exactly equal
to :func:`sklearn.metrics.average_precision_score` where both apply, with
optional time-window relevance.  See :mod:`._ranking` for the definitions and
the tie convention.  :func:`retrieval_metrics_at_k` gives the @k figures (and
MRR) from a chunked top-k instead of full rankings, for galleries of 10^6 items.
"""

from ._blocks import iter_score_blocks
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
from ._topk import retrieval_metrics_at_k

__all__ = [
    "average_precision_per_query",
    "cross_modal_scores",
    "iter_score_blocks",
    "mean_average_precision",
    "mean_reciprocal_rank",
    "ndcg_at_k",
    "ndcg_per_query",
    "recall_at_k",
    "recall_per_query",
    "reciprocal_rank_per_query",
    "retrieval_metrics_at_k",
]
