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
