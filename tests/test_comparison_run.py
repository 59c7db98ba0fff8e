"""The main job as a user lives it: Ctrl-C keeps the finished fits and ``--resume`` finishes
the job, another run's results are never overwritten, the command line answers before torch
is imported, and results.json / the figure say what they show."""

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from temporal_xmodal import CCACrossModal
from temporal_xmodal.cli import main
from temporal_xmodal.comparison import CompareInterrupted, compare, load_comparison_data
from temporal_xmodal.comparison import fits as fits_module

ROOT = Path(__file__).resolve().parents[1]
#: CCA, TempXNet-Rec and its constant-time control: three fits, one epoch each.
JOB = ["compare", "--estimators", "CCA,TempXNet-Rec", "--n-samples", "150", "--max-epochs",
       "1", "--no-plots"]


def _counting_fits(monkeypatch, interrupt_at=None):
    """Count the fits of the job; raise Ctrl-C as fit number ``interrupt_at`` starts."""
    real, calls = fits_module._fit_evaluate, []

    def fit_evaluate(estimator, *args, **kwargs):
        calls.append(type(estimator).__name__)
        if len(calls) == interrupt_at:
            raise KeyboardInterrupt
        return real(estimator, *args, **kwargs)

    monkeypatch.setattr(fits_module, "_fit_evaluate", fit_evaluate)
    return calls


@pytest.mark.filterwarnings("ignore::temporal_xmodal.time.TimeBinWarning")  # 150 items
def test_ctrl_c_after_the_second_fit_keeps_both_and_resume_finishes_the_job(
        tmp_path, monkeypatch, capsys):
    calls = _counting_fits(monkeypatch, interrupt_at=3)
    assert main([*JOB, "--output", str(tmp_path)]) == 130
    out = capsys.readouterr().out
    # the partial table is printed and saved, with the line that says how to go on
    assert "interrupted (Ctrl-C): 2 of 3 fits finished" in out
    assert "--resume" in out.splitlines()[-1] and "CCA,TempXNet-Rec" in out.splitlines()[-1]
    table = (tmp_path / "table.txt").read_text()
    lines = table.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("-----"))
    assert lines[0] == "(partial: 2 of 3 fits finished)"  # then the answer, then the table
    assert [line.split()[0] for line in lines[rule + 1:rule + 3]] == ["CCA", "TempXNet-Rec"]
    assert not lines[rule + 3].strip()  # the notes follow, after a blank line
    partial = json.loads((tmp_path / "results.json").read_text())
    assert partial["meta"]["complete"] is False
    assert (partial["meta"]["fits_done"], partial["meta"]["fits_total"]) == (2, 3)
    assert [(f["name"], f["control"]) for f in partial["fits"]] == [("CCA", False),
                                                                   ("TempXNet-Rec", False)]
    assert [row["name"] for row in partial["rows"]] == ["CCA", "TempXNet-Rec"]
    assert partial["rows"][1]["delta_time"] is None  # its control had not run

    calls.clear()
    assert main([*JOB, "--output", str(tmp_path), "--resume"]) == 0
    assert calls == ["TempXNetEmbedder"]  # only the control, the unfinished fit
    assert "resuming: 2 of 3 fits already done, 1 to go" in capsys.readouterr().out
    done = json.loads((tmp_path / "results.json").read_text())
    assert done["meta"]["complete"] is True and len(done["fits"]) == 3
    rows = {row["name"]: row for row in done["rows"]}
    assert rows["CCA"]["map"] == partial["rows"][0]["map"]  # kept, not refitted
    tempxnet = rows["TempXNet-Rec"]
    assert tempxnet["delta_time"] == pytest.approx(tempxnet["map"] - tempxnet["control"]["value"])


class _StopsOnCtrlC(CCACrossModal):
    """A model whose fit records a Ctrl-C as the neural ones do (skorch swallows it): its
    fit_report_ says so, and it is left otherwise unfitted, as BinnedProcrustesEmbedder is
    when no bin was fitted.  It warns nothing: the job reads the report (issue 58)."""

    def fit(self, X, y=None):
        from temporal_xmodal.training import FitReport

        self.fit_report_ = FitReport(interrupted=True)
        return self


def test_a_fit_stopped_by_ctrl_c_is_not_evaluated_and_stops_the_comparison():
    """The main job ended in NotFittedError when Ctrl-C left Binned unfitted."""
    data = load_comparison_data(n_samples=150)
    estimators = {"CCA": CCACrossModal(n_image_features=data.n_image_features),
                  "Stopped": _StopsOnCtrlC(n_image_features=data.n_image_features),
                  "Never": CCACrossModal(n_image_features=data.n_image_features)}
    seen = []
    with pytest.raises(CompareInterrupted) as stop:
        compare(estimators, data.X_train, data.y_train, data.X_test, data.y_test,
                time_window=data.eval_window, log=seen.append,
                on_fit=lambda results, rows, n_fits: seen.append((len(results), n_fits)))
    assert list(stop.value.results) == [("CCA", False)] and stop.value.n_fits == 3
    assert [row["name"] for row in stop.value.rows] == ["CCA"]
    assert (1, 3) in seen and not any("Never" in str(line) for line in seen)
    assert isinstance(stop.value, KeyboardInterrupt)  # uncaught, it stops as Ctrl-C does


@pytest.mark.filterwarnings("ignore::temporal_xmodal.time.TimeBinWarning")  # 150 items
def test_another_runs_results_are_never_overwritten(tmp_path, capsys):
    """`compare --estimators CCA` replaced the main job's results.json and comparison.png."""
    assert main(["compare", "--estimators", "CCA", "--n-samples", "150", "--no-plots",
                 "--output", str(tmp_path)]) == 0
    before = (tmp_path / "results.json").read_text()
    capsys.readouterr()
    for other in (["--estimators", "CCA", "--n-samples", "200"], ["--n-samples", "150"],
                  ["--estimators", "CCA", "--n-samples", "150", "--seed", "1"]):
        with pytest.raises(SystemExit) as exit_info:
            main(["compare", *other, "--no-plots", "--output", str(tmp_path)])
        assert exit_info.value.code == 2
        error = capsys.readouterr().err.strip().splitlines()[-1]
        assert "holds the results of another run" in error
        assert "--output DIR" in error and "--force" in error
        assert (tmp_path / "results.json").read_text() == before
    # the same run again rewrites its own results; --force replaces another run's
    assert main(["compare", "--estimators", "CCA", "--n-samples", "150", "--no-plots",
                 "--output", str(tmp_path)]) == 0
    assert main(["compare", "--estimators", "CCA", "--n-samples", "200", "--no-plots",
                 "--force", "--output", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "results.json").read_text())["meta"]["n_samples"] == 200


def test_help_and_argument_errors_import_no_torch():
    """`--help` took 3 min on a loaded machine: the whole stack was imported first.  The
    command line itself imports nothing heavy before its arguments are read (the package's
    own __init__ is not run here: it is the package's to keep light)."""
    probe = (
        "import sys, types, importlib.util, pathlib\n"
        f"root = pathlib.Path({str(ROOT / 'temporal_xmodal')!r})\n"
        "package = types.ModuleType('temporal_xmodal'); package.__path__ = [str(root)]\n"
        "sys.modules['temporal_xmodal'] = package\n"
        "from temporal_xmodal.cli import main\n"
        "for argv in (['--help'], ['compare', '--help'], ['compare', '--n-samples', '5']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code in (0, 2), exc.code\n"
        "heavy = sorted({'torch', 'numpy', 'sklearn', 'skorch'} & set(sys.modules))\n"
        "print('HEAVY', heavy)\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert "HEAVY []" in proc.stdout
    assert "usage: python -m temporal_xmodal compare" in proc.stdout + proc.stderr


@pytest.mark.filterwarnings("ignore::temporal_xmodal.time.TimeBinWarning")  # 150 items
def test_results_json_records_sizes_and_epochs_and_the_figure_marks_unconverged_fits(
        tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    closed = []
    monkeypatch.setattr(plt, "close", closed.append)
    assert main(["compare", "--estimators", "CCA,SAM", "--n-samples", "150", "--max-epochs",
                 "3", "--output", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    meta = results["meta"]
    assert meta["n_samples"] == meta["n_train"] + meta["n_test"] == 150
    assert meta["max_epochs"] == 3 and meta["epochs"] == {"CCA": None, "SAM": 3}
    assert meta["job"]["estimators"] == ["CCA", "SAM"]
    rows = {row["name"]: row for row in results["rows"]}
    assert rows["SAM"]["epochs"] == 3 and rows["CCA"]["epochs"] is None
    assert closed[0]._suptitle.get_text().endswith("3 epochs")


def test_the_figure_marks_fits_still_improving(tmp_path, monkeypatch):
    """The table named the fits still improving at their last epoch; the figure did not."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from temporal_xmodal.comparison import plot_results

    figures = {"map_i2t": 0.6, "map_t2i": 0.6, "mrr": 0.2, "tmap50": 0.5, "local_map10": 0.4,
               "bounded_map": 0.8, "per_bin": {"center": [0.5, 1.5], "map_i2t": [0.6, 0.7],
                                               "map_t2i": [0.5, 0.6], "map_mean": [0.55, 0.65]}}
    control = {"score": "map", "value": 0.5, "fit_seconds": 1.0}
    rows = [{"name": "CCA", "fit_seconds": 0.2, "delta_time": None, "still_improving": False,
             **figures},
            {"name": "SAM", "fit_seconds": 9.0, "delta_time": None, "still_improving": True,
             **figures},
            {"name": "Diachronic", "fit_seconds": 9.0, "delta_time": 0.1, "delta_tmap50": 0.1,
             "still_improving": False, "control": {**control, "still_improving": True},
             **figures}]
    closed = []
    monkeypatch.setattr(plt, "close", closed.append)
    plot_results(rows, tmp_path / "c.png")
    scores, _, delta, fit = closed[0].axes
    for ax in (scores, delta, fit):
        assert [t.get_text() for t in ax.get_yticklabels()] == ["CCA", "SAM *", "Diachronic †"]
    caption = "\n".join(t.get_text() for t in closed[0].texts)
    assert "* still improving at its last epoch, † its constant-time control too" in caption


@pytest.mark.parametrize("names, hint", [(["CCA", "Nope"], "unknown name(s) Nope;"),
                                         (["TempXNet"], "did you mean 'TempXNet-Rec'"),
                                         ([], "(none given)")])
def test_unknown_estimator_names_are_refused_before_any_work(tmp_path, names, hint):
    """run_compare (and compare_estimators through it) refuses a name the job does not know,
    as the command line does, naming the known names (issue 57, 2): it ran the known ones
    alone, or wrote an empty table."""
    from temporal_xmodal.comparison import run_compare

    with pytest.raises(ValueError, match="choose among CCA, SM, SAM") as error:
        run_compare(estimators=names, output=tmp_path / "out", n_samples=120, plots=False,
                    log=lambda *args: None)
    assert hint in str(error.value) and not (tmp_path / "out").exists()


@pytest.mark.filterwarnings("ignore::temporal_xmodal.time.TimeBinWarning")  # 120 items
@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_table_and_results_get_the_mode_open_gives(umask, tmp_path):
    """issue 56, 2: table.txt and results.json were 0600 (tempfile.mkstemp's), the PNG 0644."""
    import os
    import stat

    from temporal_xmodal.comparison.job import write_atomic

    old = os.umask(umask)
    try:
        with open(tmp_path / "plain.txt", "w"):
            pass
        write_atomic(tmp_path / "written.txt", "text")
        if umask == 0o027:  # the job's own files
            assert main(["compare", "--estimators", "CCA", "--n-samples", "120", "--no-plots",
                         "--output", str(tmp_path / "out")]) == 0
    finally:
        os.umask(old)
    written = [tmp_path / "written.txt"] + ([tmp_path / "out" / "table.txt",
                                             tmp_path / "out" / "results.json"]
                                            if umask == 0o027 else [])
    for path in [tmp_path / "plain.txt", *written]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, path
    assert (tmp_path / "written.txt").read_text() == "text"
    assert not list(tmp_path.glob(".*.tmp"))  # the temporary file was renamed


def _faked_fits(monkeypatch, estimators, seconds):
    """Every fit of compare() on ``estimators`` takes ``seconds[name]`` (a control:
    ``seconds[name, True]``, else its model's), and nothing is fitted or evaluated."""

    def fit_evaluate(estimator, X_train, y_train, X_test, y_test, evaluate, control, name=None):
        name = next(n for n, est in estimators.items() if type(est) is type(estimator))
        return seconds.get((name, control), seconds[name]), {"map": 0.5,
                                                             "still_improving": False}

    monkeypatch.setattr(fits_module, "_fit_evaluate", fit_evaluate)


def test_the_first_progress_line_reads_the_fits_to_go_from_their_estimates(monkeypatch):
    """issue 56, 4: the first line extrapolated CCA's fit to the whole job ("8 to go, about
    35 s of fitting left"; 30 min followed)."""
    import numpy as np

    from temporal_xmodal.comparison import estimator_registry
    from temporal_xmodal.comparison.estimate import PRIOR_SECONDS, fit_seconds
    from temporal_xmodal.comparison.job import seconds_text
    from temporal_xmodal.time import time_role

    registry = estimator_registry(64, 0, 1.0)
    chosen = {name: registry[name].estimator for name in ("CCA", "Diachronic", "SCML")}
    X_train, X_test = np.zeros((21000, 113)), np.zeros((90, 113))
    expected = {name: fit_seconds(name, est, 21000, 112) for name, est in chosen.items()}
    jobs = [(name, control) for name in chosen for control in (False, True)
            if not control or time_role(chosen[name]) != "none"]
    seconds = {"CCA": expected["CCA"], "Diachronic": 2 * expected["Diachronic"],
               "SCML": expected["SCML"], ("Diachronic", True): 5.0}
    _faked_fits(monkeypatch, chosen, seconds)
    lines = []
    compare(chosen, X_train, np.arange(21000) % 3, X_test, np.arange(90) % 3,
            time_window=1.0, controls=(X_train, X_test), log=lines.append)
    done = [line for line in lines if " done: fit " in line]
    # after CCA (as fast as estimated): every fit to go at its own estimate
    left = sum(expected[name] for name, _ in jobs if name != "CCA")
    assert done[0].endswith(f"; {len(jobs) - 1} to go, about {seconds_text(left)} of "
                            "fitting left")
    assert seconds_text(left) != seconds_text(expected["CCA"] * (len(jobs) - 1))
    # after Diachronic took twice its estimate: its control as long, the rest scaled
    ratio = ((expected["CCA"] + seconds["Diachronic"] + PRIOR_SECONDS)
             / (expected["CCA"] + expected["Diachronic"] + PRIOR_SECONDS))
    left = seconds["Diachronic"] + ratio * sum(expected["SCML"] for name, _ in jobs
                                               if name == "SCML")
    assert done[1].endswith(f"about {seconds_text(left)} of fitting left")


class _CannotRank(CCACrossModal):
    """A fit whose validation figure ties at every epoch, as the neural ones report it."""

    def fit(self, X, y=None):
        from temporal_xmodal.training._report import convergence

        from temporal_xmodal.training import FitReport

        super().fit(X, y)
        summary = convergence([{"valid_map": 0.5}] * 3, "valid_map", 0, validating=True,
                              max_epochs=3, interrupted=False, name="TempXNetEmbedder")
        self.fit_report_ = FitReport.from_summary(summary, epochs=3, max_epochs=3,
                                                  interrupted=False)
        return self


@pytest.mark.filterwarnings("ignore::temporal_xmodal.time.TimeBinWarning")  # 150 items
def test_a_fit_that_cannot_choose_its_checkpoint_is_a_note_naming_what_the_job_takes():
    """issue 56, 6: the quick look warned "Raise validation_fraction, or use
    selection_metric='valid_loss'" (options the command line does not have), located at
    __main__.py:5."""
    from temporal_xmodal.comparison.report import note_lines

    data = load_comparison_data(n_samples=150)
    estimators = {"Ties": _CannotRank(n_image_features=data.n_image_features)}
    lines = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = compare(estimators, data.X_train, data.y_train, data.X_test, data.y_test,
                       time_window=data.eval_window, log=lines.append)
    assert not [w for w in caught if "checkpoint" in str(w.message)]
    notes = [line for line in lines if line.startswith("  note: ")]
    assert len(notes) == 1 and "Ties could not choose its checkpoint" in notes[0]
    assert "the same at every epoch (valid_map)" in notes[0]
    assert "--n-samples" in notes[0] and "Raise validation_fraction" not in notes[0]
    assert any(notes[0].strip().endswith(line) for line in note_lines(rows, data))
