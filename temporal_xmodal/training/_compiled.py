"""The training step's forward and loss as one compiled graph (``torch.compile``).

An eager step launches each of its ~110 kernels from Python (docs/scaling.md): on a GPU that
host time, not the arithmetic, sets the step's duration.  :class:`CompiledStep` runs the
module's forward and the loss through ``torch.compile(fullgraph=True, dynamic=False)``: one
graph forward and one backward (AOTAutograd), fused; on CUDA with ``mode="reduce-overhead"``
each is replayed as a CUDA graph.  The optimiser stays outside (a fused step, one kernel
per parameter group).

Shapes are static: a fit compiles one graph for its full batches and one for the last,
shorter batch.  Nothing else a step reads changes between steps as a Python number (the
dropout position and SAM's α are device tensors), so later epochs reuse both graphs.  When
torch cannot compile the step (no C++ compiler for the CPU backend, an op dynamo cannot
trace) the fit warns once and goes on eagerly, with the same dropout stream.
"""

import torch

from .._warnings import warn
from ..nn.layers import Dropout


def _forward_loss(module, criterion, X, y):
    """skorch's ``infer`` and ``get_loss`` of one training batch, as one function."""
    y_pred = module(**X)
    return criterion(y_pred, y, X), y_pred


def _is_compile_error(error):
    """Whether ``error`` comes from torch's compiler stack, not from the step's own code."""
    names = {type(error).__module__} | {type(e).__module__ for e in _causes(error)}
    return any(name.startswith(("torch._dynamo", "torch._inductor", "torch._functorch",
                                "torch.fx", "torch._subclasses")) for name in names)


def _one_line(error):
    """The error and its root cause, one line each, joined (the compiler wraps the cause)."""
    root = getattr(error, "inner_exception", None) or next(iter(reversed(list(_causes(error)))),
                                                           None)
    lines = [f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0]}"
             for e in (error, root) if e is not None]
    return " <- ".join(lines)


def _causes(error):
    while error.__cause__ is not None or error.__context__ is not None:
        error = error.__cause__ or error.__context__
        yield error


class CompiledStep:
    """Forward and loss of a training step under ``torch.compile``, eager on failure.

    Read more in the user guide: docs/training.md ("A compiled step").

    Parameters
    ----------
    options : dict
        Keyword arguments of ``torch.compile`` (``mode``, ``backend``, ``options``);
        ``fullgraph=True`` and ``dynamic=False`` are fixed.
    name : str, default="the estimator"
        Named in the fallback warning.

    Attributes
    ----------
    failed_ : str or None
        Why the step runs eagerly (the compiler's error, one line); ``None`` while compiled.
    """

    def __init__(self, options, name="the estimator"):
        self.options = dict(options)
        self.name = name
        self.failed_ = None
        self._fn = None

    def __call__(self, module, criterion, X, y):
        """``(loss, y_pred)`` of the batch, or ``None`` when the step runs eagerly."""
        if self.failed_ is not None:
            return None
        if self._fn is None:
            self._fn = torch.compile(_forward_loss, fullgraph=True, dynamic=False,
                                     **self.options)
        if self.options.get("mode") in ("reduce-overhead", "max-autotune"):
            torch.compiler.cudagraph_mark_step_begin()  # the last step's outputs are read
        try:
            return self._fn(module, criterion, X, y)
        except Exception as error:  # noqa: BLE001 - only the compiler's own, re-raised else
            if not _is_compile_error(error):
                raise
            self.failed_ = _one_line(error)
            _continue_eagerly(module)
            warn(f"{self.name}: torch.compile could not compile the training step "
                 f"({self.failed_[:300]}); training continues eagerly (same results, slower "
                 "on a GPU). compile_step=False skips the attempt.", RuntimeWarning)
            return None

    def __getstate__(self):
        return {**self.__dict__, "_fn": None}  # a compiled function does not pickle


def _continue_eagerly(module):
    """Hand each dropout's stream position from its device counter to the eager one."""
    for m in module.modules():
        if isinstance(m, Dropout):
            m._drawn = 2 * int(m.position)  # one host sync, once per fit


__all__ = ["CompiledStep"]
