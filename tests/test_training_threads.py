"""_device.training_threads: every neural fit, SCML's four stages included, trains
on the same threads and says at its start when the machine is busier than they allow (SCML,
the slowest fit of the main job, crawled without a word)."""

import warnings

import pytest
import torch

from temporal_xmodal import BusyMachineWarning, SequentialCrossModal
from temporal_xmodal._warnings import warn_if_busy
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal import _device


@pytest.fixture
def busy(monkeypatch):
    """A machine at load 64 on which a fit would run torch's 2 threads (the suite's fixture
    silences the warning elsewhere)."""
    monkeypatch.setattr(_device, "warn_if_busy", warn_if_busy)
    monkeypatch.setattr("os.getloadavg", lambda: (64.0, 64.0, 64.0))
    monkeypatch.setattr("torch.get_num_threads", lambda: 2)


def _scml():
    return SequentialCrossModal(n_image_features=64, max_epochs=1, meta_steps=1, hidden_dim=8,
                                common_dim=8, embedding_dim=4, n_memory=10, n_meta_train=10,
                                random_state=0, device="cpu")


def test_a_scml_fit_on_a_busy_machine_says_so_once_at_its_start(busy):
    X, y = make_temporal_crossmodal(60, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _scml().fit(X, y)
    said = [w for w in caught if issubclass(w.category, BusyMachineWarning)]
    assert len(said) == 1 and "SequentialCrossModal: the machine is busy" in str(said[0].message)


def test_a_quiet_machine_or_one_thread_says_nothing(monkeypatch):
    monkeypatch.setattr(_device, "warn_if_busy", warn_if_busy)
    monkeypatch.setattr("os.getloadavg", lambda: (64.0, 64.0, 64.0))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        X, y = make_temporal_crossmodal(60, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", BusyMachineWarning)
            _scml().fit(X, y)
    finally:
        torch.set_num_threads(threads)
