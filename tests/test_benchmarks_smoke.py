"""Smoke test of the benchmark scripts: each runs with ``--quick`` and writes its JSON.

The quick sizes are too small for the speed and memory targets to mean much,
so only the exactness figure of the metrics benchmark is asserted; the other
targets are checked for presence and form.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
TOP_LEVEL_KEYS = {"benchmark", "quick", "machine", "parameters", "timings", "results", "targets"}
MACHINE_KEYS = {"platform", "cpu_count", "versions"}
TARGETS = {
    "bench_metrics": {"ap_matches_sklearn", "speedup_1_thread", "speedup_2_threads",
                      "peak_memory"},
    "bench_cca": {"speedup", "correlations_agree"},
}


def _run_quick(name, output_dir):
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / f"{name}.py"), "--quick", "--output-dir",
         str(output_dir)],
        capture_output=True, text=True, timeout=300,  # a hang guard, not a speed target
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path = output_dir / f"{name}.json"
    assert path.exists(), proc.stdout
    return json.loads(path.read_text())


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_quick_run_writes_results(name, tmp_path):
    data = _run_quick(name, tmp_path)
    assert TOP_LEVEL_KEYS <= data.keys()
    assert data["benchmark"] == name and data["quick"] is True
    assert MACHINE_KEYS <= data["machine"].keys()
    assert {"numpy", "scikit-learn", "torch"} <= data["machine"]["versions"].keys()
    assert set(data["targets"]) == TARGETS[name]
    for entry in data["targets"].values():
        assert isinstance(entry["passed"], bool)
        assert entry["comparison"] in (">=", "<")
    assert all(t > 0 for t in data["timings"].values())

    if name == "bench_metrics":
        correctness = data["results"]["correctness"]
        assert correctness["max_abs_diff"] < 1e-9
        assert correctness["tied_scores"]["max_abs_diff"] < 1e-9
        assert data["targets"]["ap_matches_sklearn"]["passed"]
        speed = data["results"]["speed"]
        assert speed["reference_extrapolated"] is True  # the quick run times a subset
        assert data["results"]["memory"]["peak_rss_increase_mib"] >= 0
    else:
        results = data["results"]
        k = data["parameters"]["n_components"]
        assert len(results["correlations_sklearn"]) == len(results["correlations_ours_reg0"]) == k


def test_set_reads_one_estimators_parameters_and_refuses_bad_ones():
    """``--set NAME.PARAM=VALUE`` of the comparison benchmarks: literals are parsed, and an
    unknown estimator, an unknown parameter or a bad value stop the run before any fit."""
    import argparse

    sys.path.insert(0, str(BENCHMARKS))
    try:
        from _common import add_settings_argument, parse_settings
    finally:
        sys.path.remove(str(BENCHMARKS))
    from temporal_xmodal.comparison import default_estimators

    estimators = default_estimators(4)
    parser = argparse.ArgumentParser()
    add_settings_argument(parser)
    args = parser.parse_args(["--set", "Binned+Procrustes.align_on=image",
                              "--set", "Diachronic.lr=3e-3", "--set", "Diachronic.window=0.5Y"])
    assert parse_settings(parser, args.settings, estimators) == {
        "Binned+Procrustes": {"align_on": "image"},
        "Diachronic": {"lr": 3e-3, "window": "0.5Y"}}
    for bad in ("Foo.lr=1", "Diachronic.no_such=1", "Binned+Procrustes.align_on=images",
                "Diachronic=1"):
        with pytest.raises(SystemExit):
            parse_settings(parser, [bad], estimators)


def test_demo_time_quick_run_records_what_time_buys_and_training_length(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_demo_time.py"), "--quick", "--estimators",
         "CCA,TempXNet-Rec", "--world", "n_categories=6", "--output-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "bench_demo_time.json").read_text())
    assert set(data["runs"]) == {"demo", "static"}
    assert data["world_overrides"] == {"n_categories": 6}
    for world in ("demo", "static"):
        (run,) = data["runs"][world]  # one seed
        assert set(run) == {"CCA", "TempXNet-Rec"}
        assert run["CCA"]["still_improving"] is False and "control" not in run["CCA"]
        tempxnet = run["TempXNet-Rec"]
        assert tempxnet["delta_time"] == pytest.approx(tempxnet["map"] - tempxnet["control"])
        assert isinstance(tempxnet["still_improving"], bool)
        assert isinstance(tempxnet["control_still_improving"], bool)
    flagged = any(run["TempXNet-Rec"][key] for run in (r[0] for r in data["runs"].values())
                  for key in ("still_improving", "control_still_improving"))
    assert ("[still improving at the last epoch" in proc.stdout) == flagged


def test_world_overrides_reach_both_worlds_and_bad_ones_stop_the_run():
    """``--world KEY=VALUE`` of bench_demo_time: generator parameters for both worlds (the
    static one keeps ``meaning_shift=0``), checked before any fit."""
    import argparse
    from unittest import mock

    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_demo_time
    finally:
        sys.path.remove(str(BENCHMARKS))
    parser = argparse.ArgumentParser()
    world = bench_demo_time.parse_world(parser, ["profiles=steady", "n_eras=2"])
    assert world == {"profiles": "steady", "n_eras": 2}
    for bad in (["bogus=1"], ["profiles=weird"], ["n_eras"]):
        with pytest.raises(SystemExit):
            bench_demo_time.parse_world(parser, bad)
    with mock.patch.object(bench_demo_time, "synthetic_split",
                           side_effect=RuntimeError("stop")) as split:
        for name, shift in (("demo", None), ("static", 0.0)):
            with pytest.raises(RuntimeError):
                bench_demo_time.run_world(name, 0, 300, 1, ("CCA",), overrides=world)
            kwargs = split.call_args.kwargs
            assert kwargs["profiles"] == "steady" and kwargs["n_eras"] == 2
            assert kwargs.get("meaning_shift") == shift
