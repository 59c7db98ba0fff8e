"""How much neighbourhoods change across instants, in numbers and in words (docs/search.md)."""

import numpy as np

from ..time import time_role

#: Mean neighbourhood change (1 − Jaccard of top-k sets) below which the
#: neighbourhoods are said to barely change: less than one neighbour in ~20
#: replaced on average (with k=10, one swap between two instants gives 0.18).
BARELY_CHANGES = 0.05


def jaccard_change(a, b):
    """1 − |a ∩ b| / |a ∪ b| of two collections of gallery rows (0 when both are empty)."""
    a, b = set(np.asarray(a).tolist()), set(np.asarray(b).tolist())
    union = len(a | b)
    return 1.0 - len(a & b) / union if union else 0.0


def time_change(estimator, change, displacement=float("nan"), *, k=None,
                between="the instants"):
    """The ``table.attrs["time_change"]`` summary of an exploration table.

    ``estimator`` (or None) gives the ``time_role``; ``change`` is Δ, the mean 1 − Jaccard of
    the top-k sets (NaN: nothing to compare); ``displacement`` the mean 1 − cos of the items'
    own embeddings (NaN: unknown); ``k`` and ``between`` say what Δ compares.  Keys:
    ``neighbourhood_change``, ``displacement``, ``time_role``, ``barely_changes`` (Δ below
    :data:`BARELY_CHANGES`, or a model that ignores time at inference), ``threshold`` and
    ``message``.
    """
    final = getattr(estimator, "steps", [[None, estimator]])[-1][1]  # a Pipeline's last step
    # objects that do not declare time_role (duck-typed models) are judged by Δ alone
    use = time_role(estimator) if hasattr(final, "time_role") else None
    name = type(final).__name__
    static = use is not None and use != "inference"
    barely = static or (np.isfinite(change) and change < BARELY_CHANGES)
    measure = f"1 − Jaccard of the top-{k or 'k'} sets between {between}"
    moves = (f"; own embedding moves by 1 − cos = {displacement:.1e}"
             if np.isfinite(displacement) else "")
    if not np.isfinite(change):
        message = "one instant: no change to measure."
    elif static:
        message = (f"{name} has time_role={use!r}: it projects an item the same way at every "
                   f"instant, so its neighbourhoods cannot change with time (Δ = {change:.2f}).")
    elif barely:
        message = (f"The neighbourhoods barely change across these instants: the model uses "
                   f"time little here (Δ = {change:.3f} < {BARELY_CHANGES}, {measure}{moves}). "
                   "Instants further apart or a longer fit may show more; see time_role / "
                   "Δ-time.")
    else:
        message = f"Mean neighbourhood change Δ = {change:.2f} ({measure})."
    return {"neighbourhood_change": float(change), "displacement": float(displacement),
            "time_role": use, "barely_changes": bool(barely), "threshold": BARELY_CHANGES,
            "message": message}


def over_time_change(table):
    """Mean 1 − Jaccard between consecutive instants of a ``neighbourhood_over_time`` table."""
    ranked = table[table["status"] != "left"]
    instants = list(dict.fromkeys(table["instant"]))
    sets = [ranked.loc[ranked["instant"] == t, "neighbour"].to_numpy() for t in instants]
    changes = [jaccard_change(a, b) for a, b in zip(sets[:-1], sets[1:])]
    return float(np.mean(changes)) if changes else float("nan")
