"""THE ESTIMATOR REGISTRY: every estimator of the library, once.

One :class:`RegisteredEstimator` per estimator holds what the rest of the package and the
tests need to know about it: its short name, its class, how it uses time (the class's
``time_role`` tag), its paper's settings and its line of the ``compare`` job.  The package's
exports, :func:`~temporal_xmodal.paper_settings`,
:func:`~temporal_xmodal.comparison.estimator_registry` and every test that loops over the
estimators read :func:`all_estimators`; adding an estimator is its module(s), its docs page,
one :func:`register` call below and its tiny test settings in ``tests/_tiny.py``
(docs/adding_an_estimator.md).

This plays the part of scikit-learn's ``utils.discovery.all_estimators`` (which crawls the
package), in one explicit list; the tests' instance table (scikit-learn's
``utils/_test_common/instance_generator.py``) is ``tests/_tiny.py``.
"""

from dataclasses import dataclass, field
from typing import Callable, Optional

from ._cca import CCACrossModal
from ._diachronic import DiachronicEmbedder
from ._sam import SAMEmbedder
from ._semantic_matching import SemanticMatchingCrossModal
from ._tempxnet import TempXNetEmbedder
from .binned import BinnedProcrustesEmbedder, default_base_estimator
from .sequential import SequentialCrossModal

__all__ = ["CompareEntry", "Fresh", "RegisteredEstimator", "all_estimators", "get_entry",
           "register"]


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
class CompareEntry:
    """An estimator's line in ``python -m temporal_xmodal compare``.

    Parameters
    ----------
    name : str
        Display name in the job's table, figure and ``--estimators``.
    params : dict, default={}
        Parameters beyond the estimator's defaults (values may be :class:`Fresh`).
    seeded : bool, default=True
        Whether the job's ``random_state`` is passed (False for a deterministic
        estimator, whose ``random_state`` stays at its default).
    time_window : callable or None, default=None
        ``time_window(window) -> dict``: parameters set from the data's time
        scale (a number in the estimator's ``time_unit``) when the job has one.
    datasets : dict of str -> dict, default={}
        Parameters set on one data set only (``{"wiki": {"bins": 1}}``).
    leave_out : dict of str -> str, default={}
        Data sets the job leaves the estimator out of by default, with the reason it prints
        (``--estimators`` names it to run it anyway); data read as image–text pairs without
        labels (a user's file without ``--label``) count as ``"ticrc"``.
    """

    name: str
    params: dict = field(default_factory=dict)
    seeded: bool = True
    time_window: Optional[Callable[[float], dict]] = None
    datasets: dict = field(default_factory=dict)
    leave_out: dict = field(default_factory=dict)


@dataclass(frozen=True)
class RegisteredEstimator:
    """One estimator of the library, as the package, ``compare`` and the tests see it.

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
    compare : CompareEntry or None, default=None
        Its line in the ``compare`` job; ``None``: not compared.

    Attributes
    ----------
    time_role : {"none", "training", "inference"}
        The class's ``time_role`` tag (:func:`temporal_xmodal.time.time_role`).
    """

    name: str
    estimator: type
    paper: Optional[dict] = None
    compare: Optional[CompareEntry] = None

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

    def make_compared(self, common, random_state, time_window, dataset=None):
        """The unfitted estimator of the ``compare`` job (see :class:`CompareEntry`).

        Parameters
        ----------
        common : dict
            Parameters of every compared estimator (``n_image_features``).
        random_state : int
            The job's seed, passed when ``compare.seeded``.
        time_window : float or None
            The data's time scale; ``None``: the estimator's defaults.
        dataset : str or None, default=None
            The data set, whose parameters (``compare.datasets``) win.

        Returns
        -------
        estimator : estimator
        """
        entry = self.compare
        params = dict(common)
        if entry.seeded:
            params["random_state"] = random_state
        if entry.time_window is not None and time_window is not None:
            params.update(entry.time_window(time_window))
        return self.estimator(**_resolve({**entry.params, **params,
                                          **entry.datasets.get(dataset, {})}))


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
    taken = {e.compare.name for e in _REGISTRY.values() if e.compare is not None}
    if entry.name in _REGISTRY or (entry.compare is not None and entry.compare.name in taken):
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
        ``entry.paper``, ``entry.compare``.

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
    compare=CompareEntry("CCA", seeded=False),  # deterministic
))
register(RegisteredEstimator(
    "SM", SemanticMatchingCrossModal,
    # Rasiwasia et al., ACM MM 2010: one (multiclass) logistic regression per modality on
    # the features as they are, static
    paper={"use_time": False, "standardize": False},
    compare=CompareEntry("SM", seeded=False,  # deterministic (L-BFGS)
                         leave_out={"ticrc": (
                             "it learns class posteriors, and TICRC's labels are the pairs, "
                             "so every held-out caption is a class it never saw: its ranking "
                             "is at chance by construction")}),
))
register(RegisteredEstimator(
    "SAM", SAMEmbedder,
    # Semedo & Magalhães, ACM MM 2019 (SAM): SGD, Nesterov momentum 0.9, lr 5e-3, decay 1e-6
    paper={"optimizer": "sgd", "lr": 5e-3, "momentum": 0.9, "nesterov": True,
           "lr_decay": 1e-6, "standardize": False},
    compare=CompareEntry("SAM"),
))
register(RegisteredEstimator(
    "TempXNet", TempXNetEmbedder,
    # Semedo & Magalhães, ACM MM 2018 (TempXNet): SGD, momentum 0.9, lr 5e-3, decay 1e-6,
    # the temporal term at λ = 1 and the recency bandwidth of the thesis' tables (0.3 years)
    paper={"optimizer": "sgd", "lr": 5e-3, "momentum": 0.9, "lr_decay": 1e-6,
           "temporal_weight": 1.0, "bandwidth": "0.3Y", "use_time": True,
           "standardize": False},
    compare=CompareEntry("TempXNet-Rec", {"correlation": "recency"}),
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
    # TICRC's labels are the pairs: no two items share a category, so L_intra has no pair to
    # act on, and the scalar time input with time dropout reads captions at the query's date
    # better than the one-hot bins (docs/estimators/diachronic.md, "Deviations").  No window:
    # it shapes L_intra only, off at the default decay=0
    compare=CompareEntry("Diachronic",
                         datasets={"ticrc": {"time_encoding": "minmax",
                                             "time_dropout": 0.5}}),
))
register(RegisteredEstimator(
    "Binned", BinnedProcrustesEmbedder,
    # DCM-Binned: every bin trained from its own initialisation
    paper={"bins": "1M", "min_bin_size": 100, "init": "independent", "use_time": True},
    compare=CompareEntry("Binned+Procrustes", {"base_estimator": Fresh(default_base_estimator)},
                         datasets={"wiki": {"bins": 1}}),  # undated: a single bin
))
register(RegisteredEstimator(
    "SCML", SequentialCrossModal,
    # Song & Tan: Stage I by SGD (SCML has no optimizer parameter: its stages fix theirs) at
    # lr 0.01 for 150 epochs, code length K = 64
    paper={"lr": 0.01, "max_epochs": 150, "embedding_dim": 64},
    # 25 of the paper's 150 epochs per stage keep the default job to a few minutes
    compare=CompareEntry("SCML", {"max_epochs": 25},
                         leave_out={"ticrc": (
                             "it learns from shared class labels only, with no image–text "
                             "pairing, and TICRC's labels are the pairs, so every held-out "
                             "caption is a class it never saw: its ranking is at chance by "
                             "construction (`benchmarks/bench_ticrc_all.py` measures it)")}),
))
