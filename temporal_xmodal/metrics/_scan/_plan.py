"""Block sizes of a scan: what a block costs, the budget, the device (docs/metrics.md)."""

from typing import NamedTuple

import sklearn
import torch

from ..._device import device_memory
from ..._device import in_worker

DEFAULT_WORKING_MEMORY = 64  # MiB: what working_memory=None means on the CPU, for every scan
#: Share of a GPU's free memory a scan takes by default (the rest stays for the
#: model, the data and the allocator's fragmentation).
_GPU_FREE_FRACTION = 0.25
#: Most bytes a scan takes by default on a GPU: 8 GiB hold a 1,024 x 10^6
#: float32 score block with topk's temporaries.
_GPU_MAX_BUDGET = 8 * 2**30
#: Most of a device's total memory one scan takes by default inside a parallel worker
#: (joblib, Dask): the workers sharing the device may all scan at once; 16 such scans take a
#: quarter of it, beside the training data's half (``training._data``).  With more workers
#: on one device, pass ``working_memory``.
_GPU_WORKER_FRACTION = 1 / 64
#: Budget on a device whose free memory cannot be read (or a GPU plan run on
#: the CPU, as the tests do).
_GPU_FALLBACK_BUDGET = 2**30
#: Query rows of one GPU block: enough for full-speed matrix products; the
#: gallery chunk is sized from what the budget leaves.
_GPU_MIN_QUERY_BLOCK = 1024
_GPU_MAX_QUERY_BLOCK = 4096


# --------------------------------------------------------------------------
# Block sizes
# --------------------------------------------------------------------------


class Footprint(NamedTuple):
    """How a reducer's blocks are scanned: what one costs and the shapes it asks for.

    Attributes
    ----------
    bytes_per_pair : int
        Bytes of scores and temporaries per (query, gallery) pair of a block.
    whole_gallery : bool, default=False
        Blocks span the whole gallery; only the queries are split.
    max_query_block, max_gallery_chunk, max_pairs, gpu_max_query_block : int or None
        Caps on a block's query rows, gallery rows and pairs (CPU), query rows (GPU).
    bytes_per_query : int, default=0
        GPU: bytes per query row that do not grow with the chunk.
    reduce_pairs, blas_threads : int or None, default=None
        Products reduced in row slices of at most this many pairs; BLAS threads of the scan.
    reuse_buffer : bool, default=False
        CPU torch scans with ``n_jobs=1`` write every product into one buffer: the reducer
        must copy what it keeps.
    """

    bytes_per_pair: int
    whole_gallery: bool = False
    max_query_block: int | None = None
    max_gallery_chunk: int | None = None
    max_pairs: int | None = None
    gpu_max_query_block: int | None = None
    bytes_per_query: int = 0
    reduce_pairs: int | None = None
    blas_threads: int | None = None
    reuse_buffer: bool = False


class ScanPlan(NamedTuple):
    """Rows of one query block and of one gallery chunk."""

    query_block: int
    gallery_chunk: int


def scan_budget(device, working_memory=None, cpu_default=DEFAULT_WORKING_MEMORY):
    """Bytes one block of a scan may use on ``device``: ``working_memory`` MiB when given; else on
    the CPU ``cpu_default`` MiB (or scikit-learn's ``working_memory`` where lower), on a GPU a
    quarter of its free memory, at most 8 GiB (1/64 of its total inside a parallel worker), and
    1 GiB where the device's memory cannot be read."""
    if working_memory is not None:
        return int(working_memory * 2**20)
    device = torch.device(device)
    if device.type == "cpu":
        return int(min(cpu_default, sklearn.get_config()["working_memory"]) * 2**20)
    memory = device_memory(device)
    if memory is None:
        return _GPU_FALLBACK_BUDGET
    free, total = memory
    budget = min(_GPU_MAX_BUDGET, free * _GPU_FREE_FRACTION)
    if in_worker():
        budget = min(budget, total * _GPU_WORKER_FRACTION)
    return int(budget)


def gpu_block_sizes(n_query, n_gallery, bytes_per_pair, budget):
    """``(query rows, gallery rows)`` of one GPU block within ``budget`` bytes: the whole
    gallery when at least 1,024 queries (or all) fit with it, else 1,024 queries and the
    widest chunk the budget allows; at most 4,096 queries."""
    pairs = max(1, int(budget // bytes_per_pair))
    q_block = min(n_query, _GPU_MAX_QUERY_BLOCK, max(1, pairs // n_gallery))
    if q_block < min(n_query, _GPU_MIN_QUERY_BLOCK):  # the gallery does not fit whole
        q_block = max(1, min(n_query, _GPU_MIN_QUERY_BLOCK, pairs))
    return q_block, max(1, min(n_gallery, pairs // q_block))


def plan_scan(footprint, n_query, n_gallery, working_memory, device, *, n_jobs=1):
    """The :class:`ScanPlan` of a reducer's ``footprint`` on ``device`` (cache-capped blocks on
    the CPU, :func:`gpu_block_sizes` elsewhere), ``n_jobs`` blocks sharing the budget."""
    device = torch.device(device)
    budget = scan_budget(device, working_memory) // n_jobs
    per_pair = footprint.bytes_per_pair
    if footprint.whole_gallery:
        return ScanPlan(max(1, min(n_query, budget // (per_pair * n_gallery))), n_gallery)
    pairs = max(1, budget // per_pair)
    if device.type == "cpu":
        pairs = min(pairs, footprint.max_pairs or pairs)
        q_block = max(1, min(n_query, footprint.max_query_block or n_query, pairs))
        g_chunk = min(n_gallery, footprint.max_gallery_chunk or n_gallery, pairs // q_block)
        return ScanPlan(q_block, max(1, g_chunk))
    q_block, _ = gpu_block_sizes(n_query, n_gallery, per_pair, budget)
    q_block = min(q_block, footprint.gpu_max_query_block or q_block)
    if footprint.bytes_per_query:
        q_block = min(q_block, budget // footprint.bytes_per_query)
    q_block = max(1, q_block)
    return ScanPlan(q_block, max(1, min(n_gallery, pairs // q_block)))


def planning_device(A):
    """The device a scan of ``A`` plans for: a tensor's own, else the CPU (the one place it is
    read; the tests patch it to run the GPU plans on the CPU)."""
    return A.device if isinstance(A, torch.Tensor) else torch.device("cpu")
