"""Users hand over their data as it is: a DataFrame with named blocks, a date column, a label.

Each bullet of the issue "Dates, units and named columns" is one test here:
correct behaviour, a clear error naming the problem, or a warning with the fix.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from _tiny import tiny
from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    SequentialCrossModal,
    TempXNetEmbedder,
    TimeUnitWarning,
    make_crossmodal_transformer,
    stack_modalities,
)
from temporal_xmodal.datasets import fractional_year
from temporal_xmodal.scoring import make_retrieval_scorer
from temporal_xmodal.search import CrossModalIndex

#: Fits here set Diachronic's window at the default decay=0, where it shapes nothing (L_intra
#: is off); what they test is elsewhere.  tests/test_diachronic.py tests that warning.
pytestmark = pytest.mark.filterwarnings(
    "ignore:DiachronicEmbedder. .* no effect. L_intra, the same-category time term:UserWarning")

N_IMG, N_TXT = 64, 48


def _frame(n=150, seed=0):
    """The new user's DataFrame: img_0..63, txt_0..47, a datetime64 `date`, a `label`."""
    rng = np.random.default_rng(seed)
    label = np.array(["politics", "sport", "art"])[np.arange(n) % 3]
    code = np.arange(n) % 3
    img = rng.standard_normal((n, N_IMG)) + code[:, None]
    txt = rng.standard_normal((n, N_TXT)) - code[:, None]
    date = pd.to_datetime("1890-01-01") + pd.to_timedelta(
        np.sort(rng.integers(0, 2 * 365, n)), unit="D")
    df = pd.DataFrame(np.hstack([img, txt]),
                      columns=[f"img_{i}" for i in range(N_IMG)] + [f"txt_{i}" for i in range(N_TXT)])
    df["date"] = date
    df["label"] = label
    return df


def _numeric(df):
    """The equivalent numeric X with fractional-year times (what users had to build by hand)."""
    return stack_modalities(df.filter(like="img_").to_numpy(), df.filter(like="txt_").to_numpy(),
                            fractional_year(df["date"].to_numpy()))


ESTIMATORS = [
    lambda: tiny(CCACrossModal, embedding_dim=4),
    lambda: tiny(SAMEmbedder),
    lambda: tiny(TempXNetEmbedder),
    lambda: tiny(DiachronicEmbedder, window="90D"),
    lambda: tiny(BinnedProcrustesEmbedder, base_estimator=tiny(CCACrossModal, embedding_dim=3),
                 min_bin_size=20),
    lambda: tiny(SequentialCrossModal),
]


@pytest.mark.parametrize("make", ESTIMATORS)
def test_dataframe_with_dates_fits_with_three_lines_of_glue(make):
    df = _frame()
    X, y = df.drop(columns="label"), df["label"]                 # glue line 1
    model = make().set_params(n_image_features="auto").fit(X, y)  # glue line 2
    reference = make().set_params(n_image_features=N_IMG).fit(_numeric(df), y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(model.transform(X), reference.transform(_numeric(df)),
                                   atol=1e-6)
    assert model.n_image_features_ == N_IMG and model.n_text_features_ == N_TXT


def test_transform_at_a_timestamp_and_datetime64():
    df = _frame()
    X, y = df.drop(columns="label"), df["label"]
    model = tiny(DiachronicEmbedder, window="90D", n_image_features="auto").fit(X, y)
    T = df.filter(like="txt_").to_numpy()[:5]
    a = model.transform_text(T, time=pd.Timestamp("1890-07-02"))
    b = model.transform_text(T, time=fractional_year(np.array(["1890-07-02"],
                                                             dtype="datetime64[D]"))[0])
    c = model.transform_text(T, time=np.array(["1890-07-02"] * 5, dtype="datetime64[D]"))
    np.testing.assert_allclose(a, b, atol=1e-7)
    np.testing.assert_allclose(a, c, atol=1e-7)


def test_window_as_a_duration_is_the_same_model():
    X = _numeric(_frame())
    y = _frame()["label"]
    a = tiny(DiachronicEmbedder, window="180D", n_image_features=N_IMG).fit(X, y)
    b = tiny(DiachronicEmbedder, window=180 / 365.25, n_image_features=N_IMG).fit(X, y)
    np.testing.assert_array_equal(a.transform(X), b.transform(X))


def test_grid_search_over_durations_with_a_time_window_scorer_on_the_raw_frame():
    df = _frame(n=180)
    X, y = df.drop(columns="label"), df["label"]
    pipe = make_pipeline(
        make_crossmodal_transformer("img_", "txt_", "date", image_transformer=StandardScaler()),
        tiny(DiachronicEmbedder, n_image_features="auto"))
    scorer = make_retrieval_scorer("map", k=50, time_window="1Y")
    assert np.isfinite(scorer(pipe.fit(X, y), X, y))
    search = GridSearchCV(pipe, {"diachronicembedder__window": ["90D", "1Y"],
                                 "diachronicembedder__decay": [0.1, "6M"]},
                          scoring=scorer, cv=KFold(2), error_score="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        search.fit(X, y)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert search.best_params_["diachronicembedder__window"] in ("90D", "1Y")


def test_transformer_passes_time_unscaled_and_writes_block_names():
    df = _frame()
    ct = make_crossmodal_transformer("img_", "txt_", "date", image_transformer=StandardScaler(),
                                     text_transformer=StandardScaler())
    out = ct.fit_transform(df)
    assert list(out.columns[:2]) == ["image__img_0", "image__img_1"]
    assert out.columns[-1] == "time__date[years]"
    np.testing.assert_array_equal(out.iloc[:, -1], fractional_year(df["date"].to_numpy()))
    with pytest.raises(ValueError, match="time_unit"):
        tiny(DiachronicEmbedder, time_unit="days", n_image_features="auto").fit(
            out, df["label"])


# ------------------------------------------------------------ loud wrong layouts
def test_date_column_first_is_named():
    df = _frame().drop(columns="label")
    df = df[["date"] + [c for c in df.columns if c != "date"]]
    with pytest.raises(TypeError, match="'date' \\(position 0\\) holds dates"):
        CCACrossModal().fit(df)


def test_column_transformer_putting_time_in_the_middle_is_named():
    from temporal_xmodal._stacking import TimeColumn

    df = _frame()
    ct = ColumnTransformer([("img", "passthrough", [f"img_{i}" for i in range(N_IMG)]),
                            ("t", TimeColumn(), ["date"]),
                            ("txt", "passthrough", [f"txt_{i}" for i in range(N_TXT)])])
    with pytest.raises(ValueError, match=r"'t__date\[years\]' \(position 64\) is a time column"):
        make_pipeline(ct.set_output(transform="pandas"), CCACrossModal()).fit(df, df["label"])
    X_obj = df.drop(columns="label").to_numpy(dtype=object)[:, [*range(64), 112, *range(64, 112)]]
    with pytest.raises(TypeError, match="column 64 holds dates"):
        CCACrossModal().fit(X_obj)


def test_missing_time_column_is_named():
    df = _frame().drop(columns=["label", "date"])
    with pytest.raises(ValueError, match="'txt_47' looks like a 'txt' feature"):
        CCACrossModal().fit(df)


def test_label_left_in_X_is_named():
    df = _frame()
    df = df[[c for c in df.columns if c not in ("date", "label")] + ["label", "date"]]
    with pytest.raises(TypeError, match="'label' .* such as 'politics'.*pass labels as y"):
        CCACrossModal().fit(df)


def test_dates_cast_to_integers_warn():
    df = _frame().drop(columns="label")
    df["date"] = df["date"].astype("int64")
    with pytest.warns(TimeUnitWarning, match="implausible for time_unit='years'"):
        tiny(DiachronicEmbedder, n_image_features="auto").fit(df, _frame()["label"])


def test_named_blocks_are_read_by_default_and_a_contradicting_count_is_an_error():
    X = _frame().drop(columns="label")
    default = CCACrossModal().fit(X)  # None reads img_*/txt_* as "auto" does, not in half
    assert (default.n_image_features_, default.n_text_features_) == (64, 48)
    with pytest.raises(ValueError, match="image block of 64 columns .* text block of 48"):
        CCACrossModal(n_image_features=60).fit(X)
    with pytest.raises(ValueError, match="n_image_features=64, 'auto' or None"):
        CCACrossModal(n_image_features=60).fit(X)


def test_window_spanning_the_training_range_warns():
    df = _frame()
    with pytest.warns(TimeUnitWarning, match=r"window='4Y' \(4 years\) is at least the training span"):
        tiny(DiachronicEmbedder, window="4Y", decay="1/Y", n_image_features="auto").fit(
            df.drop(columns="label"), df["label"])


def test_standardised_time_column_warns_with_the_fix():
    X, y = _numeric(_frame()), _frame()["label"]
    pipe = make_pipeline(StandardScaler(),
                         tiny(DiachronicEmbedder, window=0.5, n_image_features=N_IMG))
    with pytest.warns(TimeUnitWarning, match="looks standardised.*make_crossmodal_transformer"):
        pipe.fit(X, y)


def test_datetime64_objects_are_dates_not_integers():
    df = _frame()
    X_obj = df.drop(columns="label").to_numpy(dtype=object)
    X_obj[:, -1] = [np.datetime64(d, "us") for d in df["date"]]
    model = CCACrossModal(n_image_features=N_IMG).fit(X_obj)
    assert model.time_axis_.range_[0] == pytest.approx(fractional_year(
        df["date"].to_numpy()).min())


# -------------------------------------------------------------------- set_output
def test_set_output_pandas_everywhere_and_score_still_works():
    df = _frame()
    X, y = df.drop(columns="label"), df["label"]
    model = tiny(DiachronicEmbedder, window="90D", n_image_features="auto")
    model.set_output(transform="pandas").fit(X, y)
    Z = model.transform(X)
    assert isinstance(Z, pd.DataFrame) and list(Z.columns[:2]) == ["image0", "image1"]
    Zi = model.transform_image(df.filter(like="img_"), time=pd.Timestamp("1890-06-01"))
    assert isinstance(Zi, pd.DataFrame) and list(Zi.columns) == [f"image{i}" for i in range(4)]
    assert Zi.index.equals(df.index)
    Zt = model.transform_text(df.filter(like="txt_").to_numpy(), time=1890.5)
    assert isinstance(Zt, pd.DataFrame) and Zt.columns[0] == "text0"
    assert 0 <= model.score(X, y) <= 1


def _fitted_pipeline():
    df = _frame(90)
    X, y = df.drop(columns="label"), df["label"]
    pipe = make_pipeline(
        make_crossmodal_transformer("img_", "txt_", "date", text_transformer=StandardScaler()),
        tiny(CCACrossModal, embedding_dim=3, n_image_features="auto")).fit(X, y)
    return pipe, X, y


def test_whole_rows_as_an_array_through_a_pipeline_fitted_on_a_frame_are_named():
    """The ColumnTransformer selects by name: an array of whole rows got scikit-learn's
    "Specifying the columns using strings is only supported for dataframes"."""
    pipe, X, y = _fitted_pipeline()
    match = (r"selects the image, text and time columns by name, so X must be a DataFrame; "
             r"got ndarray of shape \(90, 113\).*'img_0', 'img_1', 'img_2', \.\.\.")
    with pytest.raises(ValueError, match=match):
        pipe.transform(X.to_numpy())
    with pytest.raises(ValueError, match=match):
        CrossModalIndex(pipe, modality="text").fit(X.to_numpy())
    with pytest.raises(ValueError, match="X must be a DataFrame"):
        clone(pipe).fit(X.to_numpy(), y)
    assert pipe.transform(X).shape == (90, 6)  # the frame itself still works


def test_pipe_last_step_given_an_array_is_refused_by_search():
    """pipe[-1] with NumPy text features would skip the pipeline's scaler without a word
    (only DataFrames of raw columns were caught)."""
    pipe, X, y = _fitted_pipeline()
    raw_text = X.filter(like="txt_").to_numpy()
    with pytest.raises(ValueError, match=r"fitted inside a Pipeline on the preprocessed "
                                         r"columns 'image__img_0'.*an array without column "
                                         r"names.*not pipe\[-1\]"):
        CrossModalIndex(pipe[-1], modality="text").fit(raw_text)
    index = CrossModalIndex(pipe, modality="text").fit(X)  # through the Pipeline: fine
    assert len(index.search(X.filter(like="img_"), k=2)) == 2 * 90
