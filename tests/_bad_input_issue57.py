"""The bad-input cases of issue 57 ("nothing lost, nothing silent, round 6"), run once each.

Part of the table of ``tests/_bad_input.py`` (:func:`issue57_cases` is its ``"issue 57"``
group; :func:`~_bad_input.classify` sorts their outcomes).  Each case carries the issue's
item as ``family`` ``"57.<number>"`` and :data:`ISSUE57_OWNERS` the part of the library its
fix lives in.  Item 4 (a Ctrl-C at each phase of a ``--seeds`` run) needs real SIGINTs in
the job's own process: ``tests/test_comparison_seeds.py`` sends them; its outcome here is
that of the message the job prints for a Ctrl-C while a second seed loads.

Every import of the library is inside its case, so that ``benchmarks/probe_bad_input.py
--issue57`` runs them against an older tree too (the tallies before and after).
"""

import os
import signal
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from _probe_cases import family_cases, recorded

#: Which part of the library each item's fix lives in.
ISSUE57_OWNERS = {f"57.{k}": v for k, v in {
    "1": "comparison (time unit)", "2": "comparison (names)", "3": "comparison (files)",
    "4": "comparison (seeds, Ctrl-C)", "5": "comparison (seeds, key)",
    "6": "comparison (labels)", "7": "training (checkpoint)", "8": "training (schedule)",
    "9": "time (plausibility)", "10": "comparison (window)", "11": "estimators (Diachronic)",
    "12": "estimators (warm start)", "13": "estimators (caption prior)",
    "14": "comparison (files)", "15": "command line (seeds)", "16": "comparison (answer)",
}.items()}

_SMALL = dict(hidden_dim=16, embedding_dim=8, batch_size=32, random_state=0, device="cpu")


def _frame(n=150):
    """A user's table: ``img_*`` / ``txt_*`` columns, a date and a label."""
    from temporal_xmodal.datasets import make_temporal_crossmodal

    X, y, info = make_temporal_crossmodal(n, return_info=True, random_state=0)
    d = info.n_image_features
    frame = pd.DataFrame(X[:, :d]).add_prefix("img_").join(
        pd.DataFrame(X[:, d:-1]).add_prefix("txt_"))
    frame["date"] = pd.Timestamp("1880-01-01") + pd.to_timedelta(X[:, -1] * 365.25, unit="D")
    frame["label"] = y
    return frame


def _cli(args):
    """``python -m temporal_xmodal`` in this process: (exit status, what it printed)."""
    import contextlib
    import io

    from temporal_xmodal.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(args)
        except SystemExit as stop:
            status = stop.code
    return status, out.getvalue() + err.getvalue()


def issue57_cases(case_class, wrong_class, misleading_class):
    """The cases, as ``case_class`` instances with a ``family`` (``Case``, ``Wrong`` and
    ``Misleading`` of ``tests/_bad_input.py``)."""

    def time_unit_reaches_the_estimators():  # 1
        from temporal_xmodal.comparison import compare_estimators

        tables = {}
        with tempfile.TemporaryDirectory() as folder:
            for unit in ("years", "days"):
                tables[unit] = compare_estimators(
                    _frame(), image="img_", text="txt_", time="date", label="label",
                    time_unit=unit, estimators=["TempXNet-Rec"], max_epochs=1, plots=False,
                    output=Path(folder) / unit, log=lambda *a: None)
        columns = ["I→T mAP", "T→I mAP", "Δ-time"]
        a, b = (tables[u][columns].to_numpy(float) for u in ("years", "days"))
        if not np.allclose(a, b, atol=2e-3, equal_nan=True):
            return wrong_class(f"the same dates give {a.round(4).tolist()} in years and "
                               f"{b.round(4).tolist()} in days")
        return a

    def unknown_estimator_name():  # 2
        from temporal_xmodal.comparison import compare_estimators

        with tempfile.TemporaryDirectory() as folder:
            return compare_estimators(_frame(), image="img_", text="txt_", time="date",
                                      label="label", estimators=["CCA", "TempXNet"],
                                      plots=False, output=Path(folder) / "o",
                                      log=lambda *a: None)

    def npz_block_and_column_clash():  # 3
        from temporal_xmodal.comparison.user_files import read_table

        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "c.npz"
            np.savez(path, img=np.ones((5, 3)), img_0=np.arange(5.0), year=np.arange(5.0))
            return read_table(path)

    def seeds_ctrl_c_while_a_seed_loads():  # 4
        from temporal_xmodal.comparison import driver

        load = driver.load_comparison_data

        def loading(*args, random_state, **kwargs):
            if random_state == 1:
                os.kill(os.getpid(), signal.SIGINT)
            return load(*args, random_state=random_state, **kwargs)

        driver.load_comparison_data = loading
        try:
            with tempfile.TemporaryDirectory() as folder:
                status, said = _cli(["compare", "--n-samples", "120", "--max-epochs", "1",
                                     "--seeds", "2", "--estimators", "CCA", "--no-plots",
                                     "--output", str(Path(folder) / "o")])
        finally:
            driver.load_comparison_data = load
        if "nothing written" in said or "wrote nothing" in said:
            return misleading_class("a Ctrl-C after a finished seed says nothing was written")
        if "1 of 2 seeds finished" not in said or "--resume" not in said:
            return wrong_class(f"the Ctrl-C message does not say what is on disk: {said[-200:]}")
        return status

    def finished_seeds_run_again():  # 5
        with tempfile.TemporaryDirectory() as folder:
            args = ["compare", "--n-samples", "120", "--max-epochs", "1", "--seeds", "2",
                    "--estimators", "CCA", "--no-plots", "--output", str(Path(folder) / "o")]
            first, _ = _cli(args)
            again, said = _cli(args)
        if first != 0 or again != 0:
            return misleading_class(f"the same finished --seeds run is refused: {said[-200:]}")
        return again

    def a_single_class():  # 6
        from temporal_xmodal.comparison import compare_estimators

        with tempfile.TemporaryDirectory() as folder:
            return compare_estimators(_frame().assign(label="news"), image="img_",
                                      text="txt_", time="date", label="label",
                                      estimators=["CCA"], plots=False,
                                      output=Path(folder) / "o", log=lambda *a: None)

    def nan_validation_figure():  # 7
        from temporal_xmodal import SAMEmbedder
        from temporal_xmodal.datasets import make_temporal_crossmodal

        X, y = make_temporal_crossmodal(200, random_state=0)
        Y = np.zeros((len(y), y.max() + 1), dtype=int)
        Y[np.arange(len(y)), y] = 1
        Y[np.arange(len(Y)) % 50 != 0] = 0  # the validation rows have no label
        model = SAMEmbedder(n_image_features=64, max_epochs=3, **_SMALL).fit(X, Y)
        if model.best_epoch_ != 3:
            return wrong_class(f"best_epoch_ = {model.best_epoch_} while the last epoch's "
                               "weights are kept")
        return model.transform(X)

    def schedule_after_ctrl_c():  # 8
        import pickle

        from skorch.callbacks import Callback

        from temporal_xmodal import SAMEmbedder
        from temporal_xmodal.datasets import make_temporal_crossmodal

        class Stop(Callback):
            def on_batch_end(self, net, training=False, **kwargs):
                if training and len(net.history) == 1 and len(net.history[-1]["batches"]) == 2:
                    raise KeyboardInterrupt

        X, y = make_temporal_crossmodal(300, random_state=0)
        model = SAMEmbedder(n_image_features=64, max_epochs=2, lr=1e-2, lr_decay=0.5,
                            validation_fraction=0, warm_start=True, callbacks=[Stop()],
                            **{**_SMALL, "batch_size": 100})
        recorded(lambda: model.fit(X, y))  # stopped after 2 steps
        model = pickle.loads(pickle.dumps(model.set_params(callbacks=None, max_epochs=1)))
        model.fit(X, y)
        first = model.net_.history[-1]["batches"][0]["event_lr"]
        if not np.isclose(first, 1e-2 / (1 + 0.5 * 2)):
            return wrong_class(f"the schedule resumed at rate {first:.5f}, not at step 2's")
        return first

    def dates_over_2000_years():  # 9
        from temporal_xmodal import DiachronicEmbedder

        frame = _frame(120).drop(columns="label")
        days = np.linspace(0, 2500 * 365, len(frame)).astype("timedelta64[D]")
        frame["date"] = (np.datetime64("-0500-01-01") + days).astype("datetime64[s]")
        _, said = recorded(lambda: DiachronicEmbedder(n_image_features="auto", max_epochs=1,
                                                       **_SMALL).fit(frame, np.arange(120) % 4))
        if [m for m in said if "implausible" in m]:
            return misleading_class("genuine dates are called implausible numbers")
        return 1.0

    def numeric_window():  # 10
        from temporal_xmodal.comparison.user_data import load_user_data

        return load_user_data(_frame(), image="img_", text="txt_", time="date", label="label",
                              window="0.5").eval_window

    def idle_window_at_decay_0():  # 11
        from temporal_xmodal import DiachronicEmbedder
        from temporal_xmodal.datasets import make_temporal_crossmodal

        X, y = make_temporal_crossmodal(120, random_state=0)
        model = DiachronicEmbedder(window="1%", n_image_features=64, max_epochs=1, **_SMALL)
        return model.fit(X, y).transform(X)

    def warm_start_progress():  # 12
        import contextlib
        import io

        from temporal_xmodal import SAMEmbedder
        from temporal_xmodal.datasets import make_temporal_crossmodal

        X, y = make_temporal_crossmodal(120, random_state=0)
        model = SAMEmbedder(n_image_features=64, max_epochs=3, verbose=1, warm_start=True,
                            **_SMALL)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
            model.set_params(max_epochs=2).fit(X, y)
        second = printed.getvalue().split("3/3")[-1]
        if "2/2" not in second or "/3" in second:
            return wrong_class("a warm start's progress column keeps the first fit's epochs")
        return 1.0

    def caption_prior_nan():  # 13
        from temporal_xmodal.estimators import CaptionDatePrior

        text = np.random.default_rng(0).random((40, 6))
        text[3, 2] = np.nan
        return CaptionDatePrior(n_neighbors=5).fit(text, np.linspace(1880, 1890, 40))

    def header_only_csv():  # 14
        from temporal_xmodal.comparison.user_data import load_user_data

        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "empty.csv"
            _frame().iloc[:0].to_csv(path, index=False)
            return load_user_data(str(path), image="img_", text="txt_", time="date")

    def huge_seeds():  # 15
        status, said = _cli(["compare", "--seeds", str(10 ** 12), "--no-plots"])
        if "Traceback" in said or "MemoryError" in said:
            return wrong_class("--seeds 10**12 ends in a traceback")
        raise ValueError(said.strip().splitlines()[-1])

    def zero_margin_answer():  # 16
        from temporal_xmodal.comparison.report import answer_lines

        rows = [{"name": "CCA", "map": 0.5, "time_role": "none"},
                {"name": "Binned", "map": 0.4, "tmap50": 0.3, "tmap50_filter": 0.4,
                 "delta_beyond_filter": 0.0004, "time_role": "inference"}]
        line = next(l for l in answer_lines(rows, "labels") if l.startswith("Does time"))
        if "Yes" in line:
            return misleading_class(f"a margin of +0.000 is a yes: {line}")
        return 1.0

    cases = [
        ("1", "time_unit_reaches_the_estimators", time_unit_reaches_the_estimators, "ok", []),
        ("2", "unknown_estimator_name", unknown_estimator_name, "error",
         ["tempxnet-rec", "choose among"]),
        ("3", "npz_block_and_column_clash", npz_block_and_column_clash, "error",
         ["'img_0' is also an array"]),
        ("4", "seeds_ctrl_c_while_a_seed_loads", seeds_ctrl_c_while_a_seed_loads, "ok", []),
        ("5", "finished_seeds_run_again", finished_seeds_run_again, "ok", []),
        ("6", "a_single_class", a_single_class, "error", ["class"]),
        ("7", "nan_validation_figure", nan_validation_figure, "warn", ["nan at every epoch"]),
        ("8", "schedule_after_ctrl_c", schedule_after_ctrl_c, "ok", []),
        ("9", "dates_over_2000_years", dates_over_2000_years, "ok", []),
        ("10", "numeric_window", numeric_window, "ok", []),
        ("11", "idle_window_at_decay_0", idle_window_at_decay_0, "warn",
         ["window='1%' has no effect"]),
        ("12", "warm_start_progress", warm_start_progress, "ok", []),
        ("13", "caption_prior_nan", caption_prior_nan, "error", ["text", "nan"]),
        ("14", "header_only_csv", header_only_csv, "error", ["no rows"]),
        ("15", "huge_seeds", huge_seeds, "error", ["--seeds must be at most"]),
        ("16", "zero_margin_answer", zero_margin_answer, "ok", []),
    ]
    return family_cases(case_class, cases, prefix="r6", issue="57")
