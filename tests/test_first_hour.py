"""What a new user meets in the first hour: README snippets that run as written, in order,
and moved names that say where they went."""

import ast
import builtins
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _python_blocks(page):
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


def _names(tree):
    """``(defined, used)`` names of a snippet."""
    defined, used = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (defined if isinstance(node.ctx, (ast.Store, ast.Del)) else used).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
    return defined, used


def test_every_readme_snippet_uses_only_names_defined_before_it():
    """The README used df, X_text, X_image, y_text, y_image without defining them."""
    defined = set(dir(builtins))
    blocks = _python_blocks(ROOT / "README.md")
    assert len(blocks) >= 5
    for i, block in enumerate(blocks):
        names, used = _names(ast.parse(block))
        defined |= names
        missing = sorted(used - defined)
        assert not missing, f"README snippet {i + 1} uses {missing} before any snippet " \
                            f"defines them:\n{block}"


def test_readme_sections_name_the_module_of_what_they_list():
    """The Metrics (`temporal_xmodal.metrics`) section listed the scorers, which moved to
    temporal_xmodal.scoring."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Metrics", 1)[1].split("\n## ", 1)[0]
    assert "`temporal_xmodal.scoring`" in section
    scorers = section.index("make_retrieval_scorer")
    assert section.rfind("`temporal_xmodal.scoring`", 0, scorers) > section.rfind(
        "`temporal_xmodal.metrics`", 0, scorers)


def test_the_quick_look_writes_beside_the_main_job(monkeypatch, tmp_path, capsys):
    """The README's quick look overwrote the main job's compare_output/."""
    from temporal_xmodal import cli, comparison

    seen = []
    monkeypatch.setattr(comparison, "run_compare", lambda dataset, output, **kw: seen.append(output))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["compare", "--max-epochs", "5", "--n-samples", "1000"]) == 0
    assert cli.main(["compare"]) == 0
    assert cli.main(["compare", "--n-samples", "1000", "--output", "mine"]) == 0
    assert seen == ["compare_output_quick", "compare_output", "mine"]


def test_the_comparison_figure_says_what_it_shows():
    """The plot named no data set, size, seed or time window, and "papers' epochs" without
    the number."""
    from sklearn.utils import Bunch

    from temporal_xmodal.comparison.plots import figure_title

    data = Bunch(X_train=[0] * 723, X_test=[0] * 277, eval_window=0.5)
    assert figure_title("synthetic", data, 3, {"CCA": None, "SAM": 5, "Diachronic": 5}) == (
        "synthetic data set (the demo world, built so that time helps: caption meanings move "
        "between eras, the writing style stays)\n723 training + 277 test items, seed 3, "
        "relevance window ±0.5 years,\n5 epochs")
    mixed = figure_title("synthetic", data, 0, {"CCA": None, "SAM": 100, "Diachronic": 25})
    assert mixed.endswith("epochs SAM 100, Diachronic 25")
    data.eval_window = None
    assert "undated: no time window" in figure_title("wiki", data, 0, {"CCA": None})


def test_the_figure_of_a_users_file_is_titled_with_the_file_and_its_split():
    """issue 56, 3: the figure of compare --data items.parquet read "data data set"."""
    from sklearn.utils import Bunch

    from temporal_xmodal.comparison.plots import figure_title

    data = Bunch(X_train=[0] * 700, X_test=[0] * 300, eval_window=0.5,
                 key={"source": "/home/me/embeddings/items.parquet", "split": "time"})
    title = figure_title("data", data, 0, {"CCA": None})
    assert title.startswith("items.parquet (time split: the latest 30 % of the rows held out "
                            "for the test)\n700 training + 300 test items, seed 0")
    assert "data data set" not in title and "/home/me" not in title
    data.key = {"source": None, "split": "random"}
    assert figure_title("data", data, 0, {"CCA": None}).startswith(
        "your DataFrame (random split: 30 % of the rows held out at random for the test)")
