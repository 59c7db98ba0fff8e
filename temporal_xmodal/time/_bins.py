"""Time bins: the one parser of ``bins=`` and the partition it fits on the time axis."""

import datetime
import heapq
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import StrOptions

from .._constraints import Interval
from ._durations import to_duration
from ._units import TIME_UNITS, is_datetime_like, to_time_axis
from .._warnings import warn


class TimeBinWarning(UserWarning):
    """Warned when bins with too few items are merged into a neighbour."""


def _describe(values, limit=6):
    """A short list of values for messages, ``[0.0, nan, 2.0]``, truncated with ``...``."""
    shown = ", ".join(f"{v:.6g}" for v in values[:limit])
    return f"[{shown}{', ...' if len(values) > limit else ''}]"


def _check_edges(edges):
    """Explicit edges as a 1-D, finite, strictly increasing float64 array (else ValueError)."""
    try:
        arr = np.asarray(edges, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"bins as edges must be numbers on the time axis; got {edges!r}.") from None
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(
            f"bins as edges must be a 1-D array of at least 2 values; got shape {arr.shape}.")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(
            f"bins as edges must be finite: {bad.size} NaN or infinite edge(s), first "
            f"{float(arr[bad[0]])!r} at position {int(bad[0])}, in {_describe(arr)}.")
    step = np.diff(arr)
    wrong = np.flatnonzero(step <= 0)
    if wrong.size:
        i = int(wrong[0])
        problem = (f"edge {arr[i]:.6g} is repeated (positions {i} and {i + 1})"
                   if step[i] == 0 else
                   f"edges are out of order: {arr[i + 1]:.6g} at position {i + 1} comes after "
                   f"{arr[i]:.6g}")
        raise ValueError(
            f"bins as edges must be strictly increasing (sorted, no repeats); {problem}, "
            f"in {_describe(arr)}.")
    return arr


def _bins_on_axis(bins, unit):
    """``bins`` on the axis: an int count, a float width in ``unit`` (durations converted), or an
    ndarray of edges (dates mapped as a time column is).  The one reader of a ``bins`` argument.
    """
    if isinstance(bins, (str, datetime.timedelta, np.timedelta64)):
        width = to_duration(bins, unit, name="bins")
        if width == 0:
            raise ValueError(f"bins as a bin width must be positive; got {bins!r}.")
        return width
    if isinstance(bins, (bool, np.bool_)):
        raise ValueError(f"bins must be a number of bins, a bin width or edges; got {bins!r}.")
    # callers that validated ``bins`` themselves skip TimeBins' own validation:
    # the values a constraint covers are checked once more here, where they are read
    if isinstance(bins, Integral):
        if bins < 1:
            raise ValueError(f"bins as a number of bins must be >= 1; got {bins!r}.")
        return int(bins)
    if isinstance(bins, Real):
        if not (bins > 0 and np.isfinite(bins)):
            raise ValueError(f"bins as a bin width must be positive and finite; got {bins!r}.")
        return float(bins)
    if is_datetime_like(bins):
        return _check_edges(to_time_axis(bins, unit, name="bins (the edges)"))
    return _check_edges(bins)


class TimeBins(BaseEstimator):
    """Partition of the time axis into contiguous bins, learned from timestamps.

    The one reader of ``bins`` for :class:`~temporal_xmodal.estimators.BinnedProcrustesEmbedder`,
    the binned evaluation protocols and the ``"onehot"`` time encoding.  Read more in docs/time.md.

    Parameters
    ----------
    bins : int, float, str, timedelta or array-like, default=10
        An int: that many equal-width bins over the observed range.  A float: the bin width in
        ``time_unit``, edges stepping from the earliest time.  A duration (``"6M"``, ``"30D"``,
        ``pandas.Timedelta``, ``numpy.timedelta64``): a width converted to ``time_unit``.  An
        array: explicit edges (numbers on the axis or dates), finite, strictly increasing and
        covering every fitted time (else a ``ValueError`` naming the rows outside: never clipped).
    min_bin_size : int, default=1
        Bins with fewer items (empty ones always) are merged into their smaller neighbour, with a
        :class:`TimeBinWarning`; the cost grows with the occupied bins, not the empty ones.
    time_unit : {"years", "months", "weeks", "days", "hours", "minutes", "seconds"}, \
default="years"
        Unit of the time axis, into which duration widths and date edges are converted.

    Attributes
    ----------
    edges_ : ndarray of shape (n_bins_ + 1,)
        Bin edges in ``time_unit``; bin ``b`` is ``[edges_[b], edges_[b + 1])``, the last one
        closed.
    counts_ : ndarray of shape (n_bins_,)
        Fitted timestamps per bin (they sum to their number).
    centers_ : ndarray of shape (n_bins_,)
        Bin centres, in ``time_unit``.
    n_bins_ : int
        Number of bins after merging.

    Examples
    --------
    >>> import numpy as np
    >>> from temporal_xmodal.time import TimeBins
    >>> TimeBins(bins=1.0).fit(np.array([1990.2, 1990.7, 1991.5, 1992.9])).n_bins_
    3
    >>> TimeBins(bins="6M").fit(np.array([1990.0, 1990.7, 1991.2, 1991.9])).edges_
    array([1990. , 1990.5, 1991. , 1991.5, 1992. ])
    """

    _parameter_constraints = {
        # np.timedelta64 first: it is an Integral, which the intervals cannot compare
        "bins": [np.timedelta64, datetime.timedelta, str,
                 Interval(Integral, 1, None, closed="left"),
                 Interval(Real, 0, None, closed="neither"), "array-like"],
        "min_bin_size": [Interval(Integral, 1, None, closed="left")],
        "time_unit": [StrOptions(set(TIME_UNITS))],
    }

    def __init__(self, bins=10, min_bin_size=1, time_unit="years"):
        self.bins = bins
        self.min_bin_size = min_bin_size
        self.time_unit = time_unit

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, time):
        """Compute the edges from timestamps (numbers in ``time_unit``), merging small bins.

        Parameters
        ----------
        time : array-like of shape (n,)

        Returns
        -------
        self : TimeBins

        Raises
        ------
        ValueError
            For empty or non-finite times, a bad ``bins`` or ``min_bin_size``, or explicit edges
            that leave some of the times outside them.
        """
        t = np.asarray(time, dtype=np.float64).ravel()
        if t.size == 0 or not np.all(np.isfinite(t)):
            raise ValueError("time must be a non-empty array of finite numbers.")
        if self.min_bin_size > t.size:
            raise ValueError(f"min_bin_size={self.min_bin_size} exceeds the {t.size} items.")
        edge, n_initial, index = _initial_bins(_bins_on_axis(self.bins, self.time_unit), t)
        # Empty bins are always merged.  Merging one never changes a count, so the
        # greedy "first smallest bin into its smaller neighbour, the left one on
        # ties" reduces to: a leading run of empty bins joins the first occupied
        # bin, a trailing run the last one, and a run between two occupied bins
        # joins the one with fewer items (the left one on ties).
        occupied, counts = np.unique(index, return_counts=True)
        left, right = occupied[:-1], occupied[1:]
        boundary = np.where((right == left + 1) | (counts[:-1] <= counts[1:]), right, left + 1)
        edges = edge(np.concatenate([[0], boundary, [n_initial]]))
        counts = counts.astype(np.intp)
        min_size = int(self.min_bin_size)
        if len(counts) > 1 and counts.min() < min_size:
            keep, counts = _merge_small(counts, min_size)
            edges = np.append(edges[:-1][keep], edges[-1])
        merged = n_initial - len(counts)
        if merged:
            empty = n_initial - len(occupied)
            warn(
                f"{merged} time bin(s) with fewer than {min_size} items were merged into a "
                f"neighbour ({empty} of them empty); {len(counts)} bins remain.", TimeBinWarning)
        self.edges_ = edges
        self.counts_ = counts
        self.centers_ = (edges[:-1] + edges[1:]) / 2
        self.n_bins_ = len(counts)
        return self

    def transform(self, time):
        """Bin index of each timestamp; times outside the edges go to the nearest bin.

        Never warns (the callers do).

        Parameters
        ----------
        time : array-like of shape (n,)
            Timestamps, numbers in ``time_unit``.

        Returns
        -------
        index : ndarray of int of shape (n,)
        """
        t = np.asarray(time, dtype=np.float64).ravel()
        return np.clip(np.searchsorted(self.edges_, t, side="right") - 1, 0, self.n_bins_ - 1)


def _initial_bins(bins, t):
    """The bins before merging, ``(edge, n_bins, index)``: ``edge(k)`` the edges at int positions
    ``k``, ``index`` each time's bin; a bin width never materialises its empty bins.
    """
    lo, hi = t.min(), t.max()
    if hi == lo:
        hi = lo + 1.0
    if isinstance(bins, int):
        return _from_edges(np.linspace(lo, hi, bins + 1), t)
    if isinstance(bins, float):
        return _from_width(bins, lo, hi, t)
    below, above = t < bins[0], t > bins[-1]
    if below.any() or above.any():
        out = np.flatnonzero(below | above)
        parts = [f"{int(mask.sum())} {where} the {which} edge {bins[e]:.6g} (times "
                 f"{t[mask].min():.6g} to {t[mask].max():.6g})"
                 for mask, where, which, e in ((below, "below", "first", 0),
                                               (above, "above", "last", -1)) if mask.any()]
        rows = ", ".join(str(int(i)) for i in out[:5]) + (", ..." if out.size > 5 else "")
        raise ValueError(
            f"bins: the explicit edges [{bins[0]:.6g}, ..., {bins[-1]:.6g}] leave "
            f"{out.size} of the {t.size} times outside them: {'; '.join(parts)} (rows "
            f"{rows}). Rows are never dropped nor clipped into the end bins: extend the "
            f"edges to cover the times [{t.min():.6g}, {t.max():.6g}] (first edge <= "
            f"{t.min():.6g}, last edge >= {t.max():.6g}) or leave those rows out.")
    return _from_edges(bins, t)


def _from_edges(edges, t):
    n = len(edges) - 1
    index = np.minimum(np.searchsorted(edges, t, side="right") - 1, n - 1)
    return (lambda k: edges[k]), n, index


def _from_width(width, lo, hi, t):
    # the last bin [lo + (n-1) w, lo + n w) holds the maximum, so that
    # discretised times (a month index with w = 1) get one bin per value
    resolution = np.spacing(max(abs(lo), abs(hi)))
    if width < resolution:  # the edges would repeat
        raise ValueError(
            f"A bin width (bins) of {width:.6g} is below the float64 resolution of the "
            f"time axis around {max(abs(lo), abs(hi)):.6g} (steps of {resolution:.3g}); "
            "use a wider bin or a finer time_unit.")

    def edge(k):  # the edges lo + w * k, exactly as lo + w * np.arange(n + 1)
        return lo + width * np.asarray(k, dtype=np.int64)

    n = int(np.floor((hi - lo) / width + 1e-9)) + 1
    while edge(n) < hi:  # float rounding: the maximum stays inside the last bin
        n += 1
    index = np.clip(np.floor((t - lo) / width), 0, n - 1).astype(np.int64)
    for _ in range(8):  # correct the division's rounding against the edges themselves
        down = (index > 0) & (edge(index) > t)
        up = (index < n - 1) & (edge(index + 1) <= t)
        if not (down.any() or up.any()):
            break
        index = index - down + up
    return edge, n, index


def _merge_small(counts, min_size):
    """Merge bins of fewer than ``min_size`` items, linearithmic in the number of bins.

    Repeatedly the smallest bin (the first on ties) joins its smaller neighbour (the left on ties;
    an end bin its only one) until every bin holds ``min_size`` or one remains; a heap and a linked
    list give the same merges as a full scan per step.  Returns ``keep`` (bins whose left edge
    stays) and the retained bins' counts.
    """
    count = counts.tolist()
    m = len(count)
    prev = list(range(-1, m - 1))
    succ = list(range(1, m + 1))
    succ[-1] = -1
    alive = [True] * m
    heap = [(c, b) for b, c in enumerate(count) if c < min_size]
    heapq.heapify(heap)
    remaining = m
    while heap and remaining > 1:
        c, b = heapq.heappop(heap)
        if not alive[b] or count[b] != c:  # stale entry: the bin was merged since
            continue
        left, right = prev[b], succ[b]
        if left == -1:
            other = right
        elif right == -1:
            other = left
        else:
            other = left if count[left] <= count[right] else right
        first, second = (other, b) if other == left else (b, other)
        count[first] += count[second]  # the edge between them goes
        alive[second] = False
        succ[first] = succ[second]
        if succ[second] != -1:
            prev[succ[second]] = first
        remaining -= 1
        if count[first] < min_size:
            heapq.heappush(heap, (count[first], first))
    keep = np.array(alive, dtype=bool)
    return keep, np.asarray(count, dtype=counts.dtype)[keep]
