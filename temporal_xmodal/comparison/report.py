"""The comparison's report: the table, the answer on its first lines, the notes under it,
and the means over several seeds.

The console, ``table.txt`` and the figure carry the same words.  Read more in docs/index.md
("The answer on the first lines", "Over several seeds").
"""

import numpy as np
from sklearn.utils._param_validation import validate_params

from ..metrics import QUERY_SAMPLE

__all__ = ["COLUMNS", "DELTA_TIME_SCORE", "MIN_MARGIN", "UNDATED_COLUMNS", "answer_lines",
           "checkpoint_note", "checkpoint_note_of", "format_table", "is_na", "json_ready",
           "marked", "mean_rows", "note_lines", "report_text", "spread"]

#: Columns of the table for labelled data: (key, header, format).
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
#: Columns of the undated-caption protocol (TICRC).
UNDATED_COLUMNS = (
    ("fit_seconds", "fit [s]", "{:.1f}"),
    ("mrr", "I→T MRR", "{:.3f}"),
    ("mrr_t2i", "T→I MRR", "{:.3f}"),
    ("date_gain", "Δ date", "{:+.3f}"),
    ("delta_time", "Δ-time", "{:+.3f}"),
)
#: The score whose difference to the constant-time control is Δ-time, per protocol.
DELTA_TIME_SCORE = {"labels": "map", "undated": "mrr"}
#: Marks of a fit still improving at its last epoch: the model's, its control's.
STILL_IMPROVING, CONTROL_STILL_IMPROVING = "*", "†"
#: The smallest margin the answer calls a gain ("Yes"); a smaller positive one is "not
#: measurably".
MIN_MARGIN = 0.005
#: Where a checkpoint warning's message turns to its advice.
_ADVICE = (" Raise ", " Give every ")
#: What the job's user can do instead (:func:`checkpoint_note`).
CHECKPOINT_ADVICE = ("The compare job sets no validation option (its validation rows are a "
                     "share of the training rows): give it more rows, a larger --n-samples "
                     "or none to use every row (n_samples of compare_estimators). Fitted by "
                     "hand, the estimator takes validation_fraction or "
                     "selection_metric='valid_loss'.")


def is_na(value):
    """Whether a figure is not applicable (None or NaN)."""
    return value is None or (isinstance(value, (float, np.floating)) and np.isnan(value))


def _cell(value, fmt, se=None):
    """A figure (``n/a`` when not applicable), ``±`` its standard error when ``se`` > 0."""
    if is_na(value):
        return "n/a"
    return fmt.format(value) + (f"±{se:.3f}" if se is not None and not is_na(se) and se > 0
                                else "")


@validate_params({"rows": [list], "columns": ["array-like"]},
                 prefer_skip_nested_validation=True)
def format_table(rows, columns=COLUMNS):
    """The rows as a fixed-width text table: a header, a rule and a line per row; n/a for
    NaN or None, ``0.812±0.004`` for a figure with a standard error (``<key>_se`` > 0)."""
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


def checkpoint_note(message):
    """A :class:`~temporal_xmodal.CheckpointWarning`'s ``message`` in the job's words: what
    happened, with :data:`CHECKPOINT_ADVICE` for its advice."""
    cut = min((message.find(a) for a in _ADVICE if a in message), default=len(message))
    return message[:cut] + " " + CHECKPOINT_ADVICE


def checkpoint_note_of(name, report):
    """The job's note for a fit whose report says that it, or a model inside it, could not
    choose its checkpoint."""
    where = [("", report)] if report.kept_why in ("ties", "nan") else [
        (f" ({child})", r) for child, r in report.children if r.cannot_rank]
    parts = [f"{r.reason} ({r.metric}){at}" for at, r in where]
    return (f"{name} could not choose its checkpoint: {'; '.join(parts)}; its weights are "
            "kept. " + CHECKPOINT_ADVICE)


def marked(row):
    """The row's name with the marks of its fits that were still improving."""
    marks = (STILL_IMPROVING * bool(row.get("still_improving"))
             + CONTROL_STILL_IMPROVING * bool(row.get("control", {}).get("still_improving")))
    return f"{row['name']} {marks}" if marks else row["name"]


# --------------------------------------------------------------------- over several seeds
def _number(value):
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_))


def _mean(values):
    values = [float(v) for v in values if not is_na(v)]
    return float(np.mean(values)) if values else float("nan")


def _mean_of(values):
    """The mean of values at one place of the rows: numbers averaged (n/a left out), dicts
    and equal-length lists place by place; anything else is the first row's."""
    first = values[0]
    if _number(first) or (is_na(first) and all(is_na(v) or _number(v) for v in values)):
        return _mean(values)
    if isinstance(first, dict) and all(isinstance(v, dict) for v in values):
        return {k: _mean_of([v.get(k) for v in values]) for k in first}
    if (isinstance(first, list) and all(isinstance(v, list) and len(v) == len(first)
                                        for v in values)):
        return [_mean_of(list(column)) for column in zip(*values)]
    return first


def mean_rows(runs):
    """The table's rows over the seeds' ``runs`` (each a list of rows): every figure the
    mean over the runs where the estimator finished (n/a left out), still improving if in
    any run, and ``seeds``, the runs it finished in; in the first run's order."""
    names = list(dict.fromkeys(r["name"] for run in runs for r in run))
    rows = []
    for name in names:
        mine = [r for run in runs for r in run if r["name"] == name]
        row = {key: _mean_of([r.get(key) for r in mine]) for key in mine[0]}
        row["still_improving"] = any(r.get("still_improving") for r in mine)
        if "control" in row:
            row["control"]["still_improving"] = any(
                r.get("control", {}).get("still_improving") for r in mine)
        rows.append({**row, "seeds": len(mine)})
    return rows


def spread(runs, name, value):
    """The sample sd over the seeds of ``value(row)`` for estimator ``name``; None with
    fewer than two runs that measured it."""
    values = [float(value(r)) for run in runs for r in run
              if r["name"] == name and not is_na(value(r))]
    return float(np.std(values, ddof=1)) if len(values) >= 2 else None


# ------------------------------------------------------------------------------ the answer
def _winner(rows, value, runs=None):
    """(best row, its value, its margin over the runner-up in words, with the spreads over
    the seeds' ``runs``); ``(None, None, None)`` when no row has a value."""
    scored = sorted(((value(r), r) for r in rows if not is_na(value(r))),
                    key=lambda pair: -pair[0])
    if not scored:
        return None, None, None
    (top, best), rest = scored[0], scored[1:]
    sds = _spreads(runs, [best] + [row for _, row in rest[:1]], value)
    if not rest:
        return best, top, " (the only one measured)" + _pm(sds[0])
    gap = top - rest[0][0]
    margin = f"{_pm(sds[0])}, {gap:+.3f} over {rest[0][1]['name']}{_pm(sds[1])}"
    if None not in sds:  # over the seeds: does the gap stand out of the larger spread?
        noise = max(sds)
        margin += (" (no spread over the seeds)" if noise == 0 else
                   f" ({abs(gap) / noise:.1f}× the larger spread: "
                   + ("clear" if _clear(gap, noise) else "within the noise") + ")")
    return best, top, margin


def _spreads(runs, rows, value):
    return [spread(runs, row["name"], value) if runs else None for row in rows]


def _pm(sd):
    return "" if sd is None else f" ± {sd:.3f}"


def _clear(gap, noise):
    """The answer's one rule: a difference is clear beyond twice the spread."""
    return abs(gap) > 2 * noise


def _stronger(row):
    """The stronger of a row's two time-window readings (all candidates, date-filtered)."""
    pair = [row.get("tmap50"), row.get("tmap50_filter")]
    return float("nan") if any(is_na(v) for v in pair) else max(pair)


def answer_lines(rows, protocol, *, runs=None):
    """The answer above the table: who wins on the score and on the time-aware figure, by
    what margin, and whether time pays.

    Read more in the user guide: docs/index.md ("The answer on the first lines").

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`~temporal_xmodal.comparison.compare` (or their :func:`mean_rows`).
    protocol : {"labels", "undated"}
    runs : list of list of dict or None, default=None
        Each seed's rows: every figure and margin then carries its spread over the seeds.

    Returns
    -------
    lines : list of str
    """
    if not rows:
        return []
    runs = runs if runs is not None and len(runs) >= 2 else None
    score = DELTA_TIME_SCORE[protocol]
    lines = []
    what = ("category retrieval (mAP, mean of I→T and T→I)" if protocol == "labels"
            else "pair retrieval (I→T MRR: each picture finds its own text)")
    best, value, margin = _winner(rows, lambda r: r.get(score), runs)
    if best is not None:
        lines.append(f"Best on {what}: {best['name']} {value:.3f}{margin}.")
    best, value, margin = _winner(rows, _stronger, runs)
    if best is not None:
        lines.append(f"Best on the time-aware figure (time-window mAP@50 over min(50, "
                     f"relevant items), the stronger of all candidates and + filter): "
                     f"{best['name']} {value:.3f}{margin}.")
    key = "delta_beyond_filter" if best is not None else "delta_time"
    gains = [(r[key], r["name"], r) for r in rows if not is_na(r.get(key))]
    if gains:
        gain, name, row = max(gains, key=lambda g: g[:2])
        beyond = ("beyond the date filter (Δ>filter: its best time-window reading minus its "
                  "constant-time control's searched with the filter)" if key != "delta_time"
                  else f"(Δ-time on {score.upper() if score == 'mrr' else 'mAP'})")
        sd, = _spreads(runs, [row], lambda r: r.get(key))
        covered = [r["name"] for r in rows if not is_na(r.get(key))]
        among = (f" (among {', '.join(covered)}: the time-aware estimators run with their "
                 "controls)")
        if gain >= MIN_MARGIN and (sd is None or _clear(gain, sd)):
            judged = "" if sd is None else " (more than twice its spread)"
            lines.append(f"Does time pay on these data {beyond}? Yes: {name} {gain:+.3f}"
                         f"{_pm(sd)}{judged}{among}.")
        elif gain > 0:
            why = (f"below {MIN_MARGIN:.3f}" if gain < MIN_MARGIN
                   else "within twice its spread over the seeds")
            lines.append(f"Does time pay on these data {beyond}? Not measurably: the best is "
                         f"{name} {gain:+.3f}{_pm(sd)}, {why}{among}"
                         + ("; --seeds 3 measures the spread" if runs is None else "") + ".")
        else:
            rival = ("a static model with the date filter does as well" if key != "delta_time"
                     else "the same model without the dates does as well")
            lines.append(f"Does time pay on these data {beyond}? No: the best is {name} "
                         f"{gain:+.3f}{_pm(sd)}; {rival}.")
    elif any(r.get("time_role") not in (None, "none") for r in rows):
        lines.append("Does time pay? Not measured: the data are undated, or no time-aware "
                     "estimator's constant-time control has finished.")
    if lines:
        lines.append(f"Over {len(runs)} seeds: each figure is the mean, ± its sample sd over "
                     "the seeds (one run per seed in seed_<k>/)." if runs else
                     "One seed: no spread over seeds is measured, so margins of a few "
                     "thousandths may be noise (--seeds 3 runs the job over 3 seeds and "
                     "gives each figure's spread).")
    return lines


# ------------------------------------------------------------------------------- the notes
def _bins_line(row):
    """One line on a binned model's bins: asked for, fitted, merged."""
    merged = [note for note in row.get("time_bin_notes", ()) if "Binned" in note]
    return (f"{row['name']}: {merged[0]}" if merged
            else f"{row['name']} fitted {row['n_bins']} time bin(s), none merged.")


def note_lines(rows, data):
    """The lines under the table: what the columns mean, the fits still improving, the
    checkpoint notes, the bins merged; ``data``: the job's Bunch (``protocol``,
    ``eval_window``, ``dated``)."""
    undated = data.protocol == "undated"
    score = {"map": "mAP (mean of I→T and T→I)",
             "mrr": "I→T MRR"}[DELTA_TIME_SCORE[data.protocol]]
    lines = []
    if undated:
        lines.append("I→T MRR: each picture ranks every text, its own one is the answer (one "
                     "relevant item: AP = RR, TICRC's metric). Δ date = MRR − MRR with the "
                     "query dates shuffled. The label protocols (t-mAP, local, bin mAP) need "
                     "labels: n/a.")
    elif data.eval_window is None:
        lines.append("undated data: the temporal protocols (t-mAP@50, local@10, bin mAP) "
                     "are n/a")
    else:
        lines.append("bin mAP reads higher than I→T / T→I mAP: each query ranks only the "
                     "items of its own time bin (10 bins), so about a tenth of the distractors.")
    if data.dated:
        lines.append(f"Δ-time = {score} minus the same estimator (same seed) fitted and "
                     "evaluated with a constant time column; n/a for estimators that ignore "
                     "time.")
        if data.eval_window is not None and not undated:
            lines.append("t-mAP@50 divides each query's AP@50 by min(50, its relevant "
                         "items), so a ranking that finds only the query's own counterpart "
                         "does not score 1 (results.json also keeps tmap50_topk: divided by "
                         "the relevant items found, as the figures published before). "
                         "+ filter = t-mAP@50 with each query's candidates restricted to the "
                         "time window (a search filtered by date, which any model gets from "
                         "the dates the user holds; never below t-mAP@50). Δ>filter = the "
                         "stronger of a model's "
                         "t-mAP@50 and + filter minus the stronger of its control's: what the "
                         "dates add beyond that filter. Category mAP across time (I→T / T→I "
                         "mAP) is what no filter gives. To choose between a model and its "
                         "control on your data, search use_time with GridSearchCV and "
                         "SCORERS['map'] and SCORERS['tmap@50|filter'] (docs/time.md).")
    else:
        lines.append("Δ-time is n/a: the time column is constant.")
    short = [row["name"] for row in rows if row["still_improving"]]
    short_controls = [row["name"] for row in rows
                      if row.get("control", {}).get("still_improving")]
    parts = [", ".join(short)] if short else []
    if short_controls:
        parts.append("constant-time controls of " + ", ".join(short_controls))
    if parts:
        lines.append(f"{STILL_IMPROVING} / {CONTROL_STILL_IMPROVING}: still improving at the "
                     "last epoch (the best validation figure rose by more than 0.01 over the "
                     "most recent epochs, so these figures may be short of convergence; "
                     "--max-epochs raises the epochs). Still improving at the last epoch: "
                     + "; ".join(parts) + ".")
    checkpoint = [note for row in rows for note in (*row.get("checkpoint_notes", ()),
                                                     *row.get("control", {}).get(
                                                         "checkpoint_notes", ()))]
    lines += list(dict.fromkeys(checkpoint))  # a fit that could not choose its epoch
    for row in rows:
        if "n_bins" in row:  # a binned model: the bins it was given, the bins it fitted
            lines.append(_bins_line(row))
    evaluation = [note for row in rows for note in row.get("time_bin_notes", ())
                  if "Binned" not in note]
    if evaluation:  # the test times' bins of local@10 / bin mAP, the same for every row
        lines.append("Time bins of local@10 and bin mAP on the test times: "
                     + "; ".join(dict.fromkeys(evaluation)))
    return lines


def report_text(rows, n_done, n_fits, answer, columns, references, data):
    """``table.txt`` and the console: the answer, the table with its marks, the
    references and the notes."""
    if not rows:
        return "(no fit finished yet)"
    lines = [f"(partial: {n_done} of {n_fits} fits finished)"] if n_done < n_fits else []
    lines += answer
    lines += ["", format_table([{**r, "name": marked(r)} for r in rows], columns), ""]
    if "date_prior" in references:
        lines.append(f"references: random ranking {references['random']:.3f}; date-only "
                     f"ranking {references['date_prior']:.3f} (each caption's date "
                     "inferred from the training captions sharing its words; no held-out "
                     "date)")
    elif "random" in references:
        lines.append(f"reference: random ranking {references['random']:.3f}")
    elif "chance_map" in references:
        lines.append(f"reference: a random ranking's category mAP (chance) "
                     f"{references['chance_map']:.3f}")
    lines += _sample_lines(rows, len(data.X_test))
    lines += note_lines(rows, data)
    lines += [f"data: {note}" for note in data.get("notes", ())]
    return "\n".join(lines)


def _sample_lines(rows, n_test):
    """The line that says the figures are estimates from a query sample, when they are."""
    sampled = sorted({r["n_queries"] for r in rows if r.get("n_queries", n_test) < n_test})
    if not sampled:
        return []
    return [f"evaluation: a random sample of {', '.join(f'{m:,}' for m in sampled)} of the "
            f"{n_test:,} test items queries every test item (above {QUERY_SAMPLE:,} test "
            "items the full rankings' O(n²) cost is not paid; the same items in every fit); "
            "mAP, MRR and t-mAP@50 are the sample's means ± their standard errors. Exact "
            "figures: temporal_xmodal.evaluation.evaluate_estimator(..., query_sample=None)"]


def json_ready(value):
    """NaN → None (JSON ``null``) and NumPy scalars → Python's, recursively."""
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return None if np.isnan(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value
