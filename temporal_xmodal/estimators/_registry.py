"""THE ESTIMATOR REGISTRY: every estimator of the library, once.

One :class:`RegisteredEstimator` per estimator holds what the rest of the package and the
tests need to know about it: its short name, its class, how it uses time (the class's
``time_role`` tag) and its paper's settings.  The package's exports,
:func:`~temporal_xmodal.paper_settings`, the ``compare`` job (its entries are keyed by these
short names: ``comparison/settings.py``) and every test that loops over the estimators read
:func:`all_estimators`; adding an estimator is its module(s), its docs page, one
:func:`register` call below and its tiny test settings in ``tests/_tiny.py``
(docs/adding_an_estimator.md).

This plays the part of scikit-learn's ``utils.discovery.all_estimators`` (which crawls the
package), in one explicit list; the tests' instance table (scikit-learn's
``utils/_test_common/instance_generator.py``) is ``tests/_tiny.py``.
"""

from dataclasses import dataclass
from typing import Optional

from ._cca import CCACrossModal
from ._semantic_matching import SemanticMatchingCrossModal
from .binned import BinnedProcrustesEmbedder
from .diachronic import DiachronicEmbedder
from .sam import SAMEmbedder
from .sequential import SequentialCrossModal
from .tempxnet import TempXNetEmbedder

__all__ = ["Fresh", "RegisteredEstimator", "all_estimators", "get_entry", "register"]


class Fresh:
    """A parameter value built anew for every estimator made from settings.

    Settings are plain dictionaries shared by every call; an estimator-valued
    parameter (a meta-estimator's ``base_estimator``) must not be one object
    shared by all of them, so the settings hold ``Fresh(factory, **params)``
    and :meth:`RegisteredEstimator.make` calls ``factory(**params)`` each time.

    Parameters
    ----------
    factory : callable
        A class or a function returning the value.
    **params
        Keyword arguments of ``factory``.
    """

    def __init__(self, factory, **params):
        self.factory = factory
        self.params = params

    def build(self):
        """The value: ``factory(**params)``, a new object on every call."""
        return self.factory(**self.params)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"Fresh({getattr(self.factory, '__name__', self.factory)}{', ' if args else ''}{args})"


def _resolve(params):
    return {k: v.build() if isinstance(v, Fresh) else v for k, v in params.items()}


@dataclass(frozen=True)
class RegisteredEstimator:
    """One estimator of the library, as the package and the tests see it.

    Read more in the user guide: docs/adding_an_estimator.md.

    Parameters
    ----------
    name : str
        Short name, used by the tests' tables and ids (``"TempXNet"``).
    estimator : type
        The estimator class (a :class:`~temporal_xmodal.CrossModalEmbedder`).
    paper : dict or None, default=None
        Parameters reproducing its source paper's configuration
        (:func:`~temporal_xmodal.paper_settings`); ``None``: no paper settings.

    Attributes
    ----------
    time_role : {"none", "training", "inference"}
        The class's ``time_role`` tag (:func:`temporal_xmodal.time.time_role`).
    """

    name: str
    estimator: type
    paper: Optional[dict] = None

    @property
    def time_role(self):
        return getattr(self.estimator, "time_role", "none")

    def make(self, settings="default", **overrides):
        """An unfitted estimator at some settings, ``overrides`` winning.

        Parameters
        ----------
        settings : {"default", "paper"}, default="default"
            Which settings: none (the class defaults) or the paper's.
        **overrides
            Parameters that win over the settings (values may be :class:`Fresh`).

        Returns
        -------
        estimator : estimator
        """
        if settings not in ("default", "paper"):
            raise ValueError(f"settings must be 'default' or 'paper'; got {settings!r}.")
        base = (self.paper or {}) if settings == "paper" else {}
        return self.estimator(**_resolve({**base, **overrides}))


_REGISTRY = {}


def register(entry):
    """Add an estimator to the registry (its short name must be new).

    Parameters
    ----------
    entry : RegisteredEstimator

    Returns
    -------
    entry : RegisteredEstimator
        The same object.
    """
    if not isinstance(entry, RegisteredEstimator):
        raise TypeError(f"register takes a RegisteredEstimator, not {type(entry).__name__}.")
    if entry.name in _REGISTRY:
        raise ValueError(f"An estimator named {entry.name!r} is already registered.")
    if any(e.estimator is entry.estimator for e in _REGISTRY.values()):
        raise ValueError(f"{entry.estimator.__name__} is already registered.")
    _REGISTRY[entry.name] = entry
    return entry


def all_estimators():
    """Every estimator of the library, in registration order.

    scikit-learn's ``all_estimators`` finds its estimators by crawling the
    package; here they are listed once, in this module, with their settings.

    Read more in the user guide: docs/adding_an_estimator.md.

    Returns
    -------
    entries : list of RegisteredEstimator
        ``entry.name``, ``entry.estimator`` (the class), ``entry.time_role``,
        ``entry.paper``.

    Examples
    --------
    >>> from temporal_xmodal.estimators import all_estimators
    >>> [entry.name for entry in all_estimators()]
    ['CCA', 'SM', 'SAM', 'TempXNet', 'Diachronic', 'Binned', 'SCML']
    """
    return list(_REGISTRY.values())


def get_entry(estimator):
    """The registry entry of an estimator.

    Parameters
    ----------
    estimator : str, type or estimator instance
        A short name (``"SAM"``), a class name (``"SAMEmbedder"``), a class or an
        instance.

    Returns
    -------
    entry : RegisteredEstimator

    Raises
    ------
    KeyError
        If no registered estimator matches.
    """
    if isinstance(estimator, str):
        for entry in _REGISTRY.values():
            if estimator in (entry.name, entry.estimator.__name__):
                return entry
    else:
        cls = estimator if isinstance(estimator, type) else type(estimator)
        for entry in _REGISTRY.values():
            if entry.estimator is cls:
                return entry
        estimator = cls.__name__
    raise KeyError(estimator)


# ------------------------------------------------------------------ the estimators
register(RegisteredEstimator(
    "CCA", CCACrossModal,
    paper={"reg": 0.0},
))
register(RegisteredEstimator(
    "SM", SemanticMatchingCrossModal,
    # Rasiwasia et al., ACM MM 2010: one (multiclass) logistic regression per modality on
    # the features as they are, static
    paper={"use_time": False, "standardize": False},
))
register(RegisteredEstimator(
    "SAM", SAMEmbedder,
    # Semedo & Magalhães, ACM MM 2019 (SAM): SGD, Nesterov momentum 0.9, lr 5e-3, decay 1e-6
    paper={"optimizer": "sgd", "lr": 5e-3, "momentum": 0.9, "nesterov": True,
           "lr_decay": 1e-6, "standardize": False},
))
register(RegisteredEstimator(
    "TempXNet", TempXNetEmbedder,
    # Semedo & Magalhães, ACM MM 2018 (TempXNet): SGD, momentum 0.9, lr 5e-3, decay 1e-6,
    # the temporal term at λ = 1 and the recency bandwidth of the thesis' tables (0.3 years)
    paper={"optimizer": "sgd", "lr": 5e-3, "momentum": 0.9, "lr_decay": 1e-6,
           "temporal_weight": 1.0, "bandwidth": "0.3Y", "use_time": True,
           "standardize": False},
))
register(RegisteredEstimator(
    "Diachronic", DiachronicEmbedder,
    # Semedo & Magalhães, ACM MM 2019 (DCM), §5.2: w = 4 months, λ = 0.1 per month (in any
    # time unit), one margin m for both terms, the concatenation architecture, a scalar time
    # input (the paper's "continuous" model; its scaling is not given), the summed loss, the
    # lowest validation loss
    paper={"optimizer": "sgd", "lr": 5e-3, "momentum": 0.9, "conditioning": "concat",
           "loss_reduction": "sum", "window": "4M", "decay": "0.1/M", "intra_margin": None,
           "time_encoding": "minmax", "time_dropout": 0.0, "time_lr_scale": 1.0,
           "selection_metric": "valid_loss", "use_time": True, "standardize": False},
))
register(RegisteredEstimator(
    "Binned", BinnedProcrustesEmbedder,
    # DCM-Binned: every bin trained from its own initialisation
    paper={"bins": "1M", "min_bin_size": 100, "init": "independent", "use_time": True},
))
register(RegisteredEstimator(
    "SCML", SequentialCrossModal,
    # Song & Tan: Stage I by SGD (SCML has no optimizer parameter: its stages fix theirs) at
    # lr 0.01 for 150 epochs, code length K = 64
    paper={"lr": 0.01, "max_epochs": 150, "embedding_dim": 64},
))
