"""Seeded initialisation, one fit at a time, so that threads running fits at once agree.

A fit's weights are initialised from torch's global random generator seeded with the fit's
seed.  That generator is one per process, so two fits initialising at once in threads
(joblib's threading backend, Dask worker threads) would draw from each other's streams:
:func:`seeded` holds a process-wide lock for the (short) initialisation.  Training then draws
only from generators the fit owns: the batch order (``iterator_train__generator``) and
dropout (:class:`temporal_xmodal.nn.dropout.Dropout`, seeded by
:func:`temporal_xmodal.nn.dropout.reseed`).

Only the CPU generator is seeded: skorch builds the modules on the CPU and then moves them to
the fit's device, so initialisation draws from it alone (a GPU fit starts from the CPU fit's
weights).  ``torch.manual_seed`` would also reseed every CUDA, MPS and XPU generator of the
caller, which ``fork_rng(devices=[])`` saves and restores for the CPU only.
"""

import threading
from contextlib import contextmanager

import torch

_lock = threading.RLock()


@contextmanager
def seeded(seed):
    """Run a block under torch's global CPU generator seeded with ``seed``, alone; then
    restore it.  The caller's device generators are neither seeded nor touched.

    Parameters
    ----------
    seed : int
    """
    with _lock, torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(int(seed))
        yield
