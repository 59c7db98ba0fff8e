"""CPU-only guards for "runs on any device": mixed-device ops and tensors left behind.

CI has no GPU, so the suite cannot run a fit on CUDA.  What breaks there is always the same
thing: an op whose inputs sit on two devices (a batch entry, a fitted table or a buffer left on
the CPU while the module moved), or a host sync (``.item()``, ``nonzero``) inside a step.  Both
show on the CPU once the net is moved to torch's ``meta`` device:

* :class:`RejectMixedDevices` is a ``TorchDispatchMode`` that fails any aten op whose tensor
  inputs lie on more than one device.  ``meta``'s kernels do not check that by themselves
  (``mm`` of a meta and a CPU tensor succeeds), so without the mode a left-behind tensor would
  pass silently.  Copies between devices (``_to_copy``, ``copy_``) and 0-dim CPU tensors
  (which CUDA kernels accept as scalars) are allowed.
* meta tensors hold no data, so ``.item()``, ``nonzero`` and the like raise inside a step: a
  host sync in a training step fails the guard too.
* :func:`tensors_off_device` lists every tensor reachable from an object (module parameters
  and buffers, attributes, containers) that is not on the given device.
"""

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

_aten = torch.ops.aten
#: Ops that move data between devices on purpose.
_COPIES = {_aten._to_copy.default, _aten.copy_.default, _aten._copy_from.default,
           _aten._copy_from_and_resize.default, _aten.lift_fresh.default,
           _aten.lift_fresh_copy.default}


class MixedDeviceError(RuntimeError):
    """An aten op received tensors on more than one device."""


class RejectMixedDevices(TorchDispatchMode):
    """Raise :class:`MixedDeviceError` on any op mixing devices (copies excepted).

    Attributes
    ----------
    uploads : list of str
        The host → device copies seen (a fitted table uploaded per batch shows here).
    """

    def __init__(self):
        super().__init__()
        self.uploads = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _COPIES:
            out = func(*args, **kwargs)
            src, dst = {_aten._to_copy.default: (args[0], out),
                        _aten.copy_.default: args[1::-1]}.get(func, (args[0], args[-1]))
            if (isinstance(src, torch.Tensor) and src.device.type == "cpu" and src.dim() > 0
                    and isinstance(dst, torch.Tensor) and dst.device.type != "cpu"):
                self.uploads.append(f"{func}: {tuple(src.shape)} {src.dtype}")
            return out
        flat, _ = tree_flatten((args, kwargs))
        devices = {t.device for t in flat if isinstance(t, torch.Tensor)
                   and not (t.device.type == "cpu" and t.dim() == 0)}
        if len(devices) > 1:
            shapes = [(tuple(t.shape), str(t.device)) for t in flat
                      if isinstance(t, torch.Tensor)]
            raise MixedDeviceError(f"{func} mixes devices {sorted(map(str, devices))}: {shapes}")
        return func(*args, **kwargs)


def tensors_off_device(obj, device, *, name="obj", _seen=None):
    """Paths of the tensors reachable from ``obj`` that are not on ``device``.

    Walks module parameters and buffers, object attributes (``__dict__``), dicts, lists and
    tuples; numpy arrays and other leaves are ignored.

    Returns
    -------
    list of str
        ``"path: shape on device"`` per tensor left behind.
    """
    device = torch.device(device)
    seen = set() if _seen is None else _seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        return [] if obj.device.type == device.type else [
            f"{name}: {tuple(obj.shape)} on {obj.device}"]
    found = []
    if isinstance(obj, dict):
        items = [(f"{name}[{k!r}]", v) for k, v in obj.items()]
    elif isinstance(obj, (list, tuple)):
        items = [(f"{name}[{i}]", v) for i, v in enumerate(obj)]
    elif isinstance(obj, torch.nn.Module) or hasattr(obj, "__dict__"):
        if isinstance(obj, type) or isinstance(obj, (torch.Generator,)):
            return []
        items = [(f"{name}.{k}", v) for k, v in vars(obj).items()]
    else:
        return []
    for path, value in items:
        found.extend(tensors_off_device(value, device, name=path, _seen=seen))
    return found
