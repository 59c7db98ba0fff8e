"""The training step's forward and loss as one compiled graph (``torch.compile``); each step
signature gets a function of its own, so that dynamo's per-code-object recompile limit is
never reached across fits.  Read more in docs/training.md, "A compiled step"."""

import inspect
import threading
import types
import weakref
from collections import OrderedDict
from collections.abc import Mapping

import torch

from .._warnings import warn
from ..nn.layers import Dropout

#: ``torch.compile``'s keyword arguments that ``CompiledStep`` fixes.
_FIXED = {"fullgraph": True, "dynamic": False}


def _forward_loss(module, criterion, X, y):
    """skorch's ``infer`` and ``get_loss`` of one training batch, as one function."""
    y_pred = module(**X)
    return criterion(y_pred, y, X), y_pred


def _fresh_forward_loss():
    """:func:`_forward_loss` with a code object of its own (dynamo caches graphs per code object)."""
    f = _forward_loss
    fresh = types.FunctionType(f.__code__.replace(), f.__globals__, f.__name__,
                               f.__defaults__, f.__closure__)
    fresh.__doc__, fresh.__qualname__ = f.__doc__, f.__qualname__
    return fresh


#: One compiled function per step signature, held weakly (by its steps and :data:`_RECENT`).
_SHARED = weakref.WeakValueDictionary()
#: The functions of the last :data:`N_RECENT` signatures, most recent last.
_RECENT = OrderedDict()
N_RECENT = 16
_SHARED_LOCK = threading.Lock()


def _shared_function(key, options, full=None):
    """The compiled function of the steps whose signature is ``key``; a fresh one in place
    of ``full`` (a function whose graphs reached dynamo's recompile limit)."""
    with _SHARED_LOCK:
        fn = _SHARED.get(key)
        if fn is None or fn is full:
            fn = torch.compile(_fresh_forward_loss(), **_FIXED, **options)
            _SHARED[key] = fn
        _RECENT[key] = fn
        _RECENT.move_to_end(key)
        while len(_RECENT) > N_RECENT:
            _RECENT.popitem(last=False)
        return fn


def _signature(value):
    """What dynamo's guards read of ``value``: tensors by shape, dtype and device."""
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), value.dtype, str(value.device),
                value.requires_grad)
    if isinstance(value, Mapping):
        return ("map", tuple((k, _signature(v)) for k, v in value.items()))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_signature(v) for v in value))
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return type(value)


def _numbers(obj, depth=1):
    """``obj``'s public Python numbers and strings (and tuples of them), and those of its plain
    attribute objects ``depth`` levels down: what dynamo compiles in as constants."""
    out = []
    for key, value in vars(obj).items():
        if key.startswith("_") or key == "training":
            continue
        if isinstance(value, (bool, int, float, str)) or (
                isinstance(value, tuple) and all(isinstance(v, (bool, int, float, str))
                                                 for v in value)):
            out.append((key, value))
        elif (depth > 0 and hasattr(value, "__dict__") and not isinstance(
                value, (type, types.FunctionType, types.MethodType, types.ModuleType,
                        torch.nn.Module, torch.Tensor))):
            out.append((key, _numbers(value, depth - 1)))
    return tuple(out)


def _module_signature(module):
    """A module's types, parameter and buffer shapes and Python numbers; for a criterion that is
    no module, its type and numbers."""
    if not isinstance(module, torch.nn.Module):
        return (type(module), _numbers(module) if hasattr(module, "__dict__") else ())
    subs = tuple(module.named_modules())
    return (tuple((name, type(sub)) for name, sub in subs),
            tuple((name, _numbers(sub)) for name, sub in subs),
            tuple((name, _signature(t)) for name, t in module.named_parameters()),
            tuple((name, _signature(t)) for name, t in module.named_buffers()))


def _reference(obj):
    """A weak reference to ``obj``, or a strong one where it takes none."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


def _hit_recompile_limit(error):
    """Whether ``error`` is dynamo's "this code object has too many graphs"."""
    return any(type(e).__name__ in ("FailOnRecompileLimitHit", "FailOnCacheLimitHit")
               for e in (error, *_causes(error)))


def _is_compile_error(error):
    """Whether ``error`` comes from torch's compiler stack, not from the step's own code."""
    names = {type(error).__module__} | {type(e).__module__ for e in _causes(error)}
    return any(name.startswith(("torch._dynamo", "torch._inductor", "torch._functorch",
                                "torch.fx", "torch._subclasses")) for name in names)


def _one_line(error):
    """The error and its root cause, one line each, joined."""
    root = getattr(error, "inner_exception", None) or next(iter(reversed(list(_causes(error)))),
                                                           None)
    lines = [f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0]}"
             for e in (error, root) if e is not None]
    return " <- ".join(lines)


def _causes(error):
    while error.__cause__ is not None or error.__context__ is not None:
        error = error.__cause__ or error.__context__
        yield error


def _check_options(options):
    """``options`` as a dict of ``torch.compile``'s keyword arguments, or a clear error."""
    if not isinstance(options, Mapping):
        hint = (f" (for a backend: {{'backend': {options!r}}}; for a mode: "
                f"{{'mode': {options!r}}})" if isinstance(options, str) else "")
        raise TypeError(f"CompiledStep's options must be a dict of torch.compile's keyword "
                        f"arguments such as {{'backend': 'aot_eager'}} or {{'mode': "
                        f"'reduce-overhead'}}; got {type(options).__name__} {options!r}"
                        f"{hint}.")
    accepted = set(inspect.signature(torch.compile).parameters) - {"model", *_FIXED}
    for key in options:
        if key in _FIXED:
            raise ValueError(f"CompiledStep's options may not set {key!r}: the step is "
                             f"compiled with {key}={_FIXED[key]!r} (static shapes, one graph).")
        if key not in accepted:
            raise ValueError(f"CompiledStep's options has {key!r}, which is not a keyword "
                             f"argument of torch.compile; use {sorted(accepted)}.")
    return dict(options)


class CompiledStep:
    """Forward and loss of a training step under ``torch.compile``, eager on failure.

    Steps with the same signature share one compiled function and its graphs, in any number
    of fits.  Read more in the user guide: docs/training.md ("A compiled step").

    Parameters
    ----------
    options : dict
        Keyword arguments of ``torch.compile``; ``fullgraph=True`` and ``dynamic=False`` are
        fixed, anything else than such a dict is refused.
    name : str, default="the estimator"
        Named in the fallback warning.

    Attributes
    ----------
    failed_ : str or None
        Why the step runs eagerly (the compiler's error, one line); ``None`` while compiled.
    """

    def __init__(self, options, name="the estimator"):
        self.options = _check_options(options)
        self.name = name
        self.failed_ = None
        self._fns = {}
        self._modules = None

    def _function(self, module, criterion, X, y):
        """The compiled function of this step's signature; the module's and criterion's part is
        read once per pair of objects, the batch's shapes every step."""
        held = self._modules
        if held is None or held[0]() is not module or held[1]() is not criterion:
            held = self._modules = (_reference(module), _reference(criterion),
                                    (repr(sorted(self.options.items())),
                                     _module_signature(module), _module_signature(criterion)))
            self._fns = {}
        batch = (_signature(X), _signature(y))
        fn = self._fns.get(batch)
        if fn is None:
            fn = self._fns[batch] = _shared_function((*held[2], *batch), self.options)
        return batch, fn

    def __call__(self, module, criterion, X, y):
        """``(loss, y_pred)`` of the batch, or ``None`` when the step runs eagerly."""
        if self.failed_ is not None:
            return None
        batch, fn = self._function(module, criterion, X, y)
        if self.options.get("mode") in ("reduce-overhead", "max-autotune"):
            torch.compiler.cudagraph_mark_step_begin()  # the last step's outputs are read
        try:
            try:
                return fn(module, criterion, X, y)
            except Exception as error:  # noqa: BLE001 - only the recompile limit, else below
                if not _hit_recompile_limit(error):
                    raise
            # the signature's function is full (guards on Python numbers): a fresh one
            fn = self._fns[batch] = _shared_function((*self._modules[2], *batch),
                                                     self.options, full=fn)
            return fn(module, criterion, X, y)
        except Exception as error:  # noqa: BLE001 - only the compiler's own, re-raised else
            if not _is_compile_error(error):
                raise
            self.failed_ = _one_line(error)
            self._fns = {}
            _continue_eagerly(module)
            warn(f"{self.name}: torch.compile could not compile the training step "
                 f"({self.failed_[:300]}); training continues eagerly (same results, slower "
                 "on a GPU). compile_step=False skips the attempt.", RuntimeWarning)
            return None

    def __getstate__(self):
        # a compiled function does not pickle; the weak references neither
        return {**self.__dict__, "_fns": {}, "_modules": None}


def _continue_eagerly(module):
    """Hand each dropout's stream position from its device counter to the eager one."""
    for m in module.modules():
        if isinstance(m, Dropout):
            m._drawn = 2 * int(m.position)  # one host sync, once per fit


__all__ = ["CompiledStep"]
