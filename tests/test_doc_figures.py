"""Every figure a page quotes names its committed source and equals it (``_doc_figures.py``),
and the package's docstrings state contracts, not measurements."""

import ast
import re
from pathlib import Path

import pytest

from _doc_figures import ROOT, _MEASURED, check_page, evaluate, pages


@pytest.mark.parametrize("page", [str(p.relative_to(ROOT)) for p in pages()])
def test_every_figure_of_the_page_holds_to_its_source(page):
    problems = check_page(ROOT / page)
    assert not problems, "\n".join(problems)


def _page(tmp_path, text):
    path = tmp_path / "page.md"
    path.write_text(text, encoding="utf-8")
    return check_page(path, root=ROOT)


_SOURCED = """# A result

Diachronic reaches {figure} category mAP on the demo world, {delta} over its control.

<!-- figures: benchmarks/results/bench_demo_time.json
{figure} = summary.demo.Diachronic.map.mean
{delta} = summary.demo.Diachronic.map.mean - summary.demo.Diachronic.control.mean
-->
"""


def test_a_planted_wrong_figure_fails(tmp_path):
    assert not _page(tmp_path, _SOURCED.format(figure="0.865", delta="+0.172"))
    problems = _page(tmp_path, _SOURCED.format(figure="0.866", delta="+0.172"))
    assert len(problems) == 1 and "0.866 is printed" in problems[0]
    # a sign flipped with the unicode minus
    assert _page(tmp_path, _SOURCED.format(figure="0.865", delta="−0.172"))


def test_a_figure_without_a_source_fails(tmp_path):
    problems = _page(tmp_path, "# Speed\n\nAn epoch takes 830 s; mAP 0.8123, 3.1× faster.\n")
    assert [p.split("'")[1] for p in problems] == ["830 s", "0.8123", "3.1×"]
    # code, comments and parameters are not measurements
    assert not _page(tmp_path, "# Knobs\n\n`window=0.25`, `0.865` and 5 % of the span, "
                                "10 years, 512 × 512.\n\n```python\nx = 0.8123\n```\n")


def test_a_block_covers_its_own_section_only(tmp_path):
    text = _SOURCED.format(figure="0.865", delta="+0.172") + "\n## Later\n\nAgain 0.865.\n"
    problems = _page(tmp_path, text)
    assert len(problems) == 1 and "'0.865' has no source block" in problems[0]


def test_rounded_figures_and_papers(tmp_path):
    text = ("# Cost\n\nAbout 830 s an epoch; the paper reports 0.453.\n\n"
            "<!-- figures: benchmarks/results/bench_paper_scale.json\n"
            "830 ~= results.paper.epoch_seconds_extrapolated\n-->\n"
            "<!-- figures: paper (Semedo and Magalhães 2019, Table 3)\n0.453\n-->\n")
    assert not _page(tmp_path, text)


def test_a_generated_region_must_equal_its_renderer(tmp_path):
    page = (ROOT / "docs" / "estimators" / "diachronic.md").read_text(encoding="utf-8")
    region = re.search(r"<!-- generated: .*?<!-- end generated -->", page, re.S)
    if region is None:
        pytest.skip("the Diachronic page has no generated region")
    good = "# T\n\n" + region.group(0) + "\n"
    assert not _page(tmp_path, good)
    planted = re.sub(r"\d\.\d{3}", "0.999", good, count=1)
    assert any("differs from" in p for p in _page(tmp_path, planted))


def test_expressions():
    doc = {"a": {"b c": [1.0, 3.0]}, "n": 4}
    assert evaluate('mean(a["b c"]) * n - abs(-1)', doc) == 7.0
    with pytest.raises(ValueError, match="unsupported"):
        evaluate("__import__('os')", doc)


# -- docstrings: contracts, not measurements -----------------------------------------------

#: Measurement-shaped words a docstring may hold as a contract (a memory bound it enforces,
#: a doctest's output), by ``file: figures``.
_CONTRACTS = re.compile(r"GiB|MiB|KiB|GB|MB")  # memory budgets are parameters, not results
_HISTORY = re.compile(r"\b(?:was the default|default before|the default until|before issue"
                      r"|used to be)\b", re.I)


def _docstrings():
    for path in sorted((ROOT / "temporal_xmodal").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef)):
                text = ast.get_docstring(node, clean=False)
                if text:
                    yield f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 1)}", text


def _prose_of_docstring(text):
    """A docstring without its doctests (``>>>`` lines and their output) and code."""
    kept, in_doctest = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith((">>>", "...")):
            in_doctest = True
            continue
        if in_doctest and stripped:
            continue
        in_doctest = False
        if "\\" not in line and "default=" not in line:  # LaTeX; a parameter's type line
            kept.append(line)
    return re.sub(r"(`+)[^`]*?\1", " ", "\n".join(kept))


def test_docstrings_state_contracts_not_measurements():
    found = []
    for where, text in _docstrings():
        prose = _prose_of_docstring(text)
        found += [f"{where}: {m.group(0)!r}" for m in _MEASURED.finditer(prose)
                  if not _CONTRACTS.search(m.group(0))]
        found += [f"{where}: history {m.group(0)!r}" for m in _HISTORY.finditer(prose)]
    assert not found, ("a measured figure or a superseded default in a docstring: put it on "
                       "its page, with its source\n" + "\n".join(found))
