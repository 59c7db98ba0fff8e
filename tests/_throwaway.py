"""A throw-away estimator, registered in one registry entry: a pytest plugin.

``python -m pytest -p _throwaway ...`` (with ``tests/`` on ``PYTHONPATH``) registers
:class:`ThrowAwayEmbedder` before the tests are collected, as a contributor's one new
:func:`~temporal_xmodal.estimators._registry.register` call and one line of tiny settings
in ``tests/_tiny.py`` would; the common tests (compliance, vocabulary, device guard) then
run it with the library's own estimators.
``tests/test_registry.py`` runs them so and reads which tests ran.
"""

from _tiny import NET, add_tiny
from temporal_xmodal import SAMEmbedder
from temporal_xmodal.estimators._registry import CompareEntry, RegisteredEstimator, register


class ThrowAwayEmbedder(SAMEmbedder):
    """SAM under another name: a new class that nothing in the package or the tests names."""


#: The one entry that adds it, and its tiny settings (the tests' own, ``tests/_tiny.py``).
ENTRY = register(RegisteredEstimator(
    "ThrowAway", ThrowAwayEmbedder,
    paper={"optimizer": "sgd"},
    compare=CompareEntry("Throw-away", {"max_epochs": 1}),
))
add_tiny(ENTRY.name, NET)
