"""Two-tower projection networks (Semedo, thesis, Eqs. 3.12 and 4.17).

Each modality's tower is ``f(x) = tanh(W2 · dropout(tanh(W1 · x)))``, L2-normalised.  A
modality's input is a dense ``(B, d)`` tensor or sparse rows ``{"index": (B, K) int64,
"value": (B, K)}`` (padding: value 0), whose first layer is one ``embedding_bag``
(:func:`input_linear`).  Read more in docs/scaling.md.
"""

import numpy as np
import torch
from scipy import sparse
from torch import nn
from torch.nn import functional as F

from .._sparse_input import CSRWindow
from .layers import Dropout, l2_normalize


class Standardize(nn.Module):
    """A modality's input standardisation ``x ↦ (x − centre) / scale`` (an ``addcmul`` on buffers).

    Parameters
    ----------
    centre : array-like of shape (n_features,)
        Each feature's training mean.
    scale : float
        One scale for the whole block (so the features' relative scales are kept).
    """

    def __init__(self, centre, scale):
        super().__init__()
        centre = torch.as_tensor(np.asarray(centre, dtype=np.float64))
        self.register_buffer("weight", torch.tensor(1.0 / float(scale), dtype=torch.float32))
        self.register_buffer("bias", (-centre / float(scale)).to(torch.float32))

    def forward(self, x):
        return torch.addcmul(self.bias, x, self.weight)


def block_standardization(X, rows=None, block=65536):
    """A block's ``(centre, scale)`` for :class:`Standardize` over ``rows`` of ``X`` (all when
    None): the means and the per-feature root mean square of the centred features, read in
    blocks (float64 sums, no copy; sparse ``X`` never densified).
    """
    n_rows = X.shape[0]
    rows = np.arange(n_rows) if rows is None else np.asarray(rows)
    total, squares = np.zeros(X.shape[1]), 0.0
    parts = (X.row_chunks(rows) if isinstance(X, CSRWindow) else
             (X[rows[start:start + block]] for start in range(0, len(rows), block)))
    for part in parts:
        part = part[1] if isinstance(part, tuple) else part
        if sparse.issparse(part):
            total += np.asarray(part.sum(axis=0, dtype=np.float64)).reshape(-1)
            values = part.data.astype(np.float64)
            squares += float(values @ values)
            continue
        part = np.asarray(part, dtype=np.float64)
        total += part.sum(axis=0)
        squares += float(np.einsum("ij,ij->", part, part))
    centre = total / len(rows)
    variance = max(squares / len(rows) - float(centre @ centre), 0.0) / X.shape[1]
    return centre, (np.sqrt(variance) if variance > 0 else 1.0)


def is_sparse_rows(x):
    """Whether ``x`` is a batch of sparse rows (a dict) rather than a dense tensor."""
    return isinstance(x, dict) and "index" in x and "value" in x


def densify(x, n_features):
    """Sparse rows as a dense ``(B, n_features)`` tensor; a tensor is returned as is."""
    if not is_sparse_rows(x):
        return x
    index, value = x["index"], x["value"]
    out = value.new_zeros((index.shape[0], n_features))
    return out.scatter_add_(1, index, value)


def input_linear(linear, x, standardize=None):
    """A tower's first layer ``linear(standardize(x))`` on dense or sparse rows.

    On sparse rows ``x Wᵀ`` is one ``embedding_bag`` and the standardisation is folded in:
    ``W((x − μ) s) + b = s · (x Wᵀ) + (b − s · W μ)``.

    Parameters
    ----------
    linear : torch.nn.Linear
    x : torch.Tensor of shape (B, d), or dict
        Dense rows, or sparse rows ``{"index", "value"}``.
    standardize : Standardize, nn.Identity or None

    Returns
    -------
    h : torch.Tensor of shape (B, linear.out_features)
    """
    if not is_sparse_rows(x):
        return linear(x if standardize is None else standardize(x))
    xw = F.embedding_bag(x["index"], linear.weight.t(), per_sample_weights=x["value"].to(
        linear.weight.dtype), mode="sum")
    if not isinstance(standardize, Standardize):
        return xw + linear.bias
    # Standardize's bias is −μ · s: W (−μ s) + b, then s · xWᵀ added to it
    bias = torch.addmv(linear.bias, linear.weight, standardize.bias)
    return torch.addcmul(bias, xw, standardize.weight)


def input_layer(standardization, modality):
    """:class:`Standardize` of ``modality`` from ``standardization``, or ``nn.Identity`` when None."""
    if standardization is None:
        return nn.Identity()
    return Standardize(*standardization[modality])


class ProjectionTower(nn.Sequential):
    """One modality's projection FC → tanh → dropout → FC → tanh (Glorot weights, zero biases).

    Parameters
    ----------
    in_features : int
        Input feature dimension.
    hidden_dim : int, default=1024
        Width of the hidden layer.
    embedding_dim : int, default=200
        Output dimension D.
    dropout : float, default=0.1
        Dropout on the hidden layer's output.
    """

    def __init__(self, in_features, hidden_dim=1024, embedding_dim=200, dropout=0.1):
        super().__init__(
            nn.Linear(in_features, hidden_dim),
            nn.Tanh(),
            Dropout(dropout),
            nn.Linear(hidden_dim, embedding_dim),
            nn.Tanh(),
        )
        for layer in (self[0], self[3]):  # Glorot-uniform weights, zero biases
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)

    def forward(self, x, standardize=None):
        """The tower on dense or sparse rows ``x`` after ``standardize`` (:func:`input_linear`)."""
        h = input_linear(self[0], x, standardize)
        for layer in list(self)[1:]:
            h = layer(h)
        return h


class TwoTowerNet(nn.Module):
    """Independent image and text towers coupled only by the loss (SAM's and TempXNet's net).

    One :class:`ProjectionTower` per modality, L2-normalised outputs; ``forward`` ignores
    extra batch entries such as ``time``.

    Parameters
    ----------
    n_image_features, n_text_features : int
        Input dimensions.
    hidden_dim : int, default=1024
        Width of each tower's hidden layer.
    embedding_dim : int, default=200
        Output dimension D.
    dropout : float, default=0.1
        Dropout on each tower's hidden layer.
    standardization : dict or None, default=None
        ``{"image": (centre, scale), "text": (centre, scale)}`` (:class:`Standardize`);
        ``None``: inputs as they are.
    """

    def __init__(self, n_image_features, n_text_features, hidden_dim=1024,
                 embedding_dim=200, dropout=0.1, standardization=None):
        super().__init__()
        self.image_input = input_layer(standardization, "image")
        self.text_input = input_layer(standardization, "text")
        self.image_tower = ProjectionTower(n_image_features, hidden_dim, embedding_dim, dropout)
        self.text_tower = ProjectionTower(n_text_features, hidden_dim, embedding_dim, dropout)

    def embed_image(self, image, time_features=None):
        """L2-normalised image embeddings, shape (B, embedding_dim)."""
        return l2_normalize(self.image_tower(image, self.image_input), dim=1)

    def embed_text(self, text, time_features=None):
        """L2-normalised text embeddings, shape (B, embedding_dim)."""
        return l2_normalize(self.text_tower(text, self.text_input), dim=1)

    def forward(self, image, text, **unused):
        """Embed both modalities of a batch: ``(z_image, z_text)``."""
        return self.embed_image(image), self.embed_text(text)


__all__ = ["ProjectionTower", "Standardize", "TwoTowerNet", "block_standardization",
           "densify", "input_layer", "input_linear", "is_sparse_rows"]
