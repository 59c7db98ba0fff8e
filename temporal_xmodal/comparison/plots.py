"""The comparison figure (needs matplotlib): a 2 × 2 grid of the scores, a breakdown,
Δ-time and fit time, with a caption naming every metric in full.

Read more in docs/index.md ("Comparing the estimators").
"""

import os
from pathlib import Path

import numpy as np
from sklearn.utils._param_validation import validate_params

from ..evaluation import ResultTable, plot_per_bin_map
from .report import COLUMNS, CONTROL_STILL_IMPROVING, STILL_IMPROVING, is_na, marked as _marked

__all__ = ["METRIC_NAMES", "draw_figure", "figure_title", "plot_results"]

#: Every column in full: (short name for a plot's axis, one-line explanation for its caption).
METRIC_NAMES = {
    "fit_seconds": ("fit time", "fit time in seconds"),
    "map_i2t": ("mAP\nimage→text", "mean average precision, image query → texts "
                                    "(relevant: same category)"),
    "map_t2i": ("mAP\ntext→image", "the same, text query → images"),
    "mrr": ("MRR", "mean reciprocal rank of each item's own counterpart"),
    "mrr_t2i": ("MRR\ntext→image", "the same, caption query → pictures"),
    "tmap50": ("time-window\nmAP@50", "top-50 mAP, relevant: same category and dated within "
                                       "the time window; AP@50 divided by min(50, relevant "
                                       "items), so finding only the own counterpart is not 1"),
    "tmap50_filter": ("+ date\nfilter", "time-window mAP@50 with each query's candidates "
                      "restricted to the window (a search filtered by date: what a user "
                      "holding the dates gets from any model); never below t-mAP@50"),
    "tmap50_topk": ("t-mAP@50\n(found)", "time-window mAP@50 divided by the relevant items "
                    "found in the top 50 (the figures published before; results.json only)"),
    "tmap50_filter_topk": ("+ filter\n(found)", "the same with the date filter (results.json "
                           "only)"),
    "local_map10": ("local\nmAP@10", "local alignment: top-10 mAP of queries projected into "
                                      "each of 10 time bins (the paper's AP@10, divided by "
                                      "the relevant items found)"),
    "local_map10_i2t": ("local@10\nimage→text", "local alignment, image queries"),
    "local_map10_t2i": ("local@10\ntext→image", "local alignment, text queries"),
    "bounded_map": ("per-bin\nmAP", "temporally bounded retrieval: mAP within the query's own "
                                     "time bin (10 bins), mean of both directions"),
    "date_gain": ("Δ date", "MRR minus the MRR with the query dates shuffled"),
    "delta_time": ("Δ-time", "score minus the same estimator's with a constant time column"),
    "delta_tmap50": ("Δ t-mAP@50", "time-window mAP@50 minus the same estimator's with a "
                                    "constant time column"),
    "delta_beyond_filter": ("Δ beyond\nthe filter", "time-window mAP@50 beyond the date "
                            "filter: the stronger of the model's two readings (all candidates, "
                            "date-filtered) minus the stronger of its constant-time control's"),
}


def figure_title(dataset, data, random_state, epochs):
    """The figure's title: data set (a user's by its file and split), size, seed
    (``random_state``: an int or words), time window, and ``epochs`` (``{name: epochs}``,
    None for a closed form; or one int)."""
    unit = data.get("time_unit", "years")
    seed = random_state if isinstance(random_state, str) else f"seed {random_state}"
    window = ("undated: no time window" if data.eval_window is None
              else f"relevance window ±{data.eval_window:.2g} {unit}")
    if isinstance(epochs, dict):
        trained = {name: n for name, n in epochs.items() if n}
        counts = set(trained.values())
        epochs = ("no epochs (closed form)" if not trained
                  else f"{counts.pop()} epochs" if len(counts) == 1
                  else "epochs " + ", ".join(f"{name} {n}" for name, n in trained.items()))
    else:
        epochs = f"{epochs} epochs"
    n_train, n_test = len(data.X_train), len(data.X_test)
    if dataset == "data":  # a user's file (compare --data) or DataFrame: its name, its split
        key = data.get("key") or {}
        name = Path(key["source"]).name if key.get("source") else "your DataFrame"
        share = f"{round(100 * n_test / max(n_train + n_test, 1))} % of the rows"
        head = (f"{name} (time split: the latest {share} held out for the test)\n"
                if key.get("split") == "time" else
                f"{name} (random split: {share} held out at random for the test)\n")
    else:
        head = f"{dataset} data set" + (
            " (the demo world, built so that time helps: caption meanings move between "
            "eras, the writing style stays)\n" if dataset == "synthetic" else ": ")
    return (f"{head}{n_train} training + {n_test} test items, {seed}, {window},\n{epochs}")


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


def _metric_names(columns):
    """{key: (axis name, caption line)} of the columns; the undated protocol's MRR is I→T."""
    names = dict(METRIC_NAMES)
    if any(key == "mrr_t2i" for key, _, _ in columns):
        names["mrr"] = ("MRR\nimage→text", "mean reciprocal rank of the picture's own caption")
    return names


def _retrieval_panel(ax, rows, columns, references, chance_map=None):
    """The scores as an annotated grid (estimators × metrics)."""
    names = _metric_names(columns)
    metrics = [k for k, _, _ in columns if k not in ("fit_seconds", "delta_time", "date_gain",
                                                           "delta_beyond_filter")
               and any(not is_na(r.get(k)) for r in rows)]
    values = np.array([[np.nan if is_na(r.get(k)) else r[k] for k in metrics] for r in rows],
                      dtype=float)
    ax.imshow(values, cmap="Blues", vmin=0, vmax=max(1.0, np.nanmax(values)), aspect="auto")
    for (i, j), value in np.ndenumerate(values):
        ax.text(j, i, "n/a" if np.isnan(value) else f"{value:.3f}", ha="center", va="center",
                fontsize=10, color="white" if value > 0.6 else "black")
    # a line of 10 characters or more runs into its neighbour: "image→text" on two lines
    ticks = [names[k][0].replace("→", "→\n") if max(map(len, names[k][0].split("\n"))) >= 10
             else names[k][0] for k in metrics]
    ax.set_xticks(np.arange(len(metrics)), ticks, fontsize=8.5)
    ax.set_yticks(np.arange(len(rows)), [_marked(r) for r in rows], fontsize=10)
    ax.tick_params(length=0)
    title = "Retrieval on the test split (0–1, higher is better)"
    if references:
        title += "\n" + ", ".join(f"{label} ranking: {level:.3f}"
                                  for label, level in references.items())
    if chance_map is not None:
        title += f"\ncategory mAP of a random ranking (chance): {chance_map:.3f}"
    ax.set_title(title, fontsize=11)
    return metrics


def _breakdown_panel(ax, rows, references, category_names, time_unit):
    if "per_bin" in rows[0]:
        plot_per_bin_map({r["name"]: ResultTable({k: np.asarray(v, dtype=float)
                                                  for k, v in r["per_bin"].items()})
                          for r in rows}, ax=ax)
        ax.set_xlabel(f"time ({time_unit}, centre of the bin)", fontsize=10)
        ax.set_ylabel("per-bin mAP (mean of image→text, text→image)", fontsize=10)
        ax.legend(fontsize=8, ncol=2)
        ax.set_title("Retrieval within each time bin", fontsize=11)
        return
    xs, ys, xlabel, ylabel, title = _categorical_breakdown(rows, category_names)
    bar = 0.8 / len(rows)
    pos = np.arange(len(xs))
    for i, r in enumerate(rows):
        ax.bar(pos + (i - (len(rows) - 1) / 2) * bar, ys[i], bar, label=r["name"])
    ax.set_xticks(pos, xs, fontsize=8, rotation=45 if len(xs) > 8 else 0)
    ax.set_ylim(0, np.nanmax(np.asarray(ys, dtype=float)) * 1.4)  # room for the legend
    if "per_category" in rows[0]:  # a random ranking's AP is the class share
        share = np.asarray(rows[0]["per_category"]["count"], dtype=float)
        ax.hlines(share / share.sum(), pos - 0.45, pos + 0.45, colors="black",
                  linestyles="--", lw=1, label="random (class share)")
    if references and "random" in references:
        ax.axhline(references["random"], color="black", ls="--", lw=1, label="random")
    ax.set_xlabel(xlabel, fontsize=10)
    ax.set_ylabel(ylabel, fontsize=10)
    ax.set_title(title, fontsize=11)
    ax.legend(fontsize=8, ncol=2, loc="upper left")


def _delta_time_panel(ax, rows, score_label):
    """Δ-time bars per estimator: the score's (solid) and t-mAP@50's beyond the filter
    (hatched), labelled at the panel's right edge.  Returns ``(low, high, labels)`` for
    :func:`_make_room`."""
    from matplotlib.transforms import blended_transform_factory

    right_edge = blended_transform_factory(ax.transAxes, ax.transData)
    labels = []
    x = np.arange(len(rows))
    series = [("delta_time", score_label, None)]
    if any(not is_na(r.get("delta_beyond_filter")) for r in rows):
        series.append(("delta_beyond_filter", "t-mAP@50 beyond the filter", "//"))
    height = 0.8 / len(series)
    values = [[0.0 if is_na(r.get(k)) else r[k] for r in rows] for k, _, _ in series]
    span = max([abs(v) for vs in values for v in vs] + [1e-3])
    for j, (key, label, hatch) in enumerate(series):
        y = x - 0.4 + height * (j + 0.5)
        deltas = [r.get(key) for r in rows]
        colors = ["lightgrey" if is_na(d) else ("tab:green" if d >= 0 else "tab:red")
                  for d in deltas]
        ax.barh(y, values[j], height=height * 0.9, color=colors, hatch=hatch,
                edgecolor="white" if hatch else None)
        for i, d in enumerate(deltas):
            if is_na(d):
                if j == 0:
                    ax.text(0, i, " n/a (ignores time)", va="center", ha="left", fontsize=9,
                            color="dimgrey")
            else:  # inside the panel, right of every bar (see _make_room)
                labels.append(ax.text(0.99, y[i], f"{d:+.3f} {label}", va="center",
                                      ha="right", fontsize=8, transform=right_edge))
    ax.axvline(0, color="black", lw=0.8)
    flat = [v for vs in values for v in vs]
    low, high = min(flat + [0.0]) - 0.05 * span, max(flat + [0.0]) + 0.05 * span
    ax.set_xlim(low, high + (high - low))  # provisional: _make_room measures the labels
    ax.set_yticks(x, [_marked(r) for r in rows], fontsize=10)
    ax.invert_yaxis()
    names = " and ".join(label for _, label, _ in series)
    ax.set_xlabel(f"Δ {names} (score units): real dates − constant time", fontsize=10)
    ax.set_title("Δ-time: what the dates buy each estimator", fontsize=11)
    return low, high, labels


def _make_room(fig, ax, low, high, labels):
    """Widen the Δ-time panel's x range so that its bars end left of the widest label."""
    if not labels:
        ax.set_xlim(low, high)
        return
    renderer = fig.canvas.get_renderer()
    widest = max(t.get_window_extent(renderer).width for t in labels) / ax.bbox.width
    share = max(1.0 - widest - 0.04, 0.3)  # the bars' share of the panel's width
    ax.set_xlim(low, low + (high - low) / share)


def _fit_time_panel(ax, rows):
    """Fit times as labelled horizontal bars on a log axis (seconds)."""
    x = np.arange(len(rows))
    seconds = np.maximum([r["fit_seconds"] for r in rows], 1e-3)
    ax.barh(x, seconds, color="grey")
    ax.set_xscale("log")
    low = 10 ** np.floor(np.log10(seconds.min() / 2))
    ax.set_xlim(low, seconds.max() * 8)
    for i, s in enumerate(seconds):
        ax.text(s * 1.15, i, f"{s:.1f} s" if s >= 0.1 else f"{s:.2f} s", va="center",
                fontsize=9)
    ax.set_yticks(x, [_marked(r) for r in rows], fontsize=10)
    ax.invert_yaxis()
    ax.set_xlabel("fit time, one fit each (seconds, log scale; controls not included)",
                  fontsize=10)
    ax.set_title("Fit time", fontsize=11)


@validate_params(
    {"rows": [list], "path": [str, os.PathLike], "columns": ["array-like"],
     "references": [dict, None], "category_names": ["array-like", None],
     "delta_label": [str], "time_unit": [str], "title": [str, None]},
    prefer_skip_nested_validation=True,
)
def plot_results(rows, path, *, columns=COLUMNS, references=None, category_names=None,
                 delta_label="mAP", time_unit="years", title=None, chance_map=None):
    """Write the comparison figure: the scores as an annotated grid, the per-time-bin mAP
    (or a per-category / per-period breakdown), Δ-time and fit time, and a caption naming
    every metric.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`~temporal_xmodal.comparison.compare`.
    path : str or Path
        PNG file to write.
    columns : sequence of (key, header, format), default=COLUMNS
        The table's columns (``report.COLUMNS`` or ``report.UNDATED_COLUMNS``).
    references : dict of str -> float, optional
        Reference levels (e.g. random MRR) drawn on the first two panels.
    category_names : sequence of str, optional
        Names of the categories (1-based labels) of a per-category panel.
    delta_label : str, default="mAP"
        The score that Δ-time is the difference of.
    time_unit : str, default="years"
        Unit of the per-bin panel's time axis.
    title : str or None, default=None
        The figure's title.
    chance_map : float, optional
        Category mAP of a random ranking, named in the grid's title.

    Raises
    ------
    ImportError
        Without matplotlib (``pip install temporal-xmodal[plots]``).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ((ax, ax_mid), (ax_dt, ax_t)) = plt.subplots(2, 2, figsize=(13, 10))
    metrics = _retrieval_panel(ax, rows, columns, references, chance_map)
    _breakdown_panel(ax_mid, rows, references, category_names, time_unit)
    delta_room = _delta_time_panel(ax_dt, rows, delta_label)
    _fit_time_panel(ax_t, rows)
    names = _metric_names(columns)
    caption = [f"{names[k][0].replace(chr(10), ' ')}: {names[k][1]}" for k in metrics]
    caption.append(f"Δ-time: {delta_label} minus the same estimator's (same seed) fitted and "
                   "evaluated with a constant time column; n/a for estimators that ignore time.")
    if any(not is_na(r.get("delta_beyond_filter")) for r in rows):
        caption.append("Δ t-mAP@50 beyond the filter (hatched): the stronger of the model's "
                       "time-window mAP@50 and its date-filtered reading, minus the stronger "
                       "of its control's.")
    if any(_marked(r) != r["name"] for r in rows):
        caption.append(f"{STILL_IMPROVING} still improving at its last epoch, "
                       f"{CONTROL_STILL_IMPROVING} its constant-time control too: figures "
                       "(and Δ-time) may be short of convergence; --max-epochs raises the "
                       "epochs.")
    fig.text(0.01, 0.005, "\n".join(caption), fontsize=9, va="bottom", ha="left")
    top = 1.0
    if title:
        fig.suptitle(title, fontsize=12, fontweight="bold")
        top = 1.0 - 0.022 * (title.count("\n") + 2)
    fig.tight_layout(rect=(0, 0.0175 * (len(caption) + 1), 1, top), h_pad=2)
    _make_room(fig, ax_dt, *delta_room)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def draw_figure(rows, *, out, columns, dataset, data, random_state, epochs, references, log):
    """The job's figure of ``rows`` in ``out/comparison.png``, titled by
    :func:`figure_title`; without matplotlib, a line saying so."""
    undated = data.protocol == "undated"
    labels = {"random": "random", "date_prior": "date-only"}
    try:
        plot_results(rows, out / "comparison.png", columns=columns,
                     title=figure_title(dataset, data, random_state, epochs),
                     references={labels[k]: v for k, v in references.items()} if undated
                     else None,
                     category_names=data.extra.get("categories"),
                     delta_label="I→T MRR" if undated else "mAP",
                     time_unit=data.get("time_unit", "years"),
                     chance_map=references.get("chance_map"))
        log(f"wrote {out / 'comparison.png'}")
    except ImportError:
        log("matplotlib is not installed: no plots (pip install 'temporal-xmodal[plots]')")
