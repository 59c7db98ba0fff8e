"""@k retrieval metrics from a chunked top-k: galleries of 10^6 items in bounded memory.

The full-ranking functions of :mod:`._retrieval` sort every query's whole
ranking.  The @k figures only need each query's top ``k + 1`` and a few counts,
so :func:`retrieval_metrics_at_k` streams the gallery in chunks (torch matrix
products and :func:`torch.topk`) and keeps, per query:

* the ``k + 1`` best (score key, gain) pairs (merged chunk by chunk);
* the number ``R`` of relevant gallery items and the ``k`` largest gains
  (for recall, AP@k's ``"min_k_total"`` normaliser and the ideal DCG);
* the best score of a relevant item (for the reciprocal rank).

Exactness, ties included
------------------------
The figures equal those of :func:`~._retrieval.mean_average_precision` (``k``),
:func:`~._retrieval.recall_at_k`, :func:`~._retrieval.mean_reciprocal_rank` and
:func:`~._retrieval.ndcg_at_k` with the same conventions (see
:mod:`._ranking`): the rank of an item is the number of gallery items scoring
at least as high.  An item of the top-``k + 1`` list whose score is strictly
above the ``(k + 1)``-th has all its better-or-equal items in the list, so its
rank is exact; an item tied with the ``(k + 1)``-th has rank > ``k`` and is
outside the top ``k``.  Two cases need the whole gallery and are settled by a
second, counting pass over only the queries concerned:

* MRR, when the best relevant item is not strictly above the ``(k + 1)``-th
  score: its rank is counted as the number of items scoring at least as high
  (no sorting);
* nDCG@k, when a tie group straddles position ``k``: its size and total gain
  are counted (tied items share their group's mean gain).

Scores are computed in the embeddings' precision: float64 embeddings give the
full-ranking functions' float64 scores; float32 ones stay float32 (a 10^6 x 200
float32 gallery is not copied to 1.6 GB of float64).

Devices
-------
The scan runs where the embeddings live (``device``): torch tensors on a GPU
stay there.  Block sizes follow the device (:func:`_plan`): on the CPU, 128
queries x 2**18 pairs, so that the keys, gains and masks of a chunk stay in the
cache; on a GPU, 1,024 or more queries and chunks as wide as a share of its
free memory allows (few large kernels instead of many small ones).  The
chunk loop makes no host synchronisation; each query block makes a few (the
counting pass, and copying its figures to the host).
"""

import numpy as np
import torch
from sklearn.utils import gen_batches

from ._ranking import _AP_NORMALISERS, _DISCOUNTS, _GAINS, _check_k
from ._blocks import (
    _SIMILARITIES,
    _as_embeddings,
    _nan_masks,
    _prepare_labels,
    _prepare_time,
    _similarity,
)
from ._device import gpu_block_sizes, nonfinite_rows, scan_budget
from ._retrieval import _nanmean


def _as_float_embeddings(A, name):
    """float32 arrays kept as they are (no copy); anything else as float64, checked."""
    if isinstance(A, np.ndarray) and A.dtype == np.float32 and A.ndim == 2 and len(A):
        bad = sum(int((~np.isfinite(A[r:r + 65536])).any(axis=1).sum())
                  for r in range(0, len(A), 65536))  # chunked: no full-size mask
        if bad:
            raise ValueError(f"{name} contains NaN or infinity in {bad} rows.")
        return A
    return _as_embeddings(A, name)

def _as_device_embeddings(T, name, device):
    """A tensor's embeddings as float64 on ``device``, checked.

    The torch counterpart of :func:`._blocks._as_embeddings` (which a tensor
    on the CPU goes through: float64 as well) for tensors that stay on a GPU:
    the same checks, one host synchronisation.
    """
    T = T.detach()
    if T.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_items, dim); got shape {tuple(T.shape)}.")
    if T.shape[0] == 0:
        raise ValueError(f"{name} is empty.")
    T = T.to(device=device, dtype=torch.float64)
    bad = nonfinite_rows(T)
    if bad:
        raise ValueError(f"{name} contains NaN or infinity in {bad} rows.")
    return T


def _similarity_torch(Q, G, similarity):
    """:func:`._blocks._similarity` on tensors."""
    if similarity not in _SIMILARITIES:
        raise ValueError(f"similarity must be one of {_SIMILARITIES}; got {similarity!r}.")
    if similarity == "cosine":
        Q = Q / Q.norm(dim=1, keepdim=True).clamp_min(1e-12)
        G = G / G.norm(dim=1, keepdim=True).clamp_min(1e-12)
    elif similarity == "hamming":
        Q = torch.where(Q > 0, 1.0, -1.0).to(Q.dtype)
        G = torch.where(G > 0, 1.0, -1.0).to(G.dtype)
    return Q, G


def _host(values):
    """Labels or times as NumPy (tensors copied to the host: they are small)."""
    if isinstance(values, torch.Tensor):
        return values.detach().cpu().numpy()
    return values


def _off_device(A):
    """A tensor on a GPU copied to the CPU (still a tensor: the NumPy path converts it)."""
    return A.detach().cpu() if isinstance(A, torch.Tensor) and A.device.type != "cpu" else A


def _compute_device(query, gallery, device):
    """``device``, else the gallery's (or the query's) when a tensor, else the CPU."""
    if device is not None:
        return torch.device(device)
    for T in (gallery, query):
        if isinstance(T, torch.Tensor):
            return T.device
    return torch.device("cpu")


#: Metrics :func:`retrieval_metrics_at_k` computes.
TOPK_METRICS = ("map", "recall", "mrr", "ndcg")
#: Default memory budget of one block, in MiB.
DEFAULT_WORKING_MEMORY = 256
#: Bytes of temporaries per (query, gallery) pair of a block (scores, keys, gains, masks).
_BYTES_PER_PAIR = 48
#: Most queries per block, and most (query, gallery) pairs per chunk: the keys,
#: gains and masks of a chunk (8 bytes a pair each) then stay in the cache.  The
#: element-wise passes over larger chunks ran at DRAM speed: 200 queries x 200,000
#: items on 1 thread took 4.2 s with blocks of 1,024 x 28,000 pairs, 1.6 s with 128 x 2,048.
_MAX_QUERY_BLOCK = 128
_CACHE_PAIRS = 2**18
#: Queries per GPU block: the per-block summaries (top k + 1 lists, their
#: (k + 1)^2 comparisons) stay small next to the chunk's scores.
_GPU_MAX_QUERY_BLOCK = 1024
_INT64_MAX = 0x7FFFFFFFFFFFFFFF
_INT64_MIN = -(2**63)


def _plan(n_query, n_gallery, working_memory, device, width=1):
    """``(query block, gallery chunk)`` of :func:`retrieval_metrics_at_k` on ``device``.

    CPU: blocks of at most 128 queries and 2**18 (query, gallery) pairs
    within ``working_memory`` MiB (default 256), so that a chunk's keys, gains
    and masks stay in the cache.  Other devices: up to 1,024 queries (fewer
    when the block's ``width x width`` comparisons of its top lists would not
    fit) and chunks as wide as ``working_memory`` allows, by default a
    quarter of the device's free memory (at most 8 GiB).
    """
    device = torch.device(device)
    if device.type == "cpu":
        budget = (DEFAULT_WORKING_MEMORY if working_memory is None else working_memory) * 2**20
        pairs = max(1, min(_CACHE_PAIRS, int(budget // _BYTES_PER_PAIR)))
        q_block = max(1, min(n_query, _MAX_QUERY_BLOCK, pairs))
        return q_block, max(1, pairs // q_block)
    budget = scan_budget(device, working_memory)
    q_block, _ = gpu_block_sizes(n_query, n_gallery, _BYTES_PER_PAIR, budget)
    # _block_metrics compares each query's top list with itself: ~3 int64 per pair
    q_block = max(1, min(q_block, _GPU_MAX_QUERY_BLOCK, budget // (24 * width**2)))
    return q_block, max(1, min(n_gallery, budget // (_BYTES_PER_PAIR * q_block)))


def _keys(scores):
    """Order-preserving int64 keys of scores (as :func:`._ranking._orderable_keys`)."""
    bits = (scores.to(torch.float64) + 0.0).view(torch.int64)  # + 0.0 maps -0.0 to +0.0
    return bits ^ ((bits >> 63) & _INT64_MAX)


class _Relevance:
    """Gain of (query rows, gallery columns) blocks: shared labels, x time window."""

    def __init__(self, query_labels, gallery_labels, query_time, gallery_time, time_window,
                 n_query, n_gallery, device):
        _prepare_labels(query_labels, gallery_labels, n_query, n_gallery)  # validation only
        _prepare_time(query_time, gallery_time, time_window, n_query, n_gallery)
        as_t = lambda a: torch.as_tensor(np.asarray(a), device=device)  # noqa: E731
        self.counterpart = query_labels is None
        self.device = device
        if not self.counterpart:
            ql, gl = np.asarray(query_labels), np.asarray(gallery_labels)
            if ql.ndim == 1:  # class codes shared by queries and gallery
                _, codes = np.unique(np.concatenate([ql, gl]), return_inverse=True)
                self.ql, self.gl = as_t(codes[:len(ql)]), as_t(codes[len(ql):])
                self.multilabel = False
            else:
                self.ql = as_t(ql.astype(np.float64))
                self.gl = as_t(gl.astype(np.float64))
                self.multilabel = True
        self.window = time_window
        if time_window is not None:
            self.tq = as_t(np.asarray(query_time, dtype=np.float64).ravel())
            self.tg = as_t(np.asarray(gallery_time, dtype=np.float64).ravel())

    def __call__(self, q_idx, cols):
        """Gains of query rows ``q_idx`` (int64 tensor) against gallery slice ``cols``."""
        if self.counterpart:
            gain = (q_idx[:, None]
                    == torch.arange(cols.start, cols.stop, device=self.device)[None, :])
            gain = gain.to(torch.float64)
        elif self.multilabel:
            gain = self.ql[q_idx] @ self.gl[cols].T
        else:
            gain = (self.ql[q_idx, None] == self.gl[None, cols]).to(torch.float64)
        if self.window is not None:
            gain = gain * ((self.tq[q_idx, None] - self.tg[None, cols]).abs() <= self.window)
        return gain


def _merge_top(keys, gains, new_keys, new_gains, width):
    """Top ``width`` keys (with their gains) of the union of two (rows, .) lists."""
    keys = torch.cat([keys, new_keys], dim=1)
    gains = torch.cat([gains, new_gains], dim=1)
    if keys.shape[1] > width:
        keys, pos = torch.topk(keys, width, dim=1)
        gains = gains.gather(1, pos)
    return keys, gains


def _discounts(k, discount, device):
    positions = torch.arange(1, k + 1, dtype=torch.float64, device=device)
    if discount == "jarvelin":
        return 1.0 / torch.log2(positions.clamp_min(2.0))
    return 1.0 / torch.log2(positions + 1.0)


def _block_metrics(top_keys, top_gains, n_rel, best_rel, ideal, k, n_gallery, opts, recount):
    """Per-query figures of one query block from its streamed summaries."""
    n_q, width = top_keys.shape
    device = top_keys.device
    complete = width == n_gallery  # the list holds the whole gallery: every rank exact
    k_eff = min(k, n_gallery)
    ap_keys = top_keys >> 1  # AP/MRR/recall: keys equal but for bit 0 are tied
    rel = top_gains > 0
    # rank_i = number of list items scoring at least as high (exact unless tied
    # with the last list item, in which case it is > k anyway)
    rank = (ap_keys[:, None, :] >= ap_keys[:, :, None]).sum(dim=2)
    hits = ((ap_keys[:, None, :] >= ap_keys[:, :, None]) & rel[:, None, :]).sum(dim=2)
    in_top = rel & (rank <= k_eff)
    out = {}
    nan = torch.full((n_q,), torch.nan, dtype=torch.float64, device=device)
    has_rel = n_rel > 0
    if "map" in opts["metrics"]:
        prec = torch.where(in_top, hits.to(torch.float64) / rank, 0.0)
        total = prec.sum(dim=1)
        if opts["ap_at_k_normaliser"] == "relevant_in_topk":
            denom = in_top.sum(dim=1).to(torch.float64)
        else:
            denom = n_rel.clamp_max(k).to(torch.float64)
        ap = torch.where(denom > 0, total / denom.clamp_min(1), 0.0)
        out["map"] = torch.where(has_rel, ap, nan)
    if "recall" in opts["metrics"]:
        found = in_top.sum(dim=1).to(torch.float64)
        out["recall"] = torch.where(has_rel, found / n_rel.clamp_min(1), nan)
    if "mrr" in opts["metrics"]:
        best_ap = best_rel >> 1
        exact = complete | (best_ap > ap_keys[:, -1])
        in_list = (ap_keys >= best_ap[:, None]).sum(dim=1)
        counted = recount("ge_ap", best_ap, ~exact & has_rel)
        rank_rel = torch.where(exact, in_list, counted).to(torch.float64)
        out["mrr"] = torch.where(has_rel, 1.0 / rank_rel.clamp_min(1), nan)
    if "ndcg" in opts["metrics"]:
        g = top_gains if opts["gain"] == "linear" else torch.exp2(top_gains) - 1.0
        disc = _discounts(k_eff, opts["discount"], device)
        cum_disc = torch.cat([torch.zeros(1, dtype=torch.float64, device=device),
                              torch.cumsum(disc, 0)])
        # tie groups (exact key equality, as ndcg_per_query) of the list; sorted
        # keys, so a group is a run of positions
        same = top_keys[:, None, :] == top_keys[:, :, None]  # (q, i, j)
        first = torch.where(same, torch.arange(width, device=device), width).min(dim=2).values
        size = same.sum(dim=2)
        gsum = (same * g[:, None, :]).sum(dim=2)
        # a group of the top k reaching the list's end may go on past it: count
        # it over the whole gallery
        last = top_keys[:, -1]
        straddle = (top_keys[:, k_eff - 1] == last) & (not complete)
        if bool(straddle.any()):
            size_all, gsum_all = recount("eq_key", last, straddle)
            at_last = straddle[:, None] & (top_keys == last[:, None])
            size = torch.where(at_last, size_all[:, None], size)
            gsum = torch.where(at_last, gsum_all[:, None], gsum)
        first, size, gsum = first[:, :k_eff], size[:, :k_eff], gsum[:, :k_eff]
        end = (first + size).clamp_max(k_eff)  # positions first+1 .. end inside the top k
        group_disc = cum_disc[end] - cum_disc[first]
        # each position carries its group's mean gain x the group's discount share
        is_start = first == torch.arange(k_eff, device=device)
        dcg = torch.where(is_start, gsum / size * group_disc, 0.0).sum(dim=1)
        g_ideal = ideal if opts["gain"] == "linear" else torch.exp2(ideal) - 1.0
        idcg = g_ideal[:, :k_eff] @ disc[:g_ideal.shape[1]]
        out["ndcg"] = torch.where(idcg > 0, dcg / torch.where(idcg > 0, idcg, 1.0), nan)
    return out


def retrieval_metrics_at_k(
    query, gallery, query_labels=None, gallery_labels=None, *, k=10,
    metrics=TOPK_METRICS, query_time=None, gallery_time=None, time_window=None,
    similarity="dot", ap_at_k_normaliser="relevant_in_topk", gain="linear",
    discount="jarvelin", working_memory=None, nan_policy="raise", return_per_query=False,
    device=None,
):
    """mAP@k, recall@k, MRR and nDCG@k from a chunked top-k, in bounded memory.

    Gives the same figures as :func:`mean_average_precision` (with ``k``),
    :func:`recall_at_k`, :func:`mean_reciprocal_rank` and :func:`ndcg_at_k`,
    ties included, without sorting any query's full ranking: the gallery is
    streamed in chunks and only each query's top ``k + 1`` and a few counts
    are kept (module notes).  Memory is one block of at most
    ``working_memory`` MiB plus O(n_queries x k), whatever the gallery size
    (10^6 items and more).

    Parameters
    ----------
    query : array-like or torch.Tensor of shape (n_queries, dim)
        Query embeddings.
    gallery : array-like or torch.Tensor of shape (n_gallery, dim)
        Gallery embeddings in the same space.  Tensors on a GPU are scored
        there (with ``device=None``) without a copy to the host.
    query_labels, gallery_labels : array-like, torch.Tensor or None, default=None
        1-D class labels or 2-D multilabel indicators (relevant = shares a
        label; nDCG's gain = number of shared labels).  ``None`` for both:
        query ``i``'s only relevant item is gallery item ``i``.
    k : int, default=10
        Cut-off of mAP@k, recall@k and nDCG@k (MRR is over the whole ranking).
    metrics : str or sequence of {"map", "recall", "mrr", "ndcg"}, default=all
        Figures to compute.
    query_time, gallery_time : array-like of shape (n,), optional
        Timestamps, needed with ``time_window``.
    time_window : float or None, default=None
        Relevant additionally requires ``|t_query - t_gallery| <= time_window``
        (in the time column's unit, e.g. years).
    similarity : {"dot", "cosine", "hamming"}, default="dot"
        See :func:`iter_score_blocks`.  Scores are float64, or float32 when
        both embeddings are float32 NumPy arrays (no float64 copy of the
        gallery); tensors are scored in float64 on any device.
    ap_at_k_normaliser : {"relevant_in_topk", "min_k_total"}, default="relevant_in_topk"
        Denominator of AP@k (see :func:`average_precision_per_query`).
    gain : {"linear", "exponential"}, default="linear"
        nDCG gain (see :func:`ndcg_per_query`).
    discount : {"jarvelin", "standard"}, default="jarvelin"
        nDCG discount: thesis eq. 2.20 or scikit-learn's.
    working_memory : float or None, default=None
        Budget of one block in MiB.  On the CPU the default is 256 and blocks
        are also capped at 2**18 (query, gallery) pairs (about 12 MiB), which
        keeps them in the cache; on a GPU the default is a quarter of its free
        memory (at most 8 GiB) and blocks take up to 1,024 queries.
    nan_policy : {"raise", "omit"}, default="raise"
        What to do with items whose label, or time when ``time_window`` is
        set, is NaN: raise, or leave them out (queries get NaN, gallery items
        are removed) with a warning that counts them.
    return_per_query : bool, default=False
        Also return the per-query values.
    device : str, torch.device or None, default=None
        Where to compute.  ``None``: the gallery's (else the query's) device
        when it is a tensor, else the CPU.  The figures are the same on every
        device (up to the float error of its matrix products).

    Returns
    -------
    scores : dict
        ``{metric: mean over queries with at least one relevant item}``.
    per_query : dict of ndarray of shape (n_queries,)
        Only with ``return_per_query`` (NaN for queries without a relevant
        item or omitted).

    Examples
    --------
    >>> import numpy as np
    >>> from temporal_xmodal.metrics import retrieval_metrics_at_k
    >>> rng = np.random.default_rng(0)
    >>> E = rng.standard_normal((50, 8))
    >>> retrieval_metrics_at_k(E, E, k=5, metrics="recall")
    {'recall': 1.0}
    """
    metrics = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    unknown = sorted(set(metrics) - set(TOPK_METRICS))
    if unknown:
        raise ValueError(f"Unknown metrics {unknown}; choose from {list(TOPK_METRICS)}.")
    _check_k(k, required=True)
    for name, value, options in (("ap_at_k_normaliser", ap_at_k_normaliser, _AP_NORMALISERS),
                                 ("gain", gain, _GAINS), ("discount", discount, _DISCOUNTS)):
        if value not in options:
            raise ValueError(f"{name} must be one of {options}; got {value!r}.")
    device = _compute_device(query, gallery, device)
    query_labels, gallery_labels = _host(query_labels), _host(gallery_labels)
    query_time, gallery_time = _host(query_time), _host(gallery_time)
    # tensors already on the GPU are checked and prepared there; anything else
    # goes through the NumPy path (then to ``device``), as it always did
    on_device = (device.type != "cpu" and isinstance(query, torch.Tensor)
                 and isinstance(gallery, torch.Tensor))
    if on_device:
        Q = _as_device_embeddings(query, "query", device)
        G = _as_device_embeddings(gallery, "gallery", device)
    else:
        Q = _as_float_embeddings(_off_device(query), "query")
        G = _as_float_embeddings(_off_device(gallery), "gallery")
    if Q.shape[1] != G.shape[1]:
        raise ValueError(f"query and gallery embeddings differ in dimension: {Q.shape[1]} vs "
                         f"{G.shape[1]}.")
    bad_q, keep_g = _nan_masks(query_labels, gallery_labels, query_time, gallery_time,
                               time_window, nan_policy, len(Q), len(G))
    if keep_g is not None:
        G = G[torch.as_tensor(keep_g, device=device) if on_device else keep_g]
        gallery_labels = None if gallery_labels is None else np.asarray(gallery_labels)[keep_g]
        gallery_time = None if gallery_time is None else np.asarray(gallery_time).ravel()[keep_g]
    if on_device:
        Qt, Gt = _similarity_torch(Q, G, similarity)
    else:
        if Q.dtype != G.dtype:
            Q, G = Q.astype(np.float64), G.astype(np.float64)
        Q, G = _similarity(Q, G, similarity)
        Qt = torch.from_numpy(np.ascontiguousarray(Q)).to(device)
        Gt = torch.from_numpy(np.ascontiguousarray(G)).to(device)
    relevance = _Relevance(query_labels, gallery_labels, query_time, gallery_time, time_window,
                           len(Q), len(G), device)
    n_g = len(G)
    width = min(k + 1, n_g)
    q_block, g_chunk = _plan(len(Q), n_g, working_memory, device, width)
    g_chunks = list(gen_batches(n_g, g_chunk))
    opts = {"metrics": metrics, "ap_at_k_normaliser": ap_at_k_normaliser, "gain": gain,
            "discount": discount}
    per_query = {m: np.empty(len(Q)) for m in metrics}
    for rows in gen_batches(len(Q), q_block):
        n_q = rows.stop - rows.start
        q_idx = torch.arange(rows.start, rows.stop, device=device)
        top_k = torch.empty((n_q, 0), dtype=torch.int64, device=device)
        top_g = torch.empty((n_q, 0), dtype=torch.float64, device=device)
        ideal = torch.empty((n_q, 0), dtype=torch.float64, device=device)
        n_rel = torch.zeros(n_q, dtype=torch.int64, device=device)
        best_rel = torch.full((n_q,), _INT64_MIN, dtype=torch.int64, device=device)
        for cols in g_chunks:
            keys = _keys(Qt[rows] @ Gt[cols].T)
            gains = relevance(q_idx, cols)
            c_width = min(width, keys.shape[1])
            ck, pos = torch.topk(keys, c_width, dim=1)
            top_k, top_g = _merge_top(top_k, top_g, ck, gains.gather(1, pos), width)
            is_rel = gains > 0
            n_rel += is_rel.sum(dim=1)
            best_rel = torch.maximum(best_rel, torch.where(is_rel, keys, _INT64_MIN).amax(1))
            if "ndcg" in metrics:
                ideal = torch.cat([ideal, torch.topk(gains, min(k, gains.shape[1]), 1).values],
                                  dim=1)
                ideal = torch.topk(ideal, min(k, ideal.shape[1]), dim=1).values

        def recount(kind, key, which, rows=rows):
            """Second pass over the gallery for the queries ``which`` of this block."""
            idx = torch.nonzero(which).ravel()
            count = torch.zeros(len(which), dtype=torch.int64, device=device)
            gsum = torch.zeros(len(which), dtype=torch.float64, device=device)
            if len(idx) == 0:
                return count if kind == "ge_ap" else (count, gsum)
            for cols in g_chunks:
                # the same product as the first pass (same rows and columns), so
                # the keys are bit-identical to the ones compared against
                keys = _keys(Qt[rows] @ Gt[cols].T)[idx]
                if kind == "ge_ap":
                    count[idx] += ((keys >> 1) >= key[idx, None]).sum(dim=1)
                else:
                    eq = keys == key[idx, None]
                    count[idx] += eq.sum(dim=1)
                    g = relevance(idx + rows.start, cols)
                    if gain == "exponential":
                        g = torch.exp2(g) - 1.0
                    gsum[idx] += (g * eq).sum(dim=1)
            if kind == "ge_ap":
                return count
            return count, gsum

        values = _block_metrics(top_k, top_g, n_rel, best_rel, ideal, k, n_g, opts, recount)
        for m in metrics:
            per_query[m][rows] = values[m].cpu().numpy()
    for m in metrics:
        per_query[m][bad_q] = np.nan
    means = {m: _nanmean(per_query[m]) for m in metrics}
    return (means, per_query) if return_per_query else means

