"""Tiny, fast settings of the six estimators, shared by the tests.

``tiny(SAMEmbedder)`` is a SAM small enough to fit in a fraction of a second: a few hidden
units, a 4-d embedding, two epochs, a fixed seed.  Tests that only need an estimator that
fits (validation, layouts, devices, persistence, compliance) take these settings as they
are; a test whose figures depend on particular settings (a learning curve, an epoch count,
a mAP threshold) passes them as keyword overrides, which win::

    from _tiny import tiny, tiny_six

    tiny(DiachronicEmbedder, window=0.5, max_epochs=1)
    tiny(BinnedProcrustesEmbedder, base_estimator=tiny(TempXNetEmbedder))
    tiny_six(n_image_features=6)      # {"CCA": ..., "SAM": ..., ..., "SCML": ...}

The tests import this module as a sibling (``tests/`` is on ``sys.path`` under pytest, as
for ``_device_guard.py``); the fixtures of ``conftest.py`` are the real data sets.
"""

from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    SequentialCrossModal,
    TempXNetEmbedder,
)

__all__ = ["NET", "SETTINGS", "SIX", "tiny", "tiny_six"]

#: The tiny network and training loop of the neural estimators.
NET = dict(hidden_dim=8, embedding_dim=4, max_epochs=2, batch_size=16, random_state=0)

#: Each estimator class's tiny settings (Binned's base estimator is added by :func:`tiny`).
#: The time-aware ones fit with their times (``use_time=True``, their default; the control,
#: ``use_time=False``, is tested in test_use_time.py and test_sklearn_compliance.py).
SETTINGS = {
    CCACrossModal: {"embedding_dim": 2},
    SAMEmbedder: NET,
    TempXNetEmbedder: {**NET, "use_time": True},
    DiachronicEmbedder: {**NET, "time_dim": 4, "use_time": True},
    BinnedProcrustesEmbedder: {"bins": 2, "random_state": 0, "use_time": True},
    SequentialCrossModal: {**NET, "common_dim": 4, "n_memory": 10, "n_meta_train": 10},
}

#: The six estimators by the short names the tests use.
SIX = {"CCA": CCACrossModal, "SAM": SAMEmbedder, "TempXNet": TempXNetEmbedder,
       "Diachronic": DiachronicEmbedder, "Binned": BinnedProcrustesEmbedder,
       "SCML": SequentialCrossModal}


def tiny(estimator_class, **overrides):
    """An unfitted ``estimator_class`` with its tiny settings, ``overrides`` winning.

    ``BinnedProcrustesEmbedder`` gets a tiny ``CCACrossModal`` base unless
    ``base_estimator`` is among the overrides.
    """
    params = {**SETTINGS[estimator_class], **overrides}
    if estimator_class is BinnedProcrustesEmbedder:
        params.setdefault("base_estimator", tiny(CCACrossModal))
    return estimator_class(**params)


def tiny_six(**common):
    """The six estimators at their tiny settings, each with ``common`` (e.g. a layout)."""
    return {name: tiny(cls, **common) for name, cls in SIX.items()}
