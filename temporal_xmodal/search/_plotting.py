"""Charts of the exploration tables (matplotlib, optional)."""

import textwrap
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import validate_params

from .._constraints import Interval
from ._change import over_time_change, time_change
from ._exploration import instant_label


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("The plots need matplotlib (pip install temporal-xmodal[plots]).") \
            from exc
    return plt


def _short(value, width):
    text = " ".join(str(value).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _set_change_title(ax, title, summary, width=95):
    """``title`` over the summary's message, in red when the neighbourhoods barely change."""
    lines = ([title] if title else []) + textwrap.wrap(summary["message"], width)
    ax.set_title("\n".join(lines), fontsize=9,
                 color="tab:red" if summary["barely_changes"] else "black")


@validate_params(
    {"table": "no_validation", "label": [str, None],
     "width": [Interval(Integral, 1, None, closed="left")], "title": [str, None],
     "ax": "no_validation"},
    prefer_skip_nested_validation=True,
)
def plot_neighbourhood_over_time(table, *, label=None, width=40, title=None, ax=None):
    """Rank chart of :func:`neighbourhood_over_time`: each neighbour's rank per instant.

    The title carries the table's change summary, in red when the neighbourhood barely changes.
    Read more in docs/search.md.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`neighbourhood_over_time`.
    label : str or None, default=None
        Column naming each neighbour after its gallery row (``None``: the payload column, if
        any), cut to ``width`` characters.
    width : int, default=40
    title : str or None, default=None
        First line of the title (default ``"neighbourhood over time"``).
    ax : matplotlib Axes or None, default=None
        Where to draw (a new figure when ``None``).

    Returns
    -------
    ax : matplotlib Axes
    """
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 5))
    base = {"instant", "rank", "neighbour", "score", "status"}
    if label is None:
        extra = [c for c in table.columns if c not in base]
        label = extra[0] if extra else "neighbour"
    ranked = table[table["status"] != "left"]
    instants = list(dict.fromkeys(table["instant"]))
    x_of = {t: i for i, t in enumerate(instants)}
    k = int(ranked["rank"].max())
    colours = plt.get_cmap("tab20")
    styles, markers = ("-", "--", ":", "-."), ("o", "s", "^", "D", "v")
    for n, (neighbour, rows) in enumerate(ranked.groupby("neighbour", sort=False)):
        xs = np.array([x_of[t] for t in rows["instant"]])
        ys = rows["rank"].to_numpy(dtype=float)
        name = f"#{neighbour}" if label == "neighbour" else \
            f"#{neighbour} {_short(rows[label].iloc[0], width)}"
        ax.plot(xs, ys, marker=markers[n % 5], color=colours(2 * (n % 10) + (n // 10) % 2),
                lw=1.8, ms=6, ls=styles[(n // 20) % 4], label=name)
    ax.set_xticks(range(len(instants)), [instant_label(t) for t in instants])
    ax.set_xlim(-0.3, len(instants) - 0.2)
    ax.set_ylim(k + 0.7, 0.3)
    ax.set_yticks(range(1, k + 1))
    ax.set_xlabel("instant at which the item and the gallery are projected")
    ax.set_ylabel("rank among the item's neighbours")
    summary = table.attrs.get("time_change") or time_change(None, over_time_change(table),
                                                            between="consecutive instants")
    _set_change_title(ax, "neighbourhood over time" if title is None else title, summary)
    ax.grid(axis="y", lw=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return ax


@validate_params(
    {"table": "no_validation", "n": [Interval(Integral, 1, None, closed="left")],
     "label": [str, None], "width": [Interval(Integral, 1, None, closed="left")],
     "title": [str, None], "axes": "no_validation"},
    prefer_skip_nested_validation=True,
)
def plot_neighbourhood_shift(table, *, n=10, label=None, width=45, title=None, axes=None):
    """Chart of :func:`neighbourhood_shift`: the ``n`` most shifted items, and all items.

    Left: bars of the ``n`` largest shifts, their displacements as dots, the change summary in
    the title; right: displacement against shift for every item.  Read more in docs/search.md.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`neighbourhood_shift`.
    n : int, default=10
        Items shown on the left.
    label : str or None, default=None
        Column naming the items (``None``: the payload column if any, else the item), cut to
        ``width`` characters.
    width : int, default=45
    title : str or None, default=None
        First line of the left title, above the change summary.
    axes : pair of matplotlib Axes or None, default=None
        Where to draw (a new figure when ``None``).

    Returns
    -------
    axes : pair of matplotlib Axes
    """
    plt = _pyplot()
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(13, 4.5), width_ratios=[1.6, 1])
    ax_bar, ax_all = axes
    base = {"item", "neighbourhood_shift", "displacement", "shared"}
    if label is None:
        extra = [c for c in table.columns if c not in base]
        label = extra[0] if extra else "item"
    top = table.head(n)
    y = np.arange(len(top))[::-1]
    ax_bar.barh(y, top["neighbourhood_shift"], color="tab:blue", alpha=0.8,
                label="neighbourhood shift (1 − Jaccard)")
    ax_bar.set_yticks(y, [_short(v, width) for v in top[label]], fontsize=7)
    ax_bar.set_xlim(0, 1.05)
    ax_bar.set_xlabel("neighbourhood shift, 1 − Jaccard of the top-k sets")
    twin = ax_bar.twiny()
    twin.plot(top["displacement"], y, "o", color="tab:red", label="displacement (1 − cos)")
    twin.set_xlim(0, max(float(top["displacement"].max()), 1e-12) * 1.1)
    twin.set_xlabel("displacement of the item's own embedding, 1 − cos", color="tab:red")
    twin.tick_params(axis="x", colors="tab:red")
    ax_all.scatter(table["neighbourhood_shift"], table["displacement"], s=6, color="grey",
                   alpha=0.4, label="all items")
    ax_all.scatter(top["neighbourhood_shift"], top["displacement"], s=18, color="tab:red",
                   label=f"the {len(top)} most shifted")
    ax_all.set_xlabel("neighbourhood shift (1 − Jaccard)")
    ax_all.set_ylabel("displacement (1 − cos)")
    ax_all.legend(fontsize=7)
    summary = table.attrs.get("time_change") or time_change(
        None, float(table["neighbourhood_shift"].mean()), float(table["displacement"].mean()))
    _set_change_title(ax_bar, title, summary, width=110)
    return ax_bar, ax_all
