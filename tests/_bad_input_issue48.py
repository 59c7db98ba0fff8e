"""The bad-input cases of issue 48 ("nothing lost, nothing silent, round 5"), run once each.

Part of the table of ``tests/_bad_input.py`` (:func:`issue48_cases` is its ``"issue 48"``
group; :func:`~_bad_input.classify` sorts their outcomes).  Each case carries the issue's
``family`` as ``"48.<number>"`` (``"48.noticed"`` for its one-line notes), and
:data:`ISSUE48_OWNERS` the part of the library its fix lives in.  Family 7 (``compare``'s Ctrl-C) and 12's ``compare``
items are the command line's, probed by its own tests (tests/test_cli.py,
tests/test_compare_own_data.py), not here.

A case returns :class:`~_bad_input.Wrong` for a wrong answer given without a word (silent)
and :class:`~_bad_input.Misleading` for an answer whose words are wrong (a warning that the
step "could not compile" when only a cache filled up, a "partial" model that goes on
training): both fail the table.  Every import of the library is inside its case, so that
the probe can run these cases against an older tree (``benchmarks/probe_bad_input.py
--issue48``), where a missing name is one case's outcome, not an import error.
"""

import datetime
import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd

from _probe_cases import family_cases, recorded

#: Which part of the library each family's fix lives in, by ``"48.<family>"`` (apart from
#: round 3's numbered families).
ISSUE48_OWNERS = {f"48.{k}": v for k, v in {
    "1": "time (dates)", "2": "training (checkpoint)", "3": "estimators (date prior)",
    "4": "estimators (caption prior)", "5": "training (compiled step)",
    "6": "estimators (date prior)", "8": "search", "9": "estimators (date prior)",
    "10": "estimators (caption prior)", "11": "package", "12": "time / device",
    "noticed": "time (encoding)",
}.items()}

_SMALL = dict(hidden_dim=16, embedding_dim=8, batch_size=32, random_state=0, device="cpu")


def _data(n=120, seed=0):
    """The issue's data: ``make_temporal_crossmodal(120, random_state=0)`` and its width."""
    from temporal_xmodal.datasets import make_temporal_crossmodal

    X, y, info = make_temporal_crossmodal(n, return_info=True, random_state=seed)
    return X, y, info.n_image_features


def _close(got, want, tol=1e-3):
    return np.allclose(np.asarray(got, dtype=float), want, atol=tol)


def issue48_cases(case_class, wrong_class, misleading_class):
    """The cases, as ``case_class`` instances with a ``family`` (``Case``, ``Wrong`` and
    ``Misleading`` of ``tests/_bad_input.py``)."""

    # ------------------------------------------------------------- 1. historical dates
    def dates_in_seconds_1670s():
        from temporal_xmodal.time import to_time_axis

        dates = pd.Series(pd.to_datetime(["1670-06-01", "1675-06-01", "1680-06-01",
                                          "1690-06-01"]).as_unit("s"))
        got = to_time_axis(dates)
        if not _close(got, [1670.414, 1675.414, 1680.415, 1690.414]):
            return wrong_class(f"1670-1690 (datetime64[s]) read as {np.round(got, 2)}")
        return got

    def dates_in_days_1500_to_9999():
        from temporal_xmodal.time import to_time_axis

        got = to_time_axis(np.array(["1500-01-01", "9999-12-31"], dtype="datetime64[D]"))
        if not _close(got, [1500.0, 9999.997]):
            return wrong_class(f"1500 and 9999 (datetime64[D]) read as {np.round(got, 2)}")
        return got

    def python_dates_1500():
        from temporal_xmodal.time import to_time_axis

        got = to_time_axis([datetime.date(1500, 1, 1), datetime.datetime(1501, 1, 1)])
        if not _close(got, [1500.0, 1501.0]):
            return wrong_class(f"datetime.date(1500) read as {np.round(got, 2)}")
        return got

    def dates_beyond_what_datetime64_holds():
        from temporal_xmodal.time import to_time_axis

        return to_time_axis(np.array(["-300000-01-01", "2000-01-01"], dtype="datetime64[D]"))

    def collection_of_the_1550s():
        from temporal_xmodal import CCACrossModal

        X, y, d = _data()
        frame = pd.DataFrame(X[:, :-1])
        frame.columns = [f"f{i}" for i in range(frame.shape[1])]
        seconds = ((X[:, -1] - X[:, -1].min()) * 365.25 * 86400).astype(np.int64)
        frame["date"] = np.datetime64("1550-01-01", "s") + seconds.astype("timedelta64[s]")
        model = CCACrossModal(embedding_dim=4, n_image_features=d).fit(frame, y)
        low, high = model.time_range_
        if not (1549.9 < low < 1550.1 and high < 1600):
            return wrong_class(f"a 1550s collection has time_range_ {low:.1f}-{high:.1f}")
        return model.transform(frame)

    # ------------------------------------------- 2. a checkpoint figure that cannot rank
    def two_validation_rows():
        from temporal_xmodal import DiachronicEmbedder

        X, y, d = _data()
        model = DiachronicEmbedder(n_image_features=d, time_dim=8,
                                   **{**_SMALL, "max_epochs": 4}, validation_fraction=0.01,
                                   selection_metric="valid_map")
        _, messages = recorded(lambda: model.fit(X, y))
        said = any("cannot choose the checkpoint" in m for m in messages)
        if model.best_epoch_ == 1 and not said:
            return wrong_class("2 validation rows, mAP equal at every epoch: best_epoch_ = 1 "
                               "by a tie, no word")
        return model.transform(X)

    def one_class_validation():
        from temporal_xmodal import TempXNetEmbedder

        X, _, d = _data()
        y = (np.arange(120) == 0).astype(int)
        model = TempXNetEmbedder(n_image_features=d, **{**_SMALL, "max_epochs": 4},
                                 validation_fraction=0.2)
        _, messages = recorded(lambda: model.fit(X, y))
        said = any("cannot choose the checkpoint" in m for m in messages)
        if model.best_epoch_ == 1 and not said:
            return wrong_class("every validation row of one class: best_epoch_ = 1 by a "
                               "tie, no word")
        return model.transform(X)

    # ------------------------------------------------ 3. beta chosen on one held-out pair
    def date_prior_one_held_out_pair():
        from temporal_xmodal import CCACrossModal
        from temporal_xmodal.estimators import DatePriorRetrieval

        X, _, d = _data()
        return DatePriorRetrieval(CCACrossModal(embedding_dim=4), n_image_features=d,
                                  validation_fraction=0.01).fit(X, np.arange(120)).score(X)

    def date_prior_tied_weights():
        from temporal_xmodal import CCACrossModal
        from temporal_xmodal.estimators import DatePriorRetrieval

        X, _, d = _data()
        model = DatePriorRetrieval(CCACrossModal(embedding_dim=4), n_image_features=d,
                                   validation_fraction=2 / 120)
        _, messages = recorded(lambda: model.fit(X, np.arange(120)))
        mrrs = {row["mrr"] for row in model.validation_results_}
        if len(mrrs) == 1 and not any("cannot choose" in m for m in messages):
            return wrong_class(f"every candidate scores MRR {mrrs.pop():.3g} on 2 held-out "
                               f"pairs; beta = {model.weight_} won by the tie, no word")
        return model.score(X)

    # ------------------------------------------------- 4 and 10. captions and their times
    def caption_prior_60_captions_120_times():
        from temporal_xmodal.estimators import CaptionDatePrior

        X, _, d = _data()
        return CaptionDatePrior().fit(X[:60, d:-1], X[:, -1]).log_density(X[:5, d:-1],
                                                                          X[:5, -1])

    def caption_prior_119_times():
        from temporal_xmodal.estimators import CaptionDatePrior

        X, _, d = _data()
        return CaptionDatePrior().fit(X[:, d:-1], X[:119, -1]).log_density(X[:5, d:-1],
                                                                           X[:5, -1])

    def caption_prior_times_as_a_column():
        from temporal_xmodal.estimators import CaptionDatePrior

        X, _, d = _data()
        return CaptionDatePrior().fit(X[:, d:-1], X[:, -1:]).log_density(X[:5, d:-1],
                                                                         X[:5, -1])

    # ----------------------------------------------------- 5. compiled fits in a search
    def compiled_steps_of_many_fits():
        import torch

        from temporal_xmodal.training import CompiledStep

        class Tiny(torch.nn.Module):
            def __init__(self, width):
                super().__init__()
                self.layer = torch.nn.Linear(4, width)

            def forward(self, a):
                return self.layer(a)

        def loss(y_pred, y, X):
            return ((y_pred.sum(1) - y) ** 2).mean()

        # three fits' steps of other shapes, the recompile limit lowered to 2 (dynamo's
        # default 8 takes ~5 fits): the old shared function could not add the third graph
        # (tests/test_training_step.py runs a search of SAM fits)
        torch._dynamo.reset()
        with torch._dynamo.config.patch(recompile_limit=2):
            _, messages = recorded(lambda: [
                CompiledStep({"backend": "eager"}, name="fit")(Tiny(w), loss,
                                                               {"a": torch.ones(5, 4)},
                                                               torch.ones(5))
                for w in (2, 3, 4)])
        fell = [m for m in messages if "could not compile" in m]
        if fell:
            return misleading_class(f"{len(fell)} of 3 fits 'could not compile' (the "
                                    f"recompile limit of one shared function): {fell[0][:120]}")
        return np.ones(1)

    def compiled_step_given_a_string():
        from temporal_xmodal.training import CompiledStep

        return CompiledStep("aot_eager")

    # ------------------------------------------------ 6. one Ctrl-C in DatePriorRetrieval
    def date_prior_ctrl_c():
        from skorch.callbacks import Callback

        from temporal_xmodal import SAMEmbedder
        from temporal_xmodal.estimators import DatePriorRetrieval

        fits = []

        class CtrlC(Callback):
            def on_train_begin(self, net, **kwargs):
                fits.append(1)

            def on_batch_end(self, net, training=False, **kwargs):
                if training and len(fits) == 1:
                    raise KeyboardInterrupt

        X, _, d = _data(80)
        sam = SAMEmbedder(n_image_features=d, **_SMALL, max_epochs=2, validation_fraction=0,
                          callbacks=[("ctrl_c", CtrlC())])
        model = DatePriorRetrieval(sam, n_image_features=d, prior_grid=None)
        model.fit(X, np.arange(80))
        if len(fits) > 1:
            return misleading_class(f"one Ctrl-C in the held-out fit, then {len(fits) - 1} "
                                    "more fit(s) started (beta chosen on the partial model)")
        return np.ones(1)

    # -------------------------------------------------------- 8. search_embeddings' device
    def search_device_auto():
        from temporal_xmodal.search import search_embeddings

        Z = np.random.default_rng(0).normal(size=(20, 4))
        return search_embeddings(Z, Z, 3, device="auto")[0]

    def search_device_cuda_without_a_gpu():
        import torch

        from temporal_xmodal.search import search_embeddings

        if torch.cuda.is_available():
            return wrong_class("a GPU is present: the case needs a machine without one")
        Z = np.random.default_rng(0).normal(size=(20, 4))
        return search_embeddings(Z, Z, 3, device="cuda")[0]

    # ------------------------------------------------------- 9. DatePriorRetrieval's edges
    def date_prior_validation_0_001():
        from temporal_xmodal import CCACrossModal
        from temporal_xmodal.estimators import DatePriorRetrieval

        X, _, d = _data()
        return DatePriorRetrieval(CCACrossModal(embedding_dim=4), n_image_features=d,
                                  validation_fraction=0.001).fit(X, np.arange(120)).score(X)

    def date_prior_y_none():
        from temporal_xmodal import CCACrossModal
        from temporal_xmodal.estimators import DatePriorRetrieval

        X, _, d = _data()
        return DatePriorRetrieval(CCACrossModal(embedding_dim=4), n_image_features=d).fit(
            X, None).score(X)

    def date_prior_grid_search_of_the_default_prior():
        from sklearn.model_selection import GridSearchCV, KFold

        from temporal_xmodal import CCACrossModal
        from temporal_xmodal.estimators import DatePriorRetrieval

        X, _, d = _data()
        search = GridSearchCV(DatePriorRetrieval(CCACrossModal(embedding_dim=4),
                                                 n_image_features=d),
                              {"prior__bandwidth": [1.0, 2.0]}, cv=KFold(2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ties of the tiny folds are not this case's
            search.fit(X, np.arange(120))
        return search.cv_results_["mean_test_score"]

    # ---------------------------------------------- 11. subpackages after a bare import
    def subpackages_of_a_bare_import():
        # the module's own hooks, as a bare ``import temporal_xmodal`` meets them (this
        # process has imported the subpackages already, so ``tx.time`` alone proves
        # nothing; tests/test_registry.py runs a fresh interpreter)
        import temporal_xmodal as tx

        names = [tx.__getattr__(name).__name__ for name in ("time", "metrics")]
        if not {"time", "metrics", "estimators"} <= set(tx.__dir__()):
            return wrong_class("dir(temporal_xmodal) lists no subpackage")
        return np.ones(len(names))

    # -------------------------------------------------------- 12. a '+' share, meta device
    def window_plus_5_percent():
        from temporal_xmodal import DiachronicEmbedder

        X, y, d = _data(60)
        return DiachronicEmbedder(n_image_features=d, **_SMALL, max_epochs=1,
                                  window="+5%").fit(X, y).transform(X)

    def device_meta():
        from temporal_xmodal import SAMEmbedder

        X, y, d = _data(60)
        return SAMEmbedder(n_image_features=d, **{**_SMALL, "device": "meta"},
                           max_epochs=1).fit(X, y).transform(X)

    # -------------------------------------------------------------------- noticed
    def onehot_of_8000_bins():
        import time

        from temporal_xmodal.time import TimeEncoding

        t = np.linspace(0.0, 1.0, 8000)
        encoding = TimeEncoding("onehot", n_bins=8000).fit(t)
        start = time.perf_counter()
        out = encoding.transform(t[:10])
        if time.perf_counter() - start > 0.5:
            return wrong_class(f"10 rows of an 8,000-bin one-hot took "
                               f"{time.perf_counter() - start:.1f} s (an identity matrix)")
        return out

    cases = [
        ("1", "dates_in_seconds_1670s", dates_in_seconds_1670s, "ok", []),
        ("1", "dates_in_days_1500_to_9999", dates_in_days_1500_to_9999, "ok", []),
        ("1", "python_dates_1500", python_dates_1500, "ok", []),
        ("1", "dates_beyond_datetime64", dates_beyond_what_datetime64_holds, "error",
         ["dates must lie within"]),
        ("1", "collection_of_the_1550s", collection_of_the_1550s, "ok", []),
        ("2", "two_validation_rows_valid_map", two_validation_rows, "either", []),
        ("2", "every_validation_row_of_one_class", one_class_validation, "either", []),
        ("3", "date_prior_one_held_out_pair", date_prior_one_held_out_pair, "error",
         ["validation_fraction"]),
        ("3", "date_prior_tied_weights", date_prior_tied_weights, "either", []),
        ("4", "caption_prior_60_captions_120_times", caption_prior_60_captions_120_times,
         "error", ["60", "120"]),
        ("5", "compiled_steps_of_many_fits", compiled_steps_of_many_fits, "ok", []),
        ("12", "compiled_step_given_a_string", compiled_step_given_a_string, "error",
         ["{'backend': 'aot_eager'}"]),
        ("6", "date_prior_ctrl_c_in_the_held_out_fit", date_prior_ctrl_c, "warn",
         ["datepriorretrieval: training was interrupted"]),
        ("8", "search_embeddings_device_auto", search_device_auto, "ok", []),
        ("8", "search_embeddings_cuda_without_a_gpu", search_device_cuda_without_a_gpu,
         "error", ["no cuda gpu"]),
        ("9", "date_prior_validation_fraction_0.001", date_prior_validation_0_001, "error",
         ["validation_fraction"]),
        ("9", "date_prior_fit_y_none", date_prior_y_none, "error", ["needs y"]),
        ("9", "date_prior_grid_search_prior__bandwidth",
         date_prior_grid_search_of_the_default_prior, "ok", []),
        ("10", "caption_prior_119_times", caption_prior_119_times, "error", ["119", "120"]),
        ("10", "caption_prior_times_as_a_column", caption_prior_times_as_a_column, "ok", []),
        ("11", "subpackages_of_a_bare_import", subpackages_of_a_bare_import, "ok", []),
        ("12", "window_plus_5_percent", window_plus_5_percent, "ok", []),
        ("12", "device_meta", device_meta, "error", ["meta device"]),
        ("noticed", "onehot_of_8000_bins", onehot_of_8000_bins, "ok", []),
    ]
    return family_cases(case_class, cases, prefix="r5", issue="48")
