"""Property-based robustness: whatever X and y, an estimator fits to finite embeddings or
raises a ValueError/TypeError in the library's words — never another exception, never NaN.

Hypothesis draws shapes, dtypes and values (NaN, ±inf, huge, tiny, constant, duplicate rows,
bad times) and labels, for all six estimators at tiny sizes; the example budget keeps the whole
module within a few seconds per estimator.
"""

import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from _tiny import tiny  # noqa: E402
from temporal_xmodal import (  # noqa: E402
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    SequentialCrossModal,
    TempXNetEmbedder,
)

#: Smaller than the tiny settings: the drawn data sets have 2 to 14 rows and 1 to 3 columns
#: per modality.
NET = dict(hidden_dim=4, embedding_dim=2, max_epochs=1, batch_size=4)
ESTIMATORS = {
    "CCA": lambda: tiny(CCACrossModal, embedding_dim=1),
    "SAM": lambda: tiny(SAMEmbedder, **NET),
    "TempXNet": lambda: tiny(TempXNetEmbedder, **NET),
    "Diachronic": lambda: tiny(DiachronicEmbedder, time_dim=2, **NET),
    "Binned": lambda: tiny(BinnedProcrustesEmbedder,
                           base_estimator=tiny(CCACrossModal, embedding_dim=1), min_bin_size=3),
    "SCML": lambda: tiny(SequentialCrossModal, common_dim=2, n_memory=3, n_meta_train=3, **NET),
}
#: Words that a clear message uses to name the problem (one of them must appear).
NAMED = ("NaN", "infinity", "infinite", "float32", "column", "class", "label", "sample",
         "feature", "time", "row", "y ", "y:", "embedding_dim", "bin", "dimension", "constant",
         "variance", "singular", "modality", "rank")
SPECIALS = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf, "huge": 1e39, "tiny": 1e-300}


@st.composite
def datasets(draw):
    n = draw(st.integers(2, 14))
    n_img, n_txt = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_img + n_txt + 1))
    X[:, -1] = rng.uniform(0, 5, n)
    kind = draw(st.sampled_from(["clean", "special", "constant", "duplicate", "time", "scale"]))
    if kind == "special":
        value = SPECIALS[draw(st.sampled_from(sorted(SPECIALS)))]
        X[draw(st.integers(0, n - 1)), draw(st.integers(0, X.shape[1] - 1))] = value
    elif kind == "constant":
        X[:, :-1] = draw(st.sampled_from([0.0, 1.0, -3.0]))
    elif kind == "duplicate":
        X[:] = X[0]
    elif kind == "time":
        X[:, -1] = draw(st.sampled_from([0.0, 1.7e9, -1e6, np.nan]))
    elif kind == "scale":
        X[:, :-1] *= draw(st.sampled_from([1e-30, 1e30, 1e-200]))
    dtype = draw(st.sampled_from([np.float64, np.float32, "int"]))
    if dtype == "int":
        X = np.clip(np.nan_to_num(X, nan=0, posinf=0, neginf=0), -1e6, 1e6).round().astype(
            np.int64)
    elif dtype == np.float32:
        with np.errstate(over="ignore", under="ignore"):
            X = X.astype(np.float32)
    n_classes = draw(st.integers(1, 3))
    y = draw(st.sampled_from(["int", "str"]))
    labels = np.arange(n) % n_classes
    labels = labels if y == "int" else np.array(["a", "b", "c"])[labels]
    return X, labels, n_img


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=datasets())
def test_fit_gives_finite_embeddings_or_a_named_error(name, data):
    X, y, n_img = data
    model = ESTIMATORS[name]().set_params(n_image_features=n_img)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model.fit(X, y)
            Z = np.asarray(model.transform(X))
        except (ValueError, TypeError) as error:
            message = str(error)
            assert message and any(word in message for word in NAMED), message
            assert "HistGradientBoosting" not in message and "array([" not in message, message
            return
    assert Z.shape[0] == X.shape[0] and np.all(np.isfinite(Z)), (name, Z)
