"""Time-conditioned projections f(x, t) with a shared time layer (DCM, spec ``diachronic_and_binned.md`` §2).

    f_*h(x)     = tanh(θ_*h · x)                          per-modality encoding (1024)
    f_time(t)   = tanh(θ_time · enc(t))                   SHARED by both modalities (200)
    f_*(x, t)   = tanh(θ_*o · [f_*h(x) ; f_time(t)])      output (D = 200), then L2-normalised

(P1 eqs. 2–5, thesis eqs. 5.2, 5.3, 5.12, 5.13.)  ``enc`` maps the user's time
scale to the network input; its statistics are learned at fit (ambiguity A1).
"""

import torch
from torch import nn
from torch.nn import functional as F

TIME_ENCODINGS = ("minmax", "zscore", "raw", "onehot")


class TimeEncoder(nn.Module):
    """Encode raw timestamps for the time layer (A1).

    Parameters
    ----------
    encoding : {"minmax", "zscore", "raw", "onehot"}, default="minmax"
        Scalar (t − t_min) / (t_max − t_min) (best reading), scalar z-score,
        the raw scalar, or a one-hot vector over ``n_bins`` equal-width bins
        of the training range.
    low, high : float
        Training range (``minmax``, ``onehot``).
    mean, std : float
        Training mean / std (``zscore``).
    n_bins : int, default=12
        Bins of the ``onehot`` encoding.
    """

    def __init__(self, encoding="minmax", low=0.0, high=1.0, mean=0.0, std=1.0, n_bins=12):
        super().__init__()
        if encoding not in TIME_ENCODINGS:
            raise ValueError(f"time_encoding must be one of {TIME_ENCODINGS}; got {encoding!r}.")
        self.encoding = encoding
        self.n_bins = n_bins
        span = high - low if high > low else 1.0
        self.register_buffer("low", torch.tensor(float(low)))
        self.register_buffer("span", torch.tensor(float(span)))
        self.register_buffer("mean", torch.tensor(float(mean)))
        self.register_buffer("std", torch.tensor(float(std) if std > 0 else 1.0))

    @property
    def out_features(self):
        return self.n_bins if self.encoding == "onehot" else 1

    def forward(self, time):
        t = time.reshape(-1, 1).to(self.span.dtype)
        if self.encoding == "minmax":
            return (t - self.low) / self.span
        if self.encoding == "zscore":
            return (t - self.mean) / self.std
        if self.encoding == "raw":
            return t
        index = ((t[:, 0] - self.low) / self.span * self.n_bins).floor().long()
        return F.one_hot(index.clamp(0, self.n_bins - 1), self.n_bins).to(self.span.dtype)


class DiachronicNet(nn.Module):
    """Two modality encoders conditioned on time through one shared time layer.

    Parameters
    ----------
    n_image_features, n_text_features : int
    hidden_dim : int, default=1024
    time_dim : int, default=200
    embedding_dim : int, default=200
    dropout : float, default=0.0
        On the hidden encodings (not in the paper).
    time_encoding, time_low, time_high, time_mean, time_std, time_bins
        See :class:`TimeEncoder`.
    """

    def __init__(self, n_image_features, n_text_features, hidden_dim=1024, time_dim=200,
                 embedding_dim=200, dropout=0.0, time_encoding="minmax", time_low=0.0,
                 time_high=1.0, time_mean=0.0, time_std=1.0, time_bins=12):
        super().__init__()
        self.time_encoder = TimeEncoder(time_encoding, time_low, time_high, time_mean,
                                        time_std, time_bins)
        self.time_layer = nn.Linear(self.time_encoder.out_features, time_dim)
        self.image_hidden = nn.Linear(n_image_features, hidden_dim)
        self.text_hidden = nn.Linear(n_text_features, hidden_dim)
        self.image_out = nn.Linear(hidden_dim + time_dim, embedding_dim)
        self.text_out = nn.Linear(hidden_dim + time_dim, embedding_dim)
        self.dropout = nn.Dropout(dropout)
        for layer in (self.time_layer, self.image_hidden, self.text_hidden, self.image_out,
                      self.text_out):  # Glorot (thesis §5.5.3.1), zero biases (A2)
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)

    def embed_time(self, time):
        """f_time(t), shape (B, time_dim)."""
        return torch.tanh(self.time_layer(self.time_encoder(time)))

    def _embed(self, hidden, out, x, time):
        if time is None:
            raise ValueError("DiachronicNet needs the time of every item.")
        h = self.dropout(torch.tanh(hidden(x)))
        z = torch.tanh(out(torch.cat([h, self.embed_time(time).to(h.dtype)], dim=1)))
        return F.normalize(z, dim=1)

    def embed_image(self, image, time=None):
        """e_V = f_V(x_V, t) / ||f_V(x_V, t)||, shape (B, embedding_dim)."""
        return self._embed(self.image_hidden, self.image_out, image, time)

    def embed_text(self, text, time=None):
        """e_T = f_T(x_T, t) / ||f_T(x_T, t)||, shape (B, embedding_dim)."""
        return self._embed(self.text_hidden, self.text_out, text, time)

    def forward(self, image, text, time=None, **unused):
        """Both modalities of a batch, each at its item's own time."""
        return self.embed_image(image, time), self.embed_text(text, time)
