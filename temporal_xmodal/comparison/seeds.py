"""The main job over several seeds: one run per seed, the table of the means, the spread.

``compare --seeds N`` (``run_compare(seeds=N)``) runs the whole job once per seed
``seed, seed + 1, …`` in the output folder's ``seed_<k>/`` sub-folders (each a complete
run with its own ``results.json``, ``--resume`` and Ctrl-C behaviour), then writes the
table of the per-estimator means in the folder itself, with the answer lines carrying
each figure's spread over the seeds (:func:`~temporal_xmodal.comparison.answer_lines`).
On the embedded data sets a seed draws the data (and its split) as well as the
estimators; on a user's file the rows and the split are the same in every run and the
seed draws the estimators' initialisation, batches and validation rows.
"""

import numpy as np

from .table import is_na

__all__ = ["mean_rows", "seed_folder", "spread"]


def seed_folder(seed):
    """The sub-folder of one seed's run (``seed_3``)."""
    return f"seed_{seed}"


def _number(value):
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_))


def _mean(values):
    values = [float(v) for v in values if not is_na(v)]
    return float(np.mean(values)) if values else float("nan")


def _average(rows):
    """One row of the means of ``rows`` (the same estimator's rows over the seeds): every
    number, also inside the breakdowns (``per_bin``, ``per_category``, the control), is
    the mean of the rows' values at the same place."""
    row = {key: _mean_of([r.get(key) for r in rows]) for key in rows[0]}
    row["still_improving"] = any(r.get("still_improving") for r in rows)
    if "control" in row:
        row["control"]["still_improving"] = any(
            r.get("control", {}).get("still_improving") for r in rows)
    return row


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
    """The table's rows over several seeds: each figure's mean over the runs where the
    estimator finished (an n/a figure is left out; n/a in every run stays n/a); a fit still
    improving in any run is marked.

    Parameters
    ----------
    runs : list of list of dict
        The rows of each seed's run (:func:`~temporal_xmodal.comparison.compare`).

    Returns
    -------
    rows : list of dict
        In the first run's order; ``seeds``: the runs each estimator finished in.
    """
    names = list(dict.fromkeys(r["name"] for run in runs for r in run))
    rows = []
    for name in names:
        mine = [r for run in runs for r in run if r["name"] == name]
        rows.append({**_average(mine), "seeds": len(mine)})
    return rows


def spread(runs, name, value):
    """The sample standard deviation over the seeds of ``value(row)`` for estimator
    ``name`` (``value``: a figure or one derived from a row); ``None`` with fewer than two
    runs that measured it."""
    values = [float(value(r)) for run in runs for r in run
              if r["name"] == name and not is_na(value(r))]
    return float(np.std(values, ddof=1)) if len(values) >= 2 else None
