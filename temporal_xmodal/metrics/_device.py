"""Chunked scans sized from the device, and full-ranking mAP computed on the device.

Block sizes
-----------
The chunked scans (top-k search, @k metrics, full-ranking mAP) hold one block
of ``query rows x gallery columns`` scores at a time.  On the CPU the blocks
are sized for the caches (each caller keeps its own tuned constants).  On a
GPU the same cache sizes would starve the device: a ``1,024 x 4,096`` product
is a few microseconds of work, so kernel launches and host round trips
dominate.  There the blocks are as large as a memory budget allows:
:func:`scan_budget` reads the device's free memory (a quarter of it, at most
``_GPU_MAX_BUDGET``), and :func:`gpu_block_sizes` turns the budget into a
query block of 1,024 to 4,096 rows and a gallery chunk as wide as the rest of
the budget (the whole gallery when it fits).

Full-ranking mAP on the device
------------------------------
:func:`mean_average_precision_torch` gives the figure of
:func:`~temporal_xmodal.metrics.mean_average_precision` with torch ops only, so
that a training loop on a GPU scores its validation set every epoch without
moving embeddings to the host.  Per query block: float64 scores, one sort per
row, tie groups located by a running maximum of their starts, cumulative
relevance counts; no host synchronisation until the one ``.item()`` at the end.
"""

import torch

#: Share of the device's free memory a scan takes by default (the rest stays
#: for the model, the data and the allocator's fragmentation).
_GPU_FREE_FRACTION = 0.25
#: Most bytes a scan takes by default on a GPU: 8 GiB hold a 1,024 x 10^6
#: float32 score block with topk's temporaries.
_GPU_MAX_BUDGET = 8 * 2**30
#: Budget on a device whose free memory cannot be read (or a GPU-style plan
#: forced on the CPU, as the tests do).
_GPU_FALLBACK_BUDGET = 2**30
#: Query rows of one GPU block: enough for full-speed matrix products; the
#: gallery chunk is sized from what the budget leaves.
_GPU_MIN_QUERY_BLOCK = 1024
_GPU_MAX_QUERY_BLOCK = 4096
#: Default budget of :func:`mean_average_precision_torch` on the CPU, in MiB
#: (as the NumPy metrics').
_CPU_WORKING_MEMORY = 64
#: Bytes of temporaries per (query, gallery) pair of a block of
#: :func:`mean_average_precision_torch` (scores, sort indices, group starts,
#: cumulative counts; about 33 at the peak).
_MAP_BYTES_PER_PAIR = 48


def scan_budget(device, working_memory=None, cpu_default=_CPU_WORKING_MEMORY):
    """Bytes one block of a chunked scan may use on ``device``.

    Parameters
    ----------
    device : torch.device or str
        Where the scan runs.
    working_memory : float or None, default=None
        Budget in MiB; ``None`` picks the device's default.
    cpu_default : float, default=64
        The default on the CPU, in MiB (callers pass their cache-tuned one).

    Returns
    -------
    budget : int
        ``working_memory`` MiB when given.  Otherwise ``cpu_default`` MiB on
        the CPU; on a CUDA device a quarter of its free memory (the free
        memory reported by the driver plus what torch's allocator holds
        unused), at most 8 GiB; 1 GiB on a device whose free memory cannot be
        read.
    """
    if working_memory is not None:
        return int(working_memory * 2**20)
    device = torch.device(device)
    if device.type == "cpu":
        return int(cpu_default * 2**20)
    if device.type == "cuda" and torch.cuda.is_available():
        free, _ = torch.cuda.mem_get_info(device)
        free += torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
        return int(min(_GPU_MAX_BUDGET, free * _GPU_FREE_FRACTION))
    return _GPU_FALLBACK_BUDGET


def gpu_block_sizes(n_query, n_gallery, bytes_per_pair, budget):
    """``(query rows, gallery rows)`` of one block of a GPU scan within ``budget`` bytes.

    The whole gallery in one chunk when at least 1,024 queries (or all of
    them) fit with it; otherwise 1,024 queries and the widest gallery chunk
    the budget allows.  At most 4,096 queries per block.

    Parameters
    ----------
    n_query, n_gallery : int
        Sizes of the scan.
    bytes_per_pair : float
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


def nonfinite_rows(T, chunk_rows=65536):
    """Number of rows of a 2-D tensor holding NaN or infinity.

    Chunked (no full-size mask), with one host synchronisation for the whole count.
    """
    return int(sum((~torch.isfinite(T[r:r + chunk_rows])).any(dim=1).sum()
                   for r in range(0, T.shape[0], chunk_rows)))


def _check_pair(query, gallery):
    for name, T in (("query", query), ("gallery", gallery)):
        if not isinstance(T, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor; got {type(T).__name__}.")
        if T.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_items, dim); got shape {tuple(T.shape)}.")
        if T.shape[0] == 0:
            raise ValueError(f"{name} is empty (0 rows).")
        if not T.dtype.is_floating_point:
            raise TypeError(f"{name} must be a floating-point tensor; got {T.dtype}.")
    if query.shape[1] != gallery.shape[1]:
        raise ValueError(f"query and gallery embeddings differ in dimension: "
                         f"{query.shape[1]} vs {gallery.shape[1]}.")


def _check_labels(query_labels, gallery_labels, n_query, n_gallery):
    for name, L, n in (("query_labels", query_labels, n_query),
                       ("gallery_labels", gallery_labels, n_gallery)):
        if not isinstance(L, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor; got {type(L).__name__}.")
        if L.ndim not in (1, 2) or L.shape[0] != n:
            raise ValueError(f"{name} must have one row per item ({n}); got shape "
                             f"{tuple(L.shape)}.")
    if query_labels.ndim != gallery_labels.ndim or (
            query_labels.ndim == 2 and query_labels.shape[1] != gallery_labels.shape[1]):
        raise ValueError(
            "query_labels and gallery_labels must both be 1-D class labels or both be "
            f"indicators with the same columns; got shapes {tuple(query_labels.shape)} and "
            f"{tuple(gallery_labels.shape)}.")


def _relevance_fn(query_labels, gallery_labels):
    """``rows -> bool (n_rows, n_gallery)``: shares a label (or the same class)."""
    if query_labels.ndim == 1:
        return lambda rows: query_labels[rows, None] == gallery_labels[None, :]
    # shared labels through a float32 product: 0/1 entries, counts exact below 2**24
    Lq = (query_labels != 0).to(torch.float32)
    Lg_T = (gallery_labels != 0).to(torch.float32).T
    return lambda rows: (Lq[rows] @ Lg_T) > 0


def _average_precision_block(scores, relevant):
    """AP of each row of a float64 score block (NaN without a relevant item).

    An item's rank is the number of gallery items scoring at least as high,
    ties included (as :func:`average_precision_per_query`): with each row
    sorted ascending, an item's tie group starts at ``left`` (a running
    maximum of the group starts), so ``rank = n - left`` and
    ``hits = R - (relevant items before left)``.  Consumes ``scores``.
    """
    n = scores.shape[1]
    ranked, order = torch.sort(scores, dim=1)
    del scores
    rel = relevant.gather(1, order)
    del order, relevant
    starts = torch.ones(ranked.shape, dtype=torch.bool, device=ranked.device)
    torch.ne(ranked[:, 1:], ranked[:, :-1], out=starts[:, 1:])  # first of a run of equal scores
    del ranked
    positions = torch.arange(n, device=rel.device)
    left = torch.where(starts, positions, 0)
    del starts
    left = left.cummax(dim=1).values  # first position of each item's tie group
    before = rel.cumsum(1)  # int64
    n_relevant = before[:, -1].clone()
    before.sub_(rel.to(torch.int64))  # relevant items strictly before each position
    hits = before.gather(1, left)
    del before
    hits.neg_().add_(n_relevant[:, None])  # relevant items scoring at least as high
    rank = left.neg_().add_(n)  # items scoring at least as high
    precision = hits.to(torch.float64).div_(rank)
    del hits, rank
    total = torch.where(rel, precision, 0.0).sum(dim=1)
    return torch.where(n_relevant > 0, total / n_relevant.clamp_min(1), torch.nan)


@torch.no_grad()
def mean_average_precision_torch(query, gallery, query_labels, gallery_labels, *,
                                 working_memory=None, return_per_query=False):
    """Full-ranking mean average precision with torch ops, on the tensors' device.

    The same figure as :func:`~temporal_xmodal.metrics.mean_average_precision`
    (AP = (1/R) sum_k rel_k P@k, thesis eq. 2.19; the rank of an item is the
    number of gallery items scoring at least as high; queries without a
    relevant item are left out of the mean), computed where the embeddings
    live: a training loop on a GPU scores its validation set without copying
    embeddings to the host.  Scores are float64 (``Q.double() @ G.double().T``),
    so the result equals the NumPy one up to the summation order (~1e-15).

    Queries are taken in blocks of rows sized from the device and
    ``working_memory`` (about 48 bytes per query x gallery pair); each block
    is sorted row by row and its tie groups located by a running maximum
    (:func:`torch.cummax`) of their first positions.  Nothing is copied to the host and no host
    synchronisation happens until the single ``.item()`` that returns the
    mean (which also reports non-finite embeddings).

    Parameters
    ----------
    query : torch.Tensor of shape (n_queries, dim)
        Query embeddings (float32 or float64).
    gallery : torch.Tensor of shape (n_gallery, dim)
        Gallery embeddings in the same space, on the same device.
    query_labels, gallery_labels : torch.Tensor
        Label indicators of shape (n, n_labels) (bool, or numbers: non-zero =
        has the label), relevant = shares at least one label; or 1-D class
        labels (relevant = same class).  On the embeddings' device.
    working_memory : float or None, default=None
        Budget of one query block in MiB.  ``None``: 64 MiB on the CPU; on a
        GPU a quarter of its free memory, at most 8 GiB (see
        :func:`scan_budget`).
    return_per_query : bool, default=False
        Also return the per-query AP (a float64 tensor on the device, NaN for
        queries without a relevant item).

    Returns
    -------
    map : float
        Mean AP over the queries with at least one relevant gallery item
        (NaN when there is none).
    per_query : torch.Tensor of shape (n_queries,)
        Only with ``return_per_query``.

    Raises
    ------
    TypeError
        Non-tensor inputs or non-float embeddings.
    ValueError
        Shapes that do not match, tensors on several devices, or NaN /
        infinite embeddings (detected on the device, reported after the
        final synchronisation).

    See Also
    --------
    temporal_xmodal.metrics.mean_average_precision : The NumPy version (any
        input, @k, time windows, NaN labels).

    Examples
    --------
    >>> import torch
    >>> from temporal_xmodal.metrics._device import mean_average_precision_torch
    >>> Z = torch.eye(4)
    >>> labels = torch.tensor([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=torch.bool)
    >>> mean_average_precision_torch(Z, Z, labels, labels)
    0.75
    """
    _check_pair(query, gallery)
    _check_labels(query_labels, gallery_labels, len(query), len(gallery))
    devices = {T.device for T in (query, gallery, query_labels, gallery_labels)}
    if len(devices) > 1:
        raise ValueError(f"query, gallery and labels must be on one device; got "
                         f"{sorted(map(str, devices))}.")
    device = query.device
    Q, G_T = query.to(torch.float64), gallery.to(torch.float64).T
    relevance = _relevance_fn(query_labels, gallery_labels)
    n_q, n_g = Q.shape[0], G_T.shape[1]
    budget = scan_budget(device, working_memory)
    q_block = max(1, min(n_q, int(budget // (_MAP_BYTES_PER_PAIR * n_g))))
    ap = torch.empty(n_q, dtype=torch.float64, device=device)
    for q0 in range(0, n_q, q_block):
        rows = slice(q0, q0 + q_block)
        ap[rows] = _average_precision_block(Q[rows] @ G_T, relevance(rows))
    # one value carries the mean and the validation: -1 / -2 / -3 = non-finite
    # query / gallery / both (an mAP is never negative)
    bad = (2 * (~torch.isfinite(G_T)).any() + (~torch.isfinite(Q)).any()).to(torch.float64)
    valid = ~torch.isnan(ap)
    mean = torch.where(valid, ap, 0.0).sum() / valid.sum()  # 0 / 0: NaN without any
    value = float(torch.where(bad > 0, -bad, mean))  # the one host synchronisation
    if value < 0:
        which = {-1.0: "query", -2.0: "gallery", -3.0: "query and gallery"}[value]
        raise ValueError(f"{which} embeddings contain NaN or infinity.")
    return (value, ap) if return_per_query else value
