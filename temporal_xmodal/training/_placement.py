"""Copies of a fit's host tensors on a device, one per device (:class:`DeviceCopies`), made
when the device stays at most half full, every process counted (:func:`fits`), under one
lock per device across threads and processes (:func:`device_lock`).  Read more in
docs/scaling.md, "On a GPU"."""

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
    """Whether ``nbytes`` more leave ``device`` at most half full, every process counted (False
    where its memory cannot be read)."""
    memory = _device.device_memory(device)
    if memory is None:
        return False
    free, total = memory
    return (total - free) + nbytes <= _RESIDENT_SHARE * total


def _lock_path(device):
    """The lock file of ``device``, named after the GPU's UUID where there is one."""
    name = f"{device.type}{device.index or 0}"
    if device.type == "cuda":
        name = f"cuda-{getattr(torch.cuda.get_device_properties(device), 'uuid', name)}"
    return os.path.join(tempfile.gettempdir(), f"temporal_xmodal-{name}.lock")


@contextmanager
def device_lock(device):
    """Hold ``device``'s placement lock: across threads, and across processes where ``fcntl``
    exists."""
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
    """Copies of some host tensors on devices, each made once: a dict from
    :func:`~temporal_xmodal._device.device_key` to the copy, shared by the datasets that index
    the same tensors; its copies are never pickled."""

    def __reduce__(self):
        return (DeviceCopies, ())

    def place(self, tensors, device, placement="auto"):
        """Copy ``tensors`` (a nest of host tensors) to ``device`` once: always with ``placement=
        "device"``, never with ``"staged"``, with ``"auto"`` when they :func:`fits`; returns
        whether they are there (always True for the CPU)."""
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
        return super().get(device_key(device), default)

