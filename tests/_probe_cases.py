"""What the bad-input case tables share (``tests/_bad_input.py`` and its issue modules):
recording a call's warnings, and turning a table of ``(family, name, function, due,
keywords)`` rows into cases."""

import warnings


def recorded(call):
    """``call()``'s result and the messages of every warning it raised."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = call()
    return out, [str(w.message) for w in record]


def family_cases(case_class, rows, *, prefix, issue=None, family_in_name=True):
    """One ``case_class`` per row, run once (not per estimator), carrying its ``family``.

    Named ``<prefix>.<family>_<name>`` (``<prefix>.<name>`` without ``family_in_name``); the
    family is the row's, or ``"<issue>.<family>"`` when an ``issue`` numbers them."""
    out = []
    for family, name, f, due, keywords in rows:
        case = case_class(f"{prefix}.{family}_{name}" if family_in_name else f"{prefix}.{name}",
                          (lambda est_name, f=f: f()), due, keywords)
        case.family = family if issue is None else f"{issue}.{family}"
        out.append(case)
    return out
