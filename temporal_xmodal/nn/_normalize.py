"""L2 normalisation of embeddings with a short backward pass.

``F.normalize`` is ``x / max(‖x‖, ε)`` built from generic ops: three kernels forward and
thirteen backward (the norm's backward handles a zero norm, the clamp's builds a mask).  Here
the forward is the same three ops and the backward the closed form of the Jacobian,
``(g − z ⟨g, z⟩) / ‖x‖`` with z = x / ‖x‖: five kernels.  Where ‖x‖ < ε (an all-zero row,
which tanh towers do not produce) the gradient is the same formula with ε for the norm.
"""

import torch


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
