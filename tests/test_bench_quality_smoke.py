"""Smoke test of the quality benchmarks (Wikipedia SAM and SCML, synthetic TempXNet) with ``--quick``."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA_DIR

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
CASES = {
    "bench_wiki_sam": {"sam_beats_fixed_margin", "sam_beats_cca"},
    "bench_tempxnet_synthetic": {"default_beats_static_by_2std", "default_keeps_category_map"},
    "bench_wiki_scml": {"meta_forgets_less_than_sgd_accuracy", "meta_beats_sgd_final_map",
                        "vectorised_step_vs_coordinate_loop"},
}
NEEDS_WIKI = {"bench_wiki_sam", "bench_wiki_scml"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_quick_run_writes_results(name, tmp_path):
    extra = []
    if name in NEEDS_WIKI:
        if not (DATA_DIR / "wiki").exists():
            pytest.skip(f"real data not found at {DATA_DIR / 'wiki'}")
        extra = ["--data", str(DATA_DIR / "wiki")]
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / f"{name}.py"), "--quick", "--output-dir",
         str(tmp_path), *extra], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((tmp_path / f"{name}.json").read_text())
    assert {"benchmark", "quick", "machine", "parameters", "results", "targets"} <= data.keys()
    assert data["quick"] is True
    assert CASES[name] <= data["targets"].keys()
    assert "Targets" in proc.stdout
