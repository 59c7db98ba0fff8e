"""Exact top-k search of embedding matrices: the scan engine's top-k (torch), or faiss."""

import numpy as np
import torch
from sklearn.utils._param_validation import StrOptions, validate_params

from .._device import resolve_device
from .._input import check_embedding, check_embeddings
from ..metrics._scan import (
    K_RANGE,
    WORKING_MEMORY_RANGE,
    order_by_score_then_index,
    prepare_similarity,
    topk,
)

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
    """2-D finite float tensor (float32/float64 kept, others float32) on ``device``."""
    return check_embedding(A, name, kind="torch", dtype=(torch.float32, torch.float64),
                           device=device)


def topk_faiss(Q, G, k, *, index=None, n_threads=None, time_filter=None):
    """Exact top-``k`` inner products with ``faiss.IndexFlatIP`` (float32; ``index`` prebuilt, or
    built from ``G``).  Under a date filter one ``IDSelectorBatch`` search per distinct query
    date; empty slots get index -1 and score -inf, as in the torch search."""
    faiss = import_faiss()
    if n_threads is not None:
        faiss.omp_set_num_threads(int(n_threads))
    if index is None:
        index = build_faiss_index(G)
    k = min(k, index.ntotal)
    q = np.ascontiguousarray(Q.detach().cpu().numpy(), dtype=np.float32)
    if time_filter is None:
        D, I = index.search(q, k)
        return order_by_score_then_index(D, I)
    time_filter = time_filter.on(None)
    D = np.full((len(q), k), -np.inf, dtype=np.float32)
    I = np.full((len(q), k), -1, dtype=np.int64)
    dates, group = np.unique(time_filter.query_time, return_inverse=True)
    for g, date in enumerate(dates):
        rows = np.flatnonzero(group == g)
        ids = np.flatnonzero(~time_filter.outside(rows[:1], slice(None))[0])
        if not len(ids):
            continue
        params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(ids.astype(np.int64)))
        D[rows], I[rows] = index.search(q[rows], k, params=params)
    D[I < 0] = -np.inf
    return order_by_score_then_index(D, I)


def build_faiss_index(G):
    """A ``faiss.IndexFlatIP`` holding the rows of ``G`` (as float32)."""
    faiss = import_faiss()
    g = np.ascontiguousarray(torch.as_tensor(G).detach().cpu().numpy(), dtype=np.float32)
    index = faiss.IndexFlatIP(g.shape[1])
    index.add(g)
    return index


@validate_params(
    {
        "query": ["array-like"],
        "gallery": ["array-like"],
        "k": [K_RANGE],
        "similarity": [StrOptions({"dot", "cosine"})],
        "backend": [StrOptions({"torch", "faiss"})],
        "working_memory": [WORKING_MEMORY_RANGE, None],
        "device": "no_validation",
    },
    prefer_skip_nested_validation=True,
)
def search_embeddings(query, gallery, k=10, *, similarity="dot", backend="torch",
                      working_memory=None, device=None):
    """Exact top-``k`` gallery items of each query by inner product (or cosine).

    Any two embedding matrices of one width (an estimator's ``transform_image`` /
    ``transform_text``, CLIP features, a memory map), the gallery scanned in chunks within
    ``working_memory``.  Read more in docs/search.md.

    Parameters
    ----------
    query : array-like or torch.Tensor of shape (n_queries, dim)
    gallery : array-like or torch.Tensor of shape (n_gallery, dim)
        float32 and float64 are searched in their own precision (others as float32); a tensor
        already on ``device`` is not copied.
    k : int, default=10
        Neighbours per query; at most ``n_gallery``.
    similarity : {"dot", "cosine"}, default="dot"
        ``"cosine"`` normalises the rows first.
    backend : {"torch", "faiss"}, default="torch"
        Chunked matrix products on ``device``, or ``faiss.IndexFlatIP`` (exact, float32, CPU;
        the ``faiss`` extra); the same top-k.
    working_memory : float or None, default=None
        Budget of one score block in MiB; ``None``: 64 on the CPU, on a GPU a quarter of its
        free memory, at most 8 GiB.
    device : str, torch.device or None, default=None
        Where the torch backend computes; ``None``: the gallery's device when a tensor, else
        the CPU; ``"auto"``: CUDA when a GPU is present.

    Returns
    -------
    scores : ndarray of shape (n_queries, min(k, n_gallery))
        Decreasing along each row; equal scores by increasing index.
    indices : ndarray of int64, shape (n_queries, min(k, n_gallery))
        Gallery row of each neighbour.

    Raises
    ------
    ValueError
        Non-2-D, empty or non-finite embeddings, widths that differ, or a CUDA ``device``
        without a GPU.
    ImportError
        ``backend="faiss"`` without faiss.
    """
    if backend == "faiss":
        import_faiss()
    device = resolve_device(device)  # "auto"; a CUDA device without a GPU named as such
    if device is None:
        device = gallery.device if isinstance(gallery, torch.Tensor) else "cpu"
    Q, G = check_embeddings(query, gallery, kind="torch", dtype=(torch.float32, torch.float64),
                            device=device)
    Q, G = prepare_similarity(Q.to(G.dtype), G, similarity)
    if backend == "faiss":
        return topk_faiss(Q, G, k)
    return topk(Q, G, k, working_memory=working_memory)
