"""The layers every network of the library is built from: seeded dropout, L2 normalisation.

Dropout whose draws are a fit's own and the same on every device
-----------------------------------------------------------------
torch's global random generator is one per process.  Fits that run at once in threads
(``GridSearchCV`` on joblib's threading backend, Dask worker threads,
``BinnedProcrustesEmbedder(n_jobs=k)`` on threads) interleave their draws from it in the
order the threads happen to run, so ``nn.Dropout`` made their results vary from run to
run.  A ``torch.Generator`` of the module's own fixes that on one
device, but CUDA's generator (Philox) and the CPU's (Mersenne Twister) draw different masks
from the same seed, so a fit on a GPU would not reproduce the same fit on the CPU.

Every dropout of our networks is therefore one of these modules: its keep mask is a
counter-based hash of (seed, element number), computed with exact integer tensor ops, so the
masks depend only on the seed and on how many elements the module has drawn, never on the
device, the thread or torch's generators (the idea of counter-based generators: Salmon et al.
2011, "Parallel random numbers: as easy as 1, 2, 3").  The hash is the 32-bit integer mixer
``x ← ((x ≫ 16) ⊕ x) · 0x45d9f3b`` applied twice, then ``x ← (x ≫ 16) ⊕ x``, of the draw's
number xor a key mixed from the seed; each hash gives two 16-bit draws, and an element is kept
when its draw is below ``(1 − p) · 2¹⁶``.  Every product stays below 2⁶³, so int64 arithmetic
is exact on every device.  Initialisation still draws
from the global generator, seeded, one fit at a time (:func:`temporal_xmodal.training.seeded`).

L2 normalisation with a short backward pass
-------------------------------------------
L2 normalisation of embeddings with a short backward pass.

``F.normalize`` is ``x / max(‖x‖, ε)`` built from generic ops: three kernels forward and
thirteen backward (the norm's backward handles a zero norm, the clamp's builds a mask).  Here
the forward is the same three ops and the backward the closed form of the Jacobian,
``(g − z ⟨g, z⟩) / ‖x‖`` with z = x / ‖x‖: five kernels.  Where ‖x‖ < ε (an all-zero row,
which tanh towers do not produce) the gradient is the same formula with ε for the norm.
"""

import sys

import torch
from torch import nn

_M32 = 0xFFFFFFFF
_MIX = 0x45D9F3B
#: Xored into the final mix: flips the top bit of each 16-bit draw d, so that read as a signed
#: int16 it is d − 2¹⁵ and one signed comparison tests d < threshold for both halves at once.
_FLIP = 0x80008000


def _mix32(x):
    """The integer mixer of the module docstring, elementwise on int64 values below 2³³."""
    x = (((x >> 16) ^ x) * _MIX) & _M32
    x = (((x >> 16) ^ x) * _MIX) & _M32
    return (x >> 16) ^ x


def _mix_int(value):
    """The same mixer on a Python int (for the per-call key)."""
    value &= _M32
    for _ in range(2):
        value = (((value >> 16) ^ value) * _MIX) & _M32
    return (value >> 16) ^ value


def _seed_key(seed):
    """The part of the key that depends on the seed only (a Python int below 2³²)."""
    return _mix_int(seed) ^ _mix_int(seed >> 32) ^ 0x9E3779B9


def _keep_words(words, key, n, threshold):
    """Keep mask of ``n`` draws from the hashes of ``words`` (int64, below 2³³) xor ``key``.

    Each hash gives two 16-bit draws, low half first; a draw is kept when below
    ``threshold``.  On little-endian machines (x86, ARM, CUDA) the two halves are compared in
    one op, as signed int16 after :data:`_FLIP`; the same draws either way.
    """
    x = words ^ key
    x = (((x >> 16) ^ x) * _MIX) & _M32
    x = (((x >> 16) ^ x) * _MIX) & _M32
    if sys.byteorder == "little":
        halves = ((x >> 16) ^ x ^ _FLIP).view(torch.int16).view(-1, 4)[:, :2]
        return (halves < threshold - 2**15).reshape(-1)[:n]
    x = (x >> 16) ^ x  # pragma: no cover - big-endian hosts
    return torch.stack([x & 0xFFFF, x >> 16], dim=1).view(-1)[:n] < threshold


def _threshold(p):
    return int(round((1.0 - p) * 2**16))


def keep_mask(shape, p, seed, offset, device):
    """Boolean keep mask of ``shape``: each element kept with probability ``1 − p``.

    Each 32-bit hash gives two 16-bit draws (its low and high halves), so the keep
    probability is ``round((1 − p) · 2¹⁶) / 2¹⁶`` (within 2⁻¹⁷ of ``1 − p``).

    Parameters
    ----------
    shape : tuple of int
    p : float
        Drop probability.
    seed : int
    offset : int
        Number of draws made before this call (the stream's position; even).
    device : torch.device

    Returns
    -------
    mask : torch.BoolTensor of ``shape`` on ``device``
        The same values on every device for the same arguments.
    """
    n = 1
    for size in shape:
        n *= int(size)
    words, position = (n + 1) // 2, offset // 2
    # the key mixes the seed with the high part of the position, so the int64 inputs of the
    # tensor mixer stay below 2**33 whatever the stream's length
    key = _mix_int(_seed_key(seed) ^ _mix_int(position >> 32))
    start = position & _M32
    numbers = torch.arange(start, start + words, dtype=torch.int64, device=device)
    return _keep_words(numbers, key, n, _threshold(p)).view(shape)


def keep_mask_at(shape, p, seed, position):
    """:func:`keep_mask` with the stream's position a device tensor, advanced in place.

    The form a captured (compiled) training step uses: no Python number changes from one
    step to the next, so the step's graph is traced once.  The same masks as
    :func:`keep_mask` at ``offset = 2 · position``.

    Parameters
    ----------
    shape : tuple of int
    p : float
    seed : int
    position : torch.Tensor
        0-dim int64: the number of hashes (pairs of draws) made before this call;
        incremented by this call's.

    Returns
    -------
    mask : torch.BoolTensor of ``shape`` on ``position``'s device
    """
    n = 1
    for size in shape:
        n *= int(size)
    words = (n + 1) // 2
    key = _mix32(_seed_key(seed) ^ _mix32(position >> 32))
    numbers = torch.arange(words, dtype=torch.int64, device=position.device) + (position & _M32)
    mask = _keep_words(numbers, key, n, _threshold(p)).view(shape)
    position.add_(words)
    return mask


class Dropout(nn.Module):
    """``nn.Dropout`` (zeroes each element with probability ``p``, scales the rest by 1/(1−p)).

    Its masks are drawn from a counter-based hash of its seed, so they are the
    same on every device and in every thread (module docstring).

    Read more in the user guide: docs/training.md ("Seeding and determinism").

    Parameters
    ----------
    p : float, default=0.5
        Probability of an element being zeroed.
    rows : bool, default=False
        Zero whole rows (items) with probability ``p`` and leave the others unscaled
        (Diachronic's ``time_dropout``: an item's time embedding replaced by zeros).

    Notes
    -----
    The masks are a function of :attr:`seed` (0 until :func:`reseed` sets it) and of the number
    of elements drawn since (module docstring): the same on the CPU and on CUDA.  The position
    is not pickled (a loaded model restarts from :attr:`seed`).  Eager calls count it on the
    host; a compiled training step counts it in the ``position`` buffer on the device
    (:func:`keep_mask_at`), so that no Python number changes between steps; a fit uses one
    or the other throughout.

    Examples
    --------
    >>> import torch
    >>> from temporal_xmodal.nn import Dropout, reseed
    >>> layer = Dropout(0.5)
    >>> reseed(layer, 0)
    >>> first = layer(torch.ones(2, 4))
    >>> reseed(layer, 0)
    >>> bool((layer(torch.ones(2, 4)) == first).all())
    True
    """

    def __init__(self, p=0.5, rows=False):
        super().__init__()
        self.p, self.rows = float(p), bool(rows)
        self.seed = 0
        self._drawn = 0
        # the position of a compiled step's stream (hashes drawn), on the module's device
        self.register_buffer("position", torch.zeros((), dtype=torch.int64), persistent=False)

    def reseed(self, seed):
        """Restart the stream from ``seed`` (an int) at the next draw."""
        self.seed, self._drawn = int(seed), 0
        self.position.zero_()

    def keep(self, shape, device):
        """The next boolean keep mask of ``shape`` from this layer's stream (its ``p``).

        ``forward`` applies one; a caller that needs several masks of one step draws them
        at once (Diachronic's time dropout: both modalities' rows in one mask, the draws
        two calls would make for an even batch), which is one set of kernels instead of two.
        """
        if torch.compiler.is_compiling():
            # traced once: the position is a tensor advanced in the graph (keep_mask_at)
            return keep_mask_at(shape, self.p, self.seed, self.position)
        mask = keep_mask(shape, self.p, self.seed, self._drawn, device)
        self._drawn += mask.numel() + mask.numel() % 2  # draws come in pairs
        return mask

    def forward(self, x):
        """``x`` with dropped elements (rows) zeroed; the identity in eval mode or at p = 0."""
        if not self.training or self.p == 0:
            return x
        if self.p == 1:
            return x * 0
        if self.rows:
            return x * self.keep((x.shape[0], 1), x.device)
        # one kernel for the scaled mask, one to apply it (and one in the backward pass)
        return x * (self.keep(x.shape, x.device) * (1.0 / (1.0 - self.p)))

    def __getstate__(self):
        return {**self.__dict__, "_drawn": 0}

    def __setstate__(self, state):
        self.__dict__.update({**state, "_drawn": 0})
        self._buffers["position"] = torch.zeros_like(self._buffers["position"])

    def extra_repr(self):
        return f"p={self.p}" + (", rows=True" if self.rows else "")


def reseed(module, seed):
    """Seed every :class:`Dropout` inside ``module`` from ``seed`` (each its own stream).

    Parameters
    ----------
    module : torch.nn.Module
    seed : int
    """
    for i, m in enumerate(module.modules()):
        if isinstance(m, Dropout):
            m.reseed((int(seed) * 1_000_003 + i) % 2**63)


__all__ = ["Dropout", "keep_mask", "keep_mask_at", "reseed"]


class _L2Normalize(torch.autograd.Function):
    @staticmethod
    def forward(x, dim, eps):
        norm = torch.linalg.vector_norm(x, dim=dim, keepdim=True).clamp_min(eps)
        return x / norm, norm

    @staticmethod
    def setup_context(ctx, inputs, output):
        z, norm = output
        ctx.dim = inputs[1]
        ctx.save_for_backward(z, norm)
        ctx.mark_non_differentiable(norm)
        ctx.set_materialize_grads(False)  # no zeros built for the norm's (absent) gradient

    @staticmethod
    def backward(ctx, grad, _):
        if grad is None:
            return None, None, None
        z, norm = ctx.saved_tensors
        return (grad - z * (grad * z).sum(ctx.dim, keepdim=True)) / norm, None, None


def l2_normalize(x, dim=-1, eps=1e-12):
    """``x / max(‖x‖₂, eps)`` along ``dim`` (``torch.nn.functional.normalize``'s values).

    Parameters
    ----------
    x : torch.Tensor
    dim : int, default=-1
    eps : float, default=1e-12

    Returns
    -------
    torch.Tensor
        Unit rows; the gradient is the closed-form Jacobian product (module docstring).

    Examples
    --------
    >>> import torch
    >>> from temporal_xmodal.nn import l2_normalize
    >>> l2_normalize(torch.tensor([[3.0, 4.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    return _L2Normalize.apply(x, dim, eps)[0]


__all__ = ["l2_normalize"]
