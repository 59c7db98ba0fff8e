"""Shared fixtures: the real data sets in ``../shared/data`` (skipped when absent).

The tests' other shared helpers are sibling modules (``tests/`` is on ``sys.path`` under
pytest): ``_tiny.py`` (the registered estimators at tiny, fast settings: ``tiny(SAMEmbedder)``),
``_device_guard.py`` (device checks without a GPU) and ``_bad_input.py`` (the bad-input
cases of ``test_bad_input.py``).
"""

import os
from pathlib import Path

import pytest

DATA_DIR = Path(
    os.environ.get("TEMPORAL_XMODAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def _require(path):
    if not path.exists():
        pytest.skip(f"real data not found at {path} (set TEMPORAL_XMODAL_DATA to its folder)")
    return path


@pytest.fixture(scope="session")
def wiki():
    """The Wikipedia benchmark (:func:`temporal_xmodal.datasets.load_wiki`)."""
    from temporal_xmodal.datasets import load_wiki

    return load_wiki(_require(DATA_DIR / "wiki"))


#: Test modules that test the thread limits themselves: they start from the machine's threads.
OWN_THREADS = {"test_scaling"}


@pytest.fixture(autouse=True, scope="module")
def _one_thread_per_test_worker(request):
    """One torch and one BLAS / OpenMP thread per test module: ``pytest -n 2`` keeps both
    cores busy with its two workers, and a worker's second thread only waits for a core (on
    two threads each, tests/test_sequential.py took 30 s instead of 10, a CCA fit of TICRC's
    1280 image features 21 s instead of 0.3).  The modules of :data:`OWN_THREADS` test the
    thread limits themselves and keep the machine's."""
    import torch
    from threadpoolctl import threadpool_limits

    if request.module.__name__.rsplit(".", 1)[-1] in OWN_THREADS:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(autouse=True, scope="session")
def _the_suites_own_load_is_not_a_busy_machine():
    """``pytest -n 2`` keeps the cores busy itself: a fit's BusyMachineWarning would only
    report the suite's own workers (and fail the tests that turn warnings into errors).
    ``tests/test_warnings.py`` tests the warning with the rule's own inputs."""
    from temporal_xmodal import _device

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_device, "warn_if_busy", lambda *args, **kwargs: False)
        yield
