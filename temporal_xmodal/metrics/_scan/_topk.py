"""Exact top-k of ``Q @ G.T`` per query: the search reducers of the scan engine.

The engine (:class:`._engine.Scan`) takes the queries in blocks and meets each
block with the gallery in chunks.  How a block is reduced to its top-k depends
on the device it is planned for:

* CPU: cache-sized blocks (at most 1,024 queries x 4,096 items), pruned by a
  threshold.  Each query keeps its running top-k and, as a threshold, its
  current k-th best score; only the items of a chunk that beat the threshold
  are kept (one compare and a count per score; after the first chunks a query
  has a few such items per chunk) and merged into the running top-k now and
  then.  A chunk with many such items (the first ones, or a gallery sorted by
  increasing score) is first cut to its own top-k with :func:`torch.topk`.
  The merges sort stably, so equal scores keep the smaller gallery index.
* GPU (any device but the CPU): the pruning above needs the count of the
  items above the threshold on the host (``nonzero``, ``.item()``): one host
  synchronisation per chunk, which on a GPU costs more than the products.
  There blocks are as large as the device's memory allows (1,024 to 4,096
  queries, the whole gallery or chunks of hundreds of thousands of items),
  each (block, chunk) product is reduced by one :func:`torch.topk`, and the
  chunk top-ks are merged by one stable sort of the concatenation: no host
  synchronisation until the end (:class:`_DenseTopk`).

Both give the exact top-k with the search tie rule of :mod:`._keys`: equal
scores keep the smaller gallery index.  :func:`torch.topk` does not promise
which of several tied items it keeps at the k-th place, so the GPU plan asks
each chunk for ``k + 1`` items: when the ``(k + 1)``-th ties with the k-th,
the chunk's tie group at its k-th score may have been cut arbitrarily.  That
matters only when that score is also the query's final k-th best score; such
queries (rare: exactly tied scores at the k-th place, e.g. integer embeddings
or duplicated items) are found with one synchronisation at the end and
searched again with the exact CPU-style merge, on the same products.
"""

import numpy as np
import torch

from ..._device import thread_controller
from ._engine import Reducer, Scan
from ._plan import Footprint

#: Most queries per CPU block, and most gallery rows per chunk: products of
#: 1,024 x 4,096 scores (16 MiB in float32) stay in the last-level cache.
_MAX_QUERY_BLOCK = 1024
_MAX_GALLERY_CHUNK = 4096


def topk_footprint(itemsize):
    """The search's :class:`Footprint` for scores of ``itemsize`` bytes.

    The score block plus topk's temporaries: about twice the block.  On the
    CPU at most 1,024 queries x 4,096 gallery rows (cache-sized), every
    product written into one buffer: a fresh 16 MiB product per chunk cost
    30% more (page faults).
    """
    return Footprint(2 * itemsize, max_query_block=_MAX_QUERY_BLOCK,
                     max_gallery_chunk=_MAX_GALLERY_CHUNK, reuse_buffer=True)


@torch.no_grad()  # scores are read as NumPy arrays (no autograd graph on them)
def topk(Q, G, k, *, working_memory=None, time_filter=None):
    """Exact top-``k`` of ``Q @ G.T`` per row, chunked (tensors on one device, same dtype).

    On the CPU threshold pruning in cache-sized blocks (:class:`_PrunedTopk`),
    on any other device large blocks reduced by :func:`torch.topk` without
    host synchronisation (:class:`_DenseTopk`); module notes.

    Parameters
    ----------
    Q : torch.Tensor of shape (n_query, dim)
        Queries.
    G : torch.Tensor of shape (n_gallery, dim)
        Gallery, on the device and with the dtype of ``Q``.
    k : int
        Neighbours per query (capped at ``n_gallery``).
    working_memory : float or None, default=None
        Budget of one score block in MiB (:func:`._plan.scan_budget`).
    time_filter : TimeFilter or None, default=None
        The date filter (:class:`._filter.TimeFilter`): each query's
        neighbours are among its candidates only.

    Returns
    -------
    scores : ndarray of shape (n_query, min(k, n_gallery))
        By decreasing score, equal scores by increasing index; ``-inf`` in the
        slots of a query with fewer than ``k`` candidates.
    indices : ndarray of int64, shape (n_query, min(k, n_gallery))
        ``-1`` in those slots.
    """
    k = min(k, G.shape[0])
    if time_filter is not None:
        time_filter = time_filter.on(Q.device)
    scan = Scan(Q, G, topk_footprint(Q.element_size()), working_memory=working_memory,
                time_filter=time_filter)
    reducer = (_PrunedTopk if scan.device.type == "cpu" else _DenseTopk)(
        torch.empty((Q.shape[0], k), dtype=Q.dtype, device=Q.device),
        torch.empty((Q.shape[0], k), dtype=torch.int64, device=Q.device))
    scan.run(reducer)
    scores, indices = reducer.scores.cpu().numpy(), reducer.indices.cpu().numpy()
    if time_filter is not None:  # slots no candidate filled (GPU: topk's picks among -inf)
        indices[scores == -np.inf] = -1
    return scores, indices


class _TopkResult(Reducer):
    """A search reducer: fills the rows of the (n_query, k) ``scores`` and ``indices``."""

    def __init__(self, scores, indices):
        self.scores, self.indices, self.k = scores, indices, scores.shape[1]


class _PrunedTopk(_TopkResult):
    """CPU: cache-sized score blocks, each query's k-th best score pruning the chunks.

    Also the exact re-tie pass of :class:`_DenseTopk` (its ``rows`` then an
    index tensor of the picked queries).
    """

    def start(self, rows):
        n_rows = rows.stop - rows.start if isinstance(rows, slice) else len(rows)
        return _RunningTopk(n_rows, self.k, self.scores.dtype, self.scores.device)

    def reduce(self, top, rows, cols, S):
        top.add(S, cols.start)  # add() keeps copies, not views of the engine's buffer

    def finish(self, top, rows):
        top.merge()
        n = top.scores.shape[1]  # fewer than k under a date filter: the rest stays empty
        self.scores[rows, :n], self.indices[rows, :n] = top.scores, top.indices
        if n < self.k:
            self.scores[rows, n:], self.indices[rows, n:] = -torch.inf, -1


class _DenseTopk(_TopkResult):
    """GPU: one product and one topk per (block, chunk), no host sync in the scan.

    Per query block, each gallery chunk's scores ``S`` are cut to their best
    ``k + 1`` by :func:`torch.topk`.  The chunk's first ``k`` are put in
    increasing gallery order and appended to the block's running top-k (whose
    items all have smaller indices); one stable sort by decreasing score then
    leaves equal scores by increasing index, and its first ``k`` columns are
    the new running top-k.

    Where the ``(k + 1)``-th score of a chunk equals its k-th, topk may have
    kept any of the tied items: the chunk's k-th score is recorded (the
    largest such score per query, ``cut_at``).  Every chunk's k-th score is at
    most the query's final k-th score ``T``, so only a query with
    ``cut_at == T`` may lack a tied item of smaller index; those queries are
    searched again by :class:`_PrunedTopk`'s exact merge, into the same
    outputs (``revisit_at="end"``: after one host synchronisation for the
    whole search, on the engine's bit-identical products).
    """

    revisit_at = "end"

    def __init__(self, scores, indices):
        super().__init__(scores, indices)
        self.cut = torch.empty(len(scores), dtype=torch.bool, device=scores.device)

    def start(self, rows):
        cut_at = torch.full((rows.stop - rows.start,), -torch.inf, dtype=self.scores.dtype,
                            device=self.scores.device)
        return {"scores": None, "indices": None, "cut_at": cut_at}

    def reduce(self, top, rows, cols, S):
        k_c = min(self.k, S.shape[1])
        vals, pos = torch.topk(S, min(k_c + 1, S.shape[1]), dim=1)  # sorted, decreasing
        if vals.shape[1] > k_c:  # the chunk has more than k items
            kth = vals[:, k_c - 1]
            top["cut_at"] = torch.where(vals[:, k_c] == kth, torch.maximum(top["cut_at"], kth),
                                        top["cut_at"])
            vals, pos = vals[:, :k_c], pos[:, :k_c]
        pos, order = torch.sort(pos, dim=1)  # increasing index: ties ordered below
        vals = vals.gather(1, order)
        pos += cols.start
        if top["scores"] is not None:
            vals, pos = torch.cat([top["scores"], vals], 1), torch.cat([top["indices"], pos], 1)
        vals, order = torch.sort(vals, dim=1, descending=True, stable=True)
        top["scores"], top["indices"] = vals[:, :self.k], pos.gather(1, order[:, :self.k])

    def finish(self, top, rows):
        self.scores[rows], self.indices[rows] = top["scores"], top["indices"]
        self.cut[rows] = top["cut_at"] == top["scores"][:, -1]

    def revisit(self, state, rows):
        return self.cut, _PrunedTopk(self.scores, self.indices)


class _RunningTopk:
    """Running top-k of a block of queries over gallery chunks, pruned by a threshold.

    ``scores``/``indices`` hold each query's best items so far, sorted by
    decreasing score then increasing index; ``threshold`` is the k-th best score
    (-inf until k items are in).  Candidates wait (``pending_*``, one entry
    per chunk) until there are about ``k`` per query, then are merged.
    """

    def __init__(self, n_rows, k, dtype, device):
        self.k = k
        self.scores = torch.empty((n_rows, 0), dtype=dtype, device=device)
        self.indices = torch.empty((n_rows, 0), dtype=torch.int64, device=device)
        self.threshold = torch.full((n_rows, 1), -torch.inf, dtype=dtype, device=device)
        self._clear()

    def _clear(self):
        self.pending_rows, self.pending_scores, self.pending_indices = [], [], []
        self.pending_sizes, self.n_pending = [], 0

    def add(self, S, offset):
        """Take the items of a chunk's scores ``S`` (gallery rows from ``offset``)."""
        found = _candidates(S, self.threshold, self.k)
        if found is None:
            return
        rows, cols, scores = found
        self.pending_rows.append(rows)
        self.pending_scores.append(scores)
        self.pending_indices.append(cols + offset)
        self.pending_sizes.append(rows.numel())
        self.n_pending += rows.numel()
        if self.n_pending > S.shape[0] * self.k or self.scores.shape[1] < self.k:
            self.merge()  # or at once while no threshold is set

    def merge(self):
        """Merge the pending candidates into the running top-k; update the threshold.

        On one intra-op thread (ops on ~10^5 items: torch's threads cost more
        than they give), for the calling thread only: the OpenMP thread count
        is per thread, so torch's process-wide setting and every other
        thread's ops are left alone.
        """
        if not self.pending_rows:
            return
        torch.get_num_threads()  # torch's per-thread setup first: it would undo the limit
        with _openmp().limit(limits=1):
            self._merge()

    def _merge(self):
        """Lay each query's candidates side by side after its best items; keep the top k."""
        n_rows = self.scores.shape[0]
        rows, scores = torch.cat(self.pending_rows), torch.cat(self.pending_scores)
        idx = torch.cat(self.pending_indices)
        pos = _places(rows, self.pending_sizes, n_rows)
        self._clear()
        width = int(pos.max()) + 1
        s = torch.full((n_rows, width), -torch.inf, dtype=scores.dtype, device=scores.device)
        i = torch.full((n_rows, width), -1, dtype=torch.int64, device=idx.device)
        s[rows, pos], i[rows, pos] = scores, idx
        # every candidate has a larger index than the items already kept, so a
        # stable sort by decreasing score leaves equal scores by increasing index
        s, order = torch.sort(torch.cat([self.scores, s], 1), dim=1, descending=True,
                              stable=True)
        keep = min(self.k, s.shape[1])
        self.scores = s[:, :keep]
        self.indices = torch.cat([self.indices, i], 1).gather(1, order[:, :keep])
        if keep == self.k:
            self.threshold = self.scores[:, -1:]


def _openmp():
    """The loaded OpenMP runtimes (torch's intra-op threads)."""
    return thread_controller().select(user_api="openmp")


def _places(rows, sizes, n_rows):
    """Column of each candidate when each row's candidates are laid side by side.

    ``rows`` concatenates chunks of ``sizes`` items, each sorted by row (and by
    gallery index within a row); the columns keep that order.  Vectorised, no
    sort (1-D torch sorts on the CPU are slow).
    """
    device = rows.device
    part = torch.repeat_interleave(torch.arange(len(sizes), device=device),
                                   torch.tensor(sizes, device=device))
    cell = part * n_rows + rows  # (chunk, row), increasing along the concatenation
    counts = torch.bincount(cell, minlength=len(sizes) * n_rows)
    cell_start = counts.cumsum(0) - counts
    counts = counts.view(len(sizes), n_rows)
    before = (counts.cumsum(0) - counts).view(-1)  # same row, earlier chunks
    return before[cell] + torch.arange(rows.numel(), device=device) - cell_start[cell]


def _candidates(S, threshold, k):
    """``(rows, cols, scores)`` of the entries of ``S`` that may enter the top-``k``.

    Those strictly above their row's ``threshold`` (a later item equal to the
    k-th best has a larger index); when there are more than ``k`` per row on
    average, only those also within their row's top-``k`` of this chunk (ties
    kept).  ``None`` when there are none.  On the CPU the compare and
    nonzero run in NumPy, several times faster there than in torch.
    """
    on_cpu = S.device.type == "cpu"
    s, t = (S.numpy(), threshold.numpy()) if on_cpu else (S, threshold)
    above = s > t
    # on the CPU the positions come at once (counting first is one more pass)
    flat = np.flatnonzero(above) if on_cpu else None  # 2-D np.nonzero is several times slower
    n_above = flat.size if on_cpu else int(torch.count_nonzero(above))
    if n_above == 0:
        return None
    if n_above > S.shape[0] * k:  # first chunks, or a gallery by increasing score
        kth = torch.topk(S, min(k, S.shape[1]), dim=1, sorted=False).values
        kth = kth.min(dim=1, keepdim=True).values
        above &= s >= (kth.numpy() if on_cpu else kth)
        flat = np.flatnonzero(above) if on_cpu else None
    if not on_cpu:
        rows, cols = above.nonzero(as_tuple=True)
        return rows, cols, S[rows, cols]
    rows, cols = np.divmod(flat, s.shape[1])
    return torch.from_numpy(rows), torch.from_numpy(cols), torch.from_numpy(s.ravel()[flat])
