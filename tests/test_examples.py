"""The example scripts run end to end in ``--fast`` mode and print their key lines.

Each script runs as ``__main__`` from the repository root with its own ``sys.argv``, as
``python examples/<name> --fast`` runs it, but in the test's process (``runpy``): a fresh
interpreter per script spent 3-4 s of CPU importing torch, scikit-learn and pandas (and
torch._dynamo at the first optimizer), more than the script's own work, and checked nothing
more (the script's names still come from its own imports; the README snippets keep their
fresh interpreters in ``test_readme.py``). What a script changes for the whole process
(warning filters, BLAS and torch threads, torch's and NumPy's global random generators, the
working directory, the environment) is restored after it; its warnings are recorded and
dropped, as the subprocess's stderr was.

The TICRC parts must work with and without the data folder: the data-dependent
lines are asserted only when ``DATA_DIR / "ticrc"`` exists, and the TICRC example
is also run against a missing folder.
"""

import re
import runpy
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import DATA_DIR
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
HAS_TICRC = (DATA_DIR / "ticrc").is_dir()


@pytest.fixture
def run_example(monkeypatch, capsys):
    """``run_example(name, *args, env=None)``: run ``examples/<name> --fast *args``; its stdout.

    A failing script fails the test with its traceback (and pytest shows what it printed);
    ``sys.exit`` with a non-zero status fails it too.
    """
    def run(name, *args, env=None):
        monkeypatch.chdir(ROOT)
        monkeypatch.setattr(sys, "argv", [str(EXAMPLES / name), "--fast", *args])
        for key, value in {"MPLBACKEND": "Agg", **(env or {})}.items():
            monkeypatch.setenv(key, value)
        capsys.readouterr()  # only the script's own output
        threads, numpy_state = torch.get_num_threads(), np.random.get_state()
        with warnings.catch_warnings(record=True), threadpool_limits(limits=None), \
                torch.random.fork_rng(devices=[]):
            try:
                runpy.run_path(str(EXAMPLES / name), run_name="__main__")
            except SystemExit as exit:
                assert exit.code in (None, 0), f"{name} exited with status {exit.code}"
            finally:
                torch.set_num_threads(threads)
                np.random.set_state(numpy_state)
        return capsys.readouterr().out

    return run


def test_every_example_is_tested_and_listed():
    scripts = {p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")}
    tested = {"pipeline_composition.py", "grid_search_temporal.py", "compare_baselines.py",
              "ticrc_neighbourhood.py"}
    assert scripts == tested
    readme = (EXAMPLES / "README.md").read_text()
    assert all(name in readme for name in scripts)


def test_pipeline_composition(run_example):
    out = run_example("pipeline_composition.py")
    assert "embedder                    accuracy transfer  fit [s]" in out
    for name in ("passthrough (no embedder)", "CCACrossModal", "SAMEmbedder",
                 "DiachronicEmbedder", "chance (most frequent)"):
        assert name in out
    if HAS_TICRC:
        assert "decade accuracy" in out and "counterpart MRR" in out
    else:
        assert "TICRC data not found" in out


def test_grid_search_temporal(run_example):
    # folds in this process: loky workers would each import torch (half the test's time);
    # the parallel folds are tested in tests/test_scaling.py
    out = run_example("grid_search_temporal.py", "--n-jobs", "1")
    # Diachronic's list of grids on both worlds, scored on the two recommended scorers
    for world in ("content drift", "static"):
        assert f"== {world} (" in out
    header = next(line for line in out.splitlines() if line.startswith("rank"))
    assert header.split() == ["rank", "decay", "window", "intra_margin", "margin", "map",
                              "tmap@50|filter", "fit", "[s]"]
    assert "tmap@50 " not in out.replace("tmap@50|filter", "")  # never the unfiltered figure
    for scorer in ("map", "tmap@50|filter"):
        assert out.count(f"best by {scorer}: {{") == 2
    assert out.count("refitted on map {") == 2  # refit on category mAP
    # the L_intra-off grid (decay=0) searches neither window nor intra_margin: they do
    # nothing there, so its rows show "-"; the L_intra-on rows show both
    rows = [line.split() for line in out.splitlines() if re.match(r"\s*\d+\s+(0|\d+%)\s", line)]
    off = [r for r in rows if r[1] == "0"]
    on = [r for r in rows if r[1] != "0"]
    assert len(off) == 2 and len(on) == 4, rows  # --fast: 1 + 2 candidates per world
    assert all(r[2] == r[3] == "-" for r in off)
    assert all(r[2].endswith("%") and r[3] != "-" for r in on)
    scores = [float(v) for r in rows for v in (r[5], r[8])]
    assert all(0 <= v <= 1 for v in scores)


def test_compare_baselines(run_example):
    out = run_example("compare_baselines.py")
    header = next(line for line in out.splitlines() if line.startswith("estimator"))
    for column in ("fit [s]", "I→T", "T→I", "t-mAP@50", "+ filter", "bin mAP", "time cos"):
        assert column in header
    for name in ("CCA", "SAM, fixed margin", "TempXNet-Rec", "Diachronic, no L_intra",
                 "Binned+Procrustes"):
        assert f"\n{name} " in out
    # the choice is on category mAP, the filtered figure beside it (never the unfiltered)
    assert "best category mAP:" in out and "best + filter:" in out
    assert "best t-mAP@50" not in out


@pytest.mark.skipif(not HAS_TICRC, reason=f"TICRC data not found at {DATA_DIR / 'ticrc'}")
def test_ticrc_neighbourhood(run_example, tmp_path):
    figure = tmp_path / "neighbourhood.png"
    out = run_example("ticrc_neighbourhood.py", "--plot", str(figure))
    assert "held-out check: MRR" in out
    for year in (1870, 1890, 1910):
        assert f"projected at {year}: own caption ranked" in out
    assert "1890 -> 1910:" in out
    assert "captions whose 10 nearest captions change most between 1870 and 1910" in out
    assert out.count("  shift ") == 10
    assert figure.stat().st_size > 10_000


def test_ticrc_neighbourhood_without_data(run_example, tmp_path):
    out = run_example("ticrc_neighbourhood.py",
                      env={"TEMPORAL_XMODAL_DATA": str(tmp_path / "missing")})
    assert "TICRC data not found" in out
