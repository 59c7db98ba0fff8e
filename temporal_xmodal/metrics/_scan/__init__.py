"""The chunked scan engine: the package-internal surface of metrics/ and search/."""

from ._engine import Reducer, Scan
from ._filter import TimeFilter
from ._keys import (
    K_RANGE,
    SIMILARITIES,
    WORKING_MEMORY_RANGE,
    order_by_score_then_index,
    prepare_similarity,
    sortable_keys,
    unit_rows,
)
from ._plan import (
    DEFAULT_WORKING_MEMORY,
    Footprint,
    ScanPlan,
    device_memory,
    gpu_block_sizes,
    plan_scan,
    planning_device,
    scan_budget,
)
from ._relevance import NumpyRelevance, TorchRelevance, check_lengths, make_relevance
from ._topk import topk, topk_footprint

__all__ = [
    "DEFAULT_WORKING_MEMORY",
    "Footprint",
    "K_RANGE",
    "NumpyRelevance",
    "Reducer",
    "SIMILARITIES",
    "Scan",
    "ScanPlan",
    "WORKING_MEMORY_RANGE",
    "check_lengths",
    "device_memory",
    "gpu_block_sizes",
    "order_by_score_then_index",
    "plan_scan",
    "planning_device",
    "prepare_similarity",
    "scan_budget",
    "sortable_keys",
    "TimeFilter",
    "TorchRelevance",
    "make_relevance",
    "topk",
    "topk_footprint",
    "unit_rows",
]
