"""Every default an estimator's page states is the code's.

Each ``docs/estimators/*.md`` page documents its estimator's parameters in tables headed
``| parameter | default | ...``: the first cell names the parameter(s) in code spans, the
second starts with the default(s) as code spans, in the same order.  Each is read with
``ast.literal_eval`` (or compared with ``repr`` for objects) against ``get_params()`` of the
estimator built with no arguments; every constructor parameter has a row.
"""

import ast
import re
from pathlib import Path

import pytest

from temporal_xmodal.estimators import (BinnedProcrustesEmbedder, CCACrossModal,
                                        DiachronicEmbedder, SAMEmbedder,
                                        SemanticMatchingCrossModal, SequentialCrossModal,
                                        TempXNetEmbedder)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "estimators"

PAGES = {"binned.md": BinnedProcrustesEmbedder, "cca.md": CCACrossModal,
         "diachronic.md": DiachronicEmbedder, "sam.md": SAMEmbedder,
         "semantic_matching.md": SemanticMatchingCrossModal,
         "sequential.md": SequentialCrossModal, "tempxnet.md": TempXNetEmbedder}

_SPAN = re.compile(r"`([^`]+)`")


def _cells(line):
    """The cells of a Markdown table row (``\\|`` is a pipe inside a cell)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def parameter_rows(text):
    """``(line number, names, stated defaults)`` of every row of the page's parameter tables."""
    rows, inside = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("|"):
            inside = False
            continue
        cells = _cells(line)
        if cells[:2] == ["parameter", "default"]:
            inside = True
            continue
        if inside and not set(cells[0]) <= set("-: "):
            names = _SPAN.findall(cells[0])
            head = re.match(r"^(\s*`[^`]+`\s*,?\s*)*", cells[1]).group(0)
            rows.append((number, names, _SPAN.findall(head)))
    return rows


def stated_matches(stated, value):
    """Whether a page's code span ``stated`` is ``value``."""
    try:
        literal = ast.literal_eval(stated)
    except (ValueError, SyntaxError):
        return stated == repr(value) or stated == getattr(value, "__name__", None)
    return type(literal) is type(value) and literal == value or (
        isinstance(literal, (int, float)) and not isinstance(literal, bool)
        and isinstance(value, (int, float)) and not isinstance(value, bool)
        and float(literal) == float(value))


def check_page(text, estimator):
    """The problems of one page against ``estimator``'s defaults: a list of strings."""
    params = estimator().get_params(deep=False)
    problems, seen = [], set()
    for number, names, stated in parameter_rows(text):
        if len(stated) != len(names):
            problems.append(f"line {number}: {names} state {len(stated)} default(s) as code "
                            "spans at the start of the default cell; one per parameter")
            continue
        for name, text_value in zip(names, stated):
            seen.add(name)
            if name not in params:
                problems.append(f"line {number}: {name!r} is not a parameter of "
                                f"{estimator.__name__}")
            elif not stated_matches(text_value, params[name]):
                problems.append(f"line {number}: {name} is stated {text_value}, the code's "
                                f"default is {params[name]!r}")
    problems += [f"{name!r} has no row" for name in sorted(set(params) - seen)]
    return problems


@pytest.mark.parametrize("page", sorted(PAGES))
def test_each_estimator_page_states_the_code_s_defaults(page):
    problems = check_page((DOCS / page).read_text(encoding="utf-8"), PAGES[page])
    assert not problems, f"docs/estimators/{page}:\n" + "\n".join(problems)


def test_every_estimator_has_a_page():
    from temporal_xmodal.estimators import all_estimators
    assert {entry.estimator for entry in all_estimators()} <= set(PAGES.values())


def test_a_planted_wrong_default_fails():
    page = (DOCS / "diachronic.md").read_text(encoding="utf-8")
    assert not check_page(page, DiachronicEmbedder)
    planted = re.sub(r"^\| `decay` \| `[^`]+`", '| `decay` | `"5%"`', page, flags=re.M)
    assert planted != page
    assert any("decay is stated" in p for p in check_page(planted, DiachronicEmbedder))
    missing = re.sub(r"^\| `margin` \|.*\n", "", page, flags=re.M)
    assert "'margin' has no row" in check_page(missing, DiachronicEmbedder)
