"""compare --seeds N: one run per seed, the table of the means, every answer with its spread."""

import json
import math

import numpy as np
import pytest

from temporal_xmodal.cli import main
from temporal_xmodal.comparison import answer_lines
from temporal_xmodal.comparison.seeds import mean_rows, spread


def _row(name, map_, tmap, filt, beyond, control=None, per_bin=None):
    row = {"name": name, "time_role": "inference", "fit_seconds": 1.0, "map": map_,
           "tmap50": tmap, "tmap50_filter": filt, "delta_beyond_filter": beyond,
           "still_improving": False, "per_bin": per_bin or [map_, map_]}
    if control is not None:
        row["control"] = {"score": "map", "value": control, "still_improving": control > 0.3}
    return row


RUNS = [[_row("A", 0.50, 0.40, 0.60, 0.02, control=0.45), _row("B", 0.30, 0.20, 0.55, math.nan)],
        [_row("A", 0.54, 0.42, 0.62, 0.04, control=0.25), _row("B", 0.32, 0.22, 0.50, math.nan)]]


def test_the_mean_rows_average_every_figure_place_by_place():
    a, b = mean_rows(RUNS)
    assert a["name"] == "A" and a["seeds"] == 2
    assert a["map"] == pytest.approx(0.52) and a["per_bin"] == pytest.approx([0.52, 0.52])
    assert a["control"]["value"] == pytest.approx(0.35)
    assert a["control"]["still_improving"]  # marked when any seed's control was
    assert math.isnan(b["delta_beyond_filter"])  # n/a in every run stays n/a
    assert spread(RUNS, "A", lambda r: r["map"]) == pytest.approx(np.std([0.5, 0.54], ddof=1))
    assert spread(RUNS[:1], "A", lambda r: r["map"]) is None  # one run: no spread


def test_the_answer_gives_each_figure_its_spread_and_whether_the_margin_stands_out():
    lines = answer_lines(mean_rows(RUNS), "labels", runs=RUNS)
    category, timed, pays, seeds = lines
    # A wins category mAP by 0.21 against spreads of 0.028 and 0.014: clear
    assert "A 0.520 ± 0.028, +0.210 over B ± 0.014" in category and "clear" in category
    # the time-aware figure: A's stronger reading 0.61 ± 0.014, B's 0.525 ± 0.035
    assert "A 0.610 ± 0.014" in timed and "over B ± 0.035" in timed and "clear" in timed
    assert "Yes: A +0.030 ± 0.014" in pays and "more than twice its spread" in pays
    assert seeds.startswith("Over 2 seeds")
    close = [[_row("A", 0.50, 0.4, 0.6, 0.01), _row("B", 0.49, 0.4, 0.6, 0.0)],
             [_row("A", 0.40, 0.4, 0.6, 0.03), _row("B", 0.45, 0.4, 0.6, 0.0)]]
    assert "within the noise" in answer_lines(mean_rows(close), "labels", runs=close)[0]
    assert "One seed" in answer_lines(RUNS[0], "labels")[-1]


def test_compare_over_two_seeds_writes_each_run_and_the_means(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["compare", "--n-samples", "200", "--max-epochs", "1", "--seeds", "2",
                 "--estimators", "CCA,Diachronic", "--no-plots", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "(6 fits, constant-time controls included, over 2 seeds" in printed  # the estimate
    assert "over 2 seeds (each figure the mean" in printed
    runs = [json.loads((out / f"seed_{s}" / "results.json").read_text())["rows"] for s in (0, 1)]
    top = json.loads((out / "results.json").read_text())
    assert top["meta"]["seeds"] == [0, 1] and top["meta"]["job"]["seeds"] == 2
    for row in top["rows"]:
        mine = [r for run in runs for r in run if r["name"] == row["name"]]
        assert row["map"] == pytest.approx(np.mean([r["map"] for r in mine]))
        assert top["spread"][row["name"]]["map_i2t"] == pytest.approx(
            np.std([r["map_i2t"] for r in mine], ddof=1))
    table = (out / "table.txt").read_text()
    assert "±" in table and "Over 2 seeds" in table
    # the same folder, another number of seeds: another run's results, refused
    with pytest.raises(SystemExit):
        main(["compare", "--n-samples", "200", "--max-epochs", "1", "--seeds", "3",
              "--estimators", "CCA,Diachronic", "--no-plots", "--output", str(out)])
    assert "holds the results of another run" in capsys.readouterr().err


def test_seeds_below_one_are_refused_before_any_fit(capsys):
    with pytest.raises(SystemExit):
        main(["compare", "--seeds", "0"])
    assert "--seeds must be at least 1" in capsys.readouterr().err
