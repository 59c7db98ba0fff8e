"""Devices and threads: the one owner of what ``device=`` means, of moving tensors there, and
of the threads a fit may use.

Every estimator, featuriser, iterator and scan asks this module, and no other code of the
package, for:

* **the device a ``device`` parameter names** (:func:`resolve_device`): ``"auto"`` is CUDA
  when torch finds a GPU, else the CPU, everywhere; a CUDA device on a machine without a GPU
  is refused with a ``ValueError`` that says so (torch's own errors come later, from deep
  inside a fit: "Torch not compiled with CUDA enabled", or a pinned-memory allocation), and
  so is torch's ``"meta"`` device, which holds shapes and no values (a fit there trained
  for seconds and then failed with "Cannot copy out of meta tensor"); the package's own
  tests use it as a stand-in for a second device inside :func:`allow_meta`;
* **the device a model saved on ``device`` loads on** (:func:`loading_device`): the CPU when
  it was saved on CUDA and this machine has no GPU;
* **one key per device** (:func:`device_key`): ``"cuda"``, ``"cuda:0"`` and a tensor's
  ``.device`` name one device;
* **its memory** (:func:`device_memory`): the one reader of a device's free memory;
* **pinned staging** (:func:`pinned_staging`): whether host batches bound for a device are gathered
  into pinned memory;
* **nests of tensors** (:func:`map_nest`, the one walker of dicts, tuples and lists of
  tensors; :func:`move`, :func:`nbytes` over it);
* **threads per parallel worker** (:func:`limit_worker_threads`, :func:`worker_threads`,
  :func:`in_worker`), the CPU's share of a fit run beside others.

Threads per parallel worker
---------------------------
Torch and BLAS are limited inside joblib / Dask workers.

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

It imports nothing of the package (layer 0).
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
    """Let :func:`resolve_device` pass torch's ``"meta"`` device through, in this block.

    The meta device holds shapes, no values: nothing the package computes can come back
    from it, so a ``device="meta"`` parameter is refused.  Tests that follow where tensors
    go (placement, the device guard) use it as a second device on a machine without a GPU.
    """
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
        ``"auto"``: ``"cuda"`` when torch finds a CUDA GPU, else ``"cpu"``.  Any other
        value is returned as given (``None`` too: "leave the tensors where they are").

    Returns
    -------
    device : str, torch.device or None

    Raises
    ------
    ValueError
        ``device`` is a CUDA device and ``torch.cuda.is_available()`` is False, or torch's
        ``"meta"`` device (shapes without values; outside :func:`allow_meta`).
    RuntimeError
        ``device`` is a string torch does not read as a device (torch's message).
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
    """Where a model whose tensors were saved on ``device`` is loaded on this machine: the
    CPU when ``device`` is a CUDA device and torch finds no GPU, else ``device``.

    Parameters
    ----------
    device : str, torch.device or None

    Returns
    -------
    device : str, torch.device or None
        ``"cpu"`` in place of an unavailable CUDA device; ``device`` unchanged otherwise.
    """
    if (device is not None and torch.device(device).type == "cuda"
            and not torch.cuda.is_available()):
        return "cpu"
    return device


def device_key(device):
    """The one name of ``device``: the one its tensors report (``"cuda"`` is
    ``cuda:<current>``, ``"meta:0"`` and ``"cpu:0"`` are ``meta`` and ``cpu``).

    Parameters
    ----------
    device : str or torch.device

    Returns
    -------
    key : torch.device
    """
    return torch.empty(0, device=device).device


def device_memory(device):
    """``(free, total)`` bytes of ``device``, or None where they cannot be read.

    The one reader of a device's memory: the scans' default budget
    (:func:`temporal_xmodal.metrics._scan.scan_budget`) and the training data's placement
    on the device (:func:`temporal_xmodal.training._placement.fits`) both ask it.

    Parameters
    ----------
    device : torch.device or str

    Returns
    -------
    memory : tuple of int or None
        On a CUDA device, the free memory reported by the driver plus what this
        process's torch allocator holds unused (free to this process; every
        other process's memory counts as used), and the total; None on
        other devices.
    """
    device = torch.device(device)
    if device.type != "cuda" or not torch.cuda.is_available():
        return None
    free, total = torch.cuda.mem_get_info(device)
    free += torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    return free, total


def pinned_staging(device):
    """Whether host batches staged for ``device`` are gathered into pinned memory: for a
    CUDA device, and for the CPU where the platform has pinned memory (a CUDA machine).

    Parameters
    ----------
    device : torch.device

    Returns
    -------
    pin : bool
    """
    return device.type == "cuda" or (device.type == "cpu" and torch.cuda.is_available())


def map_nest(fn, nest, leaves=()):
    """``fn`` on every tensor of a nest of dicts, tuples and lists; other entries
    (``None`` labels, numbers) unchanged.  An object with a ``map_tensors(fn)`` method
    (:class:`~temporal_xmodal.training.SparseRows`) maps its own tensors; a tensor such
    objects share (the CSR arrays of one sparse X, behind its image and text blocks) goes
    to ``fn`` once, and they share its result.

    The one walker of nested tensors (batches, a dataset's tensors, SCML's pools).

    Parameters
    ----------
    fn : callable
        Takes a tensor.
    nest : dict, tuple, list, torch.Tensor or any
    leaves : tuple of types, default=()
        Objects of these types go to ``fn`` whole (a gather of a block's rows).

    Returns
    -------
    nest
        Of the same structure (and container types), ``fn``'s results in place of the
        tensors.
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
    """``fn(tensor)``, once per tensor of the containers of one nest: the image and text
    windows of one sparse X share its arrays, moved (and counted) once."""
    key = id(tensor)
    if key not in shared:
        shared[key] = (tensor, fn(tensor))  # the tensor held: its id stays its own
    return shared[key][1]


def move(nest, device, non_blocking=False):
    """The tensors of a nest on ``device`` (:func:`map_nest`); a tensor already there is
    not copied.

    Parameters
    ----------
    nest : dict, tuple, list or torch.Tensor
    device : str or torch.device
    non_blocking : bool, default=False
        Asynchronous copies (from pinned host memory to a GPU).

    Returns
    -------
    nest
    """
    return map_nest(lambda t: t.to(device, non_blocking=non_blocking), nest)


def nbytes(nest):
    """Bytes of the tensors of a nest (:func:`map_nest`)."""
    sizes = []
    map_nest(lambda t: sizes.append(t.element_size() * t.numel()), nest)
    return sum(sizes)


__all__ = ["AUTO", "allow_meta", "device_key", "device_memory", "in_worker",
           "limit_worker_threads", "loading_device", "map_nest", "move", "nbytes",
           "pinned_staging", "resolve_device", "thread_controller", "thread_limits", "training_threads", "worker_threads"]


# ------------------------------------------------------ threads per parallel worker
_thread_lock = threading.Lock()
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


@contextlib.contextmanager
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
    """The threads a fit of ``name`` trains on, the same for every neural estimator (SCML's
    stages included): inside a joblib / Dask worker its share of the cores
    (:func:`limit_worker_threads`); elsewhere torch's, with a
    :class:`~temporal_xmodal.BusyMachineWarning` when the machine is busier than those
    threads allow (docs/scaling.md, "A busy machine")."""
    with limit_worker_threads():
        threads = torch.get_num_threads()
        if threads > 1 and not in_worker():  # a worker's threads are limited already
            warn_if_busy(name, threads)
        yield


_controller = {"modules": -1, "controller": None}
_controller_lock = threading.Lock()  # apart: limit_worker_threads reads it under _thread_lock


def thread_controller():
    """The process's :class:`threadpoolctl.ThreadpoolController`, kept while no module was
    imported: building one scans the loaded libraries (milliseconds of CPU), so it is built
    again only when ``sys.modules`` grew (an import may have loaded a BLAS or an OpenMP
    runtime, e.g. faiss' OpenBLAS).  Every thread limit of the library reads it."""
    with _controller_lock:
        if _controller["modules"] != len(sys.modules):
            _controller["controller"] = ThreadpoolController()
            _controller["modules"] = len(sys.modules)
        return _controller["controller"]


def thread_limits(n_threads):
    """A context that limits every native thread pool (BLAS, OpenMP) to ``n_threads``, as
    :func:`threadpoolctl.threadpool_limits` does, through :func:`thread_controller` (a
    metric's scan limits its BLAS threads on every call)."""
    return thread_controller().limit(limits=n_threads)
