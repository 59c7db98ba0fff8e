"""The example scripts run end to end in ``--fast`` mode and print their key lines.

Each script runs as a subprocess from the repository root, as a user would run it.
The TICRC parts must work with and without the data folder: the data-dependent
lines are asserted only when ``DATA_DIR / "ticrc"`` exists, and the TICRC example
is also run against a missing folder.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA_DIR

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
HAS_TICRC = (DATA_DIR / "ticrc").is_dir()


def run_example(name, *args, env=None):
    """Run ``examples/<name> --fast *args``; return its stdout (asserting exit status 0)."""
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--fast", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "MPLBACKEND": "Agg", **(env or {})},
    )
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_every_example_is_tested_and_listed():
    scripts = {p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")}
    tested = {"pipeline_composition.py", "grid_search_temporal.py", "compare_baselines.py",
              "ticrc_neighbourhood.py"}
    assert scripts == tested
    readme = (EXAMPLES / "README.md").read_text()
    assert all(name in readme for name in scripts)


def test_pipeline_composition():
    out = run_example("pipeline_composition.py")
    assert "embedder                    accuracy transfer  fit [s]" in out
    for name in ("passthrough (no embedder)", "CCACrossModal", "SAMEmbedder",
                 "DiachronicEmbedder", "chance (most frequent)"):
        assert name in out
    if HAS_TICRC:
        assert "decade accuracy" in out and "counterpart MRR" in out
    else:
        assert "TICRC data not found" in out


def test_grid_search_temporal():
    # folds in this process: loky workers would each import torch (half the test's time);
    # the parallel folds are tested in tests/test_scaling.py
    out = run_example("grid_search_temporal.py", "--n-jobs", "1")
    assert out.count("best parameters: {") == 2
    assert "'bins':" in out and "'temporal_weight':" in out
    # it searches knobs that matter: the time-aware score moves between candidates
    spreads = [float(v) for v in re.findall(r"best − worst candidate\): ([\d.]+)", out)]
    assert len(spreads) == 2 and min(spreads) >= 0.02, spreads
    header = next(line for line in out.splitlines() if line.startswith("rank"))
    assert "t-mAP@50 (w=0.5)" in header and "mAP" in header and "MRR" in header


def test_compare_baselines():
    out = run_example("compare_baselines.py")
    header = next(line for line in out.splitlines() if line.startswith("estimator"))
    for column in ("fit [s]", "I→T", "T→I", "t-mAP@50", "bin mAP", "time cos"):
        assert column in header
    for name in ("CCA", "SAM, fixed margin", "TempXNet-Rec", "Diachronic, no L_intra",
                 "Binned+Procrustes"):
        assert f"\n{name} " in out
    assert "best t-mAP@50:" in out


@pytest.mark.skipif(not HAS_TICRC, reason=f"TICRC data not found at {DATA_DIR / 'ticrc'}")
def test_ticrc_neighbourhood(tmp_path):
    figure = tmp_path / "neighbourhood.png"
    out = run_example("ticrc_neighbourhood.py", "--plot", str(figure))
    assert "held-out check: MRR" in out
    for year in (1870, 1890, 1910):
        assert f"projected at {year}: own caption ranked" in out
    assert "1890 -> 1910:" in out
    assert "captions whose 10 nearest captions change most between 1870 and 1910" in out
    assert out.count("  shift ") == 10
    assert figure.stat().st_size > 10_000


def test_ticrc_neighbourhood_without_data(tmp_path):
    out = run_example("ticrc_neighbourhood.py",
                      env={"TEMPORAL_XMODAL_DATA": str(tmp_path / "missing")})
    assert "TICRC data not found" in out
