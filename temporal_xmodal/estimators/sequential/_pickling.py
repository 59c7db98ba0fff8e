"""Pickling an SCML through a device mapping, so that a model fitted on a GPU loads without one.

S, the plugs and M are pickled as the stage net that holds them (skorch maps its modules
onto the loading machine's devices), else apart, their tensors mapped as skorch maps them.
"""

import io
import pickle

import torch
from skorch.utils import get_map_location

from ..._device import loading_device

#: The fitted torch modules of an SCML, pickled through a device mapping.
DEVICE_MODULES = ("module_", "meta_learner_")


def pack_modules(state):
    """The estimator's ``__getstate__`` dict with each module of :data:`DEVICE_MODULES` replaced
    by a reference to the latest stage net that holds it, or pickled apart."""
    state = dict(state)
    held, apart = {}, {}
    for key in DEVICE_MODULES:
        module = state.get(key)
        if module is None:
            continue
        owner = _holder(state.get("nets_") or {}, module)
        if owner is None:
            apart[key] = module
        else:
            held[key] = owner
        del state[key]
    if held:
        state["_modules_in_nets"] = held
    if apart:
        state["_device_modules"] = pickle.dumps(apart)
    return state


def unpack_modules(state):
    """The inverse of :func:`pack_modules`, on the loading machine's devices (the CPU, with a
    ``DeviceWarning``, when CUDA is gone: ``device_`` then says ``"cpu"``)."""
    state = dict(state)
    device = state.get("device_")
    for key, (name, attr) in state.pop("_modules_in_nets", {}).items():
        state[key] = getattr(state["nets_"][name], attr)  # mapped by skorch
    blob = state.pop("_device_modules", None)
    if blob is not None:
        state.update(_DeviceUnpickler(io.BytesIO(blob), get_map_location(device)).load())
    if device is not None:
        state["device_"] = loading_device(device)  # where the nets and modules were loaded
    return state


def _holder(nets, module):
    """``(stage, attribute)`` of the latest stage net holding ``module`` (None if none does)."""
    for name, net in reversed(list(nets.items())):
        for attr in ("target", "module_"):
            if getattr(net, attr, None) is module:
                return name, attr
    return None


class _DeviceUnpickler(pickle.Unpickler):
    """Unpickler that loads every tensor storage onto ``map_location``.

    A pickled tensor's storage is rebuilt by ``torch.storage._load_from_bytes``
    (``torch.load`` of its bytes, on the saving device); here it is loaded with
    ``map_location`` instead (skorch loads its nets the same way).
    """

    def __init__(self, file, map_location):
        super().__init__(file)
        self.map_location = map_location

    def find_class(self, module, name):
        if (module, name) == ("torch.storage", "_load_from_bytes"):
            return lambda b: torch.load(io.BytesIO(b), map_location=self.map_location,
                                        weights_only=True)
        return super().find_class(module, name)


__all__ = ["DEVICE_MODULES", "pack_modules", "unpack_modules"]
