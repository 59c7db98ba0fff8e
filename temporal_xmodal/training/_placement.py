"""Copies of a fit's host tensors on a device: one per device, made when the device has room.

:class:`DeviceCopies` holds them for the datasets that share the tensors (a fit's training
and validation rows, SCML's pools).  Three rules make a copy safe on a GPU shared by others:

* **One key per device** (:func:`temporal_xmodal._device.device_key`): ``"cuda"``,
  ``"cuda:0"`` and a tensor's ``.device`` name one device, so each finds the same copy (a
  second name would miss it and gather on the host, or copy the data twice).
* **Half the device, everyone counted** (:func:`fits`): ``placement="auto"`` copies the data
  when the device's memory in use, by every process, stays at most half of its total with
  the copy (the rest is for the models, the optimisers and the scans:
  :func:`temporal_xmodal.metrics._scan.scan_budget`), as
  :func:`temporal_xmodal._device.device_memory` reads it.
* **Read and copy as one step** (:func:`device_lock`): the free memory is read and the copy
  made under a lock per device, held across threads and, where ``fcntl`` exists, processes.
  Without it, k workers of ``GridSearchCV(n_jobs=k)`` starting at once would all read an
  empty device and each copy their data.
"""

import os
import tempfile
import threading
from contextlib import contextmanager

import torch

from .. import _device
from .._device import device_key, move, nbytes

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the lock holds within one process
    fcntl = None

#: Most of a device's total memory in use (every process counted) after ``placement="auto"``
#: copies the data there.
_RESIDENT_SHARE = 0.5
_thread_lock = threading.Lock()


def fits(nbytes, device):
    """Whether ``nbytes`` more leave ``device`` at most half full, every process counted.

    False where the device's memory cannot be read
    (:func:`temporal_xmodal._device.device_memory`).
    """
    memory = _device.device_memory(device)
    if memory is None:
        return False
    free, total = memory
    return (total - free) + nbytes <= _RESIDENT_SHARE * total


def _lock_path(device):
    """The lock file of ``device``, named after the GPU's UUID where there is one (the same
    GPU is ``cuda:0`` to one process and ``cuda:1`` to another)."""
    name = f"{device.type}{device.index or 0}"
    if device.type == "cuda":
        name = f"cuda-{getattr(torch.cuda.get_device_properties(device), 'uuid', name)}"
    return os.path.join(tempfile.gettempdir(), f"temporal_xmodal-{name}.lock")


@contextmanager
def device_lock(device):
    """Hold ``device``'s placement lock: across threads, and across processes where ``fcntl``
    exists (a lock file in the temporary folder; unreadable, it holds within the process)."""
    with _thread_lock:
        handle = None
        if fcntl is not None:
            try:
                handle = os.open(_lock_path(device), os.O_RDONLY | os.O_CREAT, 0o666)
            except OSError:
                handle = None
        try:
            if handle is not None:
                fcntl.flock(handle, fcntl.LOCK_EX)
            yield
        finally:
            if handle is not None:
                os.close(handle)  # releases the lock


class DeviceCopies(dict):
    """Copies of some host tensors on devices, each made once (module docstring): a dict
    from :func:`~temporal_xmodal._device.device_key` to the copy.

    One instance serves every dataset that indexes the same tensors (the training and
    validation rows of a fit); it never pickles its copies.  A fit on the CPU makes none:
    its datasets build an empty one and clear it, and no code of this module runs.
    """

    def __reduce__(self):
        return (DeviceCopies, ())

    def place(self, tensors, device, placement="auto"):
        """Copy ``tensors`` (a nest of dicts, tuples and host tensors) to ``device`` once.

        Parameters
        ----------
        tensors : dict, tuple or torch.Tensor
        device : str or torch.device
        placement : {"auto", "device", "staged"}, default="auto"
            "device" copies them whatever their size; "staged" never; "auto" when the
            device stays at most half full with them (:func:`fits`).

        Returns
        -------
        placed : bool
            Whether the tensors are on ``device`` (always True for the CPU).
        """
        device = device_key(device)
        if device.type == "cpu" or device in self:
            return True
        if placement == "staged":
            return False
        with device_lock(device):  # the reading and the copy: one step for every worker
            if placement == "auto" and not fits(nbytes(tensors), device):
                return False
            self[device] = move(tensors, device)
        return True

    def get(self, device, default):
        """The copy on ``device``, or ``default`` when there is none."""
        return super().get(device_key(device), default)

