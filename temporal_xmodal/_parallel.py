"""Threads per parallel worker: torch and BLAS limited inside joblib / Dask workers.

``GridSearchCV(n_jobs=k)``, ``cross_validate(n_jobs=k)`` and
``BinnedProcrustesEmbedder(n_jobs=k)`` run k fits at once; each must then use
about ``cores / k`` threads, or the fits fight for the cores.  Outside a
worker nothing changes; inside one (a joblib worker of any backend, or a Dask
worker) a worker *thread* gets 1 thread and a worker *process* the
``OMP_NUM_THREADS`` its launcher set.  The policy and its measurements are in
docs/scaling.md.

The BLAS limit and torch's thread count are process-wide, so concurrent fits
in threads share one reference count: the first to enter saves the settings,
the last to leave restores them.  The OpenMP limit is per thread
(``omp_set_num_threads`` sets the calling thread's value), and so is that of
a BLAS built on OpenMP (faiss' OpenBLAS), so every fit sets and restores its
own.
"""

import os
import sys
import threading
from contextlib import contextmanager

import torch
from joblib.parallel import get_active_backend
from threadpoolctl import ThreadpoolController, threadpool_limits

_lock = threading.Lock()
_state = {"depth": 0, "torch": None, "blas": None}


def worker_threads():
    """Threads one fit may use here: an int inside a parallel worker, ``None`` for no limit.

    Returns
    -------
    n_threads : int or None
        1 in a worker thread; the launcher's ``OMP_NUM_THREADS`` in a worker
        process (``None`` when unset); ``None`` outside joblib and Dask workers.
    """
    if not in_worker():
        return None
    if threading.current_thread() is not threading.main_thread():
        return 1
    try:
        return max(1, int(os.environ["OMP_NUM_THREADS"]))
    except (KeyError, ValueError):
        return None


def in_worker():
    """Whether this runs inside a parallel worker: of joblib (any backend) or of Dask."""
    backend, _ = get_active_backend()
    return getattr(backend, "nesting_level", 0) >= 1 or _in_dask_worker()


def _in_dask_worker():
    if "distributed" not in sys.modules:
        return False
    try:
        sys.modules["distributed"].get_worker()
    except (ValueError, AttributeError):
        return False
    return True


@contextmanager
def limit_worker_threads(n_threads=None):
    """Limit torch and BLAS threads for the duration of a fit run inside a worker.

    Parameters
    ----------
    n_threads : int or None, default=None
        Threads to allow; ``None``: :func:`worker_threads` (no limit outside
        a worker).

    Notes
    -----
    Restores the previous ``torch.get_num_threads()`` and BLAS/OpenMP limits
    on exit (reference-counted across threads of one process).
    """
    n_threads = worker_threads() if n_threads is None else n_threads
    if n_threads is None:
        yield
        return
    with _lock:
        if _state["depth"] == 0:
            _state["torch"] = torch.get_num_threads()
            _state["blas"] = threadpool_limits(limits=n_threads, user_api="blas")
        _state["depth"] += 1
        torch.set_num_threads(n_threads)
    # per thread: OpenMP, and BLAS built on OpenMP (faiss' OpenBLAS), whose count is the
    # calling thread's like OpenMP's (one scan of the loaded libraries for both)
    controller = ThreadpoolController()
    per_thread = [pools.limit(limits=n_threads)
                  for pools in (controller.select(user_api="openmp"),
                                controller.select(user_api="blas", threading_layer="openmp"))
                  if pools.lib_controllers]
    try:
        yield
    finally:
        for limiter in reversed(per_thread):
            limiter.restore_original_limits()
        with _lock:
            _state["depth"] -= 1
            if _state["depth"] == 0:
                torch.set_num_threads(_state["torch"])
                _state["blas"].restore_original_limits()
                _state["torch"] = _state["blas"] = None
