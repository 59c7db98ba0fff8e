"""Plots of the diachronic protocols (needs matplotlib: ``pip install temporal-xmodal[plots]``)."""

from collections.abc import Mapping

import numpy as np
from sklearn.utils._param_validation import StrOptions, validate_params

from ._table import ResultTable

__all__ = ["plot_dispersion", "plot_per_bin_map"]

_DIRECTION_NAMES = {"i2t": "I→T", "t2i": "T→I", "mean": "mean of I→T and T→I"}


def _axes(ax):
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "Plotting needs matplotlib, an optional dependency: "
            "pip install temporal-xmodal[plots]"
        ) from exc
    if ax is None:
        _, ax = plt.subplots()
    return ax


def _as_table(result):
    """A per-bin table from a ResultTable, a DataFrame or a ``(scores, table)`` pair; else None."""
    if isinstance(result, tuple) and len(result) == 2:
        result = result[1]
    if isinstance(result, ResultTable) or hasattr(result, "columns"):
        columns = list(result.columns)
        if "center" in columns:
            return {c: np.asarray(result[c]) for c in columns}
    return None


@validate_params(
    {
        "results": "no_validation",
        "ax": "no_validation",
        "direction": [StrOptions(set(_DIRECTION_NAMES))],
        "marker": "no_validation",
    },
    prefer_skip_nested_validation=True,
)
def plot_per_bin_map(results, ax=None, *, direction="mean", marker="o", **plot_kwargs):
    """Plot per-bin temporally bounded mAP against time, one line per estimator.

    The per-bin curve of temporally bounded retrieval (Semedo & Magalhães, ACM MM 2019, Fig. 4),
    from :func:`~temporal_xmodal.evaluation.temporally_bounded_retrieval`'s ``per_bin`` table;
    bins without items (NaN) leave gaps.  Read more in docs/evaluation.md.

    Parameters
    ----------
    results : ResultTable, DataFrame, tuple or mapping
        A per-bin table (or its ``to_frame()``), the protocol's ``(scores, per_bin)`` pair, or a
        mapping ``{estimator name: any of those}`` for one labelled line each.
    ax : matplotlib Axes or None, default=None
        Where to draw; a new figure when None.
    direction : {"mean", "i2t", "t2i"}, default="mean"
        Which column (``map_mean``, ``map_i2t``, ``map_t2i``) to plot.
    marker : str, default="o"
        Marker of the points.
    **plot_kwargs
        Passed to :meth:`matplotlib.axes.Axes.plot`.

    Returns
    -------
    ax : matplotlib Axes

    Raises
    ------
    ImportError
        Without matplotlib.
    ValueError
        On a bad ``direction`` or input that is not a per-bin table.
    """
    single = _as_table(results)
    if single is not None:
        named = {None: single}
    elif isinstance(results, Mapping) and results:
        named = {}
        for name, result in results.items():
            table = _as_table(result)
            if table is None:
                raise ValueError(
                    f"results[{name!r}] is not a per-bin table (expected the output of "
                    "temporally_bounded_retrieval, its per_bin table or a DataFrame of it)."
                )
            named[name] = table
    else:
        raise ValueError(
            "results must be a per-bin table, a (scores, per_bin) pair or a mapping of "
            f"estimator names to those; got {type(results).__name__}."
        )
    column = f"map_{direction}"
    ax = _axes(ax)
    for name, table in named.items():
        if column not in table:
            raise ValueError(f"The per-bin table has no column {column!r}.")
        ax.plot(table["center"], table[column], marker=marker,
                label=None if name is None else str(name), **plot_kwargs)
    ax.set_xlabel("time (bin centre)")
    ax.set_ylabel(f"temporally-bounded mAP ({_DIRECTION_NAMES[direction]})")
    ax.set_ylim(0.0, 1.02)
    if any(name is not None for name in named):
        ax.legend()
    return ax


@validate_params(
    {
        "centres": ["array-like"],
        "dispersion": ["array-like"],
        "labels": ["array-like", None],
        "ax": "no_validation",
    },
    prefer_skip_nested_validation=True,
)
def plot_dispersion(centres, dispersion, labels=None, ax=None, **plot_kwargs):
    """Plot semantic dispersion curves (mean top-k similarity per instant), y axis from -1 to 1.

    The curves of semantic dispersion (Semedo & Magalhães, ACM MM 2019, Fig. 5), from
    :func:`~temporal_xmodal.evaluation.semantic_dispersion`; NaN (bins without candidates) leave
    gaps.  Read more in docs/evaluation.md.

    Parameters
    ----------
    centres : array-like of shape (n_bins,)
        Bin centres (x axis).
    dispersion : array-like of shape (n_bins,) or (n_queries, n_bins)
        One curve per row.
    labels : sequence of str or None, default=None
        Legend entry of each curve.
    ax : matplotlib Axes or None, default=None
        Where to draw; a new figure when None.
    **plot_kwargs
        Passed to :meth:`matplotlib.axes.Axes.plot`.

    Returns
    -------
    ax : matplotlib Axes

    Raises
    ------
    ImportError
        Without matplotlib.
    ValueError
        If the shapes of ``centres``, ``dispersion`` and ``labels`` disagree.
    """
    x = np.asarray(centres, dtype=np.float64).ravel()
    D = np.atleast_2d(np.asarray(dispersion, dtype=np.float64))
    if D.ndim != 2 or D.shape[1] != x.size:
        raise ValueError(
            f"dispersion must have shape (n_bins,) or (n_queries, n_bins) with n_bins = "
            f"{x.size} (len(centres)); got {np.shape(dispersion)}."
        )
    if labels is not None and len(labels) != D.shape[0]:
        raise ValueError(f"labels has {len(labels)} entries for {D.shape[0]} curves.")
    ax = _axes(ax)
    for i, row in enumerate(D):
        ax.plot(x, row, marker="o", label=None if labels is None else str(labels[i]),
                **plot_kwargs)
    ax.set_ylim(-1.0, 1.0)
    ax.set_xlabel("time (bin centre)")
    ax.set_ylabel("mean top-k similarity")
    if labels is not None:
        ax.legend()
    return ax
