"""The main job on a user's own file (``compare --data FILE``) and from Python
(``compare_estimators``): end to end on Parquet and CSV, both splits, labels and pairs; the
one-line refusals; the answer and notes in table.txt; duplicates in --estimators; a damaged
results.json on --resume; Ctrl-C (a real SIGINT) after a fit's "done" line and while the
figure is drawn."""

import json
import os
import re
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from temporal_xmodal.cli import main
from temporal_xmodal.datasets import make_temporal_crossmodal


pd = pytest.importorskip("pandas")

ROOT = Path(__file__).resolve().parents[1]
#: The fastest job that still has a time-aware estimator and its control: three fits.
FAST = ["--estimators", "CCA,Diachronic", "--max-epochs", "1", "--no-plots"]
pytestmark = pytest.mark.filterwarnings(  # a few hundred rows leave empty time bins
    "ignore::temporal_xmodal.time.TimeBinWarning")


def _frame(n=240, seed=0):
    """A user's table: 8 image + 6 text features, a date, a label and an unused column."""
    X, y, info = make_temporal_crossmodal(n, return_info=True, random_state=seed,
                                          n_image_features=8, n_text_features=6,
                                          n_categories=4)
    d = info.n_image_features
    df = pd.DataFrame(X[:, :d], columns=[f"img_{i}" for i in range(d)])
    for j in range(X.shape[1] - 1 - d):
        df[f"txt_{j}"] = X[:, d + j]
    df["date"] = pd.Timestamp("1880-01-01") + pd.to_timedelta(X[:, -1] * 365.25, unit="D")
    df["label"] = [f"class {v}" for v in y]
    df["note"] = "free text"
    return df


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("own")
    df = _frame()
    paths = {"parquet": folder / "items.parquet", "csv": folder / "items.csv"}
    if _has_pyarrow():
        df.to_parquet(paths["parquet"])
    df.to_csv(paths["csv"], index=False)  # the dates become strings, read back as dates
    return paths


def _has_pyarrow():
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def _table_rows(text):
    """The estimator rows of table.txt (the lines under the header's rule)."""
    lines = text.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("-----"))
    rows = []
    for line in lines[rule + 1:]:
        if not line.strip():
            break
        rows.append(line)
    return rows


@pytest.mark.parametrize("fmt, split, label", [("parquet", "random", "label"),
                                               ("csv", "time", None)])
def test_compare_data_end_to_end(files, fmt, split, label, tmp_path, capsys):
    if fmt == "parquet" and not _has_pyarrow():
        pytest.skip("Parquet needs pyarrow")
    out = tmp_path / "out"
    args = ["compare", "--data", str(files[fmt]), "--image", "img_",
            "--text", ",".join(f"txt_{j}" for j in range(6)), "--time", "date",
            "--split", split, *FAST, "--output", str(out)]
    if label:
        args += ["--label", label]
    assert main(args) == 0
    printed = capsys.readouterr().out
    results = json.loads((out / "results.json").read_text())
    meta = results["meta"]
    assert meta["complete"] and meta["n_samples"] == 240 and meta["n_test"] > 50
    assert meta["job"]["data"]["split"] == split and meta["job"]["data"]["source"].endswith(fmt)
    assert meta["protocol"] == ("labels" if label else "undated")
    assert f"columns not used: {'' if label else 'label, '}note" in printed  # nothing silent
    rows = {row["name"]: row for row in results["rows"]}
    assert list(rows) == ["CCA", "Diachronic"]
    table = (out / "table.txt").read_text()
    names = [line.split()[0] for line in _table_rows(table)]
    assert names[:2] == ["CCA", "Diachronic"]
    # the answer on the first lines, in the JSON too
    assert table.startswith("Best on ") and results["answer"][0] == table.splitlines()[0]
    assert "Does time pay on these data" in table and "One seed" in table
    diachronic = rows["Diachronic"]
    assert diachronic["delta_time"] is not None and "control" in diachronic
    if label:  # four classes; the time-window figures beside category mAP
        assert meta["categories"] == [f"class {i}" for i in range(4)]
        assert 0 < rows["CCA"]["map"] <= 1 and 0 < diachronic["tmap50_filter"] <= 1
        assert "beyond the date filter" in table and "bin mAP reads higher" in table
    else:  # pairs: ranked by MRR, against a random ranking
        assert meta["delta_time_score"] == "mrr" and 0 < rows["CCA"]["mrr"] <= 1
        assert meta["references"]["random"] == pytest.approx(
            np.mean(1 / np.arange(1, meta["n_test"] + 1)))
        assert "pair retrieval (I→T MRR" in table
    if split == "time":  # train on the earlier part, test on the later
        assert "trained on times up to" in printed


def test_compare_estimators_returns_the_table_as_a_dataframe(tmp_path):
    from temporal_xmodal.comparison import compare_estimators

    df = _frame(200, seed=1)
    lines = []
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*feature names")
        table = compare_estimators(df.drop(columns="note"), image="img_", text="txt_",
                                   time="date", label="label", estimators=["CCA"],
                                   plots=False, output=tmp_path, log=lines.append)
    assert list(table.index) == ["CCA"] and table.index.name == "estimator"
    assert 0 < table.loc["CCA", "I→T mAP"] <= 1 and np.isnan(table.loc["CCA", "Δ-time"])
    assert table.attrs["answer"][0].startswith("Best on category retrieval")
    assert (tmp_path / "results.json").exists() and (tmp_path / "table.txt").exists()
    # an array [image | text | time] with multilabel y: the same job
    X = np.column_stack([df.filter(like="img_"), df.filter(like="txt_"),
                         np.linspace(1900, 1910, len(df))])
    y = np.zeros((len(df), 3), dtype=int)
    y[np.arange(len(df)), np.arange(len(df)) % 3] = 1
    y[::4, 0] = 1
    multi = compare_estimators(X, y, n_image_features=8, estimators=["CCA"], plots=False,
                               output=tmp_path / "multi", log=lines.append)
    meta = json.loads((tmp_path / "multi" / "results.json").read_text())["meta"]
    assert meta["label_kind"] == "multilabel" and 0 < multi.loc["CCA", "I→T mAP"] <= 1


def test_read_table_reads_npz_blocks_and_feather(tmp_path):
    from temporal_xmodal.comparison.user_files import read_table

    np.savez(tmp_path / "d.npz", image=np.ones((5, 3)), text=np.zeros((5, 2)),
             year=np.arange(5.0))
    frame = read_table(tmp_path / "d.npz")
    assert list(frame.columns) == ["image_0", "image_1", "image_2", "text_0", "text_1", "year"]
    if _has_pyarrow():
        frame.to_feather(tmp_path / "d.feather")
        assert read_table(tmp_path / "d.feather").equals(frame)


def test_an_npz_block_whose_columns_clash_with_an_array_is_refused(tmp_path):
    # issue 57, 3: img (2-D) expands to img_0 ..., and the 1-D array img_0 overwrote one
    from temporal_xmodal.comparison.user_files import read_table
    from temporal_xmodal.comparison.user_data import UserDataError

    for order in ({"img": np.ones((5, 3)), "img_0": np.arange(5.0)},
                  {"img_0": np.arange(5.0), "img": np.ones((5, 3))}):
        np.savez(tmp_path / "c.npz", **order, year=np.arange(5.0))
        with pytest.raises(UserDataError, match="'img_0' is also an array"):
            read_table(tmp_path / "c.npz")


def test_float32_features_stay_float32_without_copies_of_the_data():
    # issue 55, 4: compare --data held 10-12x the float32 data (float64 blocks, then X)
    import tracemalloc

    from temporal_xmodal.comparison.settings import with_constant_time
    from temporal_xmodal.comparison.user_data import load_user_data

    rng = np.random.default_rng(0)
    n, d = 6000, 200
    frame = _frame(n)[["date", "label"]].copy()
    features = rng.standard_normal((n, d), dtype=np.float32)
    frame = frame.join(pd.DataFrame(
        features, columns=[f"img_{j}" for j in range(d // 2)]
        + [f"txt_{j}" for j in range(d // 2)], index=frame.index))
    tracemalloc.start()
    data = load_user_data(frame, image="img_", text="txt_", time="date", label="label")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    size = features.nbytes
    assert data.X_train.dtype == data.X_test.dtype == np.float32
    assert peak < 1.6 * size  # X (1x) plus chunks, never a float64 copy (2x) of a block
    image, text, t = data.blocks_test
    assert np.shares_memory(image, data.X_test) and np.shares_memory(text, data.X_test)
    assert t.dtype == np.float64 and not np.array_equal(t, data.X_test[:, -1].astype(float))
    assert np.allclose(t, data.X_test[:, -1], atol=1e-3)  # rounded to float32 in X only
    assert any("rounded to float32" in note for note in data.notes)
    assert with_constant_time(data.blocks_train).dtype == np.float32
    wide = load_user_data(frame.astype({c: np.float64 for c in frame.columns
                                        if c.startswith("img_")}),
                          image="img_", text="txt_", time="date", label="label")
    assert wide.X_train.dtype == np.float64  # float64 features are not rounded
    np.testing.assert_array_equal(wide.X_train[:, :-1], data.X_train[:, :-1])


def _bad_files(folder):
    df = _frame(150)
    few = df.iloc[:60]
    dates = df.assign(date=df["date"].astype(str))
    dates.loc[7, "date"] = "the spring of 1882"
    paths = {}
    one_class = df.assign(label="news")  # issue 57, 6: a perfect, meaningless table before
    for name, frame in {"items": df, "few": few, "dates": dates,
                        "one_class": one_class}.items():
        paths[name] = folder / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    (folder / "items.xlsx").write_text("not read")
    return paths


@pytest.mark.parametrize("args, message", [
    (["--data", "items", "--image", "img_", "--text", "txt_", "--time", "when"],
     "--time: no column named 'when'"),
    (["--data", "items", "--image", "pix_", "--text", "txt_"],
     "--image 'pix_': no column starts with it"),
    (["--data", "items", "--image", "img_0,img_99", "--text", "txt_"],
     "--image: no column named 'img_99'"),
    (["--data", "items", "--image", "img_", "--text", "txt_0,note"],
     "--text: column(s) note are not numeric"),
    (["--data", "few", "--image", "img_", "--text", "txt_", "--time", "date"],
     "the data hold 60 usable row(s); the comparison needs at least 100"),
    (["--data", "dates", "--image", "img_", "--text", "txt_", "--time", "date"],
     "1 value(s) are neither dates nor numbers (e.g. 'the spring of 1882')"),
    (["--data", "items", "--text", "txt_"], "--data needs --image"),
    (["--data", "items", "--image", "img_", "--text", "txt_", "--dataset", "wiki"],
     "--data and --dataset name two data sets"),
    (["--image", "img_"], "--image read your own file: pass it with --data FILE"),
    (["--data", "items.xlsx", "--image", "img_", "--text", "txt_"], "unknown format '.xlsx'"),
    (["--data", "absent.csv", "--image", "img_", "--text", "txt_"], "no such file"),
    (["--data", "items", "--image", "img_", "--text", "txt_", "--time", "date",
      "--window", "soon"], "--window"),
    (["--data", "one_class", "--image", "img_", "--text", "txt_", "--time", "date",
      "--label", "label"], "--label 'label' holds a single class ('news') for every row"),
])
def test_bad_data_is_a_one_line_refusal(args, message, tmp_path, capsys):
    paths = {**_bad_files(tmp_path), "items.xlsx": tmp_path / "items.xlsx",
             "absent.csv": tmp_path / "absent.csv"}
    args = [str(paths[a]) if a in paths else a for a in args]
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", *args, "--output", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    error = captured.err.strip().splitlines()[-1]
    assert error.startswith("python -m temporal_xmodal compare: error:") and message in error
    assert not (tmp_path / "out" / "results.json").exists()


def test_the_same_estimator_twice_runs_once_and_keys_the_job_once(tmp_path, capsys):
    job = ["compare", "--n-samples", "120", "--no-plots", "--output", str(tmp_path)]
    assert main([*job, "--estimators", "CCA,CCA"]) == 0
    assert "--estimators names CCA more than once: each runs once" in capsys.readouterr().out
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["meta"]["job"]["estimators"] == ["CCA"] and len(results["fits"]) == 1
    assert main([*job, "--estimators", "CCA"]) == 0  # the same run: not refused


@pytest.mark.parametrize("damage, what", [
    (lambda fit: fit.pop("figures"), "no 'figures'"),
    (lambda fit: fit.update(fit_seconds="slow"), "'fit_seconds' is 'slow'"),
    (lambda fit: fit.update(figures=[1, 2]), "'figures' is list"),
    (lambda fit: fit["figures"].update(map="high"), "'figures'['map'] is 'high'"),
])
def test_resume_on_a_damaged_fit_entry_refits_it_and_says_so(damage, what, tmp_path, capsys):
    job = ["compare", "--estimators", "CCA", "--n-samples", "120", "--no-plots", "--output",
           str(tmp_path)]
    assert main(job) == 0
    path = tmp_path / "results.json"
    document = json.loads(path.read_text())
    damage(document["fits"][0])
    path.write_text(json.dumps(document))
    capsys.readouterr()
    assert main([*job, "--resume"]) == 0
    out = capsys.readouterr().out
    assert f"warning: results.json: fit entry #1 (CCA) is damaged ({what}" in out
    assert "it is fitted again" in out and "[1/1] CCA done" in out
    assert json.loads(path.read_text())["meta"]["complete"] is True


def test_table_txt_carries_the_marks_and_footnotes(tmp_path, capsys):
    """The console and the figure marked the fits still improving; table.txt did not."""
    job = ["compare", "--estimators", "CCA", "--n-samples", "120", "--no-plots", "--output",
           str(tmp_path)]
    assert main(job) == 0
    path = tmp_path / "results.json"
    document = json.loads(path.read_text())
    document["fits"][0]["figures"]["still_improving"] = True  # as a fit short of its epochs
    path.write_text(json.dumps(document))
    assert main([*job, "--resume"]) == 0  # nothing refitted: the table is rewritten
    table = (tmp_path / "table.txt").read_text()
    assert [line.split()[:2] for line in _table_rows(table)] == [["CCA", "*"]]
    assert "Still improving at the last epoch: CCA." in table
    assert "bin mAP reads higher than I→T / T→I mAP" in table
    assert table.startswith("Best on category retrieval (mAP, mean of I→T and T→I): CCA")


#: A child running main jobs one after the other, each stopped at its ``point`` ("done":
#: after the first fit's "done" line; "plot": while the figure is drawn), where it says READY
#: for a real SIGINT; after each job, its exit status and an END line on both streams.  One
#: process for both jobs: a second child spent 3 s importing torch and the stack again.
_CHILD = """
import sys, time
from temporal_xmodal import cli
from temporal_xmodal.comparison import plots
point = None
real = cli._flushed_print
def log(message):
    real(message)
    if point == "done" and " done: fit " in message:
        print("READY", flush=True)
        time.sleep(60)
cli._flushed_print = log
real_plot = plots.plot_results
def plot_results(*a, **k):
    if point != "plot":
        return real_plot(*a, **k)
    print("READY", flush=True)
    time.sleep(60)
plots.plot_results = plot_results
jobs, job = [], []
for arg in sys.argv[1:]:  # each job: its point, then its arguments; "--then" between jobs
    if arg == "--then":
        jobs.append(job)
        job = []
    else:
        job.append(arg)
for point, *args in jobs + [job]:
    status = cli.main(args)
    print(f"EXIT {status}", flush=True)
    print("END", flush=True)
    print("END", file=sys.stderr, flush=True)
"""


def _interrupt_child(*jobs):
    """Run ``jobs`` ((point, args) pairs) in one child, a SIGINT at each READY.

    Returns
    -------
    list of (status, out, err)
        Per job: the exit status ``cli.main`` returned (what ``sys.exit`` makes of it in
        ``python -m temporal_xmodal``), its stdout (READY included) and its stderr.
    """
    argv = []
    for point, args in jobs:
        argv += ["--then"] * bool(argv) + [point, *args]
    # one BLAS thread, as the job's torch runs on one (--n-threads 1), beside pytest -n 2's
    # other worker
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, *argv], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done, seen, status = [], [], None
    try:
        for line in proc.stdout:
            if line.strip() == "END":
                done.append((status, "".join(seen)))
                seen = []
                continue
            if line.startswith("EXIT "):
                status = int(line.split()[1])
                continue
            seen.append(line)
            if line.strip() == "READY":
                proc.send_signal(signal.SIGINT)
        err = proc.stderr.read()
        proc.wait(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0 and len(done) == len(jobs), (proc.returncode, err[-2000:])
    errs = err.split("END\n")
    return [(status, out, errs[k]) for k, (status, out) in enumerate(done)]


@pytest.fixture(scope="module")
def interrupted_jobs(tmp_path_factory):
    """The two Ctrl-C jobs of the tests below, in one child: their output folders and
    (status, out, err)."""
    if sys.platform == "win32":
        pytest.skip("SIGINT to a child is POSIX")
    kept, drawn = tmp_path_factory.mktemp("kept"), tmp_path_factory.mktemp("drawn")
    done, plot = _interrupt_child(
        ("done", ["compare", "--estimators", "CCA,SAM", "--max-epochs", "1", "--n-samples",
                  "120", "--no-plots", "--output", str(kept)]),
        ("plot", ["compare", "--estimators", "CCA", "--n-samples", "120", "--output",
                  str(drawn)]))
    return {"done": (kept, *done), "plot": (drawn, *plot)}


def test_ctrl_c_right_after_a_fits_done_line_keeps_that_fit(interrupted_jobs):
    folder, code, out, err = interrupted_jobs["done"]
    assert code == 130, err
    assert "1 of 2 fits are kept" in out and "--resume" in out.splitlines()[-1]
    results = json.loads((folder / "results.json").read_text())
    assert [fit["name"] for fit in results["fits"]] == ["CCA"]
    assert "Traceback" not in err and "nothing written" not in err


def test_ctrl_c_while_the_figure_is_drawn_says_every_fit_is_written(interrupted_jobs):
    folder, code, out, err = interrupted_jobs["plot"]
    assert code == 130, err
    assert "nothing written" not in err and "Traceback" not in err
    assert "all 1 fits are written" in out and "--resume" in out.splitlines()[-1]
    assert json.loads((folder / "results.json").read_text())["meta"]["complete"] is True


def test_the_answer_names_the_runner_up_and_a_tie_is_no_margin_over_itself():
    """Each answer line gives the best estimator and its margin over the next one; with two
    equal figures the runner-up is the other estimator (it named the winner itself)."""
    from temporal_xmodal.comparison.report import answer_lines

    rows = [{"name": "A", "map": 0.5, "tmap50": 0.4, "tmap50_filter": 0.6},
            {"name": "B", "map": 0.5, "tmap50": 0.3, "tmap50_filter": 0.5},
            {"name": "C", "map": 0.2, "tmap50": None, "tmap50_filter": None}]
    category, timed = answer_lines(rows, "labels")[:2]
    assert category == ("Best on category retrieval (mAP, mean of I→T and T→I): A 0.500, "
                        "+0.000 over B.")
    assert timed.endswith(": A 0.600, +0.100 over B.")
    only = answer_lines(rows[2:], "labels")[0]
    assert only.endswith("C 0.200 (the only one measured).")


@pytest.mark.filterwarnings("ignore::temporal_xmodal.time.TimeBinWarning")
def test_the_same_dates_give_the_same_table_in_years_and_hours(tmp_path):
    # issue 57, 1: --time-unit reached the data's axis and the window, but every estimator
    # was built with time_unit="years" (TempXNet-Rec's "1Y" bandwidth became 1 day)
    from temporal_xmodal.comparison import compare_estimators

    frame = _frame(300)
    tables = {}
    for unit in ("years", "hours"):
        tables[unit] = compare_estimators(
            frame, image="img_", text="txt_", time="date", label="label", time_unit=unit,
            estimators=["TempXNet-Rec"], max_epochs=2, plots=False,
            output=tmp_path / unit, log=lambda *a: None)
        meta = json.loads((tmp_path / unit / "results.json").read_text())["meta"]
        assert meta["data"]["time_unit"] == unit
    numbers = ["I→T mAP", "T→I mAP", "MRR", "t-mAP@50", "+ filter", "Δ-time"]
    np.testing.assert_allclose(tables["hours"][numbers].to_numpy(float),
                               tables["years"][numbers].to_numpy(float), atol=2e-3)


def test_a_numeric_window_and_a_header_only_file(tmp_path):
    # issue 57, 10: --window 0.5 (a number in --time-unit, as --help says) was "not a
    # duration"; 14: a header-only CSV was refused as "columns are not numeric"
    from temporal_xmodal.comparison.user_data import UserDataError, load_user_data

    frame = _frame(200)
    data = load_user_data(frame, image="img_", text="txt_", time="date", label="label",
                          window="0.5")
    assert data.eval_window == 0.5
    frame.iloc[:0].to_csv(tmp_path / "empty.csv", index=False)
    with pytest.raises(UserDataError, match="no rows"):
        load_user_data(str(tmp_path / "empty.csv"), image="img_", text="txt_", time="date")


def test_a_zero_margin_is_not_a_yes_and_the_answer_names_what_it_covers():
    # issue 57, 16: "Does time pay ... beyond the date filter? Yes: Binned+Procrustes +0.000"
    from temporal_xmodal.comparison.report import answer_lines

    def rows(gain):
        return [{"name": "CCA", "map": 0.5, "time_role": "none"},
                {"name": "Binned", "map": 0.4, "tmap50": 0.3, "tmap50_filter": 0.4,
                 "delta_beyond_filter": gain, "time_role": "inference"},
                {"name": "Diachronic", "map": 0.45, "tmap50": 0.3, "tmap50_filter": 0.4,
                 "delta_beyond_filter": -0.02, "time_role": "inference"}]

    line = next(l for l in answer_lines(rows(0.0004), "labels") if l.startswith("Does time"))
    assert "Not measurably: the best is Binned +0.000, below 0.005" in line
    assert "Yes" not in line and "among Binned, Diachronic" in line
    line = next(l for l in answer_lines(rows(0.012), "labels") if l.startswith("Does time"))
    assert "Yes: Binned +0.012 (among Binned, Diachronic" in line


def _embedded(n=150, seed=0):
    """A user's table as embedding pipelines write it: an array per cell (float32)."""
    df = _frame(n, seed)
    image = df.filter(like="img_").to_numpy(np.float32)
    text = df.filter(like="txt_").to_numpy(np.float32)
    return pd.DataFrame({"img": list(image), "txt": list(text), "date": df["date"],
                         "label": df["label"]}), image, text


@pytest.mark.parametrize("fmt", ["parquet", "feather", "frame"])
def test_list_columns_of_embeddings_expand_to_named_float32_columns(fmt, tmp_path):
    # issue 56, 1: a list column (an array per cell) was "not numeric (dtype object)"
    from temporal_xmodal.comparison.user_data import load_user_data

    df, image, text = _embedded()
    if fmt != "frame":
        pytest.importorskip("pyarrow")
        path = tmp_path / f"emb.{fmt}"
        getattr(df, f"to_{fmt}")(path)
        source = str(path)
    else:
        source = df
    for spec in [("img", "txt"), ("img_", "txt_"), (["img"], [f"txt_{j}" for j in range(6)])]:
        data = load_user_data(source, image=spec[0], text=spec[1], time="date",
                              label="label", split="time")
        assert data.X_train.dtype == np.float32 and data.n_image_features == 8
        assert data.X_train.shape[1] == 8 + 6 + 1
        rows = np.argsort(df["date"].to_numpy(), kind="stable")[:len(data.X_train)]
        np.testing.assert_array_equal(data.X_train[:, :8], image[np.sort(rows)])
        np.testing.assert_array_equal(data.X_train[:, 8:-1], text[np.sort(rows)])
        assert not any("columns not used" in note for note in data.notes)


def test_a_list_column_works_on_the_command_line_as_its_columns_did(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    from temporal_xmodal import comparison

    df, _, _ = _embedded()
    path = tmp_path / "emb.parquet"
    df.to_parquet(path)
    seen = []
    monkeypatch.setattr(comparison, "run_compare", lambda *a, **kw: seen.append(kw["data"]))
    assert main(["compare", "--data", str(path), "--image", "img", "--text", "txt", "--time",
                 "date", "--label", "label", "--output", str(tmp_path / "out")]) == 0
    assert seen[0].n_image_features == 8 and seen[0].X_train.shape[1] == 15


@pytest.mark.parametrize("damage, message", [
    (lambda img: img.__setitem__(7, np.ones(5, np.float32)),
     "--image: the list column 'img' holds arrays of 8 values (row 0) and of 5 (row 7)"),
    (lambda img: img.__setitem__(4, None), "--image: the list column 'img' has no array in row 4"),
    (lambda img: img.__setitem__(3, [1.0, None] + [0.0] * 6),
     "--image: the list column 'img' has a null value inside the array of row 3 (element 1)"),
    (lambda img: img.__setitem__(slice(None), [["a"] * 8] * len(img)),
     "--image: the list column 'img' holds arrays of string, not numbers"),
])
@pytest.mark.parametrize("fmt", ["parquet", "frame"])
def test_ragged_or_null_list_columns_are_refused_naming_the_row(damage, message, fmt,
                                                                 tmp_path):
    from temporal_xmodal.comparison.user_data import UserDataError, load_user_data

    df, _, _ = _embedded()
    img = list(df["img"])
    damage(img)
    df["img"] = pd.Series(img, dtype=object)
    source = df
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
        source = tmp_path / "bad.parquet"
        df.to_parquet(source)
    with pytest.raises(UserDataError, match=re.escape(message)):
        load_user_data(source, image="img", text="txt", time="date")


def test_a_list_column_whose_columns_clash_with_a_column_is_refused_naming_both(tmp_path):
    pytest.importorskip("pyarrow")
    from temporal_xmodal.comparison.user_data import UserDataError, load_user_data

    df, _, _ = _embedded()
    df["img_3"] = 1.0
    df.to_parquet(tmp_path / "clash.parquet")
    with pytest.raises(UserDataError, match=re.escape(
            "the list column 'img' gives the columns img_0 ... img_7, and 'img_3' is also "
            "a column; rename one of them")):
        load_user_data(tmp_path / "clash.parquet", image="img", text="txt", time="date")


def test_a_multilabel_list_column_is_read_as_labels_not_features(tmp_path):
    pytest.importorskip("pyarrow")
    from temporal_xmodal.comparison.user_data import load_user_data

    df, _, _ = _embedded()
    df["label"] = [[int(i % 3)] + ([3] if i % 4 == 0 else []) for i in range(len(df))]
    df.to_parquet(tmp_path / "multi.parquet")
    data = load_user_data(tmp_path / "multi.parquet", image="img", text="txt", time="date",
                          label="label")
    assert data.extra["label_kind"] == "multilabel" and data.y_train.shape[1] == 4
    again = load_user_data(tmp_path / "multi.parquet", image="img", text="txt", time="date",
                           label="label")
    assert again.key == data.key  # the same job key: --resume finds its fits


def test_a_non_numeric_block_says_how_to_store_the_features(tmp_path):
    from temporal_xmodal.comparison.user_data import UserDataError, load_user_data

    df = _frame(150)
    with pytest.raises(UserDataError, match="store each feature as a numeric column, or as a "
                                            "list column of equal-length arrays"):
        load_user_data(df, image="img_", text=["txt_0", "note"], time="date")
    df, _, _ = _embedded()  # arrays written as text by a CSV
    df.to_csv(tmp_path / "emb.csv", index=False)
    with pytest.raises(UserDataError, match="arrays written as text .* write the file as "
                                            "Parquet or Feather"):
        load_user_data(tmp_path / "emb.csv", image="img", text="txt", time="date")


def test_compare_estimators_prints_the_command_lines_time_estimate(tmp_path, monkeypatch):
    # issue 56, 5: the Python function printed no time estimate; the command line did
    from temporal_xmodal.comparison import driver, estimate
    from temporal_xmodal.comparison.user_data import load_user_data

    class Stop(Exception):
        pass

    def stop(**kwargs):
        raise Stop

    monkeypatch.setattr(driver, "run_compare", stop)
    monkeypatch.setattr(estimate, "busy_cores", lambda: 64.0)  # and the busy machine's line
    df, lines = _frame(200), []
    with pytest.raises(Stop):  # printed before any fit
        driver.compare_estimators(df, image="img_", text="txt_", time="date", label="label",
                                  estimators=["Diachronic", "CCA"], max_epochs=2, n_threads=2,
                                  output=tmp_path, log=lines.append)
    n_train = len(load_user_data(df, image="img_", text="txt_", time="date",
                                 label="label").X_train)
    assert lines[0].startswith("time estimate: about ") and "(3 fits," in lines[0]
    assert lines[:2] == estimate.estimate_lines(n_train / 0.7, 2, ["CCA", "Diachronic"], 14,
                                                n_threads=2)
    assert "this machine is busy" in lines[1]
