"""Devices and threads: the one owner of what ``device=`` means, of moving tensors there, and
of the threads a fit may use.

``"auto"`` is CUDA when torch finds a GPU, else the CPU, everywhere; a CUDA device without
a GPU, and torch's ``"meta"`` device, are refused with a ``ValueError``.  Inside a joblib or
Dask worker, a fit's torch and BLAS threads are limited to its share of the cores.  It
imports nothing of the package but :mod:`temporal_xmodal._warnings` (layer 0).

Read more in docs/scaling.md ("Threads per worker").
"""

import contextlib
import os
import sys
import threading

import torch
from joblib.parallel import get_active_backend
from threadpoolctl import ThreadpoolController

from ._warnings import warn_if_busy

#: What ``device="auto"`` means, everywhere.
AUTO = "auto"

_META = {"allowed": 0}
_META_LOCK = threading.Lock()


@contextlib.contextmanager
def allow_meta():
    """Let :func:`resolve_device` pass torch's ``"meta"`` device through, in this block
    (the tests' stand-in for a second device)."""
    with _META_LOCK:
        _META["allowed"] += 1
    try:
        yield
    finally:
        with _META_LOCK:
            _META["allowed"] -= 1


def _no_gpu_message(device):
    return (f"device={str(device)!r} but torch finds no CUDA GPU "
            "(torch.cuda.is_available() is False); use device='auto' or 'cpu'.")


def resolve_device(device):
    """The device that a ``device`` parameter names on this machine.

    Parameters
    ----------
    device : str, torch.device or None
        ``"auto"``: ``"cuda"`` when torch finds a CUDA GPU, else ``"cpu"``; any other value
        (``None`` too) as given.

    Returns
    -------
    device : str, torch.device or None

    Raises
    ------
    ValueError
        A CUDA device without a GPU, or torch's ``"meta"`` device (outside
        :func:`allow_meta`).
    RuntimeError
        A string torch does not read as a device.
    """
    if device is None:
        return None
    if isinstance(device, str) and device == AUTO:
        return "cuda" if torch.cuda.is_available() else "cpu"
    kind = torch.device(device).type
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError(_no_gpu_message(device))
    if kind == "meta" and not _META["allowed"]:
        raise ValueError(f"device={str(device)!r} is torch's meta device, which holds shapes "
                         "and no values: nothing can be trained, embedded or searched there. "
                         "Use device='auto', 'cpu' or 'cuda'.")
    return device


def loading_device(device):
    """Where a model whose tensors were saved on ``device`` loads on this machine: the CPU
    in place of a CUDA device when torch finds no GPU, else ``device``."""
    if (device is not None and torch.device(device).type == "cuda"
            and not torch.cuda.is_available()):
        return "cpu"
    return device


def device_key(device):
    """The one name of ``device`` (a ``torch.device``): the one its tensors report
    (``"cuda"`` is ``cuda:<current>``, ``"cpu:0"`` is ``cpu``)."""
    return torch.empty(0, device=device).device


def device_memory(device):
    """``(free, total)`` bytes of a CUDA ``device``, or None on other devices.

    Free is the driver's figure plus what this process's torch allocator holds unused.
    """
    device = torch.device(device)
    if device.type != "cuda" or not torch.cuda.is_available():
        return None
    free, total = torch.cuda.mem_get_info(device)
    free += torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    return free, total


def pinned_staging(device):
    """Whether host batches staged for ``device`` (a ``torch.device``) are gathered into
    pinned memory: for a CUDA device, and for the CPU on a CUDA machine."""
    return device.type == "cuda" or (device.type == "cpu" and torch.cuda.is_available())


def map_nest(fn, nest, leaves=()):
    """``nest`` (dicts, tuples, lists) with ``fn``'s result in place of each tensor and
    each object of a type in ``leaves``; other entries unchanged.

    An object with a ``map_tensors(fn)`` method maps its own tensors; a tensor such objects
    share goes to ``fn`` once, and they share its result.
    """
    return _map_nest(fn, nest, leaves, {})


def _map_nest(fn, nest, leaves, shared):
    if torch.is_tensor(nest) or isinstance(nest, leaves):
        return fn(nest)
    if hasattr(nest, "map_tensors"):  # a container of tensors (a dataset's sparse rows)
        return nest.map_tensors(lambda t: _once(fn, t, shared))
    if isinstance(nest, dict):
        return {key: _map_nest(fn, value, leaves, shared) for key, value in nest.items()}
    if isinstance(nest, (tuple, list)):
        return type(nest)(_map_nest(fn, value, leaves, shared) for value in nest)
    return nest


def _once(fn, tensor, shared):
    """``fn(tensor)``, once per tensor of the containers of one nest."""
    key = id(tensor)
    if key not in shared:
        shared[key] = (tensor, fn(tensor))  # the tensor held: its id stays its own
    return shared[key][1]


def move(nest, device, non_blocking=False):
    """The tensors of a nest on ``device`` (:func:`map_nest`; a tensor already there is
    not copied), ``non_blocking`` copies optional."""
    return map_nest(lambda t: t.to(device, non_blocking=non_blocking), nest)


def nbytes(nest):
    """Bytes of the tensors of a nest (:func:`map_nest`)."""
    sizes = []
    map_nest(lambda t: sizes.append(t.element_size() * t.numel()), nest)
    return sum(sizes)


__all__ = ["AUTO", "allow_meta", "device_key", "device_memory", "in_worker",
           "limit_worker_threads", "loading_device", "map_nest", "move", "nbytes",
           "pinned_staging", "resolve_device", "thread_controller", "thread_limits",
           "training_threads", "worker_threads"]


# ------------------------------------------------------ threads per parallel worker
_thread_lock = threading.Lock()
_state = {"depth": 0, "torch": None, "blas": None}


def worker_threads():
    """Threads one fit may use here: 1 in a worker thread, the launcher's
    ``OMP_NUM_THREADS`` in a worker process, ``None`` (no limit) when unset or outside
    joblib and Dask workers."""
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


@contextlib.contextmanager
def limit_worker_threads(n_threads=None):
    """Limit torch and BLAS / OpenMP threads to ``n_threads`` (default:
    :func:`worker_threads`) in this block; restored on exit (the process-wide limits
    reference-counted across threads)."""
    n_threads = worker_threads() if n_threads is None else n_threads
    if n_threads is None:
        yield
        return
    with _thread_lock:
        if _state["depth"] == 0:
            _state["torch"] = torch.get_num_threads()
            _state["blas"] = thread_controller().limit(limits=n_threads, user_api="blas")
        _state["depth"] += 1
        torch.set_num_threads(n_threads)
    # per thread: OpenMP, and BLAS built on OpenMP (faiss' OpenBLAS), whose count is the
    # calling thread's like OpenMP's
    controller = thread_controller()
    per_thread = [pools.limit(limits=n_threads)
                  for pools in (controller.select(user_api="openmp"),
                                controller.select(user_api="blas", threading_layer="openmp"))
                  if pools.lib_controllers]
    try:
        yield
    finally:
        for limiter in reversed(per_thread):
            limiter.restore_original_limits()
        with _thread_lock:
            _state["depth"] -= 1
            if _state["depth"] == 0:
                torch.set_num_threads(_state["torch"])
                _state["blas"].restore_original_limits()
                _state["torch"] = _state["blas"] = None


@contextlib.contextmanager
def training_threads(name):
    """The threads a fit of ``name`` trains on: in a worker its share
    (:func:`limit_worker_threads`), elsewhere torch's, with a
    :class:`~temporal_xmodal.BusyMachineWarning` on a busy machine."""
    with limit_worker_threads():
        threads = torch.get_num_threads()
        if threads > 1 and not in_worker():  # a worker's threads are limited already
            warn_if_busy(name, threads)
        yield


_controller = {"modules": -1, "controller": None}
_controller_lock = threading.Lock()  # apart: limit_worker_threads reads it under _thread_lock


def thread_controller():
    """The process's :class:`threadpoolctl.ThreadpoolController`, built again only when
    ``sys.modules`` grew (an import may have loaded a BLAS or OpenMP runtime)."""
    with _controller_lock:
        if _controller["modules"] != len(sys.modules):
            _controller["controller"] = ThreadpoolController()
            _controller["modules"] = len(sys.modules)
        return _controller["controller"]


def thread_limits(n_threads):
    """A context limiting every native thread pool (BLAS, OpenMP) to ``n_threads``
    (:func:`threadpoolctl.threadpool_limits` through :func:`thread_controller`)."""
    return thread_controller().limit(limits=n_threads)
