"""The comparison table: columns per protocol and fixed-width text rendering (NaN as ``n/a``)."""

import numpy as np
from sklearn.utils._param_validation import validate_params

__all__ = ["COLUMNS", "DELTA_TIME_SCORE", "METRIC_NAMES", "UNDATED_COLUMNS", "format_table",
           "is_na"]

#: Columns of the comparison table for labelled data: (key, header, format).
COLUMNS = (
    ("fit_seconds", "fit [s]", "{:.1f}"),
    ("map_i2t", "I→T mAP", "{:.3f}"),
    ("map_t2i", "T→I mAP", "{:.3f}"),
    ("mrr", "MRR", "{:.3f}"),
    ("tmap50", "t-mAP@50", "{:.3f}"),
    ("tmap50_filter", "+ filter", "{:.3f}"),
    ("local_map10", "local@10", "{:.3f}"),
    ("bounded_map", "bin mAP", "{:.3f}"),
    ("delta_time", "Δ-time", "{:+.3f}"),
    ("delta_beyond_filter", "Δ>filter", "{:+.3f}"),
)
#: Columns for the undated-caption protocol (TICRC).
UNDATED_COLUMNS = (
    ("fit_seconds", "fit [s]", "{:.1f}"),
    ("mrr", "I→T MRR", "{:.3f}"),
    ("mrr_t2i", "T→I MRR", "{:.3f}"),
    ("date_gain", "Δ date", "{:+.3f}"),
    ("delta_time", "Δ-time", "{:+.3f}"),
)
#: The score whose difference to the constant-time control is Δ-time, per protocol:
#: coarse mAP (mean of I→T and T→I; its relevance ignores time, so the control is
#: scored on the same relevance) and TICRC's I→T MRR.
DELTA_TIME_SCORE = {"labels": "map", "undated": "mrr"}
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


def is_na(value):
    """Whether a figure is not applicable (None or NaN)."""
    return value is None or (isinstance(value, (float, np.floating)) and np.isnan(value))


def _cell(value, fmt, se=None):
    """A figure (``n/a`` when not applicable), with ``±`` its standard error when it is an
    estimate from a query sample (``se`` > 0)."""
    if is_na(value):
        return "n/a"
    return fmt.format(value) + (f"±{se:.3f}" if se is not None and not is_na(se) and se > 0
                                else "")


@validate_params({"rows": [list], "columns": ["array-like"]},
                 prefer_skip_nested_validation=True)
def format_table(rows, columns=COLUMNS):
    """Render comparison rows as a fixed-width text table (NaN / None as ``n/a``).

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`temporal_xmodal.comparison.compare`.
    columns : sequence of (key, header, format), default=COLUMNS
        :data:`COLUMNS` or :data:`UNDATED_COLUMNS`.

    Returns
    -------
    table : str
        A header line, a rule and one line per row; a figure estimated from a
        query sample (its row holds ``<key>_se`` > 0) reads ``0.812±0.004``.
    """
    width = max([len("estimator")] + [len(r["name"]) for r in rows])
    cells = [[_cell(r.get(key), fmt, r.get(f"{key}_se")) for key, _, fmt in columns]
             for r in rows]
    widths = [max([9, len(header)] + [len(row[j]) for row in cells])
              for j, (_, header, _) in enumerate(columns)]
    header = f"{'estimator':<{width}}  " + "  ".join(
        f"{h:>{w}}" for (_, h, _), w in zip(columns, widths))
    lines = [header, "-" * len(header)]
    for r, row in zip(rows, cells):
        text = "  ".join(f"{c:>{w}}" for c, w in zip(row, widths))
        lines.append(f"{r['name']:<{width}}  {text}")
    return "\n".join(lines)
