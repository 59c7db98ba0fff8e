"""THE SCAN ENGINE: the one query-block x gallery-chunk loop under every ranking and search.

The full-ranking metrics, the @k metrics, counterpart ranks and the exact top-k
search all reduce the score matrix ``Q @ G.T`` without ever holding it.  As in
scikit-learn's ``_pairwise_distances_reduction``, one object owns the loops and
the reductions are hooks: :class:`Scan` takes the queries in blocks of rows,
meets each block with the gallery in chunks of rows, and hands each
``query block x gallery chunk`` product to a :class:`Reducer`, which folds it
into its own summary (per-query AP, top-``k + 1`` lists, running top-k, counts)
and holds no loop of its own.  The engine owns what the reducers share:

* **Block sizes** (:func:`plan_scan`): one budget, ``working_memory`` MiB, turned
  into a query block and a gallery chunk from what a reducer's blocks cost (its
  :class:`Footprint`).  On the CPU the default is :data:`DEFAULT_WORKING_MEMORY`
  MiB, or scikit-learn's ``working_memory`` (:func:`sklearn.set_config`) where
  that limit is lower; the reducers also cap their blocks so that they stay in
  the caches.  On a GPU such cache-sized blocks would starve the device (a
  ``1,024 x 4,096`` product is a few microseconds of work; kernel launches and
  host round trips dominate), so there the blocks are as large as the budget
  allows, and the default budget is a quarter of the device's free memory
  (:func:`scan_budget`; inside a parallel worker, which may share the device
  with others, 1/64 of it).  :func:`device_memory` is the one reader of a
  device's free memory (the training data's placement reads it too).
* **Device placement**: a scan plans for the device its data lives on
  (:func:`planning_device`: NumPy arrays on the CPU, tensors on theirs).
* **The loops** (:meth:`Scan.run`): the one block loop (in order, or on
  ``n_jobs`` threads), the one chunk loop, cache-sized row slices of
  whole-gallery products, and second passes over some queries of a block (a
  reducer's recount or re-tie), on bit-identical products: the product of a
  (query block, gallery chunk) pair is always computed the same way.
* **Keys and ties**: :mod:`._keys`.
"""

from typing import NamedTuple

from collections import deque
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np
import sklearn
import torch
from sklearn.utils import gen_batches
from threadpoolctl import threadpool_limits

from ..._parallel import in_worker

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
    reduce_pairs : int or None, default=None
        The reducer takes each product in slices of rows of at most this many
        pairs (at least one row): a whole-gallery block comes from one matrix
        product but is reduced in cache-sized slices.  ``None``: whole products.
    """

    bytes_per_pair: int
    whole_gallery: bool = False
    max_query_block: int | None = None
    max_gallery_chunk: int | None = None
    max_pairs: int | None = None
    gpu_max_query_block: int | None = None
    reduce_pairs: int | None = None


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




def planning_device(A):
    """The device a scan of ``A`` plans for: a tensor's own, the CPU for anything else.

    The one place a scan's device is read; the tests patch it to run the GPU
    plans on CPU tensors.
    """
    return A.device if isinstance(A, torch.Tensor) else torch.device("cpu")


# --------------------------------------------------------------------------
# Reducers and the loops
# --------------------------------------------------------------------------


class Reducer:
    """The hooks :meth:`Scan.run` calls; a reducer holds no loop over blocks or chunks.

    ``rows`` and ``cols`` are slices of query and gallery rows; ``S`` is the
    product ``Q[rows] @ G[cols].T`` (or the rows of it a hook is given).  Hooks
    of different blocks may run at once on threads (``Scan(n_jobs > 1)``):
    they must write only their own rows.

    Attributes
    ----------
    revisit_at : {None, "block", "end"}
        When some queries need a second pass over the gallery: ``"block"``
        after each block's first pass (before :meth:`finish`), ``"end"`` once,
        after every block's first pass (one host synchronisation for the whole
        scan).  ``None``: never.
    """

    revisit_at = None

    def start(self, rows):
        """State of the block ``rows`` before its first chunk."""
        return None

    def reduce(self, state, rows, cols, S):
        """Fold the product ``S`` of query rows ``rows`` and gallery rows ``cols`` into ``state``."""
        raise NotImplementedError

    def revisit(self, state, rows):
        """Boolean mask over ``rows`` of the queries needing a second pass, or None.

        ``revisit_at="block"``: after the block's chunks, with its state;
        ``"end"``: once, with ``state=None`` and ``rows`` all the queries.
        No host synchronisation needed: the engine makes the one that reads it.
        """
        return None

    def start_again(self, state, rows, picked):
        """State of the second pass of the queries ``rows.start + picked`` (index array)."""
        return state

    def reduce_again(self, state, cols, S):
        """Fold the product ``S`` of the picked queries and gallery rows ``cols``."""

    def finish_again(self, state, rows, picked):
        """After the second pass of the picked queries of block ``rows``."""

    def finish(self, state, rows):
        """After the block's chunks (and its second pass, ``revisit_at="block"``)."""


class Scan:
    """Query blocks x gallery chunks of ``Q @ G.T``, within a memory budget.

    Parameters
    ----------
    Q, G : ndarray or torch.Tensor
        Query and gallery rows (the same kind, on one device, one dtype), or
        ``G=None`` and ``Q`` a precomputed score matrix, whose slices are the
        products.
    footprint : Footprint
        The reducer's block costs and caps (:func:`plan_scan`).
    working_memory : float or None, default=None
        Budget of the blocks in flight, in MiB (:func:`scan_budget`).
    n_jobs : int, default=1
        Blocks reduced at once on threads (NumPy's products, sorts and ufuncs
        release the GIL); they share the budget.
    bytes_per_query : int, default=0
        See :func:`plan_scan`.
    blas_threads : int or None, default=None
        BLAS threads during the scan (``None``: leave them).  One per block
        for cache-sized NumPy blocks: BLAS threads spinning between small
        products made them several times slower.
    reuse_buffer : bool, default=False
        Torch, one block at a time (``n_jobs=1``): write every product into one
        buffer (no fresh allocation per chunk); a product then lives only until
        the next one, so a reducer must copy what it keeps.

    Attributes
    ----------
    device : torch.device
        The device the blocks are planned for (:func:`planning_device`).
    plan : ScanPlan
    """

    def __init__(self, Q, G, footprint, *, working_memory=None, n_jobs=1, bytes_per_query=0,
                 blas_threads=None, reuse_buffer=False):
        self.Q, self.G = Q, G
        self.n_query = Q.shape[0]
        self.n_gallery = Q.shape[1] if G is None else G.shape[0]
        self.device = planning_device(Q)
        self.plan = plan_scan(footprint, self.n_query, self.n_gallery, working_memory,
                              self.device, n_jobs=n_jobs, bytes_per_query=bytes_per_query)
        self.n_jobs = n_jobs
        self.blas_threads = blas_threads
        self.slice_rows = (None if footprint.reduce_pairs is None
                           else max(1, footprint.reduce_pairs // self.n_gallery))
        self._buffer = None
        if reuse_buffer and isinstance(Q, torch.Tensor) and n_jobs == 1:  # threads: own products
            self._buffer = torch.empty(self.plan.query_block * self.plan.gallery_chunk,
                                       dtype=Q.dtype, device=Q.device)

    def run(self, reducer):
        """Run ``reducer`` over every block; returns it."""
        limits = (threadpool_limits(self.blas_threads) if self.blas_threads is not None
                  else nullcontext())
        with limits:
            deque(self.each_block(lambda rows: self._first_pass(reducer, rows)), maxlen=0)
            if reducer.revisit_at == "end":
                picked = reducer.revisit(None, slice(0, self.n_query))
                if picked is not None and bool(picked.any()):  # one host sync for the scan
                    deque(self.each_block(lambda rows: self._second_pass(
                        reducer, None, rows, picked[rows])), maxlen=0)
        return reducer

    def each_block(self, visit, *, threads=True):
        """THE block loop: ``visit(rows)`` of every query block, lazily, in order.

        With ``n_jobs > 1`` (and ``threads``) the blocks are visited on that
        many threads.  ``threads=False`` visits them one at a time, as the
        results are read (a generator handing blocks to a caller).
        """
        blocks = gen_batches(self.n_query, self.plan.query_block)
        if self.n_jobs == 1 or not threads:
            yield from map(visit, blocks)
            return
        with ThreadPoolExecutor(self.n_jobs) as pool:
            yield from pool.map(visit, blocks)

    def _first_pass(self, reducer, rows):
        state = reducer.start(rows)
        for cols, part, S in self.products(rows):
            reducer.reduce(state, part, cols, S)
        if reducer.revisit_at == "block":
            picked = reducer.revisit(state, rows)
            if picked is not None and bool(picked.any()):
                self._second_pass(reducer, state, rows, picked)
        reducer.finish(state, rows)

    def _second_pass(self, reducer, state, rows, picked):
        """The queries ``picked`` (mask over ``rows``) against the gallery again."""
        picked = (np.flatnonzero(picked) if isinstance(picked, np.ndarray)
                  else torch.nonzero(picked).ravel())
        if not len(picked):
            return
        state = reducer.start_again(state, rows, picked)
        for cols, _, S in self.products(rows, sliced=False):  # the first pass's products
            reducer.reduce_again(state, cols, S[picked])
        reducer.finish_again(state, rows, picked)

    def products(self, rows, sliced=True):
        """THE chunk loop: ``(cols, rows of S, S)`` for each gallery chunk of block ``rows``.

        With ``slice_rows`` (a whole-gallery product reduced in cache-sized
        slices) each product comes in slices of rows.
        """
        block = self.Q[rows]
        for cols in gen_batches(self.n_gallery, self.plan.gallery_chunk):
            if self.G is None:  # a score matrix: its slices are the products
                S = block[:, cols]
            elif self._buffer is None:
                S = block @ self.G[cols].T
            else:
                chunk = self.G[cols]
                S = self._buffer[:block.shape[0] * chunk.shape[0]].view(block.shape[0],
                                                                         chunk.shape[0])
                S = torch.mm(block, chunk.T, out=S)
            if not sliced or self.slice_rows is None:
                yield cols, rows, S
                continue
            for start in range(0, S.shape[0], self.slice_rows):
                part = slice(rows.start + start, min(rows.stop, rows.start + start
                                                     + self.slice_rows))
                yield cols, part, S[start:start + self.slice_rows]
