"""The comparison figure (needs matplotlib): retrieval bars, a breakdown panel, Δ-time, fit time.

The per-bin breakdown of dated data is drawn by
:func:`temporal_xmodal.evaluation.plot_per_bin_map`; this module only adds the
panels specific to the comparison.
"""

import os

import numpy as np
from sklearn.utils._param_validation import validate_params

from ..evaluation import ResultTable, plot_per_bin_map
from .table import COLUMNS, is_na

__all__ = ["plot_results"]


def _categorical_breakdown(rows, category_names=None):
    """(x labels, per-row y, x label, y label, title) of a per-category / per-period panel."""
    first = rows[0]
    if "per_category" in first:
        cat = first["per_category"]
        names = ([category_names[int(c) - 1] for c in cat["category"]] if category_names
                 else cat["category"])
        labels = [f"{c}\n(n={n})" for c, n in zip(names, cat["count"])]
        return (labels, [r["per_category"]["map_mean"] for r in rows], "category (test items)",
                "mAP (mean of I→T, T→I)", "Retrieval per category")
    per = first["per_period"]
    labels = [f"{s:g}s\n(n={n})" for s, n in zip(per["start"], per["count"])]
    return (labels, [r["per_period"]["mrr"] for r in rows], "decade of the query date (queries)",
            "I→T MRR", "Caption retrieval per period")


def _retrieval_panel(ax, rows, columns, references):
    names = [r["name"] for r in rows]
    metrics = [(k, h) for k, h, _ in columns if k not in ("fit_seconds", "delta_time")
               and any(not is_na(r.get(k)) for r in rows)]
    width = 0.8 / len(metrics)
    x = np.arange(len(names))
    values = np.array([[r[k] for k, _ in metrics] for r in rows], dtype=float)
    for j, (_, header) in enumerate(metrics):
        ax.bar(x + (j - (len(metrics) - 1) / 2) * width, values[:, j], width, label=header)
    top = np.nanmax(values)
    ax.set_xticks(x, names, fontsize=8)
    ax.set_ylabel("score (test split)")
    ax.set_ylim(min(0.0, np.nanmin(values) * 1.2), 1.15 if top > 0.5 else top * 1.35)
    ax.axhline(0, color="black", lw=0.6)
    for (label, level), style in zip((references or {}).items(), ("--", ":", "-.")):
        ax.axhline(level, color="grey", ls=style, lw=1, label=f"{label} {level:.3f}")
    ax.legend(ncol=min(len(metrics) + len(references or {}), 4), fontsize=7, loc="upper center")
    ax.set_title("Cross-modal retrieval")


def _breakdown_panel(ax, rows, references, category_names):
    if "per_bin" in rows[0]:
        plot_per_bin_map({r["name"]: ResultTable({k: np.asarray(v, dtype=float)
                                                  for k, v in r["per_bin"].items()})
                          for r in rows}, ax=ax)
        ax.legend(fontsize=8)
        ax.set_title("Temporally bounded retrieval per bin")
        return
    xs, ys, xlabel, ylabel, title = _categorical_breakdown(rows, category_names)
    bar = 0.8 / len(rows)
    pos = np.arange(len(xs))
    for i, r in enumerate(rows):
        ax.bar(pos + (i - (len(rows) - 1) / 2) * bar, ys[i], bar, label=r["name"])
    ax.set_xticks(pos, xs, fontsize=7, rotation=45 if len(xs) > 8 else 0)
    ax.set_ylim(0, np.nanmax(np.asarray(ys, dtype=float)) * 1.4)  # room for the legend
    if "per_category" in rows[0]:  # a random ranking's AP is the class share
        share = np.asarray(rows[0]["per_category"]["count"], dtype=float)
        ax.hlines(share / share.sum(), pos - 0.45, pos + 0.45, colors="black",
                  linestyles="--", lw=1, label="random (class share)")
    if references and "random" in references:
        ax.axhline(references["random"], color="black", ls="--", lw=1, label="random")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2, loc="upper left")


def _delta_time_panel(ax, rows, score_label):
    x = np.arange(len(rows))
    deltas = [r.get("delta_time") for r in rows]
    values = [0.0 if is_na(d) else d for d in deltas]
    colors = ["lightgrey" if is_na(d) else ("tab:green" if d >= 0 else "tab:red") for d in deltas]
    ax.barh(x, values, color=colors)
    span = max([abs(v) for v in values] + [1e-3])
    for i, d in enumerate(deltas):
        text = "n/a (static)" if is_na(d) else f"{d:+.3f}"
        ax.text(0, i, f" {text}", va="center", fontsize=7,
                ha="left" if is_na(d) or d < 0 else "right")
    ax.axvline(0, color="black", lw=0.6)
    ax.set_xlim(-1.3 * span, 1.3 * span)
    ax.set_yticks(x, [r["name"] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"{score_label}: real time − constant time")
    ax.set_title("Δ-time (what time buys)")


@validate_params(
    {"rows": [list], "path": [str, os.PathLike], "columns": ["array-like"],
     "references": [dict, None], "category_names": ["array-like", None],
     "delta_label": [str]},
    prefer_skip_nested_validation=True,
)
def plot_results(rows, path, *, columns=COLUMNS, references=None, category_names=None,
                 delta_label="mAP"):
    """Write the comparison figure: retrieval bars, breakdown, Δ-time and fit-time panels.

    Columns that are n/a for every estimator are left out of the bars.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`temporal_xmodal.comparison.compare`.
    path : str or Path
        PNG file to write.
    columns : sequence of (key, header, format), default=COLUMNS
        The table's columns: :data:`COLUMNS` or :data:`UNDATED_COLUMNS`.
    references : dict of str -> float, optional
        Horizontal reference lines (e.g. random MRR) on the first two panels.
    category_names : sequence of str, optional
        Names of the categories of a per-category panel (1-based labels).
    delta_label : str, default="mAP"
        Name of the score that Δ-time is the difference of.

    Raises
    ------
    ImportError
        Without matplotlib (``pip install temporal-xmodal[plots]``).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax_mid, ax_dt, ax_t) = plt.subplots(
        1, 4, figsize=(22, 4.8), width_ratios=[3, 2.4, 1.3, 1.1])
    _retrieval_panel(ax, rows, columns, references)
    _breakdown_panel(ax_mid, rows, references, category_names)
    _delta_time_panel(ax_dt, rows, delta_label)
    x = np.arange(len(rows))
    ax_t.barh(x, [r["fit_seconds"] for r in rows], color="grey")
    ax_t.set_yticks(x, [r["name"] for r in rows], fontsize=8)
    ax_t.invert_yaxis()
    ax_t.set_xlabel("seconds")
    ax_t.set_title("Fit time")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
