"""Cross-modal retrieval metrics: mAP (full and @k), nDCG@k, MRR, recall@k, memory-bounded.

Read more in the user guide: docs/metrics.md.
"""

from ._at_k import retrieval_metrics_at_k
from ._counterpart import counterpart_reciprocal_ranks, random_map, random_mrr
from ._full_ranking import iter_score_blocks
from ._full_ranking_torch import mean_average_precision_torch
from ._ranking import (
    average_precision_per_query,
    ndcg_per_query,
    recall_per_query,
    reciprocal_rank_per_query,
)
from ._retrieval import (
    QUERY_SAMPLE,
    cross_modal_scores,
    mean_average_precision,
    mean_reciprocal_rank,
    ndcg_at_k,
    recall_at_k,
    sample_standard_error,
)

__all__ = [
    "QUERY_SAMPLE",
    "average_precision_per_query",
    "counterpart_reciprocal_ranks",
    "cross_modal_scores",
    "iter_score_blocks",
    "mean_average_precision",
    "mean_average_precision_torch",
    "mean_reciprocal_rank",
    "ndcg_at_k",
    "ndcg_per_query",
    "random_map",
    "random_mrr",
    "recall_at_k",
    "sample_standard_error",
    "recall_per_query",
    "reciprocal_rank_per_query",
    "retrieval_metrics_at_k",
]
