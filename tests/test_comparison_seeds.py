"""compare --seeds N: one run per seed, the table of the means, every answer with its spread."""

import json
import math

import numpy as np
import pytest

from temporal_xmodal.cli import main
from temporal_xmodal.comparison.report import answer_lines, mean_rows, spread


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
    # issue 57, 5: the same command again, with or without --resume, is the same run
    args = ["compare", "--n-samples", "200", "--max-epochs", "1", "--seeds", "2",
            "--estimators", "CCA,Diachronic", "--no-plots", "--output", str(out)]
    assert main(args) == 0 and main(args + ["--resume"]) == 0
    assert "another run" not in capsys.readouterr().err


def test_several_seeds_into_a_one_seed_folder_are_refused_in_one_line(tmp_path, capsys):
    """Issue 57, 5: --seeds 2 into a one-seed run's folder ended in a ValueError traceback
    (the command line's folder check and the job's key were two functions)."""
    out = tmp_path / "out"
    args = ["compare", "--n-samples", "200", "--max-epochs", "1", "--estimators", "CCA",
            "--no-plots", "--output", str(out)]
    assert main(args) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(args + ["--seeds", "2"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "Traceback" not in err
    assert "(synthetic, 200 items, seed 0," in err and "this run (synthetic, 200 items, " \
        "seeds 0-1," in err


def test_seeds_below_one_are_refused_before_any_fit(capsys):
    with pytest.raises(SystemExit):
        main(["compare", "--seeds", "0"])
    assert "--seeds must be at least 1" in capsys.readouterr().err


def _ctrl_c():
    """A real SIGINT to this process: Python raises KeyboardInterrupt where it arrives."""
    import os
    import signal
    os.kill(os.getpid(), signal.SIGINT)


@pytest.mark.parametrize("phase", ["seed data", "between seeds", "means", "figure"])
def test_every_ctrl_c_of_a_seeds_run_says_what_is_on_disk_and_how_to_finish(
        phase, tmp_path, capsys, monkeypatch):
    """Issue 57, 4: a Ctrl-C outside a seed's fits said "before any fit finished; nothing
    written" while finished seeds (and even the means) were on disk."""
    from temporal_xmodal.comparison import driver

    out = tmp_path / "out"
    args = ["compare", "--n-samples", "200", "--max-epochs", "1", "--seeds", "2",
            "--estimators", "CCA", "--output", str(out)] + (
        [] if phase == "figure" else ["--no-plots"])
    if phase == "seed data":  # while the second seed loads its data
        load = driver.load_comparison_data

        def loading(*a, random_state, **kw):
            if random_state == 1:
                _ctrl_c()
            return load(*a, random_state=random_state, **kw)
        monkeypatch.setattr(driver, "load_comparison_data", loading)
    elif phase == "between seeds":  # as the second seed begins
        run_one = driver._run_one

        def starting(dataset, folder, seed, **kw):
            if seed == 1:
                _ctrl_c()
            return run_one(dataset, folder, seed, **kw)
        monkeypatch.setattr(driver, "_run_one", starting)
    elif phase == "means":
        monkeypatch.setattr(driver, "mean_rows", lambda runs: _ctrl_c())
    else:
        monkeypatch.setattr(driver, "draw_figure", lambda *a, **kw: _ctrl_c())
    assert main(args) == 130
    printed = capsys.readouterr()
    said = printed.out + printed.err
    assert "nothing written" not in said and "wrote nothing" not in said
    finished = {"seed data": 1, "between seeds": 1, "means": 2, "figure": 2}[phase]
    assert f"{finished} of 2 seeds finished ({out / 'seed_0'}" in said
    means = "written" if phase == "figure" else "not written"
    assert f"the means over the seeds ({out / 'results.json'}): {means}" in said
    assert ("their figure: not drawn" in said) == (phase == "figure")
    command = "python -m temporal_xmodal " + " ".join(args + ["--resume"])
    assert f"to finish the job without refitting the finished fits: {command}" in said
    assert (out / "seed_0" / "results.json").is_file()
    assert (out / "results.json").is_file() == (phase == "figure")
    # and the command it gives finishes the job
    monkeypatch.undo()
    assert main(args + ["--resume"]) == 0
    assert json.loads((out / "results.json").read_text())["meta"]["complete"]
