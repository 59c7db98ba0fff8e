"""The main job's command line: argument checks before any fit, subsets, parallel fits, Δ-time,
and the README's commands."""

import json
import re
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

from _tiny import tiny
from temporal_xmodal import CCACrossModal, DiachronicEmbedder
from temporal_xmodal.cli import main
from temporal_xmodal.comparison.estimate import (SECONDS_PER_KILO_ITEM_EPOCH, estimate_seconds,
                                                 evaluation_seconds)
from temporal_xmodal.comparison import compare, estimator_registry, load_comparison_data
from temporal_xmodal.comparison.job import MIN_SAMPLES
from temporal_xmodal.comparison.settings import with_constant_time


ROOT = Path(__file__).resolve().parents[1]
NAMES = set(estimator_registry(4))


def test_compare_prints_table_and_writes_outputs(tmp_path, capsys, monkeypatch):
    # ``python -m temporal_xmodal compare ...``: runpy runs the package's __main__ as the
    # interpreter's -m does (sys.argv, a __main__ module, its sys.exit), in this process;
    # a fresh interpreter spent a third of this test importing torch and the stack again
    monkeypatch.setattr(sys, "argv", ["temporal_xmodal", "compare", "--output", str(tmp_path),
                                      "--n-samples", "400", "--max-epochs", "1"])
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_module("temporal_xmodal", run_name="__main__", alter_sys=True)
    assert exit_info.value.code == 0
    stdout = capsys.readouterr().out
    assert "I→T mAP" in stdout and "Δ-time" in stdout
    # the job says how far it is and what fitting is left after each fit but the last
    done = re.findall(r"\[(\d+)/11\] .+ done: fit [\d.]+ s(.*)", stdout)
    assert [int(k) for k, _ in done] == list(range(1, 12))
    assert all(re.fullmatch(rf"; {11 - int(k)} to go, about \d+ (s|min) of fitting left", tail)
               for k, tail in done[:-1]) and done[-1][1] == ""
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["meta"]["delta_time_score"] == "map"
    rows = {row["name"]: row for row in results["rows"]}
    assert set(rows) == NAMES
    for name, row in rows.items():
        line = next(line for line in stdout.splitlines() if line.startswith(name + " "))
        assert 0.2 < row["map_i2t"] <= 1 and len(row["per_bin"]["map_mean"]) >= 8
        assert 0 < row["tmap50"] <= 1 and 0 < row["local_map10"] <= 1
        if row["time_role"] == "none":
            assert row["delta_time"] is None and line.split()[-2:] == ["n/a", "n/a"]
        else:
            assert row["delta_time"] == pytest.approx(row["map"] - row["control"]["value"])
            # Δ-time (category mAP), then the time-window gain beyond the date filter
            assert line.split()[-2] == f"{row['delta_time']:+.3f}"
            assert line.split()[-1] == f"{row['delta_beyond_filter']:+.3f}"
            assert "tmap50" in row and -1 < row["delta_tmap50"] < 1
            assert -1 < row["delta_beyond_filter"] < 1
        # every time-window figure beside the filter, static rows included
        assert 0 < row["tmap50_filter"] <= 1
        assert line.split()[5:7] == [f"{row['tmap50']:.3f}", f"{row['tmap50_filter']:.3f}"]
    assert {row["time_role"] for row in rows.values()} == {"none", "training", "inference"}
    # one epoch is never "still improving at the last epoch" (nothing to compare it with)
    assert not any(row["still_improving"] for row in rows.values())
    assert "Still improving" not in stdout
    assert (tmp_path / "comparison.png").stat().st_size > 10_000


def test_models_still_improving_at_their_last_epoch_are_named(tmp_path, capsys):
    assert main(["compare", "--estimators", "CCA,TempXNet-Rec", "--max-epochs", "4",
                 "--n-samples", "300", "--no-plots", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = {row["name"]: row for row in
            json.loads((tmp_path / "results.json").read_text())["rows"]}
    assert rows["CCA"]["still_improving"] is False and "control" not in rows["CCA"]
    tempxnet = rows["TempXNet-Rec"]
    named = [tempxnet["still_improving"] and "TempXNet-Rec",
             tempxnet["control"]["still_improving"] and "constant-time controls of TempXNet-Rec"]
    named = [part for part in named if part]
    if named:
        assert "Still improving at the last epoch" in out and "; ".join(named) + "." in out
    else:
        assert "Still improving" not in out


@pytest.mark.parametrize("args, message", [
    (["--n-samples", "0"], f"--n-samples must be at least {MIN_SAMPLES}"),
    (["--n-samples", "5"], f"--n-samples must be at least {MIN_SAMPLES}"),
    (["--n-samples", "-5"], "got -5"),
    (["--dataset", "wiki", "--data-dir", "DATA", "--n-samples", "0"], "--n-samples"),
    (["--max-epochs", "0"], "--max-epochs must be at least 1; got 0"),
    (["--max-epochs", "-1"], "--max-epochs must be at least 1; got -1"),
    (["--n-jobs", "0"], "--n-jobs"),
    (["--n-threads", "0"], "--n-threads must be at least 1; got 0"),
    (["--resume", "--force"], "pass one"),
    (["--estimators", "CCA,Foo"], "unknown name(s) Foo; choose among CCA, SM, SAM"),
    (["--estimators", ","], "(none given)"),
    (["--output", "FILE"], "an existing file, not a folder"),
    (["--output", "FILE/sub"], "cannot write there"),
    (["--epochs", "3"], "unrecognized arguments: --epochs 3"),
])
def test_bad_arguments_are_one_line_errors_before_any_fit(args, message, tmp_path, capsys):
    (tmp_path / "FILE").write_text("not a folder")
    (tmp_path / "DATA" / "wiki").mkdir(parents=True)  # an empty folder: never read
    args = [str(tmp_path / a) if a in ("FILE", "FILE/sub", "DATA") else a for a in args]
    if "--output" not in args:
        args += ["--output", str(tmp_path / "out")]
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", *args])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing ran: no data line, no fit
    usage, error = captured.err.strip().splitlines()[0], captured.err.strip().splitlines()[-1]
    # compare's own usage line, not the top-level one
    assert usage.startswith("usage: python -m temporal_xmodal compare [-h]")
    assert error.startswith("python -m temporal_xmodal compare: error:") and message in error
    assert "Traceback" not in captured.err
    assert not (tmp_path / "out" / "results.json").exists()


def test_subset_in_parallel_reports_progress_and_delta_time(tmp_path, capsys):
    status = main(["compare", "--estimators", "CCA,Diachronic", "--n-jobs", "2",
                   "--n-samples", "150", "--max-epochs", "1", "--no-plots",
                   "--output", str(tmp_path)])
    assert status == 0
    out = capsys.readouterr().out
    assert "fitting 3 models on 2 parallel workers" in out  # CCA, Diachronic and its control
    done = re.findall(r"\[\d/3\] (.+) done: fit (\d+\.\d) s", out)
    assert sorted(name for name, _ in done) == [
        "CCA", "Diachronic", "Diachronic (constant-time control)"]
    rows = {row["name"]: row for row in json.loads((tmp_path / "results.json").read_text())["rows"]}
    assert list(rows) == ["CCA", "Diachronic"]
    assert rows["CCA"]["delta_time"] is None and "control" not in rows["CCA"]
    control = rows["Diachronic"]["control"]
    assert control["score"] == "map" and control["fit_seconds"] > 0
    assert rows["Diachronic"]["delta_time"] == pytest.approx(rows["Diachronic"]["map"]
                                                             - control["value"])
    assert not (tmp_path / "comparison.png").exists()


@pytest.mark.filterwarnings("ignore::temporal_xmodal.time.TimeBinWarning")  # 120 items leave empty bins
def test_sequential_progress_lines(tmp_path, capsys):
    assert main(["compare", "--estimators", "CCA", "--n-samples", "120", "--no-plots",
                 "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "[1/1] fitting CCA ..." in out and re.search(r"\[1/1\] CCA done: fit \d+\.\d s", out)
    # the time estimate comes first, the time taken last
    assert out.startswith("time estimate: about ") and "(1 fit," in out.splitlines()[0]
    assert re.search(r"finished in (\d+ min )?\d+ s\n$", out)


def test_the_command_lines_names_are_the_registrys():
    """--help and --estimators read the names without importing the estimators."""
    from temporal_xmodal.cli import ESTIMATOR_NAMES

    assert list(ESTIMATOR_NAMES) == list(estimator_registry(4))


def test_time_estimate_counts_fits_items_and_epochs():
    full, n_full = estimate_seconds()
    quick, n_quick = estimate_seconds(1000, 5)
    subset, n_subset = estimate_seconds(3000, None, ["CCA", "Diachronic"])
    # seven estimators and the controls of the four time-aware ones; CCA, Diachronic and its
    # control
    assert (n_full, n_quick, n_subset) == (11, 11, 3)
    assert quick < full and subset < full
    # the main job: about 150 s measured on 2 free cores (fresh clone, seed 0)
    assert 100 < full < 225 and quick < 45
    # the neural fits scale with items × epochs; CCA's closed form with the items only
    one, _ = estimate_seconds(1000, 1, ["Diachronic"])
    two, _ = estimate_seconds(2000, 1, ["Diachronic"])
    ten, _ = estimate_seconds(1000, 10, ["Diachronic"])
    per_item = SECONDS_PER_KILO_ITEM_EPOCH["Diachronic"][0] / 1000
    evaluation = evaluation_seconds(600, "inference") - evaluation_seconds(300, "inference")
    # two fits each: the model and its control
    assert two - one == pytest.approx(2 * (0.7 * 1000 * per_item + evaluation))
    assert ten - one == pytest.approx(9 * 2 * 0.7 * 1000 * per_item)
    assert estimate_seconds(1000, 1, ["CCA"]) == estimate_seconds(1000, 50, ["CCA"])
    # wider features cost more; the evaluation's cost is linear in n above the query sample
    assert estimate_seconds(3000, None, None, 1024)[0] > full
    assert (evaluation_seconds(40_000) - evaluation_seconds(20_000)
            < 4 * (evaluation_seconds(20_000) - evaluation_seconds(10_000)))


def test_time_estimate_constants_are_the_benchmarks_figures_with_headroom():
    """estimate.py's costs are benchmarks/results/bench_estimate.json's plus 20 % (0–50 %
    allowed, rounding), so that the printed estimate holds what was measured."""
    from temporal_xmodal.comparison import estimate

    doc = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "results"
                      / "bench_estimate.json").read_text())
    fits = doc["fits"]

    def holds(constant, measured, slack):
        assert measured - slack <= constant <= 1.5 * measured + slack, (constant, measured)

    for name, (low, high) in estimate.SECONDS_PER_KILO_ITEM_EPOCH.items():
        holds(low, fits["112"][name]["per_kilo_item_epoch"], 0.005)
        holds(high, fits["1024"][name]["per_kilo_item_epoch"], 0.005)
    for table, key in ((estimate.SECONDS_PER_FIT, "per_fit"),
                       (estimate.SECONDS_PER_EPOCH, "per_epoch")):
        for name in fits["112"]:
            low, high = table.get(name, (0.0, 0.0))
            at_112 = (doc["sam_synthetic"][key] if name == "SAM" else fits["112"][name][key])
            holds(low, at_112, 0.05)
            holds(high, fits["1024"][name][key], 0.05)
    from temporal_xmodal.metrics import QUERY_SAMPLE

    assert estimate.QUERY_SAMPLE == QUERY_SAMPLE
    for kind, name in (("static", "CCA"), ("inference", "Diachronic")):
        for n, seconds in doc["evaluation"][name].items():
            predicted = estimate.evaluation_seconds(int(n), kind)
            assert seconds <= predicted <= 1.5 * seconds + 0.5, (name, n, predicted, seconds)


@pytest.mark.filterwarnings("ignore::temporal_xmodal.time.TimeBinWarning")  # 120 items leave empty bins
def test_estimators_not_applicable_to_a_data_set_are_left_out_with_the_reason(
        tmp_path, capsys, monkeypatch):
    from temporal_xmodal.comparison import driver
    monkeypatch.setattr(driver, "left_out", lambda dataset: {"SAM": "no reason at all"})
    registry = estimator_registry(4)
    monkeypatch.setattr(driver, "estimator_registry",   # two cheap entries suffice
                        lambda *a, **k: {n: registry[n] for n in ("CCA", "SAM")})
    assert main(["compare", "--n-samples", "120", "--no-plots", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert ("SAM is not run on synthetic: no reason at all. (--estimators SAM runs it anyway.)"
            in out)
    results = json.loads((tmp_path / "results.json").read_text())
    assert [row["name"] for row in results["rows"]] == ["CCA"]
    assert results["meta"]["not_run"] == {"SAM": "no reason at all"}
    assert main(["compare", "--estimators", "SAM", "--max-epochs", "1", "--n-samples", "120",
                 "--no-plots", "--output", str(tmp_path / "sam")]) == 0    # named: it runs
    results = json.loads((tmp_path / "sam" / "results.json").read_text())
    assert [row["name"] for row in results["rows"]] == ["SAM"] and results["meta"]["not_run"] == {}


@pytest.mark.filterwarnings("ignore::temporal_xmodal.time.TimeBinWarning")  # 120 items leave empty bins
def test_delta_time_is_zero_when_the_control_sees_the_same_data():
    """Same estimator, same seed, same rows: the control reproduces the fit exactly."""
    data = load_comparison_data(n_samples=150)
    diachronic = tiny(DiachronicEmbedder, n_image_features=data.n_image_features,
                      window=data.eval_window)
    estimators = {"CCA": CCACrossModal(n_image_features=data.n_image_features),
                  "Diachronic": diachronic}
    same = compare(estimators, data.X_train, data.y_train, data.X_test, data.y_test,
                   time_window=data.eval_window, controls=(data.X_train, data.X_test),
                   log=lambda message: None)
    assert same[1]["delta_time"] == 0 and same[1]["control"]["value"] == same[1]["map"]
    assert np.isnan(same[0]["delta_time"])
    constant = (with_constant_time(data.blocks_train), with_constant_time(data.blocks_test))
    assert np.ptp(constant[0][:, -1]) == 0 and np.array_equal(constant[0][:, :-1],
                                                             data.X_train[:, :-1])
    rows = compare({"Diachronic": diachronic}, data.X_train, data.y_train, data.X_test,
                   data.y_test, time_window=data.eval_window, controls=constant,
                   log=lambda message: None)
    assert rows[0]["control"]["value"] != rows[0]["map"]  # the time column mattered


def _readme_commands():
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    return [line for line in block.splitlines() if line and not line.startswith("#")]


def test_readme_opens_with_two_commands_and_ci_runs_the_second():
    main_job, tests = _readme_commands()
    assert main_job.endswith("python -m temporal_xmodal compare")
    assert "pytest" in tests and "torch==2.13.0" in tests
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert tests in ci


#: One fit's figures as the comparison plot reads them.
_PLOTTED_FIGURES = {"map_i2t": 0.61, "map_t2i": 0.62, "mrr": 0.2, "tmap50": 0.5,
                    "local_map10": 0.4, "bounded_map": 0.8,
                    "per_bin": {"center": [0.5, 1.5], "map_i2t": [0.6, 0.7],
                                "map_t2i": [0.5, 0.6], "map_mean": [0.55, 0.65]}}


def test_comparison_plot_is_a_labelled_two_by_two_grid(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib.image
    import matplotlib.pyplot as plt

    from temporal_xmodal.comparison.plots import plot_results

    figures = _PLOTTED_FIGURES
    rows = [{"name": "CCA", "fit_seconds": 0.2, "delta_time": None, **figures},
            {"name": "Diachronic", "fit_seconds": 46.4, "delta_time": 0.05,
             "delta_tmap50": -0.02, "delta_beyond_filter": -0.02, **figures}]
    closed = []
    monkeypatch.setattr(plt, "close", closed.append)
    plot_results(rows, tmp_path / "c.png")
    fig = closed[0]
    height, width = matplotlib.image.imread(tmp_path / "c.png").shape[:2]
    assert width >= 1000 and height >= 800
    scores, per_time, delta, fit = fig.axes
    # every score printed in its cell, the metrics named in full in the caption
    assert {"0.610", "0.800"} <= {t.get_text() for t in scores.texts}
    caption = "\n".join(t.get_text() for t in fig.texts)
    assert "local alignment" in caption and "temporally bounded retrieval" in caption
    # units on the axes, value labels on the bars (CCA's 0.2 s included)
    assert "years" in per_time.get_xlabel() and "seconds" in fit.get_xlabel()
    assert {"0.2 s", "46.4 s"} <= {t.get_text() for t in fit.texts}
    # both differences, each named: category mAP and the time-aware question
    assert {"+0.050 mAP", "-0.020 t-mAP@50 beyond the filter"} <= {t.get_text()
                                                                   for t in delta.texts}
    assert "t-mAP@50" in delta.get_xlabel() and "Δ t-mAP@50 beyond the filter" in caption
    assert any("n/a" in t.get_text() for t in delta.texts)


def test_a_controls_time_window_map_reads_the_real_times():
    """Δ t-mAP compares like with like: the control is embedded from its constant-time rows,
    but its t-mAP@50 relevance (same label within the window) reads the rows' real times,
    as the estimator's does; with its own constant times every same-label item would count
    (that read -0.27 for TempXNet in the main job)."""
    from temporal_xmodal import BinnedProcrustesEmbedder, CCACrossModal
    from temporal_xmodal.base import embed_with_time
    from temporal_xmodal.comparison import compare
    from temporal_xmodal.comparison.settings import synthetic_split, with_constant_time
    from temporal_xmodal.metrics import cross_modal_scores

    X_tr, y_tr, X_te, y_te, n_img, window = synthetic_split(1200, random_state=0,
                                                            profiles="steady")
    binned = BinnedProcrustesEmbedder(CCACrossModal(embedding_dim=8), bins=3, min_bin_size=30,
                                      n_image_features=n_img, random_state=0)
    blocks = lambda X: (X[:, :n_img], X[:, n_img:-1], X[:, -1])  # noqa: E731
    controls = (with_constant_time(blocks(X_tr)), with_constant_time(blocks(X_te)))
    (row,) = compare({"Binned": binned}, X_tr, y_tr, X_te, y_te, time_window=window,
                     controls=controls, log=lambda message: None)
    control = BinnedProcrustesEmbedder(CCACrossModal(embedding_dim=8), bins=3, min_bin_size=30,
                                       n_image_features=n_img, random_state=0)
    control.fit(controls[0], y_tr)
    Z_image, Z_text, _, _ = embed_with_time(control, controls[1])
    expected = cross_modal_scores(Z_image, Z_text, y_te, metrics=("map",), k=50,
                                  time=X_te[:, -1], time_window=window)["map"]
    assert row["delta_tmap50"] == pytest.approx(row["tmap50"] - expected)
    assert row["delta_tmap50"] > 0.05  # one CCA per era answers "same category, close in time"


def test_n_threads_limits_blas_as_well_as_torch(monkeypatch, tmp_path):
    """--n-threads 1 holds for BLAS too: a CCA fit on every BLAS thread of a busy machine
    took 21 s against 0.3 s on one."""
    import torch
    from threadpoolctl import threadpool_info, threadpool_limits

    import temporal_xmodal.comparison as comparison

    seen = {}

    def run_compare(*args, **kwargs):
        seen["torch"] = torch.get_num_threads()
        seen["blas"] = {pool["num_threads"] for pool in threadpool_info()
                        if pool["user_api"] == "blas"}

    monkeypatch.setattr(comparison, "run_compare", run_compare)
    with threadpool_limits(limits=2):  # the caller's BLAS: 2 threads (the suite runs on 1)
        assert main(["compare", "--estimators", "CCA", "--n-samples", "200", "--no-plots",
                     "--output", str(tmp_path / "out")]) == 0
        after = {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}
    assert seen["torch"] == 1 and seen["blas"] == {1}
    assert after == {2}  # and restored


@pytest.mark.parametrize("seeds", ["101", str(10 ** 12)])
def test_seeds_beyond_the_bound_are_refused_by_name(seeds, capsys):
    # issue 57, 15: --seeds 10**12 printed an estimate, then died in a MemoryError
    with pytest.raises(SystemExit):
        main(["compare", "--seeds", seeds, "--no-plots"])
    err = capsys.readouterr().err
    assert "--seeds must be at most 100" in err and "Traceback" not in err


def test_delta_labels_stay_clear_of_the_estimator_names_and_the_bars(tmp_path, monkeypatch):
    """issue 56, 3: a label beside a negative bar's end ran over the y-tick names."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from temporal_xmodal.comparison.plots import plot_results

    figures = _PLOTTED_FIGURES
    rows = [{"name": "CCA", "fit_seconds": 0.2, "delta_time": None, **figures},
            {"name": "Binned+Procrustes", "fit_seconds": 40.0, "delta_time": -0.08,
             "delta_tmap50": -0.1, "delta_beyond_filter": -0.12, **figures},
            {"name": "Diachronic", "fit_seconds": 46.4, "delta_time": 0.05,
             "delta_tmap50": 0.02, "delta_beyond_filter": 0.03, **figures}]
    closed = []
    monkeypatch.setattr(plt, "close", closed.append)
    plot_results(rows, tmp_path / "c.png")
    fig = closed[0]
    delta = fig.axes[2]
    renderer = fig.canvas.get_renderer()
    labels = [t for t in delta.texts if t.get_text()[:1] in "+-"]
    assert len(labels) == 4
    names = [t.get_window_extent(renderer) for t in delta.get_yticklabels()]
    bars = [p.get_window_extent(renderer) for p in delta.patches]
    boxes = [t.get_window_extent(renderer) for t in labels]
    inside = delta.get_window_extent(renderer)
    for text, box in zip(labels, boxes):
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1, text.get_text()
        assert not any(box.overlaps(name) for name in names), text.get_text()
        assert not any(box.overlaps(bar) for bar in bars if bar.width > 0), text.get_text()
    assert sum(a.overlaps(b) for a in boxes for b in boxes) == len(boxes)  # each only itself


def test_a_warning_of_the_job_is_printed_as_a_note_not_at_main(monkeypatch, tmp_path):
    """issue 56, 6: a warning raised in the job pointed at __main__.py:5 (sys.exit(main()))."""
    import os
    import warnings

    from temporal_xmodal import CheckpointWarning, cli, comparison

    here = os.path.join(os.path.dirname(cli.__file__), "__main__.py")
    shown = []

    tie = ("TempXNetEmbedder: the validation figure valid_map was 1 at every epoch, so it "
           "cannot choose the checkpoint (too few validation rows, or all of one class); the "
           "last epoch's weights are kept. Raise validation_fraction, or use "
           "selection_metric='valid_loss'.")

    def run_compare(*args, **kwargs):
        shown.append(warnings.formatwarning("SAMEmbedder: a warning", UserWarning, here, 5))
        shown.append(warnings.formatwarning("yours", UserWarning, "/elsewhere/mine.py", 3))
        shown.append(warnings.formatwarning(tie, CheckpointWarning, "/site-packages/joblib/x.py",
                                            9))

    original = warnings.formatwarning
    monkeypatch.setattr(comparison, "run_compare", run_compare)
    assert cli.main(["compare", "--n-samples", "120", "--output", str(tmp_path)]) == 0
    assert shown[0] == "note (UserWarning): SAMEmbedder: a warning\n"
    assert shown[1].startswith("/elsewhere/mine.py:3: UserWarning: yours")
    # one the job's record missed (catch_warnings is not thread-safe) names what it takes
    assert shown[2].startswith("note (CheckpointWarning): TempXNetEmbedder: the validation figure")
    assert "--n-samples" in shown[2] and "Raise validation_fraction" not in shown[2]
    assert warnings.formatwarning is original


def test_the_time_a_job_took_is_not_rounded_up_as_an_estimate_is():
    """A 121 s job said "finished in 3 min" (the estimate's rounding up)."""
    from temporal_xmodal.comparison.job import elapsed_text, seconds_text

    assert elapsed_text(121.4) == "2 min 1 s" and elapsed_text(43.6) == "44 s"
    assert seconds_text(121.4) == "3 min"  # an estimate stays on the safe side
