"""Time-conditioned projections f(x, t) with a shared time layer (DCM, spec ``diachronic_and_binned.md`` §2).

    f_*h(x)     = tanh(θ_*h · x)                          per-modality encoding (1024)
    f_time(t)   = tanh(θ_time · enc(t))                   SHARED by both modalities (200)

and the output, by ``conditioning``:

``"concat"`` (the paper; P1 eqs. 2–5, thesis eqs. 5.2, 5.3, 5.12, 5.13)
    f_*(x, t) = tanh(θ_*o · [f_*h(x) ; f_time(t)]).  Time enters as an additive offset
    b(t) = θ_*o^time f_time(t) shared by every item at that instant, so it can shift the whole
    space but interacts with the content only through the last tanh's saturation.
``"film"`` (default; a deviation, see ``DiachronicEmbedder``)
    f_*(x, t) = tanh(θ_*o · (f_*h(x) ⊙ (1 + Γ_* f_time(t)) + B_* f_time(t))), feature-wise
    linear modulation (Perez et al. 2018) of each hidden unit by the time: a time-dependent
    linear map A(t) = θ_*o diag(1 + Γ_* f_time(t)) of the content, so what a wording maps to
    can change between eras.  Γ_*, B_* start at zero: training starts from the static model.

Then L2-normalised.  ``enc(t)`` — the time encoding — is computed outside the network by the
estimator's fitted :class:`~temporal_xmodal.time.TimeEncoding` and arrives as ``time_features``.
"""

import torch
from torch import nn
from torch.nn import functional as F

from .dropout import Dropout

CONDITIONINGS = ("film", "concat")


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
    conditioning : {"film", "concat"}, default="film"
        How time enters the output layer (see the module docstring).
    time_dropout : float, default=0.0
        During training, the probability that an item's time embedding is
        replaced by zeros (with ``"film"``: the static path), so that a
        static fallback is learned alongside the time-dependent one.
    """

    def __init__(self, n_image_features, n_text_features, n_time_features=1, hidden_dim=1024,
                 time_dim=200, embedding_dim=200, dropout=0.0, conditioning="film",
                 time_dropout=0.0):
        super().__init__()
        self.conditioning = conditioning
        self.time_layer = nn.Linear(n_time_features, time_dim)
        self.image_hidden = nn.Linear(n_image_features, hidden_dim)
        self.text_hidden = nn.Linear(n_text_features, hidden_dim)
        width = hidden_dim + time_dim if conditioning == "concat" else hidden_dim
        self.image_out = nn.Linear(width, embedding_dim)
        self.text_out = nn.Linear(width, embedding_dim)
        self.dropout = Dropout(dropout)
        self.drop_time = Dropout(time_dropout, rows=True)
        for layer in (self.time_layer, self.image_hidden, self.text_hidden, self.image_out,
                      self.text_out):  # Glorot (thesis §5.5.3.1), zero biases (A2)
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)
        if conditioning == "film":  # Γ and B of each modality, zero: start from the static model
            self.image_film = nn.Linear(time_dim, 2 * hidden_dim, bias=False)
            self.text_film = nn.Linear(time_dim, 2 * hidden_dim, bias=False)
            nn.init.zeros_(self.image_film.weight)
            nn.init.zeros_(self.text_film.weight)

    def embed_time(self, time_features):
        """f_time(t), shape (B, time_dim); rows dropped by ``time_dropout`` are zero."""
        f = torch.tanh(self.time_layer(time_features))
        return self.drop_time(f)

    def _embed(self, modality, x, time_features):
        hidden = self.image_hidden if modality == "image" else self.text_hidden
        out = self.image_out if modality == "image" else self.text_out
        h = self.dropout(torch.tanh(hidden(x)))
        f = self.embed_time(time_features).to(h.dtype)
        if self.conditioning == "concat":
            return F.normalize(torch.tanh(out(torch.cat([h, f], dim=1))), dim=1)
        film = self.image_film if modality == "image" else self.text_film
        gamma, beta = film(f).chunk(2, dim=1)
        return F.normalize(torch.tanh(out(h * (1 + gamma) + beta)), dim=1)

    def embed_image(self, image, time_features):
        """e_V = f_V(x_V, t) / ||f_V(x_V, t)||, shape (B, embedding_dim)."""
        return self._embed("image", image, time_features)

    def embed_text(self, text, time_features):
        """e_T = f_T(x_T, t) / ||f_T(x_T, t)||, shape (B, embedding_dim)."""
        return self._embed("text", text, time_features)

    def forward(self, image, text, time_features, **unused):
        """Both modalities of a batch, each at its item's own time."""
        f = time_features
        return self.embed_image(image, f), self.embed_text(text, f)
