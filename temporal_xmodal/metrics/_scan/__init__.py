"""The chunked scan engine and its relevance object: the surface metrics/ and search/ use.

Every query x gallery computation of the package runs here: :class:`Scan` owns
the one query-block x gallery-chunk loop (block sizes within ``working_memory``
from the reducer's :class:`Footprint`, device placement, threads, second
passes, the date filter of :mod:`._filter`), :func:`make_relevance` says which pairs are relevant (NumPy blocks or
tensors on a device), the keys of :mod:`._keys` carry the tie rules, and each
figure is a :class:`Reducer` on the scan (full-ranking AP and the @k metrics in
``metrics/``, the exact top-k search in :mod:`._topk`).  Like scikit-learn's
``metrics/_pairwise_distances_reduction``, the modules inside are private and
this ``__init__`` is the package-internal surface.
"""

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
