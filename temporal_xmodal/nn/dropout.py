"""Dropout that draws from its own random generator, so that a fit's randomness is its own.

torch's global random generator is one per process.  Fits that run at once in threads
(``GridSearchCV`` on joblib's threading backend, Dask worker threads,
``BinnedProcrustesEmbedder(n_jobs=k)`` on threads) interleave their draws from it in the
order the threads happen to run, so ``nn.Dropout`` made their results vary from run to run
(CV scores moved by up to 0.012).  Every dropout of our networks is one of these modules
instead: it draws from a ``torch.Generator`` that belongs to it, created on the input's device
from a seed the estimator sets before each fit (:func:`reseed`).  Initialisation still draws
from the global generator, seeded, one fit at a time (:func:`temporal_xmodal.training.seeded`).
"""

import torch
from torch import nn


class Dropout(nn.Module):
    """``nn.Dropout`` (zeroes each element with probability ``p``, scales the rest by 1/(1−p)).

    Parameters
    ----------
    p : float, default=0.5
        Probability of an element being zeroed.
    rows : bool, default=False
        Zero whole rows (items) with probability ``p`` and leave the others unscaled
        (Diachronic's ``time_dropout``: an item's time embedding replaced by zeros).

    Notes
    -----
    The generator starts from :attr:`seed` (0 until :func:`reseed` sets it) on the device of
    the first input; it is not pickled (a loaded model restarts from :attr:`seed`).
    """

    def __init__(self, p=0.5, rows=False):
        super().__init__()
        self.p, self.rows = float(p), bool(rows)
        self.seed = 0
        self._generator = None

    def reseed(self, seed):
        """Restart the generator from ``seed`` (an int) at the next draw."""
        self.seed, self._generator = int(seed), None

    def _keep(self, shape, like):
        if self._generator is None or self._generator.device != like.device:
            self._generator = torch.Generator(device=like.device).manual_seed(self.seed)
        draw = torch.empty(shape, dtype=like.dtype, device=like.device)
        return draw.bernoulli_(1.0 - self.p, generator=self._generator)

    def forward(self, x):
        """``x`` with dropped elements (rows) zeroed; the identity in eval mode or at p = 0."""
        if not self.training or self.p == 0:
            return x
        if self.p == 1:
            return x * 0
        if self.rows:
            return x * self._keep((x.shape[0], 1), x)
        return x * self._keep(x.shape, x) / (1.0 - self.p)

    def __getstate__(self):
        return {**self.__dict__, "_generator": None}

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


__all__ = ["Dropout", "reseed"]
