"""Block sizes of a scan: what a block costs, the memory budget, the device planned for.

One budget, ``working_memory`` MiB, is turned into a query block and a gallery chunk
from what a reducer's blocks cost (its :class:`Footprint`).  On the CPU the default is
:data:`DEFAULT_WORKING_MEMORY` MiB, or scikit-learn's ``working_memory``
(:func:`sklearn.set_config`) where that limit is lower; the reducers also cap their
blocks so that they stay in the caches.  On a GPU such cache-sized blocks would starve
the device (a ``1,024 x 4,096`` product is a few microseconds of work; kernel launches
and host round trips dominate), so there the blocks are as large as the budget allows,
and the default budget is a quarter of the device's free memory (:func:`scan_budget`;
inside a parallel worker, which may share the device with others, 1/64 of it).
:func:`temporal_xmodal._device.device_memory` is the one reader of a device's free memory
(the training data's placement reads it too); :func:`planning_device` the one reader of the
device a scan plans for.
"""

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
    """How a reducer's blocks are scanned: what one costs, the shapes it asks for.

    A reducer's one description of its scan: :class:`._engine.Scan` takes
    nothing else from it but the budget (``working_memory``) and the threads
    (``n_jobs``).

    Attributes
    ----------
    bytes_per_pair : int
        Bytes of scores and temporaries per (query, gallery) pair of a block.
    whole_gallery : bool, default=False
        Every block spans the whole gallery (a full ranking); only the
        queries are split, on every device.
    max_query_block, max_gallery_chunk, max_pairs : int or None, default=None
        CPU caps on the query rows, the gallery rows and the pairs of a block
        (they keep it in the caches).  ``None``: no cap.
    gpu_max_query_block : int or None, default=None
        Cap on the query rows of a GPU block, below :func:`gpu_block_sizes`'.
    bytes_per_query : int, default=0
        GPU only: bytes per query row of a block that do not grow with the
        chunk (the @k metrics' ``(k + 1)^2`` comparisons); the query block is
        capped so that they fit in the budget.
    reduce_pairs : int or None, default=None
        The reducer takes each product in slices of rows of at most this many
        pairs (at least one row): a whole-gallery block comes from one matrix
        product but is reduced in cache-sized slices.  ``None``: whole products.
    blas_threads : int or None, default=None
        BLAS threads during the scan (:func:`threadpoolctl.threadpool_limits`;
        ``None``: leave them).  One for cache-sized NumPy blocks: BLAS threads
        spinning between small products made them several times slower.
    reuse_buffer : bool, default=False
        CPU torch scans of one block at a time (``n_jobs=1``): every product
        is written into one buffer (no fresh allocation, and no page faults,
        per chunk); a product then lives only until the next one, so the
        reducer must copy what it keeps.
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
    """Bytes one block of a chunked scan may use on ``device``.

    Parameters
    ----------
    device : torch.device or str
        Where the scan runs.
    working_memory : float or None, default=None
        Budget in MiB; ``None`` picks the device's default.
    cpu_default : float, default=DEFAULT_WORKING_MEMORY
        The default on the CPU, in MiB.

    Returns
    -------
    budget : int
        ``working_memory`` MiB when given.  Otherwise ``cpu_default`` MiB on
        the CPU, or scikit-learn's ``working_memory`` configuration
        (:func:`sklearn.set_config`, :func:`sklearn.config_context`) where that
        limit is lower; on a device whose memory :func:`device_memory` reads, a
        quarter of its free memory, at most 8 GiB, and inside a parallel
        worker (joblib, Dask) at most 1/64 of its total memory: each worker
        reads the free memory on its own, so k workers scanning at once would
        each take a quarter of the same figure; at 1/64, 16 workers take a
        quarter of the device, beside the training data's half.  1 GiB on a
        device whose memory cannot be read.
    """
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
    """``(query rows, gallery rows)`` of one block of a GPU scan within ``budget`` bytes.

    The whole gallery in one chunk when at least 1,024 queries (or all of
    them) fit with it; otherwise 1,024 queries and the widest gallery chunk
    the budget allows.  At most 4,096 queries per block.

    Parameters
    ----------
    n_query, n_gallery : int
        Sizes of the scan.
    bytes_per_pair : int
        Bytes a (query, gallery) pair of a block takes (scores and temporaries).
    budget : int
        Bytes of one block (:func:`scan_budget`).

    Returns
    -------
    query_block, gallery_chunk : int
    """
    pairs = max(1, int(budget // bytes_per_pair))
    q_block = min(n_query, _GPU_MAX_QUERY_BLOCK, max(1, pairs // n_gallery))
    if q_block < min(n_query, _GPU_MIN_QUERY_BLOCK):  # the gallery does not fit whole
        q_block = max(1, min(n_query, _GPU_MIN_QUERY_BLOCK, pairs))
    return q_block, max(1, min(n_gallery, pairs // q_block))


def plan_scan(footprint, n_query, n_gallery, working_memory, device, *, n_jobs=1):
    """The :class:`ScanPlan` of a reducer with ``footprint`` on ``device``.

    Parameters
    ----------
    footprint : Footprint
        The reducer's cost per pair and block caps.
    n_query, n_gallery : int
        Sizes of the scan.
    working_memory : float or None
        Budget of the blocks in flight, in MiB (:func:`scan_budget`).
    device : torch.device or str
        Where the scan runs: ``"cpu"`` gets cache-capped blocks, any other
        device :func:`gpu_block_sizes`' large ones.
    n_jobs : int, default=1
        Blocks in flight at once; they share the budget.

    Returns
    -------
    plan : ScanPlan
    """
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
    """The device a scan of ``A`` plans for: a tensor's own, the CPU for anything else.

    The one place a scan's device is read; the tests patch it to run the GPU
    plans on CPU tensors.
    """
    return A.device if isinstance(A, torch.Tensor) else torch.device("cpu")
