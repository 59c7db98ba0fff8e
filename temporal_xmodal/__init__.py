"""temporal_xmodal: scikit-learn estimators for cross-modal embeddings over time, on
``X = [image features | text features | time]``.

The public names and subpackages are imported on first use (PEP 562), so that
``python -m temporal_xmodal --help`` answers before torch is imported.

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
    "LayoutWarning": "._input",
    "SAMEmbedder": ".estimators",
    "SemanticMatchingCrossModal": ".estimators",
    "SequentialCrossModal": ".estimators",
    "StillImprovingWarning": "._warnings",
    "CheckpointWarning": "._warnings",
    "TempXNetEmbedder": ".estimators",
    "TimeColumnWarning": "._input",
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
    from ._input import LayoutWarning, TimeColumnWarning
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
