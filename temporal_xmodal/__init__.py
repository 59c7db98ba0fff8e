"""temporal_xmodal: scikit-learn estimators for cross-modal embeddings over time.

``X = [image features | text features | time]``: the layout is
:mod:`temporal_xmodal._layout`'s, time (dates, units, durations, encodings) is
:mod:`temporal_xmodal.time`'s, and :mod:`temporal_xmodal.base` reads X through
both for every estimator.

The public names and subpackages are imported on first use (PEP 562), so that
``python -m temporal_xmodal --help`` answers before torch is imported:
``temporal_xmodal.time``, ``temporal_xmodal.metrics`` … are there after a bare
``import temporal_xmodal``, and ``dir()`` lists them.

Read more in the user guide: docs/index.md.
"""

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

#: Public name -> the module that owns it.  The registered estimators
#: (estimators/_registry.py) are exported by name; tests/test_registry.py checks that
#: this list and the registry agree.
_OWNERS = {
    "BinnedProcrustesEmbedder": ".estimators",
    "BusyMachineWarning": "._warnings",
    "CCACrossModal": ".estimators",
    "CrossModalEmbedder": ".base",
    "DiachronicEmbedder": ".estimators",
    "LayoutWarning": "._layout",
    "SAMEmbedder": ".estimators",
    "SemanticMatchingCrossModal": ".estimators",
    "SequentialCrossModal": ".estimators",
    "StillImprovingWarning": "._warnings",
    "CheckpointWarning": "._warnings",
    "TempXNetEmbedder": ".estimators",
    "TimeColumnWarning": "._layout",
    "TimeRangeWarning": ".time",
    "TimeUnitWarning": ".time",
    "make_crossmodal_transformer": "._stacking",
    "paper_settings": ".estimators._settings",
    "stack_modalities": "._stacking",
}
__all__ = list(_OWNERS)
#: The public subpackages and modules, imported on first use like the names above.
_SUBMODULES = ("base", "comparison", "datasets", "estimators", "evaluation", "features",
              "losses", "metrics", "nn", "scoring", "search", "time", "training")

if TYPE_CHECKING:  # the same names, for static analysis and IDEs
    from ._layout import LayoutWarning, TimeColumnWarning
    from ._stacking import make_crossmodal_transformer, stack_modalities
    from ._warnings import BusyMachineWarning, CheckpointWarning, StillImprovingWarning
    from .base import CrossModalEmbedder
    from .estimators import (
        BinnedProcrustesEmbedder,
        CCACrossModal,
        DiachronicEmbedder,
        SAMEmbedder,
        SemanticMatchingCrossModal,
        SequentialCrossModal,
        TempXNetEmbedder,
    )
    from .estimators._settings import paper_settings
    from .time import TimeRangeWarning, TimeUnitWarning


def __getattr__(name):
    """Import a public name from its owner, or a public subpackage, on first use (PEP 562)."""
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)  # binds it here, too
    owner = _OWNERS.get(name)
    if owner is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(owner, __name__), name)


def __dir__():
    return sorted([*_OWNERS, *_SUBMODULES, "__version__"])
