"""The scan engine: the one query-block × gallery-chunk loop under every ranking and search.

As in scikit-learn's ``_pairwise_distances_reduction``, :class:`Scan` owns the loops (block
sizes from :mod:`._plan`, threads, the date filter of :mod:`._filter`, second passes on
bit-identical products) and each figure is a :class:`Reducer` that folds every product
``Q[rows] @ G[cols].T`` into its own summary, the score matrix never held.
"""

from collections import deque
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np
import torch
from sklearn.utils import gen_batches

from ..._device import thread_limits
from ._filter import BYTES_PER_PAIR as FILTER_BYTES_PER_PAIR
from ._plan import plan_scan, planning_device


# --------------------------------------------------------------------------
# Reducers and the loops
# --------------------------------------------------------------------------


class Reducer:
    """The hooks :meth:`Scan.run` calls; a reducer holds no loop of its own.

    ``rows``: the block's query rows (a slice; in a second pass the picked rows' indices);
    ``cols``: a slice of gallery rows; ``S = Q[rows] @ G[cols].T``.  Hooks of different blocks
    may run at once on threads: each writes only its own rows.  ``revisit_at``: when
    :meth:`revisit` is asked, ``"block"`` (before :meth:`finish`), ``"end"`` or ``None``.
    """

    revisit_at = None

    def start(self, rows):
        """State of the block ``rows`` before its first chunk."""
        return None

    def reduce(self, state, rows, cols, S):
        """Fold the product ``S`` of query rows ``rows`` and gallery rows ``cols`` in ``state``."""
        raise NotImplementedError

    def finish(self, state, rows):
        """After the block's chunks (and its second pass, ``revisit_at="block"``)."""

    def revisit(self, state, rows):
        """``(picked, again)``: a boolean mask over ``rows`` of the queries needing a second pass
        (the engine makes the host sync) and the :class:`Reducer` that makes it; or None.
        Under ``"end"``: called once, ``state=None`` and ``rows`` all the queries."""
        return None


class Scan:
    """Query blocks × gallery chunks of ``Q @ G.T``, within a memory budget.

    Parameters
    ----------
    Q, G : ndarray or torch.Tensor
        Query and gallery rows (one kind, device and dtype), or ``G=None`` and ``Q`` a score
        matrix, whose slices are the products.
    footprint : Footprint
        How the reducer's blocks are scanned (:class:`._plan.Footprint`).
    working_memory, n_jobs : float or None, int
        Budget of the blocks in flight, in MiB, and how many run at once on threads.
    time_filter : TimeFilter or None, default=None
        Every product reaches the reducer with its non-candidates at ``-inf``.
    """

    def __init__(self, Q, G, footprint, *, working_memory=None, n_jobs=1, time_filter=None):
        self.Q, self.G = Q, G
        self.time_filter = time_filter
        if time_filter is not None:
            footprint = footprint._replace(bytes_per_pair=footprint.bytes_per_pair
                                           + FILTER_BYTES_PER_PAIR)
        self.n_query = Q.shape[0]
        self.n_gallery = Q.shape[1] if G is None else G.shape[0]
        self.device = planning_device(Q)
        self.plan = plan_scan(footprint, self.n_query, self.n_gallery, working_memory,
                              self.device, n_jobs=n_jobs)
        self.n_jobs = n_jobs
        self.blas_threads = footprint.blas_threads
        self.slice_rows = (None if footprint.reduce_pairs is None
                           else max(1, footprint.reduce_pairs // self.n_gallery))
        self._buffer = None
        if (footprint.reuse_buffer and isinstance(Q, torch.Tensor) and n_jobs == 1
                and self.device.type == "cpu"):  # threads: their own products
            self._buffer = torch.empty(self.plan.query_block * self.plan.gallery_chunk,
                                       dtype=Q.dtype, device=Q.device)

    def run(self, reducer):
        """Run ``reducer`` over every block; returns it."""
        limits = (thread_limits(self.blas_threads) if self.blas_threads is not None
                  else nullcontext())
        with limits:
            deque(self.each_block(lambda rows: self._first_pass(reducer, rows)), maxlen=0)
            if reducer.revisit_at == "end":
                found = reducer.revisit(None, slice(0, self.n_query))
                if found is not None and bool(found[0].any()):  # one host sync for the scan
                    picked, again = found
                    deque(self.each_block(lambda rows: self._second_pass(
                        again, rows, picked[rows])), maxlen=0)
        return reducer

    def each_block(self, visit, *, threads=True):
        """THE block loop: ``visit(rows)`` of every query block, lazily, in order (on ``n_jobs``
        threads unless ``threads=False``)."""
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
            found = reducer.revisit(state, rows)
            if found is not None and bool(found[0].any()):
                self._second_pass(found[1], rows, found[0])
        reducer.finish(state, rows)

    def _second_pass(self, again, rows, picked):
        """The queries ``picked`` (mask over ``rows``) against the gallery again, by ``again``."""
        picked = (np.flatnonzero(picked) if isinstance(picked, np.ndarray)
                  else torch.nonzero(picked).ravel())
        if not len(picked):
            return
        queries = picked + rows.start
        state = again.start(queries)
        for cols, _, S in self.products(rows, sliced=False):  # the first pass's products
            again.reduce(state, queries, cols, S[picked])
        again.finish(state, queries)

    def products(self, rows, sliced=True):
        """THE chunk loop: ``(cols, rows of S, S)`` for each gallery chunk of block ``rows`` (in
        cache-sized row slices when the footprint asks and ``sliced``)."""
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
            if self.time_filter is not None:  # a score matrix's slices are the caller's
                S = self.time_filter.apply(S, rows, cols, in_place=self.G is not None)
            if not sliced or self.slice_rows is None:
                yield cols, rows, S
                continue
            for start in range(0, S.shape[0], self.slice_rows):
                part = slice(rows.start + start, min(rows.stop, rows.start + start
                                                     + self.slice_rows))
                yield cols, part, S[start:start + self.slice_rows]
