"""Smoke test of ``benchmarks/bench_gpu.py``: ``--quick`` runs on this machine's device and
writes its JSON (the GPU targets are checked only by a full run on a GPU)."""

import json
import subprocess
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_gpu.py"


def test_quick_run_writes_results(tmp_path):
    proc = subprocess.run([sys.executable, str(BENCHMARK), "--quick", "--skip-main-job",
                           "--output-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "bench_gpu.json").read_text())
    assert data["benchmark"] == "bench_gpu"
    assert {f"{name} ({label})" for name in ("SAM", "TempXNet", "Diachronic")
            for label in ("default", "batch 1024")} == set(data["throughput"])
    for row in data["throughput"].values():
        assert row["items_per_s"] > 0 and row["plain_items_per_s"] > 0
    assert data["search"]["same_topk_scores"] is True
    assert data["dcm_epoch"]["epoch_s"] > 0 and 0 <= data["dcm_epoch"]["valid_map"] <= 1
