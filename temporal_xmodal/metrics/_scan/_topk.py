"""Exact top-k of ``Q @ G.T`` per query: the search reducers of the scan engine.

On the CPU, cache-sized blocks pruned by each query's running k-th best score
(:class:`_PrunedTopk`); on a GPU, large blocks each reduced by one :func:`torch.topk`
without host synchronisation (:class:`_DenseTopk`).  Both keep equal scores by increasing
gallery index.  Read more in docs/search.md.
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
    """The search's :class:`Footprint` for scores of ``itemsize`` bytes: twice the score block;
    on the CPU cache-sized blocks, every product written into one buffer."""
    return Footprint(2 * itemsize, max_query_block=_MAX_QUERY_BLOCK,
                     max_gallery_chunk=_MAX_GALLERY_CHUNK, reuse_buffer=True)


@torch.no_grad()  # scores are read as NumPy arrays (no autograd graph on them)
def topk(Q, G, k, *, working_memory=None, time_filter=None):
    """Exact top-``k`` of ``Q @ G.T`` per row, chunked (tensors on one device, one dtype).

    Returns ``(scores, indices)``, NumPy arrays of shape ``(n_query, min(k, n_gallery))`` by
    decreasing score, equal scores by increasing index; slots a ``time_filter``
    (:class:`._filter.TimeFilter`) leaves empty hold ``-inf`` and ``-1``.  ``working_memory``:
    MiB of one score block.
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
    """CPU: cache-sized blocks, each query's k-th best score pruning the chunks; also the exact
    re-tie pass of :class:`_DenseTopk` (``rows`` then an index tensor)."""

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

    The chunks' best ``k + 1`` are merged by one stable sort (equal scores by increasing
    index); the queries whose final k-th score ties a chunk's cut (``cut_at``: topk may have
    kept any of the tied items) are redone by :class:`_PrunedTopk` (``revisit_at="end"``)."""

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
    """Running top-k of a block of queries over gallery chunks (by decreasing score, then
    increasing index), pruned by ``threshold``, the k-th best score; candidates wait in
    ``pending_*`` until there are about ``k`` per query."""

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
        """Merge the pending candidates and update the threshold, on one OpenMP thread for the
        calling thread only (torch's process-wide setting is left alone)."""
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
    """Column of each candidate when each row's candidates are laid side by side (``rows``
    concatenates chunks of ``sizes`` items, each sorted by row); vectorised, no sort."""
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
    """``(rows, cols, scores)`` of the entries of ``S`` strictly above their row's ``threshold``
    (and, with more than ``k`` per row, within the chunk's own top-``k``, ties kept); ``None``
    when there are none."""
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
