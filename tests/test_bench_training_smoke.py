"""Smoke test of ``benchmarks/bench_training.py``: ``--quick`` runs and writes its JSON.

The quick sizes (n=600, one epoch, one repeat) are too small for the overhead
ratios to mean much, so only their presence and form are checked; the
agreement of the naive triplet loop with the vectorised loss is asserted, as
is the fact that the wrapper and the plain loop train the same losses.
"""

import json
import subprocess
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_training.py"
TOP_LEVEL_KEYS = {"benchmark", "command", "date", "quick", "machine", "parameters", "timings",
                  "results", "targets"}
TARGETS = {"sam_epoch_overhead", "sam_fit_overhead", "tempxnet_epoch_overhead",
           "tempxnet_fit_overhead", "loop_matches_vectorised"}
LOSSES = {f"{name}_b{b}" for name in ("bidirectional_triplet_loss", "SAMLoss", "TempXNetLoss")
          for b in (64, 1024)}


def test_quick_run_writes_results(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(BENCHMARK), "--quick", "--output-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=300,  # a hang guard (bench_diachronic: 17 s alone, 72 s in the suite)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path = tmp_path / "bench_training.json"
    assert path.exists(), proc.stdout
    data = json.loads(path.read_text())

    assert TOP_LEVEL_KEYS <= data.keys()
    assert data["benchmark"] == "bench_training" and data["quick"] is True
    assert {"platform", "cpu_count", "versions"} <= data["machine"].keys()
    assert {"torch", "temporal-xmodal"} <= data["machine"]["versions"].keys()
    params = data["parameters"]
    assert params["max_epochs"] == 1 and params["torch_num_threads"] >= 1
    assert all(t > 0 for t in data["timings"].values())

    assert set(data["targets"]) == TARGETS
    for entry in data["targets"].values():
        assert isinstance(entry["passed"], bool)
        assert entry["comparison"] in (">=", "<")

    results = data["results"]
    for kind in ("sam", "tempxnet"):
        over = results["overhead"][kind]
        assert over["epoch_ratio"] > 0 and over["end_to_end_ratio"] > 0
        assert over["wrapper_samples_per_s_epochs"] > 0
        assert over["train_loss_max_abs_diff"] < 1e-4  # same seed, same work

    assert set(results["losses"]["losses"]) == LOSSES
    assert results["losses"]["sam_alpha"] > 0  # adaptive margins were computed
    naive = results["naive_reference"]
    assert naive["agreement"]["max_abs_diff"] < 1e-5
    assert data["targets"]["loop_matches_vectorised"]["passed"]
    assert naive["speedup"] > 1
