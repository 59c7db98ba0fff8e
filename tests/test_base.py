"""The shared base: layout, transforms, outputs and bad-input behaviour.

Run on CCACrossModal here; the neural estimators reuse the same base.
"""

import pickle

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from temporal_xmodal import CCACrossModal, LayoutWarning, stack_modalities
from temporal_xmodal.datasets import make_temporal_crossmodal

#: Tests of bad input and of the time column fit CCACrossModal at its default layout
#: (n_image_features=None), whose half split of X warns (before bad input is refused);
#: test_default_split_halves_the_feature_columns asserts that warning.
pytestmark = pytest.mark.filterwarnings(
    "ignore:CCACrossModal. n_image_features=None split X's .* as a guess:"
    "temporal_xmodal.LayoutWarning")


@pytest.fixture(scope="module")
def data():
    X, y, info = make_temporal_crossmodal(300, n_image_features=10, n_text_features=6,
                                          return_info=True, random_state=0)
    return X, y


@pytest.fixture(scope="module")
def fitted(data):
    X, y = data
    return CCACrossModal(4, n_image_features=10).fit(X, y)


def test_stack_modalities_layout():
    X = stack_modalities(np.ones((3, 2)), np.zeros((3, 4)), [1990, 1991, 1992])
    assert X.shape == (3, 7)
    np.testing.assert_array_equal(X[:, -1], [1990, 1991, 1992])
    np.testing.assert_array_equal(stack_modalities(np.ones((2, 1)), np.ones((2, 1)))[:, -1], 0)
    with pytest.raises(ValueError, match="same number of rows"):
        stack_modalities(np.ones((3, 2)), np.ones((2, 2)))
    with pytest.raises(TypeError, match="numbers on the time axis or dates"):
        stack_modalities(np.ones((2, 1)), np.ones((2, 1)), np.array(["a", "b"]))


def test_default_split_halves_the_feature_columns(data):
    X, _ = data
    with pytest.warns(LayoutWarning, match=r"split X's 16 feature columns in half, 8 image \+ "
                                           r"8 text, as a guess"):
        est = CCACrossModal(2).fit(X)
    assert (est.n_image_features_, est.n_text_features_) == (8, 8)
    with pytest.warns(LayoutWarning, match=r"15 feature columns in half, 8 image \+ 7 text"):
        assert CCACrossModal(2).fit(X[:, 1:]).n_image_features_ == 8  # 15 -> 8 + 7


def test_transform_is_both_blocks_l2_normalised(fitted, data):
    X, _ = data
    Z = fitted.transform(X)
    assert Z.shape == (len(X), 8)
    np.testing.assert_allclose(np.linalg.norm(Z[:, :4], axis=1), 1)
    np.testing.assert_allclose(np.linalg.norm(Z[:, 4:], axis=1), 1)
    np.testing.assert_allclose(Z[:, :4], fitted.transform_image(X[:, :10]))
    np.testing.assert_allclose(Z[:, 4:], fitted.transform_text(X[:, 10:-1], time=5.0))


def test_feature_names_and_pandas_output(fitted, data):
    X, y = data
    names = fitted.get_feature_names_out()
    assert list(names) == [f"image{i}" for i in range(4)] + [f"text{i}" for i in range(4)]
    cols = [f"img_{i}" for i in range(10)] + [f"txt_{i}" for i in range(6)] + ["year"]
    df = pd.DataFrame(X, columns=cols)
    est = CCACrossModal(4, n_image_features=10).set_output(transform="pandas").fit(df, y)
    out = est.transform(df)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(names)
    np.testing.assert_allclose(out.to_numpy(), fitted.transform(X))


def test_pipeline_and_persistence(fitted, data, tmp_path):
    X, y = data
    pipe = make_pipeline(CCACrossModal(4, n_image_features=10), StandardScaler()).fit(X, y)
    assert pipe.transform(X).shape == (len(X), 8)
    clone = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(clone.transform(X), fitted.transform(X))
    joblib.dump(fitted, tmp_path / "m.joblib")
    np.testing.assert_array_equal(joblib.load(tmp_path / "m.joblib").transform(X),
                                  fitted.transform(X))


def test_score_with_and_without_labels(fitted, data):
    X, y = data
    assert 0.2 < fitted.score(X, y) <= 1
    mrr = fitted.score(X)
    assert 0 < mrr <= 1


# ------------------------------------------------------------------ bad input
def test_nan_and_inf_rejected(data):
    X, _ = data
    for bad in (np.nan, np.inf):
        Xb = X.copy()
        Xb[3, 2] = bad
        with pytest.raises(ValueError, match="NaN|infinity"):
            CCACrossModal(2).fit(Xb)


def test_nan_time_rejected(data):
    X, _ = data
    Xb = X.copy()
    Xb[0, -1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        CCACrossModal(2).fit(Xb)


def test_date_time_column_accepted_and_string_time_rejected(data):
    X, _ = data
    df = pd.DataFrame(X[:, :-1], columns=[f"f{i}" for i in range(X.shape[1] - 1)])
    df["date"] = pd.date_range("1890-01-01", periods=len(X), freq="D")
    model = CCACrossModal(2).fit(df)
    assert model.time_axis_.dates_ and model.time_range_[0] == 1890.0
    obj = X.astype(object)
    obj[:, -1] = "1890-05-01"
    with pytest.raises(TypeError, match="numbers on the time axis or dates"):
        CCACrossModal(2).fit(obj)


def test_wrong_column_count_at_transform(fitted, data):
    X, _ = data
    with pytest.raises(ValueError, match="features"):
        fitted.transform(X[:, 1:])
    with pytest.raises(ValueError, match="fitted with 10 image features"):
        fitted.transform_image(X[:, :9])
    with pytest.raises(ValueError, match="without the time column"):
        fitted.transform_text(X[:, 10:])


@pytest.mark.parametrize("value, exc, match", [
    (0, ValueError, "n_image_features"),
    (16, ValueError, "out of range"),
    (2.5, (TypeError, ValueError), "n_image_features"),
])
def test_bad_n_image_features(data, value, exc, match):
    X, _ = data
    with pytest.raises(exc, match=match):
        CCACrossModal(2, n_image_features=value).fit(X)


def test_empty_and_too_narrow_X():
    with pytest.raises(ValueError, match="0 sample"):
        CCACrossModal().fit(np.empty((0, 5)))
    with pytest.raises(ValueError, match="1 feature"):
        CCACrossModal().fit(np.ones((5, 1)))


def test_unfitted_use(data):
    X, _ = data
    est = CCACrossModal()
    for call in (lambda: est.transform(X), lambda: est.transform_image(X[:, :8]),
                 lambda: est.score(X), lambda: est.get_feature_names_out()):
        with pytest.raises(NotFittedError):
            call()


def test_bad_time_argument(fitted, data):
    X, _ = data
    with pytest.raises(ValueError, match="shape"):
        fitted.transform_image(X[:5, :10], time=[1.0, 2.0])
    with pytest.raises(TypeError, match="numbers on the time axis or dates"):
        fitted.transform_image(X[:2, :10], time=np.array(["a", "b"]))


def test_bad_labels(data):
    X, _ = data
    with pytest.raises(ValueError, match="rows"):
        CCACrossModal(2).fit(X, np.zeros(3))
    # labels are optional for CCA, but score with a single class still works
    from temporal_xmodal._input import check_labels
    with pytest.raises(ValueError, match="at least 2 classes"):
        check_labels(np.zeros(len(X)), len(X), estimator_name="Demo")
    # a continuous target is not labels (it would make every item its own class)
    with pytest.raises(ValueError, match=r"non-integer numbers such as 0\.5 \(a continuous target\)"):
        check_labels(np.arange(len(X)) + 0.5, len(X), estimator_name="Demo")
    assert check_labels(np.arange(len(X)) % 2 * 1.0, len(X)).max() == 1  # whole floats are fine


def test_transform_of_float32_features_is_float32():
    # issue 55, 4: every transform returned float64 (a float64 copy of the embeddings, and
    # float64 temporaries per modality); the network computes in float32 anyway
    from _tiny import tiny_six

    X, y, info = make_temporal_crossmodal(240, n_image_features=12, n_text_features=10,
                                          return_info=True, random_state=0)
    X32 = X.astype(np.float32)
    preserving = {"CCA", "SAM", "TempXNet", "Diachronic", "Binned"}
    for name, est in tiny_six(n_image_features=info.n_image_features).items():
        est.fit(X32, y)
        if name not in preserving:
            continue
        assert est.__sklearn_tags__().transformer_tags.preserves_dtype == ["float64",
                                                                          "float32"], name
        Z32, Z64 = est.transform(X32), est.transform(X32.astype(np.float64))
        assert Z32.dtype == np.float32 and Z64.dtype == np.float64, name
        np.testing.assert_allclose(Z32, Z64, atol=1e-5, err_msg=name)
        assert est.transform_text(X32[:, info.n_image_features:-1],
                                  time=X32[:, -1]).dtype == np.float32, name
