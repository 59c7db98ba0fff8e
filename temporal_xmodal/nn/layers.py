"""The layers every network of the library is built from: seeded dropout, L2 normalisation.

:class:`Dropout`'s keep masks are a counter-based hash of (seed, element number) (Salmon
et al. 2011, "Parallel random numbers: as easy as 1, 2, 3"): the 32-bit mixer
``x ← ((x ≫ 16) ⊕ x) · 0x45d9f3b`` twice, then ``x ← (x ≫ 16) ⊕ x``, of the draw's number
xor a key of the seed, two 16-bit draws per hash, in exact int64 arithmetic.  The masks
depend only on the seed and the draws made, never on the device, the thread or torch's
generators.  :func:`l2_normalize` has a closed-form backward pass.  Read more in
docs/training.md ("Seeding and determinism").
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
    """Keep mask of ``n`` draws from the hashes of ``words`` xor ``key``, two 16-bit draws per
    hash (low half first), kept when below ``threshold``.
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
    """Boolean keep mask of ``shape``, each element kept with probability
    ``round((1 − p) · 2¹⁶) / 2¹⁶``.

    Parameters
    ----------
    shape : tuple of int
    p : float
        Drop probability.
    seed : int
    offset : int
        Draws made before this call (the stream's position; even).
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
    """:func:`keep_mask` at ``offset = 2 · position``, ``position`` a 0-dim int64 device tensor
    of hashes drawn, advanced in place (a compiled step's form: no Python number changes).
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
    """``nn.Dropout`` with counter-based masks: the same on every device and in every thread.

    Zeroes each element with probability ``p`` and scales the rest by 1/(1−p).  The masks
    are a function of :attr:`seed` (0 until :func:`reseed`) and of the elements drawn since
    (module docstring); the position is not pickled.

    Parameters
    ----------
    p : float, default=0.5
        Probability of an element being zeroed.
    rows : bool, default=False
        Zero whole rows with probability ``p``, the others unscaled (Diachronic's
        ``time_dropout``).

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
        """The next keep mask of ``shape`` from this layer's stream (a compiled step draws it with
        :func:`keep_mask_at`).
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
    """``x / max(‖x‖₂, eps)`` along ``dim``; closed-form backward ``(g − z ⟨g, z⟩) / ‖x‖``.

    Parameters
    ----------
    x : torch.Tensor
    dim : int, default=-1
    eps : float, default=1e-12

    Returns
    -------
    torch.Tensor
    """
    return _L2Normalize.apply(x, dim, eps)[0]


__all__ = ["Dropout", "keep_mask", "keep_mask_at", "l2_normalize", "reseed"]
