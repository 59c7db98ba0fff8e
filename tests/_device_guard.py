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

import io
import pickle

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


class HostSyncs(TorchDispatchMode):
    """Record the ops that make a host synchronisation on a GPU; fake ``.item()`` on meta.

    Parameters
    ----------
    fake : number or None
        What ``.item()`` returns on meta tensors (which hold no data); None: let it raise.
    """

    SYNC = ("aten._local_scalar_dense", "aten.nonzero", "aten.masked_select", "aten.item")

    def __init__(self, fake=None):
        super().__init__()
        self.calls, self.fake = [], fake

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func)
        if name.startswith(self.SYNC):
            self.calls.append(name)
            if self.fake is not None and name.startswith("aten._local_scalar_dense"):
                return self.fake
        return func(*args, **(kwargs or {}))


class PlainTensors(pickle.Pickler):
    """Records the tensors a pickle would store with their device.

    skorch pickles a net's module, criterion, optimiser (and here callbacks) on their own and
    restores them with ``map_location`` (onto the CPU when CUDA is absent), as SCML does for
    S and M; any other tensor is pickled with its device and fails to load on a machine
    without it.  CPU generators are fine: their state is host bytes wherever the model was
    fitted.
    """

    def __init__(self, file):
        super().__init__(file)
        self.found = []

    def reducer_override(self, obj):
        if isinstance(obj, torch.Generator) and obj.device.type == "cpu":
            return torch.Generator, ()
        if isinstance(obj, torch.Tensor):
            self.found.append(f"{type(obj).__name__} {tuple(obj.shape)} {obj.dtype}")
        return NotImplemented


def plain_tensors(obj):
    """The tensors :class:`PlainTensors` finds in a pickle of ``obj``."""
    finder = PlainTensors(io.BytesIO())
    finder.dump(obj)
    return finder.found
