"""Full-ranking mAP with torch ops on the embeddings' device, with one host synchronisation:
a training loop on a GPU scores its validation set without copying embeddings to the host."""

import torch
from sklearn.utils._param_validation import validate_params

from .._input import check_embeddings, nonfinite_rows
from ._scan import WORKING_MEMORY_RANGE, Footprint, Reducer, Scan, make_relevance

#: Blocks span the whole gallery; 48 bytes of temporaries per pair (scores, sort indices,
#: group starts, cumulative counts).
_FOOTPRINT = Footprint(48, whole_gallery=True)


class _AveragePrecision(Reducer):
    """AP of every query, as a float64 tensor on the scan's device."""

    def __init__(self, relevance, n_query, device):
        self.relevance = relevance
        self.ap = torch.empty(n_query, dtype=torch.float64, device=device)

    def reduce(self, state, rows, cols, S):
        self.ap[rows] = _average_precision_block(S, self.relevance.relevant(rows))


def _average_precision_block(scores, relevant):
    """AP of each row of a block's float64 scores against the whole gallery (NaN: no relevant
    item).  Rows sorted ascending, an item's tie group starts at ``left`` (a running maximum of
    the group starts): ``rank = n - left``, ``hits = R - (relevant items before left)``."""
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


@validate_params(
    {"query": [torch.Tensor], "gallery": [torch.Tensor], "query_labels": [torch.Tensor],
     "gallery_labels": [torch.Tensor],
     "working_memory": [WORKING_MEMORY_RANGE, None],
     "return_per_query": ["boolean"]},
    prefer_skip_nested_validation=True,
)
@torch.no_grad()
def mean_average_precision_torch(query, gallery, query_labels, gallery_labels, *,
                                 working_memory=None, return_per_query=False):
    """Full-ranking mean average precision with torch ops, on the tensors' device.

    The figure of :func:`~temporal_xmodal.metrics.mean_average_precision` (Semedo, thesis,
    Eq. 2.19), from float64 scores, up to the summation order; nothing is copied to the host
    and the one host synchronisation is the final ``.item()`` (docs/metrics.md).

    Parameters
    ----------
    query : torch.Tensor of shape (n_queries, dim)
        Query embeddings (float32 or float64).
    gallery : torch.Tensor of shape (n_gallery, dim)
        Gallery embeddings, on the same device.
    query_labels, gallery_labels : torch.Tensor
        1-D class labels, or indicators of shape (n, n_labels) (non-zero = has the label;
        relevant = a shared label), on the same device.
    working_memory : float or None, default=None
        Budget of one query block in MiB; ``None``: 64 on the CPU, on a GPU a quarter of its
        free memory, at most 8 GiB.
    return_per_query : bool, default=False
        Also return the per-query AP (a float64 tensor on the device, NaN without a relevant
        item).

    Returns
    -------
    map : float
        NaN when no query has a relevant item.
    per_query : torch.Tensor of shape (n_queries,)
        Only with ``return_per_query``.

    Raises
    ------
    TypeError
        Non-tensor inputs or non-float embeddings.
    ValueError
        Shapes that do not match, tensors on several devices, or NaN / infinite embeddings
        (reported after the final synchronisation).

    Examples
    --------
    >>> import torch
    >>> from temporal_xmodal.metrics import mean_average_precision_torch
    >>> Z = torch.eye(4)
    >>> labels = torch.tensor([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=torch.bool)
    >>> mean_average_precision_torch(Z, Z, labels, labels)
    0.75
    """
    for name, T in (("query", query), ("gallery", gallery)):
        if not T.dtype.is_floating_point:
            raise TypeError(f"{name} must be a floating-point tensor; got {T.dtype}.")
    Q, G = check_embeddings(query, gallery, kind="torch", dtype=torch.float64, finite=False)
    relevance = make_relevance(query_labels, gallery_labels, n_query=len(Q), n_gallery=len(G),
                               nan_policy=None)
    devices = {T.device for T in (query, gallery, query_labels, gallery_labels)}
    if len(devices) > 1:
        raise ValueError(f"query, gallery and labels must be on one device; got "
                         f"{sorted(map(str, devices))}.")
    scan = Scan(Q, G, _FOOTPRINT, working_memory=working_memory)
    ap = scan.run(_AveragePrecision(relevance, len(Q), query.device)).ap
    # one value carries the mean and the validation: -1 / -2 / -3 = non-finite
    # query / gallery / both (an mAP is never negative)
    bad = 2 * (nonfinite_rows(G, sync=False) > 0) + (nonfinite_rows(Q, sync=False) > 0)
    bad = bad.to(torch.float64)
    valid = ~torch.isnan(ap)
    mean = torch.where(valid, ap, 0.0).sum() / valid.sum()  # 0 / 0: NaN without any
    value = float(torch.where(bad > 0, -bad, mean))  # the one host synchronisation
    if value < 0:
        which = {-1.0: "query", -2.0: "gallery", -3.0: "query and gallery"}[value]
        raise ValueError(f"{which} embeddings contain NaN or infinity.")
    return (value, ap) if return_per_query else value
