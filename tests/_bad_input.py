"""The bad-input cases of ``tests/test_bad_input.py``: each must get a clear answer.

Deterministic (fixed data and seeds, no random search; ``tests/test_properties.py`` is the
Hypothesis counterpart).  Every case feeds one kind of bad input to one public entry point
(per estimator, or once for the metrics and the bins) and :func:`classify` sorts its outcome:

* ``clear``: a ``ValueError``/``TypeError`` (``NotFittedError`` included) whose message
  names the problem (one of the case's keywords), or, where a warning is due, a warning
  that names it;
* ``sane``: the call worked and returned finite output, on input that is legitimate
  (tiny, constant, far-away times...);
* ``silent``: finite (or non-finite) output with no error or warning where one was due;
* ``obscure``: another exception type, or a message that does not name the problem;
* ``hang``: no answer within :data:`TIME_LIMIT` seconds.

:func:`all_cases` lists them as ``(owner, case)``; ``benchmarks/probe_bad_input.py`` counts
the outcomes into a JSON report.
"""

import signal
import time
import traceback
import warnings

import numpy as np
import pandas as pd
from sklearn.exceptions import NotFittedError
from skorch.callbacks import Callback

from _probe_cases import family_cases, recorded
from _bad_input_issue41 import ISSUE41_OWNERS, issue41_cases
from _bad_input_issue48 import ISSUE48_OWNERS, issue48_cases
from _bad_input_issue57 import ISSUE57_OWNERS, issue57_cases
from _tiny import tiny
from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    SequentialCrossModal,
    TempXNetEmbedder,
)
from temporal_xmodal.evaluation import temporally_bounded_retrieval
from temporal_xmodal.metrics import (
    counterpart_reciprocal_ranks,
    mean_average_precision,
    mean_reciprocal_rank,
    ndcg_at_k,
    recall_at_k,
    retrieval_metrics_at_k,
)
from temporal_xmodal.time import TimeBins

N_IMG, N_TXT, N = 6, 5, 60
TIME_LIMIT = 60  # seconds per case
CLASSES = {cls.__name__: cls for cls in (CCACrossModal, SAMEmbedder, TempXNetEmbedder,
                                         DiachronicEmbedder, BinnedProcrustesEmbedder,
                                         SequentialCrossModal)}


def build(name):
    """The tiny estimator ``name`` of the probe (one epoch, ``N_IMG`` image features, CPU)."""
    layout = dict(n_image_features=N_IMG)
    if name == "CCACrossModal":
        return tiny(CCACrossModal, embedding_dim=3, **layout)
    if name == "BinnedProcrustesEmbedder":
        return tiny(BinnedProcrustesEmbedder, base_estimator=tiny(CCACrossModal, embedding_dim=3),
                    min_bin_size=10, **layout)
    neural = dict(max_epochs=1, device="cpu", **layout)
    if name == "DiachronicEmbedder":
        return tiny(DiachronicEmbedder, window=0.5, **neural)
    if name == "SequentialCrossModal":
        return tiny(SequentialCrossModal, common_dim=8, meta_steps=1, meta_steps_unit="steps",
                    **neural)
    return tiny(CLASSES[name], **neural)


ESTIMATORS = ["CCACrossModal", "SAMEmbedder", "TempXNetEmbedder", "DiachronicEmbedder",
              "BinnedProcrustesEmbedder", "SequentialCrossModal"]
TIME_AWARE = {"DiachronicEmbedder", "BinnedProcrustesEmbedder"}
#: estimators trained by a skorch net with a validation split (``callbacks`` reach it)
NEURAL = {"SAMEmbedder", "TempXNetEmbedder", "DiachronicEmbedder"}
#: estimators that accept y=None (the probe's Binned has a CCA base)
LABEL_FREE = {"CCACrossModal", "BinnedProcrustesEmbedder"}


def data(n=N, seed=0):
    rng = np.random.default_rng(seed)
    X = np.hstack([rng.standard_normal((n, N_IMG + N_TXT)),
                   np.sort(rng.uniform(2000.0, 2003.0, n))[:, None]])
    y = np.arange(n) % 3
    return X, y


def with_block(value, cols, rows=slice(0, 3)):
    X, y = data()
    X[rows, cols] = value
    return X, y


# ------------------------------------------------------------------ the cases
class Case:
    """One probe: ``run(estimator_name)`` does the call; ``due`` says what should happen.

    due: "error" (an error naming the problem), "warn" (a warning or an error naming it),
    "either" (a clear error, or finite output), "ok" (finite output).
    """

    def __init__(self, name, run, due, keywords):
        self.name, self.run, self.due = name, run, due
        self.keywords = [k.lower() for k in keywords]


def fit_case(name, make, due, keywords, **fit_kwargs):
    def run(est_name):
        X, y = make()
        est = build(est_name)
        est.fit(X, y, **fit_kwargs)
        return est.transform(data()[0])
    return Case(name, run, due, keywords)


def fitted(est_name):
    X, y = data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build(est_name).fit(X, y)


def transform_case(name, make_X, due, keywords, method="transform", **kwargs):
    def run(est_name):
        est = fitted(est_name)
        return getattr(est, method)(make_X(), **kwargs)
    return Case(name, run, due, keywords)


NAN_WORDS = ["nan", "infinity", "inf", "missing", "finite"]
F32_WORDS = ["float32", "represent", "too large", "overflow", "finite", "infinity"]
TIME_WORDS = ["time"]
WIDTH_WORDS = ["features", "column"]


def _object_X():
    X, y = data()
    X = X.astype(object)
    X[4, 2] = "abc"
    return X, y


def _string_time():
    X, y = data()
    X = X.astype(object)
    X[:, -1] = "yesterday"
    return X, y


def _frame(kind):
    X, y = data()
    df = pd.DataFrame(X, columns=[f"c{i}" for i in range(X.shape[1])])
    if kind == "string_column":
        df["c3"] = ["word"] * len(df)
    elif kind == "date_not_last":
        df["c3"] = pd.date_range("2000-01-01", periods=len(df), freq="D")
    elif kind == "nat":
        df["t"] = pd.date_range("2000-01-01", periods=len(df), freq="D")
        df = df.drop(columns="c11")
        df.loc[3, "t"] = pd.NaT
    elif kind == "dates_ok":
        df["t"] = pd.date_range("2000-01-01", periods=len(df), freq="W")
        df = df.drop(columns="c11")
    return df, y


def _labels(kind):
    X, y = data()
    if kind == "short":
        return X, y[:-5]
    if kind == "single":
        return X, np.zeros(len(y), int)
    if kind == "nan":
        y = y.astype(float)
        y[2] = np.nan
        return X, y
    if kind == "continuous":
        return X, np.linspace(0.1, 7.3, len(y))
    if kind == "none":
        return X, None
    if kind == "3d":
        return X, y.reshape(-1, 1, 1)
    if kind == "object_none":
        y = y.astype(object)
        y[1] = None
        return X, y
    if kind == "strings":
        return X, np.array(["a", "b", "c"])[y]
    if kind == "multilabel_empty_row":
        Y = np.eye(3, dtype=int)[y]
        Y[0] = 0
        return X, Y
    if kind == "negative":
        return X, y - 5
    raise ValueError(kind)


def fit_cases():
    img, txt, t = slice(0, N_IMG), slice(N_IMG, N_IMG + N_TXT), -1
    c = [
        fit_case("nan_image", lambda: with_block(np.nan, img), "error", NAN_WORDS),
        fit_case("nan_text", lambda: with_block(np.nan, txt), "error", NAN_WORDS),
        fit_case("inf_features", lambda: with_block(np.inf, img), "error", NAN_WORDS),
        fit_case("neg_inf_features", lambda: with_block(-np.inf, txt), "error", NAN_WORDS),
        fit_case("huge_1e39", lambda: with_block(1e39, img), "either", F32_WORDS),
        fit_case("huge_1e300", lambda: with_block(1e300, img), "either", F32_WORDS),
        fit_case("tiny_1e-300", lambda: with_block(1e-300, img, slice(None)), "either",
                 ["constant", "variance", "zero"]),
        fit_case("denormal_1e-40", lambda: with_block(1e-40, txt, slice(None)), "either",
                 ["constant", "variance", "zero", "float32"]),
        fit_case("all_constant", lambda: with_block(1.0, slice(0, N_IMG + N_TXT), slice(None)),
                 "either", ["constant", "variance", "zero"]),
        fit_case("all_zero", lambda: with_block(0.0, slice(0, N_IMG + N_TXT), slice(None)),
                 "either", ["constant", "variance", "zero"]),
        fit_case("one_constant_column", lambda: with_block(3.0, 0, slice(None)), "ok", []),
        fit_case("nan_time", lambda: with_block(np.nan, t), "error", TIME_WORDS),
        fit_case("inf_time", lambda: with_block(np.inf, t), "error", TIME_WORDS),
        fit_case("string_time", _string_time, "error", TIME_WORDS),
        fit_case("constant_time", lambda: with_block(2001.0, t, slice(None)), "either",
                 TIME_WORDS + ["bin", "span"]),
        fit_case("huge_time_1e15", lambda: with_block(1e15, t, slice(None)), "either",
                 TIME_WORDS + ["year"]),
        fit_case("negative_time", lambda: with_block(-5.0, t, slice(0, 30)), "ok", []),
        fit_case("string_in_X", _object_X, "error", ["string", "numeric", "abc", "column"]),
        fit_case("string_column_df", lambda: _frame("string_column"), "error",
                 ["c3", "string", "numeric"]),
        fit_case("date_not_last_df", lambda: _frame("date_not_last"), "error",
                 ["c3", "date", "time", "last"]),
        fit_case("nat_in_dates", lambda: _frame("nat"), "error", ["nat", "missing", "time"]),
        fit_case("dates_ok", lambda: _frame("dates_ok"), "ok", []),
        fit_case("empty_X", lambda: (data()[0][:0], data()[1][:0]), "error",
                 ["0 sample", "empty", "minimum", "sample"]),
        fit_case("one_row", lambda: (data()[0][:1], data()[1][:1]), "error",
                 ["sample", "row", "minimum", "class"]),
        fit_case("X_1d", lambda: (data()[0][:, 0], data()[1]), "error",
                 ["1d", "2d", "1-d", "reshape", "one-dimensional"]),
        fit_case("X_3d", lambda: (data()[0][:, :, None], data()[1]), "error",
                 ["3d", "2d", "dim", "3-d"]),
        fit_case("only_time_column", lambda: (data()[0][:, -1:], data()[1]), "error",
                 ["column", "feature", "n_image_features"]),
        fit_case("complex_X", lambda: (data()[0] + 1j, data()[1]), "error",
                 ["complex"]),
        fit_case("bool_X", lambda: (data()[0] > 0, data()[1]), "either", ["bool"]),
        fit_case("list_input", lambda: (data()[0].tolist(), data()[1].tolist()), "ok", []),
        fit_case("y_short", lambda: _labels("short"), "error",
                 ["inconsistent", "length", "samples", "rows"]),
        fit_case("y_single_class", lambda: _labels("single"), "error-if-labels-needed",
                 ["class"]),
        fit_case("y_nan", lambda: _labels("nan"), "error", ["nan", "label"]),
        fit_case("y_continuous", lambda: _labels("continuous"), "error",
                 ["continuous", "label", "class"]),
        fit_case("y_none", lambda: _labels("none"), "error-if-labels-needed",
                 ["requires y", "label"]),
        fit_case("y_3d", lambda: _labels("3d"), "error", ["dim", "shape", "label"]),
        fit_case("y_object_none", lambda: _labels("object_none"), "error",
                 ["none", "label", "missing"]),
        fit_case("y_strings", lambda: _labels("strings"), "ok", []),
        fit_case("y_multilabel_empty_row", lambda: _labels("multilabel_empty_row"), "either",
                 ["label", "row"]),
        fit_case("y_negative_ints", lambda: _labels("negative"), "ok", []),
    ]
    for value in (0, -1, N_IMG + N_TXT, N_IMG + N_TXT + 1, 2.5, "images", True):
        def run(est_name, value=value):
            X, y = data()
            est = build(est_name)
            if isinstance(est, BinnedProcrustesEmbedder) or "n_image_features" in est.get_params():
                est.set_params(n_image_features=value)
            return est.fit(X, y).transform(X)
        c.append(Case(f"n_image_features={value!r}", run, "error", ["n_image_features"]))
    for param, value in [("time_unit", "fortnights"), ("random_state", "seed")]:
        def run(est_name, param=param, value=value):
            X, y = data()
            return build(est_name).set_params(**{param: value}).fit(X, y).transform(X)
        c.append(Case(f"{param}={value!r}", run, "error", [param]))
    return c


def transform_cases():
    X0 = lambda: data(20, seed=1)[0]  # noqa: E731
    c = [
        transform_case("transform_wrong_width", lambda: X0()[:, 1:], "error", WIDTH_WORDS),
        transform_case("transform_nan", lambda: np.where(np.eye(20, 12) > 0, np.nan, X0()),
                       "error", NAN_WORDS),
        transform_case("transform_1d", lambda: X0()[0], "error",
                       ["1d", "2d", "1-d", "reshape"]),
        transform_case("transform_empty", lambda: X0()[:0], "error",
                       ["0 sample", "empty", "minimum", "sample"]),
        transform_case("transform_strings", lambda: X0().astype(str), "error",
                       ["string", "numeric", "column", "time"]),
        transform_case("transform_huge_1e39", lambda: np.where(np.eye(20, 12) > 0, 1e39, X0()),
                       "either", F32_WORDS),
        transform_case("transform_image_wrong_width", lambda: X0()[:, :N_IMG - 1], "error",
                       WIDTH_WORDS + ["image"], method="transform_image", time=2001.0),
        transform_case("transform_text_time_length", lambda: X0()[:, N_IMG:-1], "error",
                       TIME_WORDS, method="transform_text", time=np.arange(3.0)),
        transform_case("transform_image_time_nan", lambda: X0()[:, :N_IMG], "error",
                       TIME_WORDS, method="transform_image", time=np.nan),
        transform_case("transform_text_time_string", lambda: X0()[:, N_IMG:-1], "error",
                       TIME_WORDS, method="transform_text", time="abc"),
        transform_case("transform_image_1d", lambda: X0()[:, 0], "error",
                       ["1d", "2d", "1-d", "reshape"], method="transform_image", time=2001.0),
    ]

    def far_time(est_name):
        est = fitted(est_name)
        X = X0()
        X[:, -1] = 2050.0
        return est.transform(X)
    c.append(Case("transform_time_far_outside", far_time, "warn-if-time-aware",
                  ["outside", "range"]))

    def unfitted(est_name):
        return build(est_name).transform(X0())
    c.append(Case("transform_unfitted", unfitted, "error", ["not fitted", "fit"]))

    def score_short_y(est_name):
        X, y = data()
        return fitted(est_name).score(X, y[:-3])
    c.append(Case("score_y_short", score_short_y, "error",
                  ["inconsistent", "length", "samples", "rows"]))

    def score_one_row(est_name):
        X, y = data()
        return fitted(est_name).score(X[:1], y[:1])
    c.append(Case("score_one_row", score_one_row, "either", ["query", "row", "sample"]))

    def warm_other_width(est_name):
        est = fitted(est_name)
        X, y = data()
        X = np.hstack([X[:, :3], X])
        if isinstance(est, SequentialCrossModal):
            return est.partial_fit(X[:, :N_IMG + 3], y, modality="image").transform(X)
        if "warm_start" not in est.get_params():
            return est.fit(X, y).transform(X)  # a plain refit on new widths is legitimate
        return est.set_params(warm_start=True).fit(X, y).transform(X)
    c.append(Case("warm_start_other_width", warm_other_width, "error-if-continuing",
                  WIDTH_WORDS + ["n_features", "layout", "warm_start"]))
    return c


# ------------------------------------------------------------ metric cases
def metric_cases():
    rng = np.random.default_rng(0)
    Q, G = rng.standard_normal((10, 4)), rng.standard_normal((12, 4))
    lq, lg = np.arange(10) % 3, np.arange(12) % 3
    cases = [
        ("map_shape_mismatch", lambda: mean_average_precision(Q, G[:, :3], lq, lg), "error",
         ["dimension", "shape", "columns", "features"]),
        ("map_nan_query", lambda: mean_average_precision(np.where(np.eye(10, 4) > 0, np.nan, Q),
                                                         G, lq, lg),
         "error", NAN_WORDS),
        ("map_inf_gallery", lambda: mean_average_precision(Q, np.where(G > 1.5, np.inf, G), lq, lg),
         "error", NAN_WORDS),
        ("map_labels_length", lambda: mean_average_precision(Q, G, lq[:5], lg), "error",
         ["label", "length", "rows", "query"]),
        ("map_k_zero", lambda: mean_average_precision(Q, G, lq, lg, k=0), "error", ["k"]),
        ("map_k_negative", lambda: mean_average_precision(Q, G, lq, lg, k=-2), "error", ["k"]),
        ("map_k_float", lambda: mean_average_precision(Q, G, lq, lg, k=2.5), "error", ["k"]),
        ("map_k_string", lambda: mean_average_precision(Q, G, lq, lg, k="5"), "error", ["k"]),
        ("map_empty_query", lambda: mean_average_precision(Q[:0], G, lq[:0], lg), "error",
         ["empty", "query", "sample"]),
        ("map_1d_query", lambda: mean_average_precision(Q[0], G, lq[:1], lg), "error",
         ["1d", "2d", "1-d", "2-d", "reshape"]),
        ("map_bad_normaliser", lambda: mean_average_precision(Q, G, lq, lg, k=3,
                                                              ap_at_k_normaliser="bogus"),
         "error", ["ap_at_k_normaliser", "bogus"]),
        ("map_no_counterpart_square", lambda: mean_average_precision(Q, G), "error",
         ["counterpart", "label", "same number", "rows"]),
        ("map_strings", lambda: mean_average_precision(Q.astype(str), G, lq, lg), "either",
         ["string", "numeric"]),
        ("recall_k_zero", lambda: recall_at_k(Q, G, lq, lg, k=0), "error", ["k"]),
        ("recall_k_above_gallery", lambda: recall_at_k(Q, G, lq, lg, k=100), "either", ["k"]),
        ("ndcg_bad_gain", lambda: ndcg_at_k(Q, G, lq, lg, gain="cubic"), "error",
         ["gain", "cubic"]),
        ("ndcg_bad_discount", lambda: ndcg_at_k(Q, G, lq, lg, discount="none?"), "error",
         ["discount"]),
        ("mrr_labels_2d_mismatch", lambda: mean_reciprocal_rank(Q, G, np.eye(3)[lq],
                                                                np.eye(4)[lg % 4]),
         "error", ["label", "column", "shape"]),
        ("map_time_window_negative", lambda: mean_average_precision(
            Q, G, lq, lg, query_time=np.arange(10.0), gallery_time=np.arange(12.0),
            time_window=-1.0), "error", ["time_window", "window"]),
        ("map_time_window_without_times", lambda: mean_average_precision(
            Q, G, lq, lg, time_window=1.0), "error", ["time"]),
        ("map_time_nan", lambda: mean_average_precision(
            Q, G, lq, lg, query_time=np.full(10, np.nan), gallery_time=np.arange(12.0),
            time_window=1.0), "error", ["time", "nan"]),
        ("map_bad_similarity", lambda: mean_average_precision(Q, G, lq, lg, similarity="l7"),
         "error", ["similarity", "l7"]),
        ("topk_k_zero", lambda: retrieval_metrics_at_k(Q, G, lq, lg, k=0), "error", ["k"]),
        ("map_unknown_kwarg", lambda: mean_average_precision(Q, G, lq, lg, bogus=1), "error",
         ["bogus", "argument"]),
        ("counterpart_nan_score", lambda: counterpart_reciprocal_ranks(
            np.where(np.eye(10) > 0, np.nan, Q @ Q.T)), "error", ["nan"]),
        ("counterpart_not_square", lambda: counterpart_reciprocal_ranks(Q @ G.T), "error",
         ["square"]),
        ("topk_object_labels_with_none", lambda: retrieval_metrics_at_k(
            Q, G, np.where(lq == 0, None, lq.astype(str)).astype(object), lg.astype(str),
            k=3), "error", ["nan", "missing", "label"]),
    ]
    return [Case(n, (lambda est_name, f=f: f()), due, kw) for n, f, due, kw in cases]


# ------------------------------------------------- round 2 (issue "Nothing silent, round 2")
class _Interrupt(Callback):
    """Ctrl-C in the first training batch (before the fit's first validation)."""

    def on_batch_end(self, net, training=False, **kwargs):
        if training:
            raise KeyboardInterrupt


def _date_inside_frame():
    X, y = data()
    frame = pd.DataFrame(X[:, :-1], columns=[f"img_{i}" for i in range(N_IMG)]
                         + [f"txt_{i}" for i in range(N_TXT)])
    frame.insert(N_IMG, "date", (X[:, -1] * 1000).astype(np.int64))
    return frame, y


def layout_cases():
    """Round 2: the time column missing, listed first, or inside a DataFrame's features; a
    SCML fitted on features outside float32."""
    def fit_transform(make):
        def run(est_name):
            X, y = make()
            return build(est_name).fit(X, y).transform(X)
        return run

    def time_first():
        X, y = data()
        return np.hstack([X[:, -1:], X[:, :-1]]), y

    def auto(est_name):
        frame, y = _date_inside_frame()
        est = build(est_name).set_params(n_image_features="auto")
        return est.fit(frame, y).transform(frame)

    return [
        Case("time_column_missing_numpy", fit_transform(lambda: (data()[0][:, :-1], data()[1])),
             "warn", ["last column", "time"]),
        Case("time_column_first_numpy", fit_transform(time_first), "warn",
             ["first column", "time"]),
        Case("date_column_inside_frame_auto", auto, "error", ["'date'", "last"]),
    ]


def interrupt_case():
    """Ctrl-C during the first epoch, with a validation split, then a warm-start refit."""
    def run(est_name):
        est = build(est_name)
        if est_name not in NEURAL:
            return est.fit(*data()).transform(data()[0])
        est.set_params(validation_fraction=0.2, callbacks=[_Interrupt()])
        est.fit(*data())
        Z = est.transform(data()[0])
        est.set_params(callbacks=None, warm_start=True).fit(*data())
        return Z
    return Case("ctrl_c_first_epoch", run, "warn-if-neural", ["interrupted", "partial"])


def round2_cases():
    """Cases run once (not per estimator): bins, warm start, scorers."""
    X, y = data()

    def edges(bins):
        return lambda: BinnedProcrustesEmbedder(
            CCACrossModal(embedding_dim=3), bins=bins, min_bin_size=10,
            n_image_features=N_IMG).fit(X).transform(X)

    def protocol_edges():
        est = BinnedProcrustesEmbedder(CCACrossModal(embedding_dim=3), bins=2, min_bin_size=10,
                                       n_image_features=N_IMG).fit(X)
        return temporally_bounded_retrieval(est, X, y, bins=[0.0, 1.0])

    def tiny_width():
        times = 2000 + np.random.default_rng(0).uniform(0, 10, 100_000)
        start = time.perf_counter()
        bins = TimeBins(1e-6).fit(times)
        if time.perf_counter() - start > 2 or bins.counts_.sum() != len(times):
            raise RuntimeError("TimeBins(1e-6) on 1e5 times took over 2 s or lost rows")
        return bins.counts_

    def warm_shifted():
        est = DiachronicEmbedder(hidden_dim=8, embedding_dim=4, time_dim=4, max_epochs=1,
                                 batch_size=16, random_state=0, device="cpu",
                                 n_image_features=N_IMG, warm_start=True, use_time=True).fit(X, y)
        later = X.copy()
        later[:, -1] += 100.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the refit's own warning is not the case
            est.fit(later, y)
        return est.transform_image(X[:5, :N_IMG], time=2103.0)

    def scorer_on_classifier():
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        from temporal_xmodal.scoring import SCORERS

        pipe = make_pipeline(StandardScaler(), LogisticRegression()).fit(X[:, :-1], y)
        return SCORERS["map"](pipe, X, y)

    cases = [
        ("bins_edges_outside_data", edges([100.0, 200.0, 300.0]), "error",
         ["outside", "below", "above"]),
        ("bins_edges_partly_outside", edges([2000.5, 2001.0, 2002.0]), "error",
         ["outside", "below", "above"]),
        ("bins_edges_nan", edges([1999.0, np.nan, 2004.0]), "error", ["finite", "nan"]),
        ("bins_edges_unsorted", edges([1999.0, 2002.0, 2001.0, 2004.0]), "error",
         ["order", "increasing"]),
        ("protocol_bins_outside_data", protocol_edges, "error", ["outside", "below", "above"]),
        ("timebins_width_1e-6_on_1e5_times", tiny_width, "ok", []),
        ("diachronic_warm_start_shifted_times", warm_shifted, "warn",
         ["encoding", "extrapolat"]),
        ("retrieval_scorer_on_classifier_pipeline", scorer_on_classifier, "error",
         ["cross-modal embedder", "logisticregression"]),
    ]
    return [Case(n, (lambda est_name, f=f: f()), due, kw) for n, f, due, kw in cases]


# ------------------------------------------------- round 3 (issue 32, "Nothing silent, round 3")
class Wrong:
    """What a case returns when the call answered, but wrongly and without a word (a value
    a person would not read, a warning that describes another model): classified silent."""

    def __init__(self, detail):
        self.detail = detail


class Misleading:
    """What a case returns when the call's words are wrong (issue 48): a warning that the
    step "could not compile" when a cache filled up, a "partial" model that goes on
    training after the Ctrl-C that made it partial.  Classified misleading."""

    def __init__(self, detail):
        self.detail = detail


def _issue_data():
    """The issue's data: ``make_temporal_crossmodal(120, random_state=0)`` and its width."""
    from temporal_xmodal.datasets import make_temporal_crossmodal

    X, y, info = make_temporal_crossmodal(120, return_info=True, random_state=0)
    return X, y, info.n_image_features


def _issue_frame(label_after_date=False):
    """The issue's data as a new user has it: ``img_*`` / ``txt_*`` columns and a date."""
    X, y, d = _issue_data()
    frame = pd.DataFrame(X[:, :-1], columns=[f"img_{i}" for i in range(d)]
                         + [f"txt_{i}" for i in range(X.shape[1] - 1 - d)])
    frame["date"] = pd.Timestamp("1880-01-01") + pd.to_timedelta(
        (X[:, -1] - X[:, -1].min()) * 365.25, unit="D")
    if label_after_date:
        frame["label"] = np.array(["crime", "sport", "art", "war"])[y % 4]
    return frame, y


#: Which fix each family of round 3 waits on (the probe reports pending ones apart).
ROUND3_OWNERS = {1: "time parser", 2: "estimators (use_time)", 3: "estimators (Binned)",
                 4: "metrics", 5: "search ids", 6: "search ids", 7: "estimators (Binned)",
                 8: "layout", 9: "validation", "35.3": "time parser", "35.4": "time axis",
                 "35.5": "layout"}


def round3_cases():
    """Cases run once: the families of issue 32 (numbered as there) and issue 35's items 3-5."""
    X, y = data()
    small = dict(hidden_dim=8, embedding_dim=4, max_epochs=1, batch_size=16, random_state=0,
                 device="cpu", n_image_features=N_IMG)

    def rates_with_a_count():
        from temporal_xmodal.time import to_rate

        got = {text: to_rate(text) for text in ("1/1Y", "1/2Y", "3/2Y", "1/6mo")}
        want = {"1/1Y": 1.0, "1/2Y": 0.5, "3/2Y": 1.5, "1/6mo": 2.0}
        wrong = {t: v for t, v in got.items() if not np.isclose(v, want[t])}
        return Wrong(f"read as {wrong} per year (want {want})") if wrong else list(got.values())

    def decay_1_per_1y():
        model = DiachronicEmbedder(decay="1/1Y", window=0.5, use_time=True, **small).fit(X, y)
        decay = model.net_.criterion_.decay
        return model.transform(X) if np.isclose(decay, 1.0) else Wrong(
            f"decay='1/1Y' reached the loss as {decay:.4g} per year")

    def interrupt_second_fit():
        """Ctrl-C in the first training batch of a second fit within one fit() (the
        control of a two-fit choice), if the default makes one: the model returned must be
        the complete one, and the warning must describe it."""
        state = {"fits": 0}

        class StopInSecondFit(Callback):
            def on_train_begin(self, net, **kwargs):
                state["fits"] += 1

            def on_batch_end(self, net, training=False, **kwargs):
                if training and state["fits"] >= 2:
                    raise KeyboardInterrupt

        model = DiachronicEmbedder(window=0.5, callbacks=[("stop", StopInSecondFit())],
                                   **small)
        _, messages = recorded(lambda: model.fit(X, y))
        if state["fits"] >= 2:
            if getattr(model, "time_kept_", None) is False and getattr(
                    model, "training_interrupted_", False):
                return Wrong("returned the interrupted control and threw away the complete "
                             "fit with time")
            warned = [m for m in messages if "interrupt" in m.lower()]
            interrupted = getattr(model, "training_interrupted_", False)
            if warned and not interrupted:
                return Wrong("the warning describes the discarded fit (" + warned[0][:100]
                             + "), but the model returned is complete "
                             "(training_interrupted_=False)")
            if interrupted and not warned:
                return Wrong("a fit was interrupted without a warning")
        return model.transform(X)  # one fit (no two-fit choice): nothing to interrupt

    def binned_interrupt():
        Xi, yi, d = _issue_data()

        class Stop(Callback):
            def on_batch_end(self, net, training=False, **kwargs):
                if training:
                    raise KeyboardInterrupt

        base = TempXNetEmbedder(hidden_dim=8, embedding_dim=4, max_epochs=1, batch_size=16,
                                random_state=0, device="cpu", callbacks=[("stop", Stop())])
        model = BinnedProcrustesEmbedder(base, bins=2, min_bin_size=30, n_image_features=d)
        model.fit(Xi, yi)  # must warn that it was interrupted (the case's keyword)
        try:
            return model.transform(Xi)  # usable, or ...
        except NotFittedError:
            return np.zeros(1)  # ... left unfitted, as the warning says: sklearn's own error

    def metric_time_length():
        from temporal_xmodal.metrics import cross_modal_scores

        Q = np.random.default_rng(0).standard_normal((20, 4))
        return cross_modal_scores(Q, Q, np.arange(20) % 3, time=np.ones(5), time_window=1.0)

    def map_gallery_time_length():
        rng = np.random.default_rng(0)
        Q, G = rng.standard_normal((10, 4)), rng.standard_normal((12, 4))
        return mean_average_precision(Q, G, np.arange(10) % 3, np.arange(12) % 3,
                                      query_time=np.zeros(10), gallery_time=np.zeros(5),
                                      time_window=1.0)

    def _index():
        from temporal_xmodal.search import CrossModalIndex

        model = CCACrossModal(embedding_dim=3, n_image_features=N_IMG).fit(X, y)
        return CrossModalIndex(model, modality="text").fit(X[:, N_IMG:-1])

    def ids_set():
        result = _index().search(X[[5, 42, 57], :N_IMG], k=2, ids={5, 42, 57},
                                 as_frame=False)
        queries = np.asarray(result.query_ids).tolist()
        return Wrong(f"a set of ids labelled the queries {queries}") if queries != [5, 42, 57] \
            else np.zeros(1)

    def ids_ragged():
        return _index().search(X[:3, :N_IMG], k=2, ids=[[1, 2], [3], [4]], as_frame=False)

    def binned_same_time_warning():
        Xi, yi, d = _issue_data()
        base = TempXNetEmbedder(hidden_dim=8, embedding_dim=4, max_epochs=1, batch_size=16,
                                random_state=0, device="cpu")
        model = BinnedProcrustesEmbedder(base, bins=2, min_bin_size=40, n_image_features=d)
        _, messages = recorded(lambda: model.fit(Xi, yi))
        wrong = [m for m in messages if "same time" in m]
        return Wrong("warned " + wrong[0][:120] + f" on {len(np.unique(Xi[:, -1]))} distinct "
                     "times") if wrong else model.transform(Xi)

    def numpy_half_split():
        Xi, yi, d = _issue_data()  # 64 image + 48 text features: halves are 56 / 56
        return CCACrossModal(embedding_dim=3).fit(Xi, yi).transform(Xi)

    def transform_text_whole_rows():
        frame, yf = _issue_frame()
        model = CCACrossModal(embedding_dim=3, n_image_features="auto").fit(frame, yf)
        return model.transform_text(frame)

    def window_6m():
        return DiachronicEmbedder(window="6m", **small).fit(X, y).transform(X)

    def decay_per_m():
        return DiachronicEmbedder(decay="0.1/m", **small).fit(X, y).transform(X)

    def day_numbers_as_years():
        Xd = X.copy()
        Xd[:, -1] = np.linspace(-32864, -32000, len(Xd))
        return DiachronicEmbedder(window=0.5, use_time=True, **small).fit(Xd, y).transform(Xd)

    def default_window_on_two_years():
        X2 = X.copy()
        X2[:, -1] = np.linspace(1880, 1882, len(X2))
        model = DiachronicEmbedder(use_time=True, **small)
        _, messages = recorded(lambda: model.fit(X2, y))
        if [m for m in messages if "training span" in m]:
            return Wrong("the default window (a share of the span) spans the data")
        if abs(model.net_.criterion_.window - 0.1) > 1e-9:  # 5 % of two years
            return Wrong(f"default window {model.net_.criterion_.window} on two years")
        # at decay=0 (the default) a window cannot act: that is what it must hear (issue 57,
        # 11); with L_intra on, that it spans the data
        idle = DiachronicEmbedder(window="4Y", use_time=True, **small)
        _, messages = recorded(lambda: idle.fit(X2, y))
        if not [m for m in messages if "window='4Y' has no effect" in m]:
            return Wrong("no word that window='4Y' does nothing at decay=0")
        explicit = DiachronicEmbedder(window="4Y", decay="1/Y", use_time=True, **small)
        _, messages = recorded(lambda: explicit.fit(X2, y))
        spans = [m for m in messages if "training span" in m]
        if not spans:
            return Wrong("no warning that window='4Y' spans two years of data")
        return model.transform(X2) if "window='4Y'" in spans[0] and "default" not in \
            spans[0] else Wrong("the warning does not quote the user's window: "
                                + spans[0][:160])

    def label_after_date():
        frame, yf = _issue_frame(label_after_date=True)
        return DiachronicEmbedder(**{**small, "n_image_features": "auto"}).fit(frame, yf)

    cases = [
        (1, "rate_with_a_count_1/2Y", rates_with_a_count, "ok", []),
        (1, "diachronic_decay_1/1Y", decay_1_per_1y, "ok", []),
        (2, "ctrl_c_in_a_second_fit", interrupt_second_fit, "ok", []),
        (3, "binned_tempxnet_ctrl_c", binned_interrupt, "warn", ["interrupt"]),
        (4, "cross_modal_scores_time_length", metric_time_length, "error",
         ["time has 5", "20 rows"]),
        (4, "map_gallery_time_length", map_gallery_time_length, "error",
         ["gallery_time has 5"]),
        (5, "search_ids_set", ids_set, "either", ["ids", "order"]),
        (6, "search_ids_ragged", ids_ragged, "error", ["ids"]),
        (7, "binned_same_time_warning", binned_same_time_warning, "ok", []),
        (8, "numpy_x_default_half_split", numpy_half_split, "warn", ["n_image_features"]),
        (9, "transform_text_whole_rows", transform_text_whole_rows, "error",
         ["text feature columns"]),
        ("35.3", "window_6m_ambiguous", window_6m, "error", ["ambiguous", "6min"]),
        ("35.3", "decay_0.1/m_ambiguous", decay_per_m, "error", ["ambiguous"]),
        ("35.3", "day_numbers_as_years", day_numbers_as_years, "warn", ["implausible"]),
        ("35.4", "default_window_spans_the_data", default_window_on_two_years, "ok", []),
        ("35.5", "label_column_after_the_date", label_after_date, "error",
         ["label column left in x"]),
    ]
    return family_cases(Case, cases, prefix="r3")


# --------------------------------------------------------------- classify
class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang


def classify(case, est_name):
    """Run ``case`` for ``est_name`` (an estimator, or the group of a case run once).

    Returns ``(outcome, detail, due)``: the outcome (``clear``, ``sane``, ``silent``,
    ``misleading``, ``obscure`` or ``hang``), what happened in words, and what was due for
    this estimator.
    """
    due = case.due
    time_aware = est_name in TIME_AWARE
    if due == "warn-if-time-aware":
        due = "warn" if time_aware else "ok"
    if due == "error-if-labels-needed":
        due = "ok" if est_name in LABEL_FREE else "error"
    if due == "warn-if-neural":
        due = "warn" if est_name in NEURAL else "ok"
    if due == "error-if-continuing":
        due = "error" if est_name not in ("CCACrossModal", "BinnedProcrustesEmbedder") else "ok"
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIME_LIMIT)
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            out = case.run(est_name)
    except _Hang:
        return "hang", "no answer", due
    except Exception as exc:  # noqa: BLE001 - the probe classifies every exception
        message = f"{type(exc).__name__}: {exc}"
        named = any(k in str(exc).lower() for k in case.keywords)
        if isinstance(exc, (ValueError, TypeError)) and named and due != "ok":
            return "clear", message[:300], due
        if due == "ok":
            return "obscure", "raised on legitimate input: " + message[:300], due
        return "obscure", message[:300] + " | " + traceback.format_exc(limit=-2)[-300:], due
    finally:
        signal.alarm(0)
    if isinstance(out, Wrong):
        return "silent", out.detail[:300], due
    if isinstance(out, Misleading):
        return "misleading", out.detail[:300], due
    values = out[0] if isinstance(out, tuple) else out
    try:
        arr = np.asarray(values, dtype=float)
        finite = bool(np.isfinite(arr).all())
    except (TypeError, ValueError):
        finite = True  # a non-numeric result (a dict of metrics, ...)
        if isinstance(values, dict):
            finite = all(np.isfinite(v) for v in values.values() if np.isscalar(v))
    named_warning = [str(w.message) for w in record
                     if any(k in str(w.message).lower() for k in case.keywords)]
    if due == "warn" and named_warning:
        return "clear", "warned: " + named_warning[0][:300], due
    if due in ("error", "warn"):
        warns = "; ".join(sorted({f"{w.category.__name__}: {str(w.message)[:80]}"
                                  for w in record}))
        return "silent", f"returned {'finite' if finite else 'NON-FINITE'} output" + (
            f" (warnings not naming it: {warns})" if warns else ""), due
    if not finite:
        return "silent", "returned NON-FINITE output without a word", due
    return "sane", "finite output", due


#: Which fix each family of every round waits on (round 3's, issue 41's and issue 48's).
OWNERS = {**ROUND3_OWNERS, **ISSUE41_OWNERS, **ISSUE48_OWNERS, **ISSUE57_OWNERS}


def all_cases(estimators=ESTIMATORS):
    """Every case as ``(owner, case)``: per estimator of ``estimators``, then the cases run
    once (owner ``"metrics"``, ``"round 2"``, ``"round 3"``, ``"issue 41"``, ``"issue 48"``
    and ``"issue 57"``; the last four carry the ``family`` of issue 32 / 35 / 41 / 48 / 57
    they probe)."""
    per_estimator = fit_cases() + transform_cases() + layout_cases() + [interrupt_case()]
    return ([(name, case) for name in estimators for case in per_estimator]
            + [("metrics", case) for case in metric_cases()]
            + [("round 2", case) for case in round2_cases()]
            + [("round 3", case) for case in round3_cases()]
            + [("issue 41", case) for case in issue41_cases(Case, Wrong)]
            + [("issue 48", case) for case in issue48_cases(Case, Wrong, Misleading)]
            + [("issue 57", case) for case in issue57_cases(Case, Wrong, Misleading)])
