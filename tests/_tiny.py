"""Tiny, fast settings of the registered estimators, shared by the tests.

The settings are each estimator's ``tiny`` entry in the library's registry
(``temporal_xmodal/estimators/_registry.py``, :func:`temporal_xmodal.estimators.all_estimators`);
this module is the tests' view of it, as scikit-learn's ``_test_common/instance_generator.py``
is of its estimators.  ``tiny(SAMEmbedder)`` is a SAM small enough to fit in a fraction of a
second: a few hidden units, a 4-d embedding, two epochs, a fixed seed.  Tests that only need
an estimator that fits (validation, layouts, devices, persistence, compliance) take these
settings as they are; a test whose figures depend on particular settings (a learning curve,
an epoch count, a mAP threshold) passes them as keyword overrides, which win::

    from _tiny import tiny, tiny_six

    tiny(DiachronicEmbedder, window=0.5, max_epochs=1)
    tiny(BinnedProcrustesEmbedder, base_estimator=tiny(TempXNetEmbedder))
    tiny_six(n_image_features=6)      # {"CCA": ..., "SAM": ..., ..., "SCML": ...}

The tables are read from the registry when used (``registered()``, ``tiny``, ``tiny_six``),
so an estimator registered before the tests are collected (tests/test_registry.py registers
a throw-away one) is in every loop.  ``SIX``, ``SETTINGS`` and ``NET`` are the registry as
this module was imported.

The tests import this module as a sibling (``tests/`` is on ``sys.path`` under pytest, as
for ``_device_guard.py``); the fixtures of ``conftest.py`` are the real data sets.
"""

from temporal_xmodal.estimators._registry import _NET, all_estimators, get_entry

__all__ = ["NET", "SETTINGS", "SIX", "registered", "tiny", "tiny_six"]

#: The tiny network and training loop of the neural estimators.
NET = dict(_NET)


def registered():
    """Short name -> class of every registered estimator, read from the registry now."""
    return {entry.name: entry.estimator for entry in all_estimators()}


#: Each estimator class's tiny settings (Binned's base estimator is a tiny CCA, built anew by
#: :func:`tiny`).  The time-aware ones fit with their times (``use_time=True``, their default;
#: the control, ``use_time=False``, is tested in test_use_time.py and
#: test_sklearn_compliance.py).
SETTINGS = {entry.estimator: entry.tiny for entry in all_estimators()}

#: The estimators by the short names the tests use (the registry's names).
SIX = registered()


def tiny(estimator_class, **overrides):
    """An unfitted ``estimator_class`` with its tiny settings, ``overrides`` winning.

    ``BinnedProcrustesEmbedder`` gets a tiny ``CCACrossModal`` base unless
    ``base_estimator`` is among the overrides.
    """
    return get_entry(estimator_class).make("tiny", **overrides)


def tiny_six(**common):
    """The registered estimators at their tiny settings, each with ``common`` (e.g. a layout)."""
    return {entry.name: entry.make("tiny", **common) for entry in all_estimators()}
