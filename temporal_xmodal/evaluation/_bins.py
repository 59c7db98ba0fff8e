"""Instants of the binned protocols (:func:`fit_instants`) and their one per-instant loop."""

from dataclasses import dataclass

import numpy as np
from sklearn.base import clone

from ..time import TimeBins, TimeRangeWarning, time_role
from .._warnings import warn


@dataclass(frozen=True, eq=False)
class Instants:
    """A fitted bin partition of an evaluation set's times."""

    bins: object            # the fitted TimeBins (or TimeBins-like object)
    item_bin: np.ndarray    # (n_samples,) bin of each row
    centers: np.ndarray     # (n_bins,) float64 on the time axis
    edges: np.ndarray       # (n_bins + 1,)
    n_items: np.ndarray     # (n_bins,) rows per bin

    @property
    def n_bins(self):
        return len(self.centers)


def _is_fitted_bins(bins):
    return all(hasattr(bins, a) for a in ("edges_", "centers_", "n_bins_", "transform"))


def _warn_outside_edges(edges, time, unit):
    """Warn (TimeRangeWarning), counting them, of times outside fitted edges."""
    lo, hi = float(edges[0]), float(edges[-1])
    below, above = time < lo, time > hi
    if not (below.any() or above.any()):
        return
    parts = []
    if below.any():
        parts.append(f"{int(below.sum())} below the first edge (by up to "
                     f"{lo - time.min():.4g} {unit}), put in the first bin")
    if above.any():
        parts.append(f"{int(above.sum())} above the last edge (by up to "
                     f"{time.max() - hi:.4g} {unit}), put in the last bin")
    warn(
        f"bins: {int(below.sum() + above.sum())} of the {time.size} evaluation row(s) fall "
        f"outside the edges [{lo:.6g}, {hi:.6g}] of the fitted TimeBins: {'; '.join(parts)}. "
        "Pass edges or a bin count instead to bin the evaluation times themselves.",
        TimeRangeWarning)


def fit_instants(bins, time, unit):
    """The instants of an evaluation set: ``bins`` fitted on ``time`` (on the axis, in ``unit``).

    A fitted ``TimeBins`` is used as it is: rows outside its edges go to the first / last bin,
    with a :class:`~temporal_xmodal.TimeRangeWarning` counting them.  Anything else (an unfitted
    ``TimeBins`` or its ``bins`` argument) is fitted on ``time``; explicit edges must cover every
    row.
    """
    if _is_fitted_bins(bins):
        fitted = bins
        _warn_outside_edges(np.asarray(fitted.edges_, dtype=np.float64), time, unit)
    elif isinstance(bins, TimeBins):
        fitted = clone(bins).set_params(time_unit=unit).fit(time)
    else:
        fitted = TimeBins(bins=bins, time_unit=unit).fit(time)
    centers = np.asarray(fitted.centers_, dtype=np.float64)
    item_bin = np.asarray(fitted.transform(time), dtype=np.intp)
    return Instants(bins=fitted, item_bin=item_bin, centers=centers,
                    edges=np.asarray(fitted.edges_, dtype=np.float64),
                    n_items=np.bincount(item_bin, minlength=len(centers)))


def evaluate_per_instant(split, instants, direction, evaluate, *, query_rows=None,
                         project_queries=False):
    """``evaluate(Q, G, rows, members)`` for every instant holding items; None for the empty ones.

    The gallery G is the other modality of the instant's rows (``members``) at their own times; the
    queries Q are rows ``query_rows`` (the instant's own rows when None) of the ``direction``'s
    query modality at their own times, or projected at the bin centre when ``project_queries`` and
    the estimator's projections depend on time.
    """
    if direction == "i2t":
        Z_query, Z_gallery, X_query = split.Z_image, split.Z_text, split.X_image
        project = split.estimator.transform_image
    else:
        Z_query, Z_gallery, X_query = split.Z_text, split.Z_image, split.X_text
        project = split.estimator.transform_text
    project_queries = project_queries and time_role(split.estimator) == "inference"
    fixed = None if query_rows is None else Z_query[query_rows]
    order = np.argsort(instants.item_bin, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(instants.n_items)])
    results = [None] * instants.n_bins
    for b in np.flatnonzero(instants.n_items):
        members = order[bounds[b]:bounds[b + 1]]
        rows = members if query_rows is None else query_rows
        if project_queries:
            Q = np.asarray(project(X_query[rows], time=float(instants.centers[b])))
        else:
            Q = Z_query[rows] if fixed is None else fixed
        results[b] = evaluate(Q, Z_gallery[members], rows, members)
    return results


def stack_per_instant(results, n_rows):
    """Per-instant 1-D results as columns of an (n_rows, n_bins) array (NaN: empty)."""
    out = np.full((n_rows, len(results)), np.nan)
    for b, column in enumerate(results):
        if column is not None:
            out[:, b] = column
    return out
