"""The words around the comparison table: the answer on its first lines and the notes under it.

:func:`answer_lines` says which estimator wins on category retrieval and on
the time-aware figure, and whether time pays beyond the date filter, each
with its margin over the runner-up; :func:`note_lines` explains the columns
and names the fits still improving (the marks of :func:`marked`) and the time
bins merged.  The console, ``table.txt`` and the figure carry the same words.
"""

from .seeds import spread
from .table import DELTA_TIME_SCORE, is_na

__all__ = ["CHECKPOINT_ADVICE", "CONTROL_STILL_IMPROVING", "STILL_IMPROVING", "answer_lines",
           "checkpoint_note", "checkpoint_note_of", "marked", "note_lines"]

#: Marks of a fit still improving at its last epoch: the model's, its control's.
STILL_IMPROVING, CONTROL_STILL_IMPROVING = "*", "†"
#: Where a fit's checkpoint warning (:class:`~temporal_xmodal.CheckpointWarning`) turns from
#: what happened to its advice, which names parameters that the job does not take.
_ADVICE = (" Raise ", " Give every ")
#: What the job's user can do instead (:func:`checkpoint_note`).
CHECKPOINT_ADVICE = ("The compare job sets no validation option (its validation rows are a "
                     "share of the training rows): give it more rows, a larger --n-samples "
                     "or none to use every row (n_samples of compare_estimators). Fitted by "
                     "hand, the estimator takes validation_fraction or "
                     "selection_metric='valid_loss'.")


def checkpoint_note(message):
    """The job's wording of a :class:`~temporal_xmodal.CheckpointWarning`'s ``message``: what
    happened, with the advice replaced by :data:`CHECKPOINT_ADVICE`."""
    cut = min((message.find(a) for a in _ADVICE if a in message), default=len(message))
    return message[:cut] + " " + CHECKPOINT_ADVICE


def checkpoint_note_of(name, report):
    """The job's note for a fit whose :class:`~temporal_xmodal.training.FitReport` says it,
    or a model inside it, could not choose its checkpoint (read from the report, not from
    the warning that says it to a person)."""
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


def _winner(rows, value, runs=None):
    """(best row, its value, " margin over the runner-up" text) of the rows with a value;
    ``(None, None, None)`` without any.  With the seeds' ``runs``, the text gives each
    one's spread (sd over the seeds)."""
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
    """Each row's sample sd of ``value`` over the seeds' ``runs`` (None without runs, or
    with fewer than two runs that measured it)."""
    return [spread(runs, row["name"], value) if runs else None for row in rows]


def _pm(sd):
    """`` ± sd`` ("" when not measured)."""
    return "" if sd is None else f" ± {sd:.3f}"


def _clear(gap, noise):
    """The one rule of the answer lines: a difference is clear when it exceeds twice the
    spread over the seeds."""
    return abs(gap) > 2 * noise


def _stronger(row):
    """The stronger of a row's two time-window readings (all candidates, date-filtered)."""
    pair = [row.get("tmap50"), row.get("tmap50_filter")]
    return float("nan") if any(is_na(v) for v in pair) else max(pair)


#: The smallest margin the answer calls a gain ("Yes"); a smaller positive one is "not
#: measurably": a few thousandths move with the seed (docs/index.md, "The answer on the
#: first lines").
MIN_MARGIN = 0.005


def answer_lines(rows, protocol, *, runs=None):
    """The answer a user came for, in a few lines above the table.

    Read more in the user guide: docs/index.md ("The answer on the first lines").

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`~temporal_xmodal.comparison.compare` (over several seeds, their
        means: :func:`~temporal_xmodal.comparison.seeds.mean_rows`).
    protocol : {"labels", "undated"}
        The figures' protocol (``"undated"``: pairs ranked by MRR).
    runs : list of list of dict or None, default=None
        Each seed's rows, when the figures are over several seeds: every figure and
        margin then carries its spread (the sample sd over the seeds, ``± sd``) and says
        whether the winner's margin stands out of it (more than twice the larger spread).
        ``None``: one seed, no spread measured.

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
        elif gain > 0:  # issue 57, 16: "Yes: +0.000" was printed for a margin of zero
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


def _bins_line(row):
    """One line on a binned model's bins: asked for, fitted, merged (its TimeBinWarning)."""
    merged = [note for note in row.get("time_bin_notes", ()) if "Binned" in note]
    return (f"{row['name']}: {merged[0]}" if merged
            else f"{row['name']} fitted {row['n_bins']} time bin(s), none merged.")


def note_lines(rows, data):
    """The lines under the table: what the columns mean, fits still improving, bins merged.

    Parameters
    ----------
    rows : list of dict
    data : Bunch
        The job's data (``protocol``, ``eval_window``, ``dated``).

    Returns
    -------
    lines : list of str
    """
    undated = data.protocol == "undated"
    score = {"map": "mAP (mean of I→T and T→I)", "mrr": "I→T MRR"}[DELTA_TIME_SCORE[data.protocol]]
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
