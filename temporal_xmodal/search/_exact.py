"""Exact top-k search of embedding matrices: the torch scan, or faiss.

``backend="torch"`` runs the top-k reducer of the metrics' scan engine
(``metrics._scan.topk``: chunked products on
any device, equal scores by increasing gallery index); ``backend="faiss"`` the
same exact search with ``faiss.IndexFlatIP``, its ties put in the same order.
"""

import numpy as np
import torch
from sklearn.utils._param_validation import StrOptions, validate_params

from .._device import resolve_device
from .._validation import check_embedding, check_embeddings
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
    """2-D finite float tensor (float32/float64 kept, others -> float32) on ``device``."""
    return check_embedding(A, name, kind="torch", dtype=(torch.float32, torch.float64),
                           device=device)


def topk_faiss(Q, G, k, *, index=None, n_threads=None, time_filter=None):
    """Exact top-``k`` inner products with ``faiss.IndexFlatIP`` (float32).

    ``index`` is a prebuilt ``IndexFlatIP`` holding ``G``; otherwise one is built.
    With a date filter (:class:`~temporal_xmodal.metrics._scan.TimeFilter`), the
    queries of each distinct date are searched among their candidates only
    (one faiss search with an ``IDSelectorBatch`` per distinct query date: as
    fast as the unfiltered search for dated collections, one call per query
    when every query has its own instant); empty slots get index -1 and score
    -inf, as in the torch search.
    """
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

    The low-level search under :class:`CrossModalIndex`: it works on any two
    embedding matrices of the same width, e.g. the output of an estimator's
    ``transform_image`` / ``transform_text``, CLIP features, or a memory map.
    Memory stays bounded: the gallery is scanned in chunks and each query
    block's similarities to one chunk (at most ``working_memory`` MiB) are
    reduced to their top ``k`` before the next chunk.

    Read more in the user guide: docs/search.md.

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
        Budget of one score block in MiB.  Default: 64 on the CPU; on a GPU
        a quarter of its free memory, at most 8 GiB.
    device : str, torch.device or None, default=None
        Where to compute (torch backend).  ``None``: the gallery's device when
        it is a tensor, else the CPU; ``"auto"``: CUDA when a GPU is present, else
        the CPU (a CUDA device without a GPU is refused with a ValueError).

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
