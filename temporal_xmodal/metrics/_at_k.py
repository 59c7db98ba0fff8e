"""@k retrieval metrics from a chunked top-k, a reducer of the scan engine (docs/search.md).

Per query the scan keeps the ``k + 1`` best (score key, gain) pairs, the number of relevant
items, the ``k`` largest gains and the best relevant key; the ranks that need the whole
gallery (MRR beyond the list, an nDCG tie group across position ``k``) are counted by a
second pass over those queries only.
"""

import numpy as np
import torch
from sklearn.utils._param_validation import validate_params

from .._input import check_embeddings
from ._full_ranking import SCAN_CONSTRAINTS
from ._ranking import RANKING_CONSTRAINTS, resolve_normaliser
from ._retrieval import _nanmean
from ._scan import (
    K_RANGE,
    Footprint,
    Reducer,
    Scan,
    make_relevance,
    prepare_similarity,
    sortable_keys,
)

#: Metrics :func:`retrieval_metrics_at_k` computes.
TOPK_METRICS = ("map", "recall", "mrr", "ndcg")
#: 48 bytes of temporaries per pair (scores, keys, gains, masks); CPU blocks of at most 128
#: queries and 2**18 pairs stay in the cache; GPU blocks take at most 1,024 queries.
_FOOTPRINT = Footprint(48, max_query_block=128, max_pairs=2**18, gpu_max_query_block=1024)
_INT64_MIN = -(2**63)


def _compute_device(query, gallery, device):
    """``device``, else the gallery's (or the query's) when a tensor, else the CPU."""
    if device is not None:
        return torch.device(device)
    for T in (gallery, query):
        if isinstance(T, torch.Tensor):
            return T.device
    return torch.device("cpu")


def _host(values):
    """Labels, times or embeddings as NumPy (tensors copied to the host)."""
    if isinstance(values, torch.Tensor):
        return values.detach().cpu().numpy()
    return values


def _prepare(query, gallery, device):
    """Checked embeddings on ``device``: GPU tensors stay there as float64; anything else goes
    through NumPy, float32 kept when both are float32, else float64.
    """
    if (device.type != "cpu" and isinstance(query, torch.Tensor)
            and isinstance(gallery, torch.Tensor)):
        return check_embeddings(query, gallery, kind="torch", dtype=torch.float64,
                                device=device)
    query, gallery = (A if isinstance(A, np.ndarray) else np.asarray(_host(A), dtype=np.float64)
                      for A in (query, gallery))
    Q, G = check_embeddings(query, gallery, dtype=(np.float64, np.float32))
    if Q.dtype != G.dtype:
        Q, G = Q.astype(np.float64), G.astype(np.float64)
    return Q, G


def _as_tensor(A, device):
    return torch.from_numpy(np.ascontiguousarray(A)).to(device) if isinstance(A, np.ndarray) \
        else A


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


class _AtK(Reducer):
    """The @k figures of each query from its streamed top ``k + 1`` and counts (``figures``:
    one row per metric of ``opts["metrics"]``, in :data:`TOPK_METRICS`' order)."""

    revisit_at = "block"

    def __init__(self, relevance, k, n_query, n_gallery, opts, device):
        self.relevance, self.k, self.opts, self.device = relevance, k, opts, device
        self.n_gallery = n_gallery
        self.width = min(k + 1, n_gallery)
        self.figures = np.empty((len(opts["metrics"]), n_query))

    def start(self, rows):
        n_q, device = rows.stop - rows.start, self.device
        return {
            "q_idx": torch.arange(rows.start, rows.stop, device=device),
            "top_keys": torch.empty((n_q, 0), dtype=torch.int64, device=device),
            "top_gains": torch.empty((n_q, 0), dtype=torch.float64, device=device),
            "ideal": torch.empty((n_q, 0), dtype=torch.float64, device=device),
            "n_rel": torch.zeros(n_q, dtype=torch.int64, device=device),
            "best_rel": torch.full((n_q,), _INT64_MIN, dtype=torch.int64, device=device),
        }

    def reduce(self, st, rows, cols, S):
        keys = sortable_keys(S)
        gains = self.relevance.gains(st["q_idx"], cols)
        ck, pos = torch.topk(keys, min(self.width, keys.shape[1]), dim=1)
        st["top_keys"], st["top_gains"] = _merge_top(st["top_keys"], st["top_gains"], ck,
                                                     gains.gather(1, pos), self.width)
        is_rel = gains > 0
        st["n_rel"] += is_rel.sum(dim=1)
        st["best_rel"] = torch.maximum(st["best_rel"],
                                       torch.where(is_rel, keys, _INT64_MIN).amax(1))
        if "ndcg" in self.opts["metrics"]:
            k = self.k
            ideal = torch.cat([st["ideal"], torch.topk(gains, min(k, gains.shape[1]), 1).values],
                              dim=1)
            st["ideal"] = torch.topk(ideal, min(k, ideal.shape[1]), dim=1).values

    def revisit(self, st, rows):
        """The queries whose best relevant item, or top-k tie group, may go past the list."""
        top_keys = st["top_keys"]
        complete = self.width == self.n_gallery  # the list holds the whole gallery
        no = torch.zeros(len(top_keys), dtype=torch.bool, device=self.device)
        st["best_ap"] = st["best_rel"] >> 1  # AP/MRR/recall: keys equal but for bit 0 tie
        st["last"] = top_keys[:, -1]
        st["exact"] = complete | (st["best_ap"] > (top_keys >> 1)[:, -1])
        st["straddle"] = no
        if "ndcg" in self.opts["metrics"] and not complete:
            st["straddle"] = top_keys[:, min(self.k, self.n_gallery) - 1] == st["last"]
        recount_rr = (~st["exact"] & (st["n_rel"] > 0) if "mrr" in self.opts["metrics"]
                      else no)
        st["ge_ap"] = torch.zeros(len(top_keys), dtype=torch.int64, device=self.device)
        st["eq_count"] = torch.zeros(len(top_keys), dtype=torch.int64, device=self.device)
        st["eq_gain"] = torch.zeros(len(top_keys), dtype=torch.float64, device=self.device)
        return recount_rr | st["straddle"], _Recount(st, rows, self.relevance, self.opts["gain"])

    def finish(self, st, rows):
        values = _block_metrics(st, self.k, self.n_gallery, self.opts)
        self.figures[:, rows] = torch.stack(tuple(values.values())).cpu().numpy()  # one copy


class _Recount(Reducer):
    """The counting second pass of an @k block, into its state ``st``: ``ge_ap`` (items at least as
    high as the best relevant one, bit 0 dropped), ``eq_count`` and ``eq_gain`` (items with the
    list's last key).
    """

    def __init__(self, st, block, relevance, gain):
        self.st, self.first, self.relevance, self.gain = st, block.start, relevance, gain

    def start(self, queries):
        return queries - self.first  # the picked queries' rows of the block

    def reduce(self, idx, queries, cols, S):
        st = self.st
        keys = sortable_keys(S)
        st["ge_ap"][idx] += ((keys >> 1) >= st["best_ap"][idx, None]).sum(dim=1)
        eq = keys == st["last"][idx, None]
        st["eq_count"][idx] += eq.sum(dim=1)
        g = self.relevance.gains(queries, cols)
        if self.gain == "exponential":
            g = torch.exp2(g) - 1.0
        st["eq_gain"][idx] += (g * eq).sum(dim=1)


def _block_metrics(st, k, n_gallery, opts):
    """``{metric: per-query tensor}`` of one block from its summaries, in :data:`TOPK_METRICS`'
    order.
    """
    top_keys, top_gains, n_rel = st["top_keys"], st["top_gains"], st["n_rel"]
    n_q, width = top_keys.shape
    device = top_keys.device
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
        in_list = (ap_keys >= st["best_ap"][:, None]).sum(dim=1)
        rank_rel = torch.where(st["exact"], in_list, st["ge_ap"]).to(torch.float64)
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
        # a group of the top k reaching the list's end may go on past it: its size
        # and gain counted over the whole gallery (the second pass)
        at_last = st["straddle"][:, None] & (top_keys == st["last"][:, None])
        size = torch.where(at_last, st["eq_count"][:, None], size)
        gsum = torch.where(at_last, st["eq_gain"][:, None], gsum)
        first, size, gsum = first[:, :k_eff], size[:, :k_eff], gsum[:, :k_eff]
        end = (first + size).clamp_max(k_eff)  # positions first+1 .. end inside the top k
        group_disc = cum_disc[end] - cum_disc[first]
        # each position carries its group's mean gain x the group's discount share
        is_start = first == torch.arange(k_eff, device=device)
        dcg = torch.where(is_start, gsum / size * group_disc, 0.0).sum(dim=1)
        ideal = st["ideal"]
        g_ideal = ideal if opts["gain"] == "linear" else torch.exp2(ideal) - 1.0
        idcg = g_ideal[:, :k_eff] @ disc[:g_ideal.shape[1]]
        out["ndcg"] = torch.where(idcg > 0, dcg / torch.where(idcg > 0, idcg, 1.0), nan)
    return out


@validate_params(
    {**{name: SCAN_CONSTRAINTS[name] for name in SCAN_CONSTRAINTS if name != "n_jobs"},
     "k": [K_RANGE], "metrics": [str, "array-like"], **RANKING_CONSTRAINTS,
     "return_per_query": ["boolean"], "device": "no_validation"},
    prefer_skip_nested_validation=True,
)
def retrieval_metrics_at_k(
    query, gallery, query_labels=None, gallery_labels=None, *, k=10,
    metrics=TOPK_METRICS, query_time=None, gallery_time=None, time_window=None,
    similarity="dot", ap_at_k_normaliser="auto", gain="linear",
    discount="jarvelin", working_memory=None, nan_policy="raise", return_per_query=False,
    device=None, time_filter=None,
):
    """mAP@k, recall@k, MRR and nDCG@k from a chunked top-k, in bounded memory.

    The figures of :func:`mean_average_precision` (with ``k``), :func:`recall_at_k`,
    :func:`mean_reciprocal_rank` and :func:`ndcg_at_k`, ties included, without sorting full
    rankings: memory is one block of ``working_memory`` MiB plus O(n_queries × k), whatever the
    gallery size.  Read more in docs/search.md.

    Parameters
    ----------
    query, gallery : array-like or torch.Tensor of shape (n, dim)
        Query and gallery embeddings; tensors on a GPU are scored there.
    query_labels, gallery_labels : array-like, torch.Tensor or None, default=None
        As in :func:`mean_average_precision`; nDCG's gain is the number of shared labels.
    k : int, default=10
        Cut-off of mAP@k, recall@k and nDCG@k (MRR is over the whole ranking).
    metrics : str or sequence of {"map", "recall", "mrr", "ndcg"}, default=all
    query_time, gallery_time, time_window, time_filter, nan_policy
        As in :func:`mean_average_precision`.
    similarity, ap_at_k_normaliser, gain, discount
        As in :func:`iter_score_blocks`, :func:`mean_average_precision` and :func:`ndcg_at_k`;
        scores are float32 when both embeddings are float32 NumPy arrays, else float64.
    working_memory : float or None, default=None
        Budget of one block in MiB; ``None``: 64 on the CPU (blocks also capped to stay in the
        cache), on a GPU a quarter of its free memory, at most 8 GiB.
    return_per_query : bool, default=False
        Also return the per-query values.
    device : str, torch.device or None, default=None
        Where to compute; ``None``: the gallery's (else the query's) device when it is a
        tensor, else the CPU.  The figures are the same on every device, up to float error.

    Returns
    -------
    scores : dict
        ``{metric: mean over the queries with a relevant item}``.
    per_query : dict of ndarray of shape (n_queries,)
        Only with ``return_per_query`` (NaN for queries without a relevant item, or omitted).

    Examples
    --------
    >>> import numpy as np
    >>> from temporal_xmodal.metrics import retrieval_metrics_at_k
    >>> E = np.random.default_rng(0).standard_normal((50, 8))
    >>> retrieval_metrics_at_k(E, E, k=5, metrics="recall", similarity="cosine")
    {'recall': 1.0}
    """
    metrics = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    unknown = sorted(set(metrics) - set(TOPK_METRICS))
    if unknown:
        raise ValueError(f"Unknown metrics {unknown}; choose from {list(TOPK_METRICS)}.")
    device = _compute_device(query, gallery, device)
    query_labels, gallery_labels = _host(query_labels), _host(gallery_labels)
    query_time, gallery_time = _host(query_time), _host(gallery_time)
    Q, G = _prepare(query, gallery, device)
    relevance = make_relevance(query_labels, gallery_labels, query_time, gallery_time,
                               time_window, n_query=len(Q), n_gallery=len(G),
                               nan_policy=nan_policy, device=device, time_filter=time_filter)
    keep_g = relevance.kept_gallery
    if keep_g is not None:
        G = G[torch.as_tensor(keep_g, device=device) if isinstance(G, torch.Tensor) else keep_g]
    Qt, Gt = (_as_tensor(A, device) for A in prepare_similarity(Q, G, similarity))
    width = min(k + 1, len(G))
    # on a GPU the block's width x width comparisons of its top lists (about 24
    # bytes each) must also fit in the budget
    scan = Scan(Qt, Gt, _FOOTPRINT._replace(bytes_per_query=24 * width**2),
                working_memory=working_memory, time_filter=relevance.time_filter)
    names = tuple(m for m in TOPK_METRICS if m in metrics)  # the order of the figures
    opts = {"metrics": names, "gain": gain,
            "ap_at_k_normaliser": resolve_normaliser(ap_at_k_normaliser, time_window),
            "discount": discount}
    figures = scan.run(_AtK(relevance, k, len(Q), len(G), opts, device)).figures
    figures[:, relevance.bad_queries] = np.nan
    per_query = dict(zip(names, figures))
    per_query = {m: per_query[m] for m in metrics}  # in the order asked
    means = {m: _nanmean(per_query[m]) for m in metrics}
    return (means, per_query) if return_per_query else means
