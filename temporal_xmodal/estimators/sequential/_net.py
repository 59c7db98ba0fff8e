"""torch modules of Sequential Cross-Modal Learning (SCML; Song & Tan, "Sequential
Learning for Cross-modal Retrieval").

* :class:`UnifiedModel` — the unified model S shared by both modalities
  (128 → 128 → K → C; the classifier is part of S, so the meta-learner updates it too);
* :class:`SequentialNet` — one plug per modality (a :class:`ProjectionTower`
  to the common input width d = 128) in front of S;
* :class:`MetaLearner` — the coordinatewise 2-layer LSTM optimiser M, run on every
  coordinate of θ in one call;
* :func:`preprocess_gradients` — the input preprocessing of Song & Tan, Eq. 8.
"""

import math

import torch
from torch import nn
from torch.nn import functional as F

from ...nn.layers import Dropout
from ...nn.towers import ProjectionTower

MODALITIES = ("image", "text")


class UnifiedModel(nn.Module):
    """S: dropout → 128→128 (tanh) → 128→K (tanh) = h, then the classifier K→C.

    Parameters
    ----------
    common_dim : int, default=128
        Width d of the plug outputs.
    embedding_dim : int, default=64
        Code length K (the hash bits are ``sign(h)``).
    n_classes : int
        C, outputs of the classifier head (the loss layer).
    dropout : float, default=0.5
        Dropout on the plug output, "128(d)" in Song & Tan, Table 1.
    """

    def __init__(self, common_dim=128, embedding_dim=64, n_classes=2, dropout=0.5):
        super().__init__()
        self.dropout = Dropout(dropout)
        self.hidden = nn.Linear(common_dim, common_dim)
        self.code = nn.Linear(common_dim, embedding_dim)
        self.classifier = nn.Linear(embedding_dim, n_classes)
        for layer in (self.hidden, self.code, self.classifier):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)

    def encode(self, u):
        """h ∈ (−1, 1)^K of plug outputs ``u`` (B, d)."""
        return torch.tanh(self.code(torch.tanh(self.hidden(self.dropout(u)))))

    def forward(self, u):
        """Classifier logits (B, C) of plug outputs ``u``."""
        return self.classifier(self.encode(u))

    def logits_at(self, u, params):
        """Classifier logits (B, C) of plug outputs ``u`` under the parameters ``params``.

        The same operations as :meth:`forward` (dropout included, drawn from this module's
        stream), with the weights and biases taken from ``params`` instead of the layers:
        the learned optimiser evaluates S at θ_t and θ_t + g_t on every step without
        swapping parameters into the module (``torch.func.functional_call``).

        Parameters
        ----------
        u : torch.Tensor of shape (B, d)
        params : sequence of torch.Tensor
            ``hidden.weight, hidden.bias, code.weight, code.bias, classifier.weight,
            classifier.bias``: the order of :meth:`parameters`.

        Returns
        -------
        logits : torch.Tensor of shape (B, C)
        """
        w_h, b_h, w_k, b_k, w_c, b_c = params
        h = torch.tanh(F.linear(torch.tanh(F.linear(self.dropout(u), w_h, b_h)), w_k, b_k))
        return F.linear(h, w_c, b_c)


class SequentialNet(nn.Module):
    """Plugs P_image, P_text (tanh FC stacks to width d) and the unified model S.

    Plugs are keyed by modality whatever the training order.

    Parameters
    ----------
    n_image_features, n_text_features : int or None
        Input widths of the two plugs (``None``: added later with
        :meth:`add_plug`, when that modality arrives).
    hidden_dim : int, default=1024
        Hidden width of each plug (Song & Tan, Table 1: 4096 for Wikipedia, 1024
        otherwise).
    common_dim : int, default=128
    embedding_dim : int, default=64
    n_classes : int, default=2
    dropout : float, default=0.5
        Dropout of the plugs' hidden layer and of S's input.
    """

    def __init__(self, n_image_features=None, n_text_features=None, hidden_dim=1024,
                 common_dim=128, embedding_dim=64, n_classes=2, dropout=0.5):
        super().__init__()
        self.hidden_dim, self.common_dim, self.dropout = hidden_dim, common_dim, dropout
        self.plugs = nn.ModuleDict()
        for modality, n in (("image", n_image_features), ("text", n_text_features)):
            if n is not None:
                self.add_plug(modality, n)
        self.unified = UnifiedModel(common_dim, embedding_dim, n_classes, dropout)

    def add_plug(self, modality, n_features):
        """Create the plug of ``modality`` (the second modality arrives later).

        It is initialised as on the CPU (same draws) and placed on the device of
        S, where the module already is.
        """
        plug = ProjectionTower(n_features, self.hidden_dim, self.common_dim, self.dropout)
        if hasattr(self, "unified"):
            plug.to(self.unified.hidden.weight.device)
        self.plugs[modality] = plug
        return plug

    def embed_image(self, image, time=None):
        """h of image features (continuous codes in (−1, 1)^K; time is ignored)."""
        return self.unified.encode(self.plugs["image"](image))

    def embed_text(self, text, time=None):
        """h of text features (continuous codes in (−1, 1)^K; time is ignored)."""
        return self.unified.encode(self.plugs["text"](text))

    def forward(self, **batch):
        """Classifier logits for every modality present in the batch.

        Parameters
        ----------
        **batch : torch.Tensor
            ``image`` and/or ``text`` features; other entries (labels) are
            ignored.

        Returns
        -------
        logits : dict of str -> torch.Tensor of shape (B, C)
        """
        return {m: self.unified(self.plugs[m](batch[m])) for m in MODALITIES if m in batch}


def preprocess_gradients(x, p=10.0):
    """Map each raw input to two features of comparable scale (Song & Tan, Eq. 8).

    .. math::

        x \\mapsto \\begin{cases} (\\log(|x|)/p,\\ \\mathrm{sgn}(x)) & |x| \\ge e^{-p} \\\\
        (-1,\\ e^{p} x) & \\text{otherwise} \\end{cases}

    Parameters
    ----------
    x : torch.Tensor of shape (N, F)
        Raw inputs (gradients and broadcast losses) per coordinate.
    p : float, default=10.0
        Scale of the log part; inputs below e^{-p} in magnitude are linear.

    Returns
    -------
    features : torch.Tensor of shape (N, 2F)
        The two features of input ``j`` are columns ``2j`` and ``2j + 1``.
    """
    big = x.abs() >= math.exp(-p)
    log_part = torch.where(big, torch.log(x.abs().clamp_min(math.exp(-p))) / p,
                           torch.full_like(x, -1.0))
    sign_part = torch.where(big, torch.sign(x), math.exp(p) * x)
    return torch.stack([log_part, sign_part], dim=-1).flatten(-2)


class MetaLearner(nn.Module):
    """Coordinatewise LSTM optimiser M (Song & Tan, after Andrychowicz et al., 2016).

    One small LSTM with shared weights φ runs on every scalar coordinate θ_i,
    each with its own hidden and cell state: the N coordinates are the batch
    dimension of a single :class:`torch.nn.LSTM` call per step.  A linear head
    (20 → 1, zero-initialised, so the first update is 0) gives the update g_i, times
    ``output_scale``.

    Parameters
    ----------
    n_inputs : int
        Raw inputs per coordinate before Eq. 8 (4 for single-label data:
        ∇^(o), ∇^(n), l^(o), l^(n); 8 with the ± disentangling).
    hidden_size : int, default=20
    num_layers : int, default=2
    p : float, default=10.0
        Preprocessing constant of Eq. 8.
    output_scale : float, default=1.0
        Multiplies the head's output (the L2L reference code uses 0.01).
    """

    def __init__(self, n_inputs=4, hidden_size=20, num_layers=2, p=10.0, output_scale=1.0):
        super().__init__()
        self.p = p
        self.output_scale = output_scale
        self.lstm = nn.LSTM(2 * n_inputs, hidden_size, num_layers=num_layers)
        self.head = nn.Linear(hidden_size, 1)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def initial_state(self, n_coordinates, device=None):
        """Zero hidden and cell states for ``n_coordinates`` coordinates.

        Parameters
        ----------
        n_coordinates : int
        device : str, torch.device or None, default=None
            ``None``: the device of M's parameters.

        Returns
        -------
        state : tuple of two torch.Tensor of shape (num_layers, n_coordinates, hidden_size)
        """
        weight = self.head.weight
        shape = (self.lstm.num_layers, n_coordinates, self.lstm.hidden_size)
        device = weight.device if device is None else device
        return tuple(torch.zeros(shape, dtype=weight.dtype, device=device) for _ in range(2))

    def forward(self, inputs, state, shared=None):
        """One optimisation step for all coordinates.

        Parameters
        ----------
        inputs : torch.Tensor of shape (N, n_inputs) or (N, n_inputs - n_shared)
            Raw per-coordinate inputs (gradients; losses broadcast).
        state : tuple of torch.Tensor
            ``(h, c)``, each of shape (num_layers, N, hidden_size).
        shared : torch.Tensor of shape (n_shared,) or None, default=None
            Raw inputs that are the same for every coordinate (the losses), the last
            ``n_shared`` of the ``n_inputs``: preprocessed once and broadcast, which gives
            the features of ``inputs`` holding them in every row, bit for bit (Eq. 8 is
            elementwise).

        Returns
        -------
        update : torch.Tensor of shape (N,)
            g_t, the additive update θ_{t+1} = θ_t + g_t (Song & Tan, Eq. 4).
        state : tuple of torch.Tensor
            The next ``(h, c)``.
        """
        features = preprocess_gradients(inputs, self.p)
        if shared is not None:
            common = preprocess_gradients(shared.reshape(1, -1), self.p)
            features = torch.cat([features, common.expand(len(features), -1)], dim=1)
        out, state = self.lstm(features.unsqueeze(0), state)
        return self.output_scale * self.head(out[0]).squeeze(-1), state


__all__ = ["MODALITIES", "MetaLearner", "SequentialNet", "UnifiedModel",
           "preprocess_gradients"]
