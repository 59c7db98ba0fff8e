"""Tiny, fast settings of the registered estimators: the tests' instance table.

As scikit-learn's ``_test_common/instance_generator.py`` is for its estimators, this module
holds the settings under which each estimator of the library's registry
(:func:`temporal_xmodal.estimators.all_estimators`) fits in a fraction of a second: ``TINY``,
by the registry's short names.  The library itself has no test settings.  ``tiny(SAMEmbedder)``
is a SAM with a few hidden units, a 4-d embedding, two epochs and a fixed seed.  Tests that
only need an estimator that fits (validation, layouts, devices, persistence, compliance) take
these settings as they are; a test whose figures depend on particular settings (a learning
curve, an epoch count, a mAP threshold) passes them as keyword overrides, which win::

    from _tiny import tiny, tiny_six

    tiny(DiachronicEmbedder, window=0.5, max_epochs=1)
    tiny(BinnedProcrustesEmbedder, base_estimator=tiny(TempXNetEmbedder))
    tiny_six(n_image_features=6)      # {"CCA": ..., "SAM": ..., ..., "SCML": ...}

An estimator added to the registry adds its line to ``TINY``; one registered by a test (the
throw-away of ``tests/test_registry.py``) adds it with :func:`add_tiny`.  The loops read the
registry when used (``registered()``, ``tiny``, ``tiny_six``), so an estimator registered
before the tests are collected is in every loop; ``SIX`` is the registry as this module was
imported.

The tests import this module as a sibling (``tests/`` is on ``sys.path`` under pytest, as
for ``_device_guard.py``); the fixtures of ``conftest.py`` are the real data sets.
"""

from temporal_xmodal import CCACrossModal
from temporal_xmodal.estimators._registry import Fresh, all_estimators, get_entry

__all__ = ["NET", "SIX", "TINY", "add_tiny", "registered", "tiny", "tiny_six"]

#: The tiny network and training loop of the neural estimators.
NET = dict(hidden_dim=8, embedding_dim=4, max_epochs=2, batch_size=16, random_state=0)

#: Each registered estimator's tiny settings, by short name (values may be ``Fresh``: Binned's
#: base estimator is a tiny CCA built anew for each estimator).  The time-aware ones fit with
#: their times (``use_time=True``; the control, ``use_time=False``, is tested in
#: test_use_time.py and test_sklearn_compliance.py).
TINY = {
    "CCA": {"embedding_dim": 2},
    "SM": {"max_iter": 200, "use_time": True},
    "SAM": NET,
    "TempXNet": {**NET, "use_time": True},
    "Diachronic": {**NET, "time_dim": 4, "use_time": True},
    "Binned": {"bins": 2, "random_state": 0, "use_time": True,
               "base_estimator": Fresh(CCACrossModal, embedding_dim=2)},
    "SCML": {**NET, "common_dim": 4, "n_memory": 10, "n_meta_train": 10},
}


def add_tiny(name, settings):
    """Give an estimator registered by a test (``name``: its short name) its tiny settings.

    Returns ``settings``; ``TINY.pop(name)`` takes them back.
    """
    if name in TINY:
        raise ValueError(f"{name!r} already has tiny settings in tests/_tiny.py.")
    TINY[name] = settings
    return settings


def registered():
    """Short name -> class of every registered estimator, read from the registry now."""
    return {entry.name: entry.estimator for entry in all_estimators()}


#: The estimators by the short names the tests use (the registry's names).
SIX = registered()


def _settings(entry):
    try:
        return TINY[entry.name]
    except KeyError:
        raise KeyError(f"{entry.estimator.__name__} (registered as {entry.name!r}) has no tiny "
                       "settings: add its line to TINY in tests/_tiny.py.") from None


def tiny(estimator, **overrides):
    """An unfitted registered estimator with its tiny settings, ``overrides`` winning.

    ``estimator`` is what :func:`~temporal_xmodal.estimators._registry.get_entry` takes: a
    class, an instance or a short name.  ``BinnedProcrustesEmbedder`` gets a tiny
    ``CCACrossModal`` base unless ``base_estimator`` is among the overrides.
    """
    entry = get_entry(estimator)
    return entry.make("default", **{**_settings(entry), **overrides})


def tiny_six(**common):
    """The registered estimators at their tiny settings, each with ``common`` (e.g. a layout)."""
    return {entry.name: tiny(entry.estimator, **common) for entry in all_estimators()}
