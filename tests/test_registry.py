"""One registry of the estimators (``temporal_xmodal/estimators/_registry.py``).

The package's exports, ``paper_settings``, ``compare``'s estimators and every common test
(compliance, vocabulary, device guard) read :func:`~temporal_xmodal.estimators.all_estimators`:
an estimator registered in one entry (and given its tiny test settings in ``tests/_tiny.py``,
the tests' own) is in all of them, which a throw-away estimator shows here
(docs/adding_an_estimator.md).  Every
estimator's ``__init__`` stores its parameters with explicit ``self.x = x`` lines.
"""

import ast
import json
import inspect
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from sklearn.base import clone

import temporal_xmodal
from _tiny import NET, SIX, TINY, add_tiny, registered, tiny, tiny_six
from temporal_xmodal import SAMEmbedder, paper_settings
from temporal_xmodal.comparison import estimator_registry
from temporal_xmodal.estimators import all_estimators
from temporal_xmodal.estimators import _registry
from temporal_xmodal.comparison.settings import COMPARED, CompareEntry
from temporal_xmodal.estimators._registry import RegisteredEstimator, get_entry, register
from temporal_xmodal.time import time_role

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
#: The common tests: each loops over every registered estimator.
COMMON_TESTS = ("tests/test_sklearn_compliance.py", "tests/test_vocabulary.py",
                "tests/test_device_guard.py")


def test_the_seven_estimators_are_registered_once():
    entries = all_estimators()
    assert [e.name for e in entries] == ["CCA", "SM", "SAM", "TempXNet", "Diachronic",
                                         "Binned", "SCML"]
    assert len({e.estimator for e in entries}) == len(entries)
    for entry in entries:
        assert entry.time_role == entry.estimator.time_role == time_role(entry.estimator())
        assert get_entry(entry.name) is get_entry(entry.estimator) is entry
        assert get_entry(entry.estimator.__name__) is get_entry(entry.make()) is entry
    with pytest.raises(ValueError, match="already registered"):
        register(RegisteredEstimator("SAM", SAMEmbedder))
    with pytest.raises(KeyError):
        get_entry("NoSuchEmbedder")


def test_the_package_exports_the_registered_estimators():
    for entry in all_estimators():
        name = entry.estimator.__name__
        assert getattr(temporal_xmodal, name) is entry.estimator
        assert getattr(temporal_xmodal.estimators, name) is entry.estimator
        assert name in temporal_xmodal.__all__ and name in temporal_xmodal.estimators.__all__
    # and the other way: every exported embedder is registered (the exports are explicit)
    registered_classes = {entry.estimator for entry in all_estimators()}
    for module in (temporal_xmodal, temporal_xmodal.estimators):
        exported = {getattr(module, n) for n in module.__all__}
        embedders = {c for c in exported if isinstance(c, type)
                     and issubclass(c, temporal_xmodal.CrossModalEmbedder)
                     and c is not temporal_xmodal.CrossModalEmbedder}
        assert embedders <= registered_classes, module.__name__
        assert not any("globals()" in line for line in Path(module.__file__).read_text()
                       .splitlines()), module.__name__


def test_make_builds_the_defaults_or_the_paper_settings():
    """The registry builds the class defaults or the paper's settings; test settings are the
    tests' (tests/_tiny.py), not the library's."""
    entry = get_entry("SAM")
    assert entry.make().get_params() == SAMEmbedder().get_params()
    assert entry.make("default", lr=0.5).lr == 0.5
    assert entry.make("paper", lr=0.5).get_params()["optimizer"] == "sgd"
    assert not hasattr(entry, "tiny")
    with pytest.raises(ValueError, match="settings must be 'default' or 'paper'; got 'tiny'"):
        entry.make("tiny")


def test_every_registered_estimator_has_tiny_settings():
    """A registered estimator without its line in tests/_tiny.py is named, not skipped."""
    assert [e.name for e in all_estimators() if e.name not in TINY] == []
    assert set(TINY) == set(SIX)  # no settings of an estimator that is not registered
    class UntestedEmbedder(SAMEmbedder):
        pass

    entry = register(RegisteredEstimator("Untested", UntestedEmbedder))
    try:
        with pytest.raises(KeyError, match=r"UntestedEmbedder \(registered as 'Untested'\) "
                                           r"has no tiny settings: add its line to TINY"):
            tiny("Untested")
    finally:
        del _registry._REGISTRY[entry.name]


def test_settings_give_fresh_nested_estimators():
    """Binned's tiny base is built anew for every estimator made from the settings."""
    a, b = tiny_six()["Binned"], tiny_six()["Binned"]
    assert a.base_estimator is not b.base_estimator
    assert a.base_estimator.get_params() == b.base_estimator.get_params()
    assert tiny(type(a), bins=3).bins == 3  # overrides win
    first = estimator_registry(4)["Binned+Procrustes"].estimator
    assert first.base_estimator is not estimator_registry(4)["Binned+Procrustes"].estimator \
        .base_estimator


@pytest.mark.parametrize("entry", all_estimators(), ids=lambda e: e.name)
def test_make_paper_builds_a_valid_estimator_for_every_entry(entry):
    """Every paper setting names a parameter of its estimator and passes its constraints
    (SCML's named ``optimizer``, which it does not have: TypeError); ``paper_settings``
    returns the same by name, class or instance."""
    if entry.paper is None:
        pytest.skip(f"{entry.name} has no paper settings")
    est = entry.make("paper")
    est._validate_params()
    params = est.get_params()
    for key, value in paper_settings(entry.estimator).items():
        assert params[key] == value, (entry.name, key)
    name = entry.estimator.__name__
    assert paper_settings(name) == paper_settings(est) == paper_settings(entry.estimator)
    assert clone(entry.estimator(**paper_settings(name))).get_params() == params


def test_each_compare_entry_holds_its_data_set_settings():
    """One compare entry per estimator, keyed by its registry name (the job's display names
    once each): its data-set parameters are parameters it has, set on that data set only,
    and the job's left-out list is read from the entries."""
    from temporal_xmodal.comparison import left_out

    assert set(COMPARED) == {e.name for e in all_estimators()}
    assert len({entry.name for entry in COMPARED.values()}) == len(COMPARED)
    assert any(entry.datasets for entry in COMPARED.values())
    for name, entry in COMPARED.items():
        for dataset, params in entry.datasets.items():
            estimator = estimator_registry(4, dataset=dataset)[entry.name].estimator
            assert estimator.get_params() | params == estimator.get_params(), name
            estimator._validate_params()
            other = estimator_registry(4, dataset="synthetic")[entry.name].estimator
            assert any(other.get_params()[k] != v for k, v in params.items()), (
                f"{name}: {params} on {dataset} changes nothing")
    assert set(left_out("ticrc")) == {"SCML", "SM"} and left_out("synthetic") == {}


class _RegisteredHere(SAMEmbedder):
    """A throw-away estimator registered by the fixture below only."""


@pytest.fixture
def registered_here():
    entry = register(RegisteredEstimator(
        "Here", _RegisteredHere, paper={"optimizer": "sgd", "lr": 0.5}))
    COMPARED[entry.name] = CompareEntry("Registered-here", {"max_epochs": 7})
    add_tiny(entry.name, {**NET, "embedding_dim": 3})
    try:
        yield entry
    finally:
        del _registry._REGISTRY[entry.name]
        del COMPARED[entry.name]
        TINY.pop(entry.name)


def test_one_entry_reaches_compare_paper_settings_and_the_tiny_tables(registered_here):
    assert all_estimators()[-1] is registered_here
    assert paper_settings(_RegisteredHere) == {"optimizer": "sgd", "lr": 0.5}
    assert paper_settings("_RegisteredHere") == {"optimizer": "sgd", "lr": 0.5}
    compared = estimator_registry(4, random_state=3)["Registered-here"]
    assert type(compared.estimator) is _RegisteredHere and compared.time_role == "none"
    assert (compared.estimator.max_epochs, compared.estimator.random_state,
            compared.estimator.n_image_features) == (7, 3, 4)
    assert registered()["Here"] is _RegisteredHere
    assert tiny(_RegisteredHere).embedding_dim == 3
    assert tiny_six()["Here"].get_params() == tiny(_RegisteredHere).get_params()
    assert "Here" not in SIX  # the module-level table is the registry at import time


def test_an_unregistered_estimator_is_nowhere(registered_here):
    del _registry._REGISTRY["Here"]
    try:
        assert "Registered-here" not in estimator_registry(4)
        with pytest.raises(ValueError, match="No paper settings"):
            paper_settings(_RegisteredHere)
        assert "Here" not in tiny_six()
    finally:
        _registry._REGISTRY["Here"] = registered_here


def _run_common_tests(tmp_path, *options):
    """Run the common tests' ThrowAway cases in a fresh interpreter; (file, test, outcome)."""
    report = tmp_path / "report.xml"
    # one torch thread, as in the suite's workers (the run sits beside them on the cores);
    # no Hypothesis plugin (these tests draw no examples; its summary imports it: 1 s)
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
         "-p", "no:hypothesispytest", *options, "-k", "ThrowAway or TripletEmbedder",
         f"--junitxml={report}", *COMMON_TESTS],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    cases = []
    if report.exists():
        for case in ET.parse(report).getroot().iter("testcase"):
            outcome = next((child.tag for child in case
                            if child.tag in ("failure", "error", "skipped")), "passed")
            cases.append((case.get("classname"), case.get("name"), outcome))
    return proc, cases


@pytest.mark.slow
def test_the_common_tests_pick_up_a_registered_estimator(tmp_path):
    """``tests/_throwaway.py`` writes TripletEmbedder as one configuration (a ``NetConfig``)
    and registers it in one entry, and nothing else; the compliance, vocabulary and
    device-guard tests then run it."""
    proc, cases = _run_common_tests(tmp_path, "-p", "_throwaway")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    ran = {}
    for classname, name, outcome in cases:
        assert "ThrowAway" in name or "TripletEmbedder" in name
        assert outcome in ("passed", "skipped"), (classname, name, outcome)
        ran.setdefault(classname.rsplit(".", 1)[-1], []).append(name)
    # every scikit-learn check, on the estimator (no use_time: no control)
    assert sum(o == "passed" for _, n, o in cases if "TripletEmbedder(" in n) >= 30
    assert any("check_estimators_pickle" in n for n in ran["test_sklearn_compliance"])
    assert sorted(n.split("[")[0] for n in ran["test_vocabulary"]) == [
        "test_every_interval_constraint_refuses_bools", "test_one_keyword_set_one_width",
        "test_the_four_keywords_have_one_default_everywhere"]
    device = sorted(n.split("[")[0] for n in ran["test_device_guard"])
    # it trains on the shared neural core: both placements, both pickles
    assert device == ["test_a_pickle_loads_on_any_device"] * 2 + \
        ["test_a_training_step_stays_on_the_net_device"] * 2


def test_the_guide_shows_the_throwaway_estimator_as_it_is_in_at_most_60_lines():
    """docs/adding_an_estimator.md's complete neural estimator is tests/_throwaway.py's."""
    source = (Path(__file__).parent / "_throwaway.py").read_text()
    code = source.split("# --- the estimator (docs/adding_an_estimator.md) ---\n")[1]
    code = code.split("# --- end ---")[0].strip("\n")
    guide = (Path(__file__).parents[1] / "docs" / "adding_an_estimator.md").read_text()
    assert f"```python\n{code}\n```" in guide
    assert len(code.splitlines()) <= 60


@pytest.mark.slow
def test_without_its_entry_the_common_tests_do_not_see_it(tmp_path):
    proc, cases = _run_common_tests(tmp_path, "--collect-only")
    assert cases == [] and "no tests collected" in proc.stdout + proc.stderr


# ------------------------------------------------------------ explicit __init__
def _init_assignments(cls):
    """``self.x = x`` assignments of the class's own ``__init__``, as (attribute, value) names."""
    source = textwrap.dedent(inspect.getsource(cls.__init__))
    init = ast.parse(source).body[0]
    return [(node.targets[0].attr, node.value.id) for node in init.body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Attribute)
            and isinstance(node.value, ast.Name)]


@pytest.mark.parametrize("name", list(SIX))
def test_every_init_assigns_each_parameter_explicitly(name):
    """As scikit-learn and skorch write them: ``grep "self.lr ="`` finds the parameter, and
    ``__init__`` does nothing else."""
    cls = SIX[name]
    params = list(inspect.signature(cls).parameters)
    assert sorted(_init_assignments(cls)) == sorted((p, p) for p in params)
    init = ast.parse(textwrap.dedent(inspect.getsource(cls.__init__))).body[0]
    others = [node for node in init.body if not isinstance(node, ast.Assign)]
    assert all(isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
               for node in others)  # a docstring at most
    est = cls()
    assert {p: getattr(est, p) for p in params} == clone(est).get_params(deep=False)


def test_no_helper_stores_init_parameters():
    package = Path(temporal_xmodal.__file__).parent
    assert not [p for p in package.rglob("*.py")
                if "store_init_params" in p.read_text(encoding="utf-8")]


def test_the_subpackages_are_attributes_of_a_fresh_import():
    """Issue 48, 11: ``tx.time`` and ``tx.metrics`` raised AttributeError after a bare
    ``import temporal_xmodal`` until an estimator name had been touched (the lazy exports
    import subpackages only as a side effect), and ``dir(tx)`` listed none.  A fresh
    interpreter: each public subpackage is an attribute, ``dir`` lists them, importing the
    package alone still imports no torch, and a wrong name is still an AttributeError."""
    code = textwrap.dedent("""
        import sys, json
        import temporal_xmodal as tx
        out = {"torch_at_import": "torch" in sys.modules, "dir": dir(tx)}
        out["time"] = tx.time.to_time_axis.__name__
        out["metrics"] = tx.metrics.mean_average_precision.__name__
        out["subpackages"] = {n: getattr(tx, n).__name__ for n in
                              ("evaluation", "search", "scoring", "datasets", "training")}
        try:
            tx.no_such_subpackage
        except AttributeError as error:
            out["missing"] = str(error)
        print(json.dumps(out))
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["torch_at_import"] is False
    assert out["time"] == "to_time_axis" and out["metrics"] == "mean_average_precision"
    assert out["subpackages"] == {n: f"temporal_xmodal.{n}" for n in out["subpackages"]}
    assert {"time", "metrics", "estimators", "search", "evaluation"} <= set(out["dir"])
    assert {"SAMEmbedder", "__version__"} <= set(out["dir"])
    assert "no attribute 'no_such_subpackage'" in out["missing"]
