"""The Sphinx site in ``docs/``: it builds with warnings as errors, and the API
reference (``docs/api.rst``) lists every public name.

The build needs the ``docs`` packages (``sphinx``, ``myst-parser``,
``numpydoc``), which the ``test`` extra also installs; it is skipped when they
are missing.
"""

import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import temporal_xmodal
from _doc_figures import renderers

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

SUBPACKAGES = ("estimators", "losses", "nn", "training", "metrics", "evaluation",
               "datasets", "features")

_MISSING = [name for name in ("sphinx", "myst_parser", "numpydoc")
            if importlib.util.find_spec(name) is None]


@pytest.mark.skipif(bool(_MISSING),
                    reason=f"the docs build needs {', '.join(_MISSING)}: "
                           "pip install -e '.[docs]'")
def test_docs_build_without_warnings(tmp_path):
    # One test, one build (~10-20 s): split into several tests, pytest-xdist
    # could run the build once per worker.  A subprocess keeps Sphinx's
    # imports and global state out of the test process; -W turns every warning
    # into a failure; -j 1 because CI runs the tests on 2 cores.  No wall-clock limit: on
    # a busy machine the build took over 300 s, and a correctness test must not time
    # itself (CI's own job limit bounds a hung build).  One thread for OpenMP and BLAS (the
    # figure of docs/pipelines.md fits CCAs at build time): beside the other worker, a second
    # thread mostly waits for a core (a fifth of the build's CPU time on a busy 2-core
    # machine); the pages do not depend on it.
    out = tmp_path / "html"
    threads = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                      "MKL_NUM_THREADS")}
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-j", "1",
         "-b", "html", "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
        capture_output=True, text=True, env={**os.environ, **threads},
    )
    assert proc.returncode == 0, (
        f"sphinx-build failed (rc={proc.returncode}):\n{proc.stdout}\n{proc.stderr}")

    index = (out / "index.html").read_text(encoding="utf-8")
    assert "DiachronicEmbedder" in index
    assert 'href="api.html"' in index
    for page in ("metrics", "training", "evaluation", "datasets", "estimators/cca",
                 "estimators/sam", "estimators/tempxnet", "estimators/diachronic",
                 "estimators/binned"):
        assert (out / f"{page}.html").is_file(), page

    api = (out / "api.html").read_text(encoding="utf-8")
    for anchor in ("temporal_xmodal.estimators.DiachronicEmbedder",
                   "temporal_xmodal.estimators.DiachronicEmbedder.transform_image",
                   "temporal_xmodal.CrossModalEmbedder",
                   "temporal_xmodal.stack_modalities",
                   "temporal_xmodal.metrics.mean_average_precision",
                   "temporal_xmodal.evaluation.local_alignment",
                   "temporal_xmodal.datasets.make_temporal_crossmodal",
                   "temporal_xmodal.time.TimeBins"):
        assert f'id="{anchor}"' in api, anchor
    assert 'class="math' in api  # the docstrings' :math: goes to MathJax


def _public_names(module):
    names = getattr(module, "__all__", None)
    if names is None:  # a module without __all__
        names = [n for n, obj in vars(module).items()
                 if not n.startswith("_") and getattr(obj, "__module__", None) == module.__name__]
    return names


def _api_page():
    """docs/api.rst as Sphinx reads it: its lists of estimators filled in from the registry."""
    spec = importlib.util.spec_from_file_location("docs_conf", DOCS / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf.expand_registered_estimators((DOCS / "api.rst").read_text(encoding="utf-8"))


def _documented_names():
    """``module.name`` of every object that docs/api.rst documents."""
    documented, current = set(), None
    directive = re.compile(r"^\.\. (?:auto(?:class|function|data|exception)|py:data)::\s+(\S+)")
    for line in _api_page().splitlines():
        if line.startswith(".. currentmodule::"):
            current = line.split("::", 1)[1].strip()
        elif (match := directive.match(line)):
            documented.add(f"{current}.{match.group(1)}")
    return documented


def test_api_page_covers_every_public_name():
    documented = _documented_names()
    missing = []
    for sub in SUBPACKAGES:
        module = importlib.import_module(f"temporal_xmodal.{sub}")
        missing += [f"{module.__name__}.{n}" for n in _public_names(module)
                    if f"{module.__name__}.{n}" not in documented]
    # Top-level names: documented there, or in the subpackage that defines them.
    missing += [f"temporal_xmodal.{n}" for n in temporal_xmodal.__all__
                if f"temporal_xmodal.{n}" not in documented
                and not any(f"temporal_xmodal.{sub}.{n}" in documented for sub in SUBPACKAGES)]
    assert not missing, f"add these to docs/api.rst (autosummary table + autodoc directive): {missing}"


def _make_results():
    return renderers(ROOT)


def _numbers(value):
    """Every number held in a JSON document."""
    if isinstance(value, dict):
        return [n for v in value.values() for n in _numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in _numbers(v)]
    return [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


def test_results_page_quotes_the_committed_json():
    # the page is what benchmarks/make_results.py writes from benchmarks/results/*.json ...
    page = (DOCS / "results.md").read_text(encoding="utf-8")
    assert page == _make_results().render(), "run python benchmarks/make_results.py"
    # ... and every figure of its tables is a number of that JSON, as rounded on the page
    held = [n for path in sorted((ROOT / "benchmarks" / "results").glob("*.json"))
            for n in _numbers(json.loads(path.read_text()))]
    cells = [cell for line in page.splitlines() if line.startswith("| ")
             for cell in line.split(" | ")[1:]]
    figures = [m.group(0) for cell in cells for m in re.finditer(r"[+-]?\d+\.\d+", cell)]
    assert figures
    held = np.unique(np.asarray(held, dtype=float))
    for figure in figures:
        tolerance = 0.5 * 10 ** -len(figure.split(".")[1]) + 1e-12
        assert (np.abs(held - float(figure)) <= tolerance).any() or _is_a_move(
            held, float(figure), tolerance), figure


def _is_a_move(held, value, tolerance):
    """Whether ``value`` is a "move", the difference ``|a - b|`` of two figures of ``held``
    (sorted), within ``tolerance``: ``(np.abs(np.abs(held[:, None] - held[None, :]) - value)
    <= tolerance).any()`` without that N x N matrix (N is thousands: 370 MB, seconds).  For
    each ``a`` a binary search finds the ``b >= a`` near ``a + value`` (a little wider, for
    the rounding of the sums), and the same comparison as the matrix's decides."""
    if value + tolerance < 0:
        return False
    slack = 1e-9 * (1 + np.abs(held) + abs(value))
    start = np.searchsorted(held, held + max(value - tolerance, 0.0) - slack, side="left")
    stop = np.searchsorted(held, held + value + tolerance + slack, side="right")
    return any((np.abs(np.abs(held[i] - held[start[i]:stop[i]]) - value) <= tolerance).any()
               for i in np.flatnonzero(stop > start))


def _prose(lines):
    """The lines outside fenced code blocks."""
    inside, kept = False, []
    for line in lines:
        if line.startswith("```"):
            inside = not inside
        elif not inside:
            kept.append(line)
    return kept


def test_readme_first_screen():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    # the first Python example within the first 40 lines
    assert "```python" in lines[:40]
    # at most 5 numeric results (decimals, percentages, ±) in the prose of the first 60 lines
    results = [m.group(0) for line in _prose(lines[:60])
               for m in re.finditer(r"\d+\.\d+|\d+ ?%|±", line)]
    assert len(results) <= 5, results
    # the python example ends in a search at two dates
    first = "\n".join(lines[lines.index("```python"):])
    example = first[:first.index("\n```", 1)]
    assert "CrossModalIndex" in example and "for year in (" in example


def test_every_path_the_readme_and_the_guide_name_exists():
    checked = []
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        base = ROOT if page.name == "README.md" else DOCS
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):  # links
            if "://" not in target:
                checked.append((page.name, base / target))
        for path in re.findall(r"`((?:docs|benchmarks|examples|tests|temporal_xmodal)/[\w./-]+)`",
                               text):
            if "*" not in path and "<" not in path:
                checked.append((page.name, ROOT / path))
    missing = [f"{name}: {path.relative_to(ROOT)}" for name, path in checked
               if not path.exists()]
    assert checked and not missing, missing


def test_the_diachronic_page_quotes_the_reference_tables_of_the_json():
    """docs/estimators/diachronic.md, "What the defaults win": its two tables are what
    benchmarks/make_results.py renders from the committed bench_demo_time JSON (defaults, and
    the inputs as they are)."""
    page = (DOCS / "estimators" / "diachronic.md").read_text(encoding="utf-8")
    results = ROOT / "benchmarks" / "results"
    for name in ("bench_demo_time.json", "bench_demo_time_raw_inputs.json"):
        table = "\n".join(_make_results().reference_table(
            json.loads((results / name).read_text())))
        assert table in page, name


def test_the_ticrc_page_quotes_the_dates_benchmark():
    """docs/datasets.md, "Do the dates pay on TICRC?": its figures are those of the committed
    bench_ticrc_all_diachronic.json, rounded as printed."""
    results = json.loads((ROOT / "benchmarks" / "results" / "bench_ticrc_all_diachronic.json")
                         .read_text())["results"]
    page = (DOCS / "datasets.md").read_text(encoding="utf-8")
    section = page[page.index("### Do the dates pay on TICRC?"):]
    section = section[:section.index("\n#")]

    def stat(entry):
        return f"{entry['mean']:.3f} ± {entry['std']:.3f}"

    model, fusion = results["models"], results["date_prior_fusion"]["Diachronic"]
    gain = fusion["fused"]["mean"] - fusion["control_alone"]["mean"]
    ratio = gain / max(fusion["fused"]["std"], fusion["control_alone"]["std"])
    delta = model["Diachronic"]["real dates"]["mrr"]["mean"] - \
        model["Diachronic"]["without time"]["mrr"]["mean"]
    quoted = [stat(model["Diachronic"]["real dates"]["mrr"]),
              stat(model["Diachronic"]["without time"]["mrr"]), f"Δ {delta:+.3f}".replace("-", "−"),
              f"CCA {model['CCA']['real dates']['mrr']['mean']:.3f}",
              f"{results['references']['random']:.3f}", stat(fusion["fused"]),
              f"+{gain:.3f}", f"{ratio:.1f} times", stat(fusion["control_fused"])]
    for text in quoted:
        assert text in " ".join(section.split()), text
    assert ratio < 2  # "not clear": the page's conclusion holds for these figures


def test_the_evaluation_page_quotes_the_estimate_benchmark():
    """docs/evaluation.md ("At scale") quotes benchmarks/results/bench_estimate.json."""
    page = (DOCS / "evaluation.md").read_text(encoding="utf-8")
    doc = json.loads((ROOT / "benchmarks" / "results" / "bench_estimate.json").read_text())
    evaluation = doc["evaluation"]
    assert f"5,000 test items takes\n{evaluation['CCA']['5000']:.1f} CPU s" in page
    assert f"30,000 test\nitems takes {evaluation['CCA']['30000']:.0f} CPU s" in page
    assert f"a Diachronic one {evaluation['Diachronic']['30000']:.0f} CPU s" in page
    # the O(n²) extrapolation the page and QUERY_SAMPLE's comment give: 20² x 4.5 s ≈ 30 min
    assert round(400 * evaluation["CCA"]["5000"] / 60, -1) == 30


def test_the_scaling_page_quotes_the_paper_scale_benchmark():
    """docs/scaling.md ("One machine") quotes benchmarks/results/bench_paper_scale.json."""
    page = " ".join((DOCS / "scaling.md").read_text(encoding="utf-8").split())
    r = json.loads((ROOT / "benchmarks" / "results" / "bench_paper_scale.json").read_text())[
        "results"]["paper"]
    assert f"{r['exact_map_cpu_seconds']:.0f} CPU s, against " \
           f"{r['reference_cpu_seconds_both_directions']:.0f}" in page
    assert f"{r['data_bytes'] / 2 ** 30:.2f} GiB with the test items" in page
    assert f"a peak {r['fit_peak_over_data_gib']:.2f} GiB above the data" in page
    assert f"about {round(r['epoch_seconds_extrapolated'], -1):.0f} s" in page
    assert f"first {r['train_batches_run']} of {r['train_batches_epoch']:,}" in page
    assert f"about {r['twenty_five_epochs_hours']:.1f} hours" in page


def test_the_api_page_names_every_ready_made_scorer():
    from temporal_xmodal.scoring import SCORERS

    text = (ROOT / "docs" / "api.rst").read_text(encoding="utf-8")
    entry = text[text.index(".. py:data:: SCORERS"):]
    entry = entry[:entry.index("\n\n\n")]
    assert [key for key in SCORERS if f'``"{key}"``' not in entry] == []
