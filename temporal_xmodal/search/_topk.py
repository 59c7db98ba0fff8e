"""Exact top-k inner-product search over embedding matrices, chunked.

Queries are taken in blocks, and each block scans the gallery in chunks of
rows: one matrix product (on the device of the computation) gives the block's
similarities to the chunk's items.  How a block is reduced to its top-k
depends on the device (:func:`_plan`):

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
  synchronisation until the end (:func:`_topk_dense`).

Both give the exact top-k with the same tie rule: equal scores keep the
smaller gallery index.  :func:`torch.topk` does not promise which of several
tied items it keeps at the k-th place, so the GPU plan asks each chunk for
``k + 1`` items: when the ``(k + 1)``-th ties with the k-th, the chunk's tie
group at its k-th score may have been cut arbitrarily.  That matters only when
that score is also the query's final k-th best score; such queries (rare:
exactly tied scores at the k-th place, e.g. integer embeddings or duplicated
items) are found with one synchronisation at the end and searched again with
the exact CPU-style merge, on the same products.  No query x gallery matrix is
ever held: the largest temporary is one ``query block x gallery chunk`` score
block, sized from ``working_memory``.

``backend="faiss"`` runs the same exact search with ``faiss.IndexFlatIP``.
"""

import numbers
from typing import NamedTuple

import numpy as np
import torch

from ..metrics._device import gpu_block_sizes, nonfinite_rows, scan_budget

#: Default memory budget of one score block on the CPU, in MiB (on a GPU: a
#: share of its free memory, see :func:`~temporal_xmodal.metrics._device.scan_budget`).
DEFAULT_WORKING_MEMORY = 256
#: Most queries per block, and most gallery rows per chunk: products of
#: 1,024 x 4,096 scores (16 MiB in float32) stay in the last-level cache.  2,000
#: x 200,000 (dim 200, 2 threads): 1.8 s of products against 2.7 s in blocks of
#: 256 x 131,072.
_MAX_QUERY_BLOCK = 1024
_MAX_GALLERY_CHUNK = 4096
_BACKENDS = ("torch", "faiss")
_SIMILARITIES = ("dot", "cosine")
FAISS_MISSING = (
    "backend='faiss' needs the faiss package, which is not installed. Install it with "
    "`pip install temporal-xmodal[faiss]` (or `pip install faiss-cpu`), or use the default "
    "backend='torch', which returns the same top-k."
)


def import_faiss():
    """Import :mod:`faiss`, or raise an ImportError that says how to install it."""
    try:
        import faiss
    except ImportError as exc:
        raise ImportError(FAISS_MISSING) from exc
    return faiss


def as_embedding_tensor(A, name, device=None):
    """2-D finite float tensor (float32/float64 kept, others -> float32) on ``device``."""
    T = torch.as_tensor(A)
    if T.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_items, dim); got shape {tuple(T.shape)}.")
    if T.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 rows).")
    if T.dtype not in (torch.float32, torch.float64):
        T = T.to(torch.float32)
    if device is not None:
        T = T.to(device)
    n_bad = nonfinite_rows(T)
    if n_bad:
        raise ValueError(f"{name} contains NaN or infinity in {n_bad} of its {T.shape[0]} rows.")
    return T


def normalise_rows(T):
    """Rows scaled to unit L2 norm (zero rows stay zero)."""
    return T / T.norm(dim=1, keepdim=True).clamp_min(1e-12)


def check_k(k):
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k must be a positive int; got {k!r}.")
    return int(k)


def block_sizes(n_query, n_gallery, itemsize, working_memory):
    """``(query rows, gallery rows)`` of one CPU score block within ``working_memory`` MiB.

    Parameters
    ----------
    n_query, n_gallery : int
        Sizes of the search.
    itemsize : int
        Bytes of one score (4 for float32, 8 for float64).
    working_memory : float or None
        Budget in MiB (``None``: 256).

    Returns
    -------
    query_block, gallery_chunk : int
        At most 1,024 x 4,096 (cache-sized), within the budget.
    """
    budget = (DEFAULT_WORKING_MEMORY if working_memory is None else working_memory) * 2**20
    # the score block plus topk's temporaries: about twice the block
    entries = max(1, int(budget // (2 * itemsize)))
    q_block = max(1, min(n_query, _MAX_QUERY_BLOCK, entries))
    g_block = max(1, min(n_gallery, _MAX_GALLERY_CHUNK, entries // q_block))
    return q_block, g_block


class _Plan(NamedTuple):
    """How :func:`topk_torch` scans: block sizes, and threshold pruning (CPU) or not (GPU)."""

    query_block: int
    gallery_chunk: int
    prune: bool


def _plan(n_query, n_gallery, itemsize, working_memory, device):
    """Blocks of a search on ``device``: cache-sized and pruned on the CPU, large on a GPU.

    The CPU plan is :func:`block_sizes` (score blocks in the last-level cache,
    threshold pruning).  Any other device gets the GPU plan: blocks of 1,024
    to 4,096 queries and gallery chunks as wide as the budget allows (the
    whole gallery when it fits), where the budget is ``working_memory`` MiB
    or, by default, a quarter of the device's free memory (at most 8 GiB).
    Tests call it, or patch it, with ``device="cuda"`` to run the GPU plan on
    CPU tensors.
    """
    device = torch.device(device)
    if device.type == "cpu":
        return _Plan(*block_sizes(n_query, n_gallery, itemsize, working_memory), prune=True)
    budget = scan_budget(device, working_memory)
    # the score block plus topk's temporaries: about twice the block, as on the CPU
    q_block, g_chunk = gpu_block_sizes(n_query, n_gallery, 2 * itemsize, budget)
    return _Plan(q_block, g_chunk, prune=False)


def _sort_ties_by_index(scores, indices):
    """Order each row by decreasing score, equal scores by increasing index (deterministic).

    Returns NumPy arrays (the results are small: n_queries x k).
    """
    scores, indices = scores.cpu().numpy(), indices.cpu().numpy()
    order = np.lexsort((indices, -scores), axis=1)
    return np.take_along_axis(scores, order, 1), np.take_along_axis(indices, order, 1)


@torch.no_grad()  # scores are read as NumPy arrays (no autograd graph on them)
def topk_torch(Q, G, k, *, working_memory=None):
    """Exact top-``k`` of ``Q @ G.T`` per row, chunked (tensors on one device, same dtype).

    Blocks and method follow the device (:func:`_plan`): threshold pruning in
    cache-sized blocks on the CPU, large blocks reduced by :func:`torch.topk`
    without host synchronisation on a GPU (module notes).

    Parameters
    ----------
    Q : torch.Tensor of shape (n_query, dim)
        Queries.
    G : torch.Tensor of shape (n_gallery, dim)
        Gallery, on the device and with the dtype of ``Q``.
    k : int
        Neighbours per query (capped at ``n_gallery``).
    working_memory : float or None, default=None
        Budget of one score block in MiB (default: 256 on the CPU, a quarter
        of the free memory, at most 8 GiB, on a GPU).

    Returns
    -------
    scores : ndarray of shape (n_query, min(k, n_gallery))
        By decreasing score, equal scores by increasing index.
    indices : ndarray of int64, shape (n_query, min(k, n_gallery))
    """
    n_q, n_g = Q.shape[0], G.shape[0]
    k = min(k, n_g)
    plan = _plan(n_q, n_g, Q.element_size(), working_memory, Q.device)
    search = _topk_pruned if plan.prune else _topk_dense
    scores, indices = search(Q, G, k, plan.query_block, plan.gallery_chunk)
    return scores.cpu().numpy(), indices.cpu().numpy()


def _topk_pruned(Q, G, k, q_block, g_block):
    """CPU plan: cache-sized score blocks, each query's k-th best score pruning the chunks."""
    n_q, n_g = Q.shape[0], G.shape[0]
    scores = torch.empty((n_q, k), dtype=Q.dtype, device=Q.device)
    indices = torch.empty((n_q, k), dtype=torch.int64, device=Q.device)
    # one score buffer, reused: a fresh 16 MiB product per chunk cost 30% more (page faults)
    buffer = torch.empty(q_block * g_block, dtype=Q.dtype, device=Q.device)
    for q0 in range(0, n_q, q_block):
        top = _RunningTopk(min(q_block, n_q - q0), k, Q.dtype, Q.device)
        block = Q[q0:q0 + q_block]
        for g0 in range(0, n_g, g_block):
            chunk = G[g0:g0 + g_block]
            S = buffer[:block.shape[0] * chunk.shape[0]].view(block.shape[0], chunk.shape[0])
            top.add(torch.mm(block, chunk.T, out=S), g0)  # add() keeps copies, not views
        top.merge()
        scores[q0:q0 + q_block], indices[q0:q0 + q_block] = top.scores, top.indices
    return scores, indices


def _topk_dense(Q, G, k, q_block, g_chunk):
    """GPU plan: one product and one topk per (block, chunk), no host sync in the scan.

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
    searched again (:func:`_retie`) after one host synchronisation for the
    whole search.
    """
    n_q, n_g = Q.shape[0], G.shape[0]
    scores = torch.empty((n_q, k), dtype=Q.dtype, device=Q.device)
    indices = torch.empty((n_q, k), dtype=torch.int64, device=Q.device)
    cut = torch.empty(n_q, dtype=torch.bool, device=Q.device)
    for q0 in range(0, n_q, q_block):
        block = Q[q0:q0 + q_block]
        top_s = top_i = None
        cut_at = torch.full((block.shape[0],), -torch.inf, dtype=Q.dtype, device=Q.device)
        for g0 in range(0, n_g, g_chunk):
            S = block @ G[g0:g0 + g_chunk].T
            k_c = min(k, S.shape[1])
            vals, pos = torch.topk(S, min(k_c + 1, S.shape[1]), dim=1)  # sorted, decreasing
            del S
            if vals.shape[1] > k_c:  # the chunk has more than k items
                kth = vals[:, k_c - 1]
                cut_at = torch.where(vals[:, k_c] == kth, torch.maximum(cut_at, kth), cut_at)
                vals, pos = vals[:, :k_c], pos[:, :k_c]
            pos, order = torch.sort(pos, dim=1)  # increasing index: ties ordered below
            vals = vals.gather(1, order)
            pos += g0
            if top_s is not None:
                vals, pos = torch.cat([top_s, vals], 1), torch.cat([top_i, pos], 1)
            vals, order = torch.sort(vals, dim=1, descending=True, stable=True)
            top_s, top_i = vals[:, :k], pos.gather(1, order[:, :k])
        rows = slice(q0, q0 + q_block)
        scores[rows], indices[rows] = top_s, top_i
        cut[rows] = cut_at == top_s[:, -1]
    if bool(cut.any()):  # the one host synchronisation of the scan
        _retie(Q, G, k, q_block, g_chunk, cut, scores, indices)
    return scores, indices


def _retie(Q, G, k, q_block, g_chunk, redo, scores, indices):
    """Search the queries ``redo`` again with the exact merge of :class:`_RunningTopk`.

    The products are those of :func:`_topk_dense` (same blocks and chunks,
    rows picked afterwards), so the scores are bit-identical to the ones the
    first pass compared.  Host synchronisations are fine here: only queries
    with exactly tied scores at their k-th place come here.
    """
    redo = redo.nonzero().ravel()
    for q0 in range(0, Q.shape[0], q_block):
        rows = redo[(redo >= q0) & (redo < q0 + q_block)]
        if not len(rows):
            continue
        block = Q[q0:q0 + q_block]
        top = _RunningTopk(len(rows), k, Q.dtype, Q.device)
        for g0 in range(0, G.shape[0], g_chunk):
            top.add((block @ G[g0:g0 + g_chunk].T)[rows - q0], g0)
        top.merge()
        scores[rows], indices[rows] = top.scores, top.indices


class _RunningTopk:
    """Running top-k of a block of queries over gallery chunks, pruned by a threshold.

    ``scores``/``indices`` hold each query's best items so far, sorted by
    decreasing score then increasing index; ``threshold`` is the k-th best score
    (-inf until k items are in).  Candidates wait in ``pending`` until there
    are about ``k`` per query, then are merged.
    """

    def __init__(self, n_rows, k, dtype, device):
        self.k = k
        self.scores = torch.empty((n_rows, 0), dtype=dtype, device=device)
        self.indices = torch.empty((n_rows, 0), dtype=torch.int64, device=device)
        self.threshold = torch.full((n_rows, 1), -torch.inf, dtype=dtype, device=device)
        self.pending, self.n_pending = [], 0

    def add(self, S, offset):
        """Take the items of a chunk's scores ``S`` (gallery rows from ``offset``)."""
        found = _candidates(S, self.threshold, self.k)
        if found is None:
            return
        rows, cols, scores = found
        self.pending.append((rows, scores, cols + offset))
        self.n_pending += rows.numel()
        if self.n_pending > S.shape[0] * self.k or self.scores.shape[1] < self.k:
            self.merge()  # or at once while no threshold is set

    def merge(self):
        """Merge the pending candidates into the running top-k; update the threshold."""
        if not self.pending:
            return
        # ops on ~10^5 items: torch's intra-op threads cost more than they give
        # (the merges of 1,000 x 200,000: 1.24 s on 2 threads, 0.21 s on 1)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            self._merge()
        finally:
            torch.set_num_threads(threads)

    def _merge(self):
        """Lay each query's candidates side by side after its best items; keep the top k."""
        n_rows = self.scores.shape[0]
        rows, scores, idx = (torch.cat(parts) for parts in zip(*self.pending))
        pos = _places(rows, [p[0].numel() for p in self.pending], n_rows)
        self.pending, self.n_pending = [], 0
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


def _places(rows, sizes, n_rows):
    """Column of each candidate when each row's candidates are laid side by side.

    ``rows`` concatenates chunks of ``sizes`` items, each sorted by row (and by
    gallery index within a row); the columns keep that order.  Vectorised, no
    sort: 1-D torch sorts on the CPU took 190 ms for 200,000 items.
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
    nonzero run in NumPy: on a 1,000 x 4,096 block they take 0.2 and 0.6 ms
    there against 1 to 8 ms in torch.
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


def topk_faiss(Q, G, k, *, index=None, n_threads=None):
    """Exact top-``k`` inner products with ``faiss.IndexFlatIP`` (float32).

    ``index`` is a prebuilt ``IndexFlatIP`` holding ``G``; otherwise one is built.
    """
    faiss = import_faiss()
    if n_threads is not None:
        faiss.omp_set_num_threads(int(n_threads))
    if index is None:
        index = build_faiss_index(G)
    k = min(k, index.ntotal)
    q = np.ascontiguousarray(Q.detach().cpu().numpy(), dtype=np.float32)
    D, I = index.search(q, k)
    return _sort_ties_by_index(torch.from_numpy(D), torch.from_numpy(I))


def build_faiss_index(G):
    """A ``faiss.IndexFlatIP`` holding the rows of ``G`` (as float32)."""
    faiss = import_faiss()
    g = np.ascontiguousarray(torch.as_tensor(G).detach().cpu().numpy(), dtype=np.float32)
    index = faiss.IndexFlatIP(g.shape[1])
    index.add(g)
    return index


def search_embeddings(query, gallery, k=10, *, similarity="dot", backend="torch",
                      working_memory=None, device=None):
    """Exact top-``k`` gallery items of each query by inner product (or cosine).

    The low-level search under :class:`CrossModalIndex`: it works on any two
    embedding matrices of the same width, e.g. the output of an estimator's
    ``transform_image`` / ``transform_text``, CLIP features, or a memory map.
    Memory stays bounded: the gallery is scanned in chunks and each query
    block's similarities to one chunk (at most ``working_memory`` MiB) are
    reduced to their top ``k`` before the next chunk.

    Parameters
    ----------
    query : array-like or torch.Tensor of shape (n_queries, dim)
        Query embeddings.
    gallery : array-like or torch.Tensor of shape (n_gallery, dim)
        Gallery embeddings.  float32 and float64 are searched in their own
        precision (other dtypes as float32); with ``backend="torch"`` the
        gallery is not copied when it is already a tensor on ``device``.
    k : int, default=10
        Neighbours per query; at most ``n_gallery`` are returned.
    similarity : {"dot", "cosine"}, default="dot"
        Score of a pair.  The estimators' embeddings are L2-normalised, so
        "dot" is their cosine; "cosine" normalises the rows first.
    backend : {"torch", "faiss"}, default="torch"
        ``"torch"``: chunked matrix products on ``device`` (on the CPU each
        query's running k-th best score prunes the chunks; on a GPU large
        blocks are reduced by :func:`torch.topk` without host
        synchronisation; the same top-k).  ``"faiss"``:
        ``faiss.IndexFlatIP`` (exact, float32, CPU; needs the ``faiss`` extra).
    working_memory : float or None, default=None
        Budget of one score block in MiB.  Default: 256 on the CPU; on a GPU
        a quarter of its free memory, at most 8 GiB.
    device : str, torch.device or None, default=None
        Where to compute (torch backend).  ``None``: the gallery's device when
        it is a tensor, else the CPU.

    Returns
    -------
    scores : ndarray of shape (n_queries, min(k, n_gallery))
        Similarities, decreasing along each row (equal scores: smaller index
        first).
    indices : ndarray of int64, shape (n_queries, min(k, n_gallery))
        Gallery row of each neighbour.

    Raises
    ------
    ValueError
        On a bad ``k``, ``similarity`` or ``backend``, non-2-D, empty or
        non-finite embeddings, or query and gallery of different widths.
    ImportError
        ``backend="faiss"`` without faiss installed.

    Examples
    --------
    >>> import numpy as np
    >>> from temporal_xmodal.search import search_embeddings
    >>> G = np.eye(4)
    >>> scores, idx = search_embeddings(np.array([[0.0, 1.0, 0.5, 0.0]]), G, k=2)
    >>> idx
    array([[1, 2]])
    """
    k = check_k(k)
    if similarity not in _SIMILARITIES:
        raise ValueError(f"similarity must be one of {_SIMILARITIES}; got {similarity!r}.")
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {_BACKENDS}; got {backend!r}.")
    if backend == "faiss":
        import_faiss()
    if device is None:
        device = gallery.device if isinstance(gallery, torch.Tensor) else "cpu"
    G = as_embedding_tensor(gallery, "gallery", device)
    Q = as_embedding_tensor(query, "query", device).to(G.dtype)
    if Q.shape[1] != G.shape[1]:
        raise ValueError(
            f"query and gallery embeddings differ in dimension: {Q.shape[1]} vs {G.shape[1]}."
        )
    if similarity == "cosine":
        Q, G = normalise_rows(Q), normalise_rows(G)
    if backend == "faiss":
        scores, indices = topk_faiss(Q, G, k)
    else:
        scores, indices = topk_torch(Q, G, k, working_memory=working_memory)
    return scores, indices
