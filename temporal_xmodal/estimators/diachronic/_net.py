"""DiachronicNet: time-conditioned projections f(x, t) with a shared time layer (DCM-Continuous).

Read more in docs/estimators/diachronic.md ("Architecture").
"""

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from ...nn.layers import Dropout, l2_normalize
from ...nn.towers import input_layer, input_linear

CONDITIONINGS = ("film", "concat")
#: Elements of one (anchors × items × hidden) block of the anchor-time projections; larger
#: batches are projected block by block, each recomputed in the backward pass (memory-bounded).
_PAIR_BLOCK = 2 ** 24


class DiachronicNet(nn.Module):
    """Two modality encoders conditioned on time through one shared time layer.

    h_*(x) = tanh(θ_*h x) per modality; f(t) = tanh(θ_time enc(t)), shared, of the
    encoding ``time_features``; each output layer combines the two (``conditioning``)
    and is L2-normalised (Semedo & Magalhães, ACM MM 2019, Eqs. 2–5; FiLM: Perez et al. 2018).

    Read more in the user guide: docs/estimators/diachronic.md.

    Parameters
    ----------
    n_image_features, n_text_features : int
        Input widths.
    n_time_features : int, default=1
        Width of the time encoding enc(t).
    hidden_dim : int, default=1024
        Units of each encoding layer.
    time_dim : int, default=200
        Units of the shared time layer.
    embedding_dim : int, default=200
        Output dimension D.
    dropout : float, default=0.0
        Dropout on the hidden encodings.
    conditioning : {"film", "concat"}, default="film"
        FiLM, tanh(θ_*o (h_*(x) ⊙ (1 + Γ_* f(t)) + B_* f(t))) with Γ and B starting at
        zero (the static model), or the paper's tanh(θ_*o [h_*(x); f(t)]).
    time_dropout : float, default=0.0
        Probability, in training, of zeroing an item's time embedding.
    same_time_anchors : int, default=0
        K: the first K anchors of a batch also score the other modality at their
        time (:meth:`forward`); 0: none (the paper).
    standardization : dict or None, default=None
        Each modality's input standardisation, as in :class:`~temporal_xmodal.nn.TwoTowerNet`.
    """

    def __init__(self, n_image_features, n_text_features, n_time_features=1, hidden_dim=1024,
                 time_dim=200, embedding_dim=200, dropout=0.0, conditioning="film",
                 time_dropout=0.0, same_time_anchors=0, standardization=None):
        super().__init__()
        self.image_input = input_layer(standardization, "image")
        self.text_input = input_layer(standardization, "text")
        self.conditioning = conditioning
        self.same_time_anchors = same_time_anchors
        self.time_layer = nn.Linear(n_time_features, time_dim)
        self.image_hidden = nn.Linear(n_image_features, hidden_dim)
        self.text_hidden = nn.Linear(n_text_features, hidden_dim)
        width = hidden_dim + time_dim if conditioning == "concat" else hidden_dim
        self.image_out = nn.Linear(width, embedding_dim)
        self.text_out = nn.Linear(width, embedding_dim)
        self.dropout = Dropout(dropout)
        self.drop_time = Dropout(time_dropout, rows=True)
        for layer in (self.time_layer, self.image_hidden, self.text_hidden, self.image_out,
                      self.text_out):  # Glorot (Semedo, thesis, §5.5.3.1); zero biases
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)
        if conditioning == "film":  # Γ and B of each modality, zero: start from the static model
            self.image_film = nn.Linear(time_dim, 2 * hidden_dim, bias=False)
            self.text_film = nn.Linear(time_dim, 2 * hidden_dim, bias=False)
            nn.init.zeros_(self.image_film.weight)
            nn.init.zeros_(self.text_film.weight)

    def embed_time(self, time_features):
        """f_time(t), shape (B, time_dim); rows dropped by ``time_dropout`` are zero."""
        return self.drop_time(torch.tanh(self.time_layer(time_features)))

    def _parts(self, modality):
        if modality == "image":
            return self.image_hidden, self.image_out, getattr(self, "image_film", None)
        return self.text_hidden, self.text_out, getattr(self, "text_film", None)

    def _hidden(self, modality, x):
        standardize = self.image_input if modality == "image" else self.text_input
        return self.dropout(torch.tanh(input_linear(self._parts(modality)[0], x, standardize)))

    def _output(self, modality, h, f):
        """L2-normalised f_*(x, t) of hidden units h (..., H) and time embeddings f (..., T),
        broadcast: (1, B, H) with (U, 1, T) gives shape (U, B, D).
        """
        _, out, film = self._parts(modality)
        f = f.to(h.dtype)
        if self.conditioning == "concat":
            shape = torch.broadcast_shapes(h.shape[:-1], f.shape[:-1])
            joint = torch.cat([h.expand(*shape, -1), f.expand(*shape, -1)], dim=-1)
            return l2_normalize(torch.tanh(out(joint)), dim=-1)
        gamma, beta = film(f).chunk(2, dim=-1)
        return l2_normalize(torch.tanh(out(h * (1 + gamma) + beta)), dim=-1)

    def _embed(self, modality, x, time_features):
        return self._output(modality, self._hidden(modality, x), self.embed_time(time_features))

    def embed_image(self, image, time_features):
        """e_V = f_V(x_V, t) / ||f_V(x_V, t)||, shape (B, embedding_dim)."""
        return self._embed("image", image, time_features)

    def embed_text(self, text, time_features):
        """e_T = f_T(x_T, t) / ||f_T(x_T, t)||, shape (B, embedding_dim)."""
        return self._embed("text", text, time_features)

    def forward(self, image, text, time_features, **unused):
        """Both modalities of a batch, each at its item's own time.

        Returns
        -------
        (z_image, z_text) : two tensors of shape (B, embedding_dim)
            With ``same_time_anchors=0``.
        (z_image, z_text, S_it, S_ti) : the same and two tensors of shape (K, B)
            Otherwise: ``S_it[a, j] = <f_V(x_a, t_a), f_T(c_j, t_a)>`` and ``S_ti[a, j] =
            <f_T(c_a, t_a), f_V(x_j, t_a)>`` for the first K = min(``same_time_anchors``, B)
            items, candidates projected as the anchor's positive was (its ``time_dropout``
            draw), so ``S_it[a, a]`` is the positive's score.
        """
        raw = torch.tanh(self.time_layer(time_features))
        h_image, h_text = self._hidden("image", image), self._hidden("text", text)
        if self.training and self.drop_time.p > 0:
            # both modalities' rows in one draw, images' then texts', each padded to an even
            # count: exactly the masks (and stream positions) of two calls in that order,
            # drawn and applied by one set of kernels
            width = len(raw) + len(raw) % 2
            keep = self.drop_time.keep((2, width, 1), raw.device)[:, :len(raw)]
            keep_image, keep_text = keep[0], keep[1]
            f_image, f_text = raw * keep
        else:  # nothing dropped: no masks of ones built and applied
            f_image = f_text = raw
        z_image = self._output("image", h_image, f_image)
        z_text = self._output("text", h_text, f_text)
        if not self.same_time_anchors:
            return z_image, z_text
        if f_image is raw:
            keep_image = keep_text = torch.ones_like(raw[:, :1])
        k = min(self.same_time_anchors, len(raw))
        # candidates are projected as the anchor's positive was (its time and its modality's
        # keep draw), so the positive is one of them: with the anchor's own draw, a positive
        # on the other path would stand out by its path alone, a shortcut of training only
        return (z_image, z_text,
                self._same_time("text", h_text, z_image[:k], raw[:k], keep_text[:k],
                                time_features[:k]),
                self._same_time("image", h_image, z_text[:k], raw[:k], keep_image[:k],
                                time_features[:k]))

    def _same_time(self, modality, h, anchors, raw, keep, time_features):
        """(K, B) scores of K anchors against the batch's ``modality`` at each anchor's time;
        anchors with the same time input and keep draw share one projection.
        """
        group = torch.unique(torch.cat([time_features.to(raw.dtype), keep], dim=1), dim=0,
                             return_inverse=True)[1]
        k, n, n_groups = len(group), len(h), int(group.max()) + 1
        first = torch.full((n_groups,), k, device=group.device).scatter_reduce(
            0, group, torch.arange(k, device=group.device), "amin")
        f = (raw * keep)[first]
        step = max(1, _PAIR_BLOCK // (n * h.shape[1]))
        scores = anchors.new_empty((k, n))
        for start in range(0, n_groups, step):
            rows = torch.nonzero((group >= start) & (group < start + step))[:, 0]
            args = (modality, h, f[start:start + step], anchors[rows], group[rows] - start)
            block = (checkpoint(self._scores_at, *args, use_reentrant=False)
                     if n_groups > step else self._scores_at(*args))
            scores = scores.index_copy(0, rows, block)
        return scores

    def _scores_at(self, modality, h, f_block, anchors, group):
        """Anchors (R, D) against the batch projected at their times ``f_block[group]``."""
        at = self._output(modality, h[None], f_block[:, None])  # (U, B, D)
        pick = torch.arange(len(group), device=group.device)
        return torch.einsum("rd,ujd->ruj", anchors, at)[pick, group]
