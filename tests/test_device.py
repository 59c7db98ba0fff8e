"""temporal_xmodal._device: the one resolver of ``device=``, the one walker of tensor nests,
and the refusal of a CUDA device on a machine without a GPU at every public boundary.

The refusal is tested with ``torch.cuda.is_available`` patched to False, so it runs (and
means the same) on a GPU machine too.
"""

import ast
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from _tiny import tiny
from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    SequentialCrossModal,
    TempXNetEmbedder,
)
from temporal_xmodal import _device
from temporal_xmodal._device import (
    device_key,
    loading_device,
    map_nest,
    move,
    nbytes,
    pinned_staging,
    resolve_device,
)
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.estimators.sequential import ModalityPoolIterator, ModalityPools
from temporal_xmodal.training import BatchIterator, make_dataset

PACKAGE = Path(_device.__file__).resolve().parent
META = torch.device("meta")
NO_GPU = r"device='cuda(:\d)?' but torch finds no CUDA GPU \(torch.cuda.is_available\(\) is False\)"


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


@pytest.fixture
def a_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)


# ------------------------------------------------------------------ the resolver
def test_resolve_device_auto_is_cuda_only_where_torch_finds_a_gpu(monkeypatch):
    for available, expected in ((False, "cpu"), (True, "cuda")):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: available)
        assert resolve_device("auto") == expected
        assert resolve_device("cpu") == "cpu" and resolve_device(None) is None
        with _device.allow_meta():  # the tests' stand-in for a second device
            assert resolve_device("meta") == "meta" and resolve_device(META) is META
    assert resolve_device("cuda:1") == "cuda:1"  # available (patched): passed through


@pytest.mark.parametrize("device", ["meta", "meta:0", META])
def test_resolve_device_refuses_the_meta_device(device):
    """Issue 48, 12: ``device="meta"`` trained for seconds, then failed with torch's "Cannot
    copy out of meta tensor"; the one resolver refuses it, naming what meta is."""
    with pytest.raises(ValueError, match="meta device, which holds shapes and no values.*"
                                         "Use device='auto', 'cpu' or 'cuda'"):
        resolve_device(device)


def test_an_estimator_on_the_meta_device_is_refused_before_training():
    from temporal_xmodal import SAMEmbedder

    X, y, info = make_temporal_crossmodal(40, random_state=0, return_info=True)
    model = SAMEmbedder(device="meta", max_epochs=50, hidden_dim=8, embedding_dim=4,
                        n_image_features=info.n_image_features)
    with pytest.raises(ValueError, match="meta device"):
        model.fit(X, y)
    assert not hasattr(model, "net_")


def test_resolve_device_refuses_cuda_without_a_gpu(no_gpu):
    for device in ("cuda", "cuda:1", torch.device("cuda", 0)):
        with pytest.raises(ValueError, match=NO_GPU) as info:
            resolve_device(device)
        assert "use device='auto' or 'cpu'" in str(info.value)
    with pytest.raises(RuntimeError, match="device"):  # not a device at all: torch's words
        resolve_device("gpu0")


def test_loading_device_maps_cuda_to_the_cpu_only_without_a_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert loading_device("cuda:1") == "cpu" and loading_device(torch.device("cuda")) == "cpu"
    assert loading_device("cpu") == "cpu" and loading_device(None) is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert loading_device("cuda:1") == "cuda:1"


def test_device_key_names_one_device_once():
    assert device_key("cpu:0") == device_key("cpu") == torch.device("cpu")
    assert device_key("meta:0") == device_key(torch.empty(0, device="meta").device) == META


def test_pins_for_cuda_and_for_the_cpu_of_a_cuda_machine(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert (pinned_staging(torch.device("cuda")), pinned_staging(torch.device("cpu")), pinned_staging(META)) == (
        True, False, False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert pinned_staging(torch.device("cpu")) and not pinned_staging(META)


def test_device_memory_is_unreadable_off_cuda():
    assert _device.device_memory("cpu") is None and _device.device_memory(META) is None


# ------------------------------------------------------------------ the nest walker
def test_map_nest_keeps_the_structure_and_leaves_other_entries():
    a, b, c = torch.arange(3), torch.ones(2, 2), torch.zeros(4, dtype=torch.bool)
    nest = ({"image": a, "labels": None, "pair": [b, 7]}, c)
    out = map_nest(lambda t: t.numel(), nest)
    assert out == ({"image": 3, "labels": None, "pair": [4, 7]}, 4)
    assert type(out) is tuple and type(out[0]["pair"]) is list


def test_move_copies_only_what_is_elsewhere():
    a = torch.arange(3)
    moved = move({"a": a, "y": None}, "cpu")
    assert moved["a"] is a and moved["y"] is None  # already there: not copied
    on_meta = move(({"a": a}, a.float()), META)
    assert {on_meta[0]["a"].device, on_meta[1].device} == {META}
    assert on_meta[1].dtype == torch.float32


def test_nbytes_counts_every_tensor_of_a_nest():
    nest = {"x": torch.zeros(5, 3), "pools": [(torch.zeros(2, dtype=torch.float64), None)]}
    assert nbytes(nest) == 5 * 3 * 4 + 2 * 8


def _package_functions():
    """``(path, function)`` of every function of the package (parsed once)."""
    if not _FUNCTIONS:
        for path in sorted(PACKAGE.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    _FUNCTIONS.append((path.relative_to(PACKAGE).as_posix(), node))
    return _FUNCTIONS


_FUNCTIONS = []


def _calls_itself(function):
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
               and n.func.id == function.name for n in ast.walk(function))


def _reads_torch(function):
    return any(isinstance(n, ast.Name) and n.id == "torch" for n in ast.walk(function))


def _walks_dicts(function):
    """Has an ``isinstance(..., dict)`` test (a branch of a nest walk)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
               and n.func.id == "isinstance" and len(n.args) == 2
               and any(isinstance(t, ast.Name) and t.id == "dict" for t in ast.walk(n.args[1]))
               for n in ast.walk(function))


def _is_tensor_nest_walker(function):
    return _calls_itself(function) and _reads_torch(function) and _walks_dicts(function)


def _is_cuda_available(node):
    return (isinstance(node, ast.Attribute) and node.attr == "is_available"
            and isinstance(node.value, ast.Attribute) and node.value.attr == "cuda")


def test_one_resolver_and_one_nest_walker_in_the_package():
    """What ``grep`` would find, read from the syntax: ``torch.cuda.is_available`` is asked
    in _device.py only (the resolver, the loading device, the memory, the pinning), and the
    only recursive function over a nest that handles tensors is ``map_nest``'s walker
    (``_map_nest``, which moves a tensor shared by two entries once)."""
    asking = sorted({path for path, f in _package_functions()
                     if any(_is_cuda_available(n) for n in ast.walk(f))})
    assert asking == ["_device.py"]
    walkers = sorted(f"{path}:{f.name}" for path, f in _package_functions()
                     if _is_tensor_nest_walker(f))
    assert walkers == ["_device.py:_map_nest"]


def test_the_walker_check_finds_a_second_walker():
    """The structural test above can fail: the old ``on_device`` of training/_net.py is a
    second walker to it."""
    source = ('def on_device(batch, device):\n'
              '    if torch.is_tensor(batch):\n'
              '        return batch.to(device)\n'
              '    if isinstance(batch, dict):\n'
              '        return {k: on_device(v, device) for k, v in batch.items()}\n'
              '    return batch\n')
    function = ast.parse(source).body[0]
    assert _is_tensor_nest_walker(function)


# -------------------------------------------- a CUDA device without a GPU, at every boundary
@pytest.fixture(scope="module")
def data():
    X, y, info = make_temporal_crossmodal(120, random_state=0, return_info=True)
    return X, y, info.n_image_features


def _dataset(n=40):
    rng = np.random.default_rng(0)
    return make_dataset(rng.standard_normal((n, 4), dtype=np.float32),
                        rng.standard_normal((n, 5), dtype=np.float32),
                        np.eye(3, dtype=np.float32)[rng.integers(0, 3, n)])


def test_iterators_refuse_cuda_without_a_gpu_before_drawing(no_gpu):
    """``placement="staged"`` reached torch's pin-memory allocator ("Found no NVIDIA
    driver"); every placement now gets the resolver's error, and the generator is not
    advanced by the refused epoch."""
    pools = ModalityPools({"image": (torch.randn(20, 3), torch.eye(2)[torch.arange(20) % 2])},
                          driver="image")
    for placement in ("staged", "auto", "device"):
        for make in (lambda g: BatchIterator(_dataset(), batch_size=16, shuffle=True,
                                             generator=g, device="cuda", placement=placement),
                     lambda g: ModalityPoolIterator(pools, batch_size=8, generator=g,
                                                    device="cuda:0", placement=placement)):
            generator = torch.Generator().manual_seed(0)
            state = generator.get_state()
            with pytest.raises(ValueError, match=NO_GPU):
                next(iter(make(generator)))
            assert torch.equal(generator.get_state(), state)


def test_iterators_draw_auto_on_the_cpu_without_a_gpu(no_gpu):
    batches = list(BatchIterator(_dataset(), batch_size=16, device="auto"))
    assert [len(y) for _, y in batches] == [16, 16, 8]
    assert {y.device for _, y in batches} == {torch.device("cpu")}


@pytest.mark.parametrize("make", [
    lambda n: CCACrossModal(device="cuda", n_image_features=n),
    lambda n: tiny(SAMEmbedder, device="cuda", n_image_features=n),
    lambda n: tiny(TempXNetEmbedder, device="cuda", n_image_features=n),
    lambda n: tiny(DiachronicEmbedder, device="cuda", n_image_features=n),
    lambda n: BinnedProcrustesEmbedder(CCACrossModal(device="cuda:0"), bins=2,
                                       min_bin_size=30, n_image_features=n),
    lambda n: SequentialCrossModal(device="cuda", max_epochs=1, n_image_features=n),
], ids=["CCA", "SAM", "TempXNet", "Diachronic", "Binned", "SCML"])
def test_estimators_refuse_cuda_without_a_gpu_in_fit(make, data, no_gpu):
    X, y, n_img = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=NO_GPU):
            make(n_img).fit(X, y)


def test_iterators_refuse_misspelled_options():
    """``**unused`` swallowed them: ``shufle=True`` trained unshuffled without a word."""
    pools = ModalityPools({"image": (torch.randn(4, 3), torch.eye(2)[[0, 1, 0, 1]])},
                          driver="image")
    with pytest.raises(TypeError, match="shufle"):
        BatchIterator(_dataset(), batch_size=8, shufle=True)
    with pytest.raises(TypeError, match="step_per_epoch"):
        ModalityPoolIterator(pools, step_per_epoch=3)
