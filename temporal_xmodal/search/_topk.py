"""Exact top-k inner-product search over embedding matrices, chunked.

The gallery is scanned in chunks of rows.  For every chunk, the similarities of
a block of queries to the chunk's items are computed with one matrix product
(on the device of the computation) and reduced at once to their ``k`` best with
:func:`torch.topk`; the per-chunk winners are merged into a running top-k of each
query.  No query x gallery matrix is ever held: the largest temporary is one
``query block x gallery chunk`` score block, sized from ``working_memory``.

``backend="faiss"`` runs the same exact search with ``faiss.IndexFlatIP``.
"""

import numbers

import numpy as np
import torch

#: Default memory budget of one score block, in MiB.
DEFAULT_WORKING_MEMORY = 256
#: Most queries per block: few queries and many gallery columns per block keep
#: the running top-k merges few; the matrix product stays efficient.
_MAX_QUERY_BLOCK = 256
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
    n_bad = sum(int((~torch.isfinite(T[r:r + 65536])).any(dim=1).sum())
                for r in range(0, T.shape[0], 65536))  # chunked: no full-size mask
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
    """(query rows, gallery rows) of one score block within ``working_memory`` MiB."""
    budget = (DEFAULT_WORKING_MEMORY if working_memory is None else working_memory) * 2**20
    # the score block plus topk's temporaries: about twice the block
    entries = max(1, int(budget // (2 * itemsize)))
    q_block = max(1, min(n_query, _MAX_QUERY_BLOCK, entries))
    g_block = max(1, min(n_gallery, entries // q_block))
    return q_block, g_block


def _sort_ties_by_index(scores, indices):
    """Order each row by decreasing score, equal scores by increasing index (deterministic).

    Returns NumPy arrays (the results are small: n_queries x k).
    """
    scores, indices = scores.cpu().numpy(), indices.cpu().numpy()
    order = np.lexsort((indices, -scores), axis=1)
    return np.take_along_axis(scores, order, 1), np.take_along_axis(indices, order, 1)


def topk_torch(Q, G, k, *, working_memory=None):
    """Exact top-``k`` of ``Q @ G.T`` per row, chunked (tensors on one device, same dtype).

    Returns ``(scores, indices)`` arrays of shape ``(n_query, min(k, n_gallery))``.
    """
    n_q, n_g = Q.shape[0], G.shape[0]
    k = min(k, n_g)
    q_block, g_block = block_sizes(n_q, n_g, Q.element_size(), working_memory)
    best_s = torch.full((n_q, 0), -torch.inf, dtype=Q.dtype, device=Q.device)
    best_i = torch.empty((n_q, 0), dtype=torch.int64, device=Q.device)
    for g0 in range(0, n_g, g_block):
        chunk = G[g0:g0 + g_block]
        kc = min(k, chunk.shape[0])
        new_s, new_i = [], []
        for q0 in range(0, n_q, q_block):
            s, i = torch.topk(Q[q0:q0 + q_block] @ chunk.T, kc, dim=1, sorted=False)
            new_s.append(s)
            new_i.append(i + g0)
        s = torch.cat([best_s, torch.cat(new_s)], dim=1)
        i = torch.cat([best_i, torch.cat(new_i)], dim=1)
        if s.shape[1] > k:
            s, pos = torch.topk(s, k, dim=1, sorted=False)
            i = i.gather(1, pos)
        best_s, best_i = s, i
    return _sort_ties_by_index(best_s, best_i)


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
        ``"torch"``: chunked matrix products and :func:`torch.topk` on
        ``device``.  ``"faiss"``: ``faiss.IndexFlatIP`` (exact, float32, CPU;
        needs the ``faiss`` extra).
    working_memory : float or None, default=None
        Budget of one score block in MiB (default 256).
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
