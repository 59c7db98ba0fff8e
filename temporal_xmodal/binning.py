"""Time bins: the discrete instants of the binned model and of the diachronic protocols."""

import numbers
import warnings

import numpy as np


class TimeBinWarning(UserWarning):
    """Warned when bins with too few items are merged into a neighbour."""


class TimeBins:
    """Partition of the time axis into contiguous bins, learned from timestamps.

    Parameters
    ----------
    bins : int, float or array-like, default=10
        An int: that many equal-width bins over the observed range.  A float:
        the bin width in the units of the time column (e.g. ``1/12`` for months
        when time is in fractional years).  An array: explicit increasing
        edges.
    min_bin_size : int, default=1
        Bins holding fewer items are merged with their smaller neighbour
        (repeatedly, with a :class:`TimeBinWarning`) until every bin has at
        least this many; empty bins are always merged.

    Attributes
    ----------
    edges_ : ndarray of shape (n_bins_ + 1,)
        Bin edges; bin ``b`` is ``[edges_[b], edges_[b + 1])``, the last bin
        also includes its right edge.
    counts_ : ndarray of shape (n_bins_,)
        Items of the fitted timestamps per bin.
    centers_ : ndarray of shape (n_bins_,)
    n_bins_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from temporal_xmodal.binning import TimeBins
    >>> TimeBins(bins=1.0).fit(np.array([1990.2, 1990.7, 1991.5, 1992.9])).n_bins_
    3
    """

    def __init__(self, bins=10, min_bin_size=1):
        self.bins = bins
        self.min_bin_size = min_bin_size

    def fit(self, time):
        """Compute the edges from training timestamps (merging small bins).

        Parameters
        ----------
        time : array-like of shape (n,)

        Returns
        -------
        self : TimeBins
        """
        t = np.asarray(time, dtype=np.float64).ravel()
        if t.size == 0 or not np.all(np.isfinite(t)):
            raise ValueError("time must be a non-empty array of finite numbers.")
        if not isinstance(self.min_bin_size, numbers.Integral) or self.min_bin_size < 1:
            raise ValueError(f"min_bin_size must be a positive int; got {self.min_bin_size!r}.")
        if self.min_bin_size > t.size:
            raise ValueError(f"min_bin_size={self.min_bin_size} exceeds the {t.size} items.")
        edges = self._initial_edges(t)
        counts = np.histogram(t, edges)[0]
        merged = 0
        while len(counts) > 1 and counts.min() < max(self.min_bin_size, 1):
            b = int(np.argmin(counts))
            if b == 0:
                other = 1
            elif b == len(counts) - 1:
                other = b - 1
            else:
                other = b - 1 if counts[b - 1] <= counts[b + 1] else b + 1
            edges = np.delete(edges, max(b, other))  # drop the edge between b and other
            counts = np.histogram(t, edges)[0]
            merged += 1
        if merged:
            warnings.warn(
                f"{merged} time bin(s) with fewer than {max(self.min_bin_size, 1)} items were "
                f"merged into a neighbour; {len(counts)} bins remain.", TimeBinWarning,
                stacklevel=2)
        self.edges_ = edges
        self.counts_ = counts
        self.centers_ = (edges[:-1] + edges[1:]) / 2
        self.n_bins_ = len(counts)
        return self

    def _initial_edges(self, t):
        lo, hi = t.min(), t.max()
        if hi == lo:
            hi = lo + 1.0
        bins = self.bins
        if isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
            if bins < 1:
                raise ValueError(f"bins must be >= 1; got {bins}.")
            return np.linspace(lo, hi, bins + 1)
        if isinstance(bins, numbers.Real) and not isinstance(bins, bool):
            if not bins > 0:
                raise ValueError(f"A bin width must be positive; got {bins}.")
            # the last bin [lo + (n-1) w, lo + n w) holds the maximum, so that
            # discretised times (a month index with w = 1) get one bin per value
            n = int(np.floor((hi - lo) / bins + 1e-9)) + 1
            return lo + bins * np.arange(n + 1)
        edges = np.asarray(bins, dtype=np.float64)
        if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0):
            raise ValueError("bin edges must be a 1-D increasing array with at least 2 values.")
        return edges

    def transform(self, time):
        """Bin index of each timestamp; times outside the edges go to the nearest bin.

        Parameters
        ----------
        time : array-like of shape (n,)

        Returns
        -------
        index : ndarray of int of shape (n,)
        """
        t = np.asarray(time, dtype=np.float64).ravel()
        return np.clip(np.searchsorted(self.edges_, t, side="right") - 1, 0, self.n_bins_ - 1)
