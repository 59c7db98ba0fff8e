"""Smoke test of ``benchmarks/bench_diachronic_synthetic.py``: ``--quick`` runs and writes its JSON.

The quick sizes (n=600, one seed, two epochs) are too small for the orderings
to mean anything, so only the presence and form of the figures are checked:
every model × protocol, per seed and on average, plus the per-bin curves, the
PNG and the pass/fail entries.
"""

import json
import math
import subprocess
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_diachronic_synthetic.py"
NAME = "bench_diachronic_synthetic"
MODELS = {"Diachronic (sum)", "Diachronic (sum_per_anchor)", "Binned (Procrustes)",
          "Binned (no align)", "TempXNet-Rec λ=1", "TempXNet-Rec λ=20", "Static (SAM fixed)",
          "CCA"}
PROTOCOLS = {"coarse_map", "local_map10_instant", "local_map10_own", "tmap50",
             "bounded_map_micro", "bounded_map_macro"}
TARGETS = {f"dcm_{tag}_{what}" for tag in ("sum", "spa")
           for what in ("coarse_beats_binned", "local_beats_binned_own",
                        "local_beats_binned_instant", "tmap_beats_tempxnet")} | {
    "tempxnet_tmap_beats_static", "tempxnet20_tmap_beats_static",
    "binned_best_bounded_micro", "binned_best_bounded_macro"}


def _in_unit_interval(value):
    return isinstance(value, float) and math.isfinite(value) and 0.0 <= value <= 1.0


def test_quick_run_writes_every_model_and_protocol(tmp_path):
    output_dir = tmp_path / "tmp"
    proc = subprocess.run(
        [sys.executable, str(BENCHMARK), "--quick", "--output-dir", str(output_dir)],
        capture_output=True, text=True, timeout=300,  # a hang guard (bench_diachronic: 17 s alone, 72 s in the suite)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path = output_dir / f"{NAME}.json"
    assert path.exists(), proc.stdout
    assert (output_dir / f"{NAME}.png").stat().st_size > 0
    data = json.loads(path.read_text())

    assert {"benchmark", "command", "date", "quick", "machine", "parameters", "timings",
            "results", "targets"} <= data.keys()
    assert data["benchmark"] == NAME and data["quick"] is True
    params = data["parameters"]
    assert params["seeds"] == [0] and params["max_epochs"] == 2 and params["n_samples"] == 600
    assert set(params["protocols"]) == PROTOCOLS
    assert params["dcm_window"] == 0.5 and params["dcm_decay"] == 1.0

    results = data["results"]
    assert set(results) == MODELS
    for model, entry in results.items():
        for key in ("mean", "std", "mean_i2t", "mean_t2i"):
            assert set(entry[key]) == PROTOCOLS, (model, key)
            assert all(_in_unit_interval(v) for v in entry[key].values() if key != "std")
        assert len(entry["runs"]) == 1 and entry["runs"][0]["seed"] == 0
        for protocol in PROTOCOLS:
            scores = entry["runs"][0][protocol]
            assert set(scores) == {"i2t", "t2i", "mean"}, (model, protocol)
            assert all(_in_unit_interval(v) for v in scores.values()), (model, protocol)
            assert math.isclose(scores["mean"], entry["mean"][protocol])
        per_bin = entry["per_bin"][0]
        assert len(per_bin) == params["eval_bins"]
        assert {"center", "n_items", "map_i2t", "map_t2i", "map_mean"} <= per_bin[0].keys()
        assert entry["fit_seconds"][0] > 0

    assert set(data["targets"]) == TARGETS
    for entry in data["targets"].values():
        assert isinstance(entry["passed"], bool)
        assert entry["comparison"] in (">=", "<")
        assert math.isfinite(entry["value"])
