"""The chunked scan engine under every query x gallery computation of the package.

The full-ranking metrics, the @k metrics and the exact top-k search all reduce
the score matrix ``Q @ G.T`` without ever holding it: the queries are taken in
blocks of rows, each block meets the gallery in chunks of rows, and a
*reducer* folds each ``query block x gallery chunk`` product into its own
summary (per-query AP, top-``k + 1`` lists, running top-k) before the next
chunk.  The engine owns what the reducers share:

* **Block sizes** (:func:`plan_scan`): one budget, ``working_memory`` MiB
  (default :data:`DEFAULT_WORKING_MEMORY`), turned into a query block and a
  gallery chunk from what a reducer's blocks cost (its :class:`Footprint`).  On
  the CPU the reducers also cap their blocks so that they stay in the caches.
  On a GPU such cache-sized blocks would starve the device (a ``1,024 x 4,096``
  product is a few microseconds of work; kernel launches and host round trips
  dominate), so there the blocks are as large as the budget allows, and the
  default budget is a quarter of the device's free memory (:func:`scan_budget`;
  inside a parallel worker, which may share the device with others, 1/64 of it).
  :func:`device_memory` is the one reader of a device's free memory (the
  training data's placement reads it too).
* **Products** (:func:`scan`): the product of a (query block, gallery chunk)
  pair is always computed the same way, so a reducer's second pass over some
  queries (a recount, a re-tie) sees bit-identical scores.
* **Keys and ties** (:func:`sortable_keys`, :func:`order_by_score_then_index`).
* The constraints every public scan validates ``k`` and ``working_memory``
  with (:data:`K_RANGE`, :data:`WORKING_MEMORY_RANGE`), and the
  **similarity** of a pair (:func:`prepare_similarity`).

The embeddings themselves are checked once, by
:func:`temporal_xmodal._validation.check_embeddings`.

Ties
----
Two tie rules, each with one implementation for NumPy arrays and torch tensors:

* Metrics rank an item by the number of gallery items scoring **at least as
  high** as it (ties count against the query), the convention of
  :func:`sklearn.metrics.average_precision_score`.  Scores are compared
  through :func:`sortable_keys`: int64 keys ordered as the float64 scores, equal
  for equal scores (``-0.0`` and ``+0.0`` included).
* Search returns equal scores by **increasing gallery index**.
"""

from typing import NamedTuple

import numpy as np
import torch
from sklearn.utils import gen_batches

from .._parallel import in_worker
from .._validation import CountInterval, RealInterval

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
_INT64_MAX = 0x7FFFFFFFFFFFFFFF
#: The similarities of :func:`prepare_similarity`.
SIMILARITIES = ("dot", "cosine", "hamming")
#: The valid values of every scan's ``k``: a positive int (not a bool).
K_RANGE = CountInterval(1, None, closed="left")
#: The valid values of every scan's ``working_memory`` (MiB), besides None.
WORKING_MEMORY_RANGE = RealInterval(0, None, closed="neither")


# --------------------------------------------------------------------------
# Block sizes
# --------------------------------------------------------------------------


class Footprint(NamedTuple):
    """What one block of a reducer costs, and the block shapes it asks for.

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
    """

    bytes_per_pair: int
    whole_gallery: bool = False
    max_query_block: int | None = None
    max_gallery_chunk: int | None = None
    max_pairs: int | None = None
    gpu_max_query_block: int | None = None


class ScanPlan(NamedTuple):
    """Rows of one query block and of one gallery chunk."""

    query_block: int
    gallery_chunk: int


def device_memory(device):
    """``(free, total)`` bytes of ``device``, or None where they cannot be read.

    The one reader of a device's memory: the scans' default budget
    (:func:`scan_budget`) and the training data's placement on the device
    (:meth:`temporal_xmodal.training.CrossModalDataset.place`) both ask it.

    Parameters
    ----------
    device : torch.device or str

    Returns
    -------
    memory : tuple of int or None
        On a CUDA device, the free memory reported by the driver plus what this
        process's torch allocator holds unused (free to this process; every
        other process's memory counts as used), and the total; None on
        other devices.
    """
    device = torch.device(device)
    if device.type != "cuda" or not torch.cuda.is_available():
        return None
    free, total = torch.cuda.mem_get_info(device)
    free += torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    return free, total


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
        the CPU; on a device whose memory :func:`device_memory` reads, a
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
        return int(cpu_default * 2**20)
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


def plan_scan(footprint, n_query, n_gallery, working_memory, device, *,
              n_jobs=1, bytes_per_query=0):
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
    bytes_per_query : int, default=0
        GPU only: bytes per query row that do not grow with the chunk (the
        query block is capped so that they fit in the budget).

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
    if bytes_per_query:
        q_block = min(q_block, budget // bytes_per_query)
    q_block = max(1, q_block)
    return ScanPlan(q_block, max(1, min(n_gallery, pairs // q_block)))


# --------------------------------------------------------------------------
# Products
# --------------------------------------------------------------------------


def chunk_products(Q, G, rows, gallery_chunk, *, out=None):
    """Yield ``(cols, Q[rows] @ G[cols].T)`` for the gallery chunks, in order.

    Works on NumPy arrays and torch tensors alike.  ``out`` (torch): a flat
    buffer of at least ``rows x gallery_chunk`` scores that every product is
    written into (no fresh allocation per chunk); each product then lives
    only until the next one.
    """
    block = Q[rows]
    for cols in gen_batches(G.shape[0], gallery_chunk):
        chunk = G[cols]
        if out is None:
            yield cols, block @ chunk.T
        else:
            S = out[:block.shape[0] * chunk.shape[0]].view(block.shape[0], chunk.shape[0])
            yield cols, torch.mm(block, chunk.T, out=S)


def scan(Q, G, plan, *, out=None):
    """Yield ``(rows, products)`` for each query block of ``plan``.

    ``products`` is :func:`chunk_products` of the block: its
    ``(cols, Q[rows] @ G[cols].T)`` over the gallery chunks.
    """
    for rows in gen_batches(Q.shape[0], plan.query_block):
        yield rows, chunk_products(Q, G, rows, plan.gallery_chunk, out=out)


# --------------------------------------------------------------------------
# Keys, ties, k, similarity
# --------------------------------------------------------------------------


def sortable_keys(scores):
    """int64 keys in the order of the float64 values of ``scores`` (NaN-free).

    The bits of a float64 read as an int64 are in order for positive values
    and in reverse for negative ones: flipping all but the sign bit of the
    negative ones puts every value in order.  ``+ 0.0`` first maps ``-0.0``
    to ``+0.0``, so equal scores get equal keys.  NumPy arrays give NumPy
    keys, tensors tensor keys (on their device).
    """
    if isinstance(scores, torch.Tensor):
        bits = (scores.to(torch.float64) + 0.0).view(torch.int64)
        return bits ^ ((bits >> 63) & _INT64_MAX)
    bits = np.add(scores, 0.0, dtype=np.float64).view(np.int64)
    sign = bits >> 63  # -1 for negative values, 0 otherwise
    sign &= np.int64(_INT64_MAX)
    bits ^= sign
    return bits


def order_by_score_then_index(scores, indices):
    """Each row by decreasing score, equal scores by increasing index (the search tie rule).

    Takes tensors or arrays; returns NumPy arrays (the results of a search
    are small: n_queries x k).
    """
    scores, indices = (np.asarray(a.cpu() if isinstance(a, torch.Tensor) else a)
                       for a in (scores, indices))
    order = np.lexsort((indices, -scores), axis=1)
    return np.take_along_axis(scores, order, 1), np.take_along_axis(indices, order, 1)


def unit_rows(A):
    """Rows scaled to unit L2 norm (zero rows stay zero); arrays or tensors."""
    if isinstance(A, torch.Tensor):
        return A / A.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return A / np.maximum(np.linalg.norm(A, axis=1, keepdims=True), 1e-12)


def prepare_similarity(Q, G, kind):
    """Query and gallery rows whose products ``Q @ G.T`` score pairs by ``kind``.

    ``"dot"``: the rows as they are.  ``"cosine"``: unit rows.
    ``"hamming"``: the sign codes (+-1; float64 for arrays, the input's dtype
    for tensors): ``Q @ G.T = dim - 2 x Hamming distance``, so the ranking is
    that of the negative Hamming distance, integer-valued (ties kept).
    """
    if kind == "cosine":
        return unit_rows(Q), unit_rows(G)
    if kind == "hamming":
        if isinstance(Q, torch.Tensor):
            return (torch.where(Q > 0, 1.0, -1.0).to(Q.dtype),
                    torch.where(G > 0, 1.0, -1.0).to(G.dtype))
        return np.where(Q > 0, 1.0, -1.0), np.where(G > 0, 1.0, -1.0)
    return Q, G
