"""Seeded initialisation, one fit at a time, so that threads running fits at once agree.

A fit's weights are initialised from torch's global random generator seeded with the fit's
seed.  That generator is one per process, so two fits initialising at once in threads
(joblib's threading backend, Dask worker threads) would draw from each other's streams:
:func:`seeded` holds a process-wide lock for the (short) initialisation.  Training then draws
only from generators the fit owns: the batch order (``iterator_train__generator``) and
dropout (:class:`temporal_xmodal.nn.dropout.Dropout`, seeded by
:func:`temporal_xmodal.nn.dropout.reseed`).
"""

import threading
from contextlib import contextmanager

import torch

_lock = threading.RLock()


@contextmanager
def seeded(seed):
    """Run a block under torch's global generator seeded with ``seed``, alone; then restore it.

    Parameters
    ----------
    seed : int
    """
    with _lock, torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        yield
