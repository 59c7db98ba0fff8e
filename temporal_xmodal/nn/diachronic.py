"""Time-conditioned projections f(x, t) with a shared time layer (DCM, spec ``diachronic_and_binned.md`` §2).

    f_*h(x)     = tanh(θ_*h · x)                          per-modality encoding (1024)
    f_time(t)   = tanh(θ_time · enc(t))                   SHARED by both modalities (200)
    f_*(x, t)   = tanh(θ_*o · [f_*h(x) ; f_time(t)])      output (D = 200), then L2-normalised

(P1 eqs. 2–5, thesis eqs. 5.2, 5.3, 5.12, 5.13.)  ``enc(t)`` — the time
encoding — is computed outside the network by the estimator's fitted
:class:`~temporal_xmodal.time.TimeEncoding` and arrives as ``time_features``.
"""

import torch
from torch import nn
from torch.nn import functional as F


class DiachronicNet(nn.Module):
    """Two modality encoders conditioned on time through one shared time layer.

    Parameters
    ----------
    n_image_features, n_text_features : int
    n_time_features : int, default=1
        Width of the time encoding enc(t).
    hidden_dim : int, default=1024
    time_dim : int, default=200
    embedding_dim : int, default=200
    dropout : float, default=0.0
        On the hidden encodings (not in the paper).
    """

    def __init__(self, n_image_features, n_text_features, n_time_features=1, hidden_dim=1024,
                 time_dim=200, embedding_dim=200, dropout=0.0):
        super().__init__()
        self.time_layer = nn.Linear(n_time_features, time_dim)
        self.image_hidden = nn.Linear(n_image_features, hidden_dim)
        self.text_hidden = nn.Linear(n_text_features, hidden_dim)
        self.image_out = nn.Linear(hidden_dim + time_dim, embedding_dim)
        self.text_out = nn.Linear(hidden_dim + time_dim, embedding_dim)
        self.dropout = nn.Dropout(dropout)
        for layer in (self.time_layer, self.image_hidden, self.text_hidden, self.image_out,
                      self.text_out):  # Glorot (thesis §5.5.3.1), zero biases (A2)
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)

    def embed_time(self, time_features):
        """f_time(t), shape (B, time_dim)."""
        return torch.tanh(self.time_layer(time_features))

    def _embed(self, hidden, out, x, time_features):
        h = self.dropout(torch.tanh(hidden(x)))
        z = torch.tanh(out(torch.cat([h, self.embed_time(time_features).to(h.dtype)], dim=1)))
        return F.normalize(z, dim=1)

    def embed_image(self, image, time_features):
        """e_V = f_V(x_V, t) / ||f_V(x_V, t)||, shape (B, embedding_dim)."""
        return self._embed(self.image_hidden, self.image_out, image, time_features)

    def embed_text(self, text, time_features):
        """e_T = f_T(x_T, t) / ||f_T(x_T, t)||, shape (B, embedding_dim)."""
        return self._embed(self.text_hidden, self.text_out, text, time_features)

    def forward(self, image, text, time_features, **unused):
        """Both modalities of a batch, each at its item's own time."""
        return self.embed_image(image, time_features), self.embed_text(text, time_features)
