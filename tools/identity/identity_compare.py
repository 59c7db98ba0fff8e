#!/usr/bin/env python
"""Bit-identity of two identity_outputs.py pickles (see that script).

Usage::

    python tools/identity/identity_compare.py A.pkl B.pkl

Same keys, and each value bit-identical: arrays with the same dtype and shape and
``np.array_equal(..., equal_nan=True)`` (non-numeric arrays, e.g. the
``"ERROR <type>"`` markers, plain ``np.array_equal``); floats equal with ``==``
or both NaN (a change of the scalar's Python type, e.g. float -> np.float64, is
reported as a note, not a mismatch); tuples element by element.

Prints the number of individual outputs compared (an array is one output, a
float one, a tuple of arrays one per array), then every mismatch with its case
name and max abs diff.  Exit status 1 on any mismatch or missing key, else 0.
"""

import math
import pickle
import sys

import numpy as np


def _is_scalar(v):
    return isinstance(v, (float, int, np.floating, np.integer)) and not isinstance(v, bool)


def _max_abs_diff(a, b):
    try:
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype.kind not in "biuf" or b.dtype.kind not in "biuf":
            return "n/a"
        a, b = a.astype(np.float64), b.astype(np.float64)
        nan_diff = int(np.sum(np.isnan(a) != np.isnan(b)))
        both = ~(np.isnan(a) | np.isnan(b))
        with np.errstate(invalid="ignore"):
            d = np.abs(a[both] - b[both])
        inf_diff = int(np.sum(np.isnan(d)))  # inf - inf of the same sign is nan: differing infs
        d = d[~np.isnan(d)]
        text = f"{d.max():.3e}" if d.size else "0"
        n_diff = int(np.sum(d > 0)) + nan_diff + inf_diff
        extra = f", {n_diff} of {a.size} entries differ"
        if nan_diff:
            extra += f", NaN pattern differs in {nan_diff}"
        if inf_diff:
            extra += f", inf differs in {inf_diff}"
        return text + extra
    except Exception as exc:  # noqa: BLE001
        return f"n/a ({type(exc).__name__})"


def _array_equal(a, b):
    """None when equal, else a description."""
    if a.dtype != b.dtype:
        return f"dtype {a.dtype} vs {b.dtype}"
    if a.shape != b.shape:
        return f"shape {a.shape} vs {b.shape}"
    if a.dtype.kind in "fc":
        equal = np.array_equal(a, b, equal_nan=True)
    elif a.dtype.kind == "O":
        equal = a.shape == b.shape and all(
            (x == y) or (x != x and y != y) for x, y in zip(a.ravel(), b.ravel()))
    else:
        equal = np.array_equal(a, b)
    if equal:
        return None
    if a.dtype.kind in "US":
        return f"{a!r} vs {b!r}"
    return f"max abs diff {_max_abs_diff(a, b)}"


def compare_values(a, b):
    """``(n_outputs, problem or None, note or None)``."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        if not (isinstance(a, tuple) and isinstance(b, tuple)):
            return 1, f"type {type(a).__name__} vs {type(b).__name__}", None
        if len(a) != len(b):
            return len(a), f"tuple length {len(a)} vs {len(b)}", None
        problems = []
        for i, (x, y) in enumerate(zip(a, b)):
            _, p, _ = compare_values(x, y)
            if p:
                problems.append(f"[{i}] {p}")
        return len(a), "; ".join(problems) or None, None
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return 1, f"type {type(a).__name__} vs {type(b).__name__} ({a!r} vs {b!r})", None
        return 1, _array_equal(a, b), None
    if _is_scalar(a) and _is_scalar(b):
        fa, fb = float(a), float(b)
        equal = (fa == fb) or (math.isnan(fa) and math.isnan(fb))
        problem = None if equal else f"{a!r} vs {b!r}, abs diff {abs(fa - fb):.3e}"
        note = (None if type(a) is type(b)
                else f"scalar type {type(a).__name__} vs {type(b).__name__}")
        return 1, problem, note
    return 1, f"unexpected types {type(a).__name__} / {type(b).__name__}", None


def main(path_a, path_b):
    with open(path_a, "rb") as f:
        A = pickle.load(f)
    with open(path_b, "rb") as f:
        B = pickle.load(f)
    only_a, only_b = sorted(set(A) - set(B)), sorted(set(B) - set(A))
    n_outputs, mismatches, notes = 0, [], []
    for key in A:
        if key not in B:
            continue
        n, problem, note = compare_values(A[key], B[key])
        n_outputs += n
        if problem:
            mismatches.append((key, problem))
        if note:
            notes.append((key, note))
    n_errors = sum(1 for v in A.values()
                   if isinstance(v, np.ndarray) and v.dtype.kind == "U")
    print(f"compared {n_outputs} outputs in {len(set(A) & set(B))} common keys "
          f"({path_a}: {len(A)} keys, {path_b}: {len(B)} keys; "
          f"{n_errors} of A's keys are recorded exceptions)")
    for key in only_a:
        print(f"MISSING in {path_b}: {key}")
    for key in only_b:
        print(f"MISSING in {path_a}: {key}")
    for key, problem in mismatches:
        print(f"MISMATCH {key}: {problem}")
    for key, note in notes[:50]:
        print(f"note {key}: {note}")
    if len(notes) > 50:
        print(f"note: {len(notes) - 50} more scalar type notes")
    ok = not (mismatches or only_a or only_b)
    print(f"{'IDENTICAL' if ok else 'DIFFERENT'}: {len(mismatches)} mismatches, "
          f"{len(only_a)} keys only in A, {len(only_b)} keys only in B")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
