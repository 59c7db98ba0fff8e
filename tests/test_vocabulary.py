"""One constructor vocabulary: the estimators take the same keywords and mean the same.

``random_state``, ``device`` (default ``"auto"``), ``n_image_features`` (default ``None``,
which reads named ``img_*`` / ``txt_*`` blocks) and ``embedding_dim`` are parameters of every
estimator, so one loop builds, fits and transforms all of them to one width (docs/index.md).
The loops run over every registered estimator (``temporal_xmodal.estimators.all_estimators``).
"""

import inspect

import numpy as np
import pandas as pd
import pytest
from _tiny import SIX, registered, tiny

from temporal_xmodal import (BinnedProcrustesEmbedder, CCACrossModal, LayoutWarning,
                             TempXNetEmbedder, stack_modalities)
from temporal_xmodal.datasets import make_temporal_crossmodal

VOCABULARY = ("random_state", "device", "n_image_features", "embedding_dim")
#: The default widths: each neural estimator's paper fixes its D (cited in its docstring and
#: its docs page); CCA's is ours (None → at most 32), Binned's is its base's (200).
DEFAULT_WIDTHS = {"CCA": None, "SM": None, "SAM": 200, "TempXNet": 100, "Diachronic": 200, "Binned": None,
                  "SCML": 64}


#: Two bins of 80 rows (the tiny settings' default min_bin_size is 100).
SMALL_DATA = {"Binned": {"min_bin_size": 50}}


@pytest.fixture(scope="module")
def data():
    X, y, info = make_temporal_crossmodal(160, return_info=True, random_state=0)
    return X, y, info.n_image_features


#: Every registered estimator, by short name, as the tests are collected.
NAMES = list(registered())


def test_the_six_are_registered():
    assert set(DEFAULT_WIDTHS) <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_the_four_keywords_have_one_default_everywhere(name):
    cls = registered()[name]
    defaults = {k: p.default for k, p in inspect.signature(cls).parameters.items()}
    assert set(VOCABULARY) <= set(defaults), name
    assert (defaults["random_state"], defaults["device"], defaults["n_image_features"]) \
        == (None, "auto", None), name
    width = defaults["embedding_dim"]
    assert width is None or (isinstance(width, int) and width >= 1), name
    if name in DEFAULT_WIDTHS:
        assert width == DEFAULT_WIDTHS[name], name


@pytest.mark.parametrize("name", NAMES)
def test_one_keyword_set_one_width(data, name):
    X, y, n_img = data
    common = dict(random_state=0, device="cpu", n_image_features=n_img, embedding_dim=3)
    est = tiny(registered()[name], **common, **SMALL_DATA.get(name, {})).fit(X, y)
    assert {k: est.get_params()[k] for k in common} == common, name
    Z = est.transform(X)
    assert (est.embedding_dim_, Z.shape) == (3, (160, 6)), name
    np.testing.assert_allclose(np.linalg.norm(Z[:, :3], axis=1), 1.0, rtol=1e-5,
                               err_msg=name)
    assert np.isfinite(est.score(X[:100], y[:100])), name


def test_binned_takes_max_epochs(data):
    """``BinnedProcrustesEmbedder(max_epochs=...)`` trains every bin's model that long."""
    X, y, n_img = data
    base = tiny(TempXNetEmbedder, temporal_weight=0.0, max_epochs=1)
    model = BinnedProcrustesEmbedder(base, bins=2, min_bin_size=50, init="independent",
                                     max_epochs=3, random_state=0, use_time=True,
                                     n_image_features=n_img).fit(X, y)
    assert [len(est.net_.history) for est in model.bin_estimators_] == [3, 3]
    # init="global" (the default with this base): 3 epochs on all rows, then 3 on each bin's
    shared = BinnedProcrustesEmbedder(base, bins=2, min_bin_size=50, max_epochs=3,
                                      random_state=0, n_image_features=n_img, use_time=True).fit(X, y)
    assert [len(est.net_.history) for est in shared.bin_estimators_] == [6, 6]
    assert BinnedProcrustesEmbedder(max_epochs=3).get_params()["max_epochs"] == 3


def _named_frame(X, n_img):
    """The README's DataFrame: img_0..63, txt_0..47 and a datetime64 ``date`` (unequal
    blocks, so the half split would be wrong)."""
    names = [f"img_{i}" for i in range(n_img)] + \
        [f"txt_{i}" for i in range(X.shape[1] - 1 - n_img)]
    df = pd.DataFrame(X[:, :-1], columns=names)
    df["date"] = pd.Timestamp("1880-01-01") + pd.to_timedelta(X[:, -1] * 365.25, unit="D")
    return df


@pytest.mark.parametrize("name", ["CCA", "Diachronic", "Binned"])
def test_named_blocks_fit_with_the_default_n_image_features(data, name):
    X, y, n_img = data
    df = _named_frame(X, n_img)
    assert n_img == 64 and df.shape[1] - 1 - n_img == 48
    default = tiny(SIX[name], **SMALL_DATA.get(name, {})).fit(df, y)
    assert (default.n_image_features_, default.n_text_features_) == (64, 48)
    auto = tiny(SIX[name], n_image_features="auto", **SMALL_DATA.get(name, {})).fit(df, y)
    np.testing.assert_array_equal(default.transform(df), auto.transform(df))


def test_arrays_keep_the_half_split():
    rng = np.random.default_rng(0)
    X = stack_modalities(rng.normal(size=(40, 5)), rng.normal(size=(40, 4)),
                         rng.uniform(0, 3, 40))
    with pytest.warns(LayoutWarning, match=r"split X's 9 feature columns in half, 5 image \+ "
                                           r"4 text, as a guess: X has no column names"):
        cca = CCACrossModal(embedding_dim=2).fit(X)
    assert (cca.n_image_features_, cca.n_text_features_) == (5, 4)  # 9 columns: 5 + 4
    with pytest.raises(ValueError, match="'auto' reads .* X has no column names"):
        CCACrossModal(n_image_features="auto").fit(X)


#: The public classes with parameter constraints: the registered estimators, the date priors,
#: the scorer, the time axis' transformers, the featurisers, the search index, the temporal
#: correlations and SAM's semantic distance.
def _public_estimators():
    from temporal_xmodal.estimators import CaptionDatePrior, DatePriorRetrieval
    from temporal_xmodal.features import EfficientNetImageFeatures, TfidfTextFeatures
    from temporal_xmodal.estimators.sam import SemanticDistance
    from temporal_xmodal.estimators.tempxnet import (CategoryKDECorrelation, RecencyCorrelation,
                                                     WordTopicCorrelation)
    from temporal_xmodal.scoring import RetrievalScorer
    from temporal_xmodal.search import CrossModalIndex
    from temporal_xmodal.time import TimeBins, TimeEncoding

    others = (CaptionDatePrior, DatePriorRetrieval, RetrievalScorer, TimeBins, TimeEncoding,
              EfficientNetImageFeatures, TfidfTextFeatures, CrossModalIndex,
              RecencyCorrelation, CategoryKDECorrelation, WordTopicCorrelation,
              SemanticDistance)
    return {**registered(), **{cls.__name__: cls for cls in others}}


@pytest.mark.parametrize("name", list(_public_estimators()))
def test_every_interval_constraint_refuses_bools(name):
    """One interval vocabulary: every count and real parameter of every public class refuses
    ``True`` in scikit-learn's parameter message (scikit-learn's own ``Interval`` took it as
    1: ``SAMEmbedder(max_epochs=True)`` trained one epoch, ``TimeBins(min_bin_size=True)``
    fitted)."""
    from sklearn.utils._param_validation import Interval as SklearnInterval
    from temporal_xmodal._constraints import Interval

    constraints = _public_estimators()[name]._parameter_constraints
    intervals = [(param, c) for param, options in constraints.items()
                 if options != "no_validation"
                 for c in options if isinstance(c, SklearnInterval)]
    assert intervals
    for param, constraint in intervals:
        assert isinstance(constraint, Interval), (name, param)
        assert not constraint.is_satisfied_by(True) and "(not a bool)" in str(constraint)


@pytest.mark.parametrize("cls, params, fit_args", [
    ("TimeBins", {"min_bin_size": True}, ([1990.0, 1991.0, 1992.0],)),
    ("TimeBins", {"bins": True}, ([1990.0, 1991.0, 1992.0],)),
    ("TimeEncoding", {"n_bins": np.True_}, (np.array([-1.0, 0.0, 1.0]),)),
    ("TfidfTextFeatures", {"max_features": True}, (["a b", "b c"],)),
    ("RecencyCorrelation", {"bandwidth": True}, ([1990.0, 1991.0],)),
    ("CategoryKDECorrelation", {"n_grid": True}, ([1990.0, 1991.0], [0, 1])),
])
def test_time_features_and_correlations_refuse_bools(cls, params, fit_args):
    """Layer 0 (time/), the featurisers and the correlations validate with the same Interval:
    ``True`` is not taken as 1 (``TimeBins(min_bin_size=True)`` fitted before)."""
    name = next(iter(params))
    with pytest.raises(ValueError, match=rf"'{name}' parameter of {cls} must be .*\(not a "
                                         r"bool\).* Got (True|np\.True_) instead"):
        _public_estimators()[cls](**params).fit(*fit_args)


def _functions():
    """A public function of each unit whose ``@validate_params`` takes counts or reals, and the
    call that passes ``True`` for one."""
    from temporal_xmodal.comparison import estimator_registry
    from temporal_xmodal.comparison.settings import synthetic_split
    from temporal_xmodal.evaluation import semantic_dispersion
    from temporal_xmodal.metrics import random_mrr
    from temporal_xmodal.search import plot_neighbourhood_shift
    from temporal_xmodal.time import to_duration

    return {
        "to_duration(span=True)": lambda: to_duration("5%", span=True),
        "make_temporal_crossmodal(n_samples=True)": lambda: make_temporal_crossmodal(True),
        "random_mrr(True)": lambda: random_mrr(True),
        "semantic_dispersion(k=True)": lambda: semantic_dispersion(None, None, 0, k=True),
        "plot_neighbourhood_shift(n=True)": lambda: plot_neighbourhood_shift(None, n=True),
        "synthetic_split(n_samples=True)": lambda: synthetic_split(n_samples=True),
        "estimator_registry(n_image_features=True)": lambda: estimator_registry(True),
    }


@pytest.mark.parametrize("call", list(_functions()))
def test_every_unit_s_functions_refuse_bools(call):
    """The functions of time/, datasets/, metrics/, evaluation/, search/ and comparison/ take
    the one Interval too."""
    with pytest.raises(ValueError, match=r"must be .*\(not a bool\).* Got True instead"):
        _functions()[call]()


def test_only_the_constraints_module_imports_sklearns_interval():
    """One vocabulary: the library's constraints come from temporal_xmodal._constraints
    (RealInterval / CountInterval, the shorthands of the migration, are gone)."""
    import ast
    from pathlib import Path

    import temporal_xmodal

    root = Path(temporal_xmodal.__file__).parent
    found, shorthands = set(), []
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sklearn") \
                    and any(a.name == "Interval" for a in node.names):
                found.add(path.relative_to(root).as_posix())
            if isinstance(node, ast.Name) and node.id in ("RealInterval", "CountInterval"):
                shorthands.append(path.relative_to(root).as_posix())
    assert found == {"_constraints.py"}
    assert not shorthands


@pytest.mark.parametrize("params", [{"max_epochs": True}, {"embedding_dim": True},
                                    {"batch_size": np.True_}, {"lr": True}])
def test_bools_are_not_counts_or_reals(data, params):
    X, y, n_img = data
    with pytest.raises(ValueError, match=r"parameter of SAMEmbedder must be .*\(not a "
                                         r"bool\).* Got (True|np\.True_) instead"):
        tiny(registered()["SAM"], n_image_features=n_img, **params).fit(X, y)


def test_binned_refuses_bins_true(data):
    """Binned's bins= is TimeBins' constraint: True is neither a count nor a width."""
    X, y, n_img = data
    with pytest.raises(ValueError, match=r"'bins' parameter of BinnedProcrustesEmbedder must "
                                         r"be .*an int \(not a bool\).* Got True instead"):
        tiny(BinnedProcrustesEmbedder, bins=True, n_image_features=n_img).fit(X, y)
