"""What the main job compares: the estimators, one entry each, and the data sets.

:data:`COMPARED` holds each compared estimator's line of the job, keyed by the registry's
short name (:func:`temporal_xmodal.estimators.all_estimators`); :func:`estimator_registry`
builds them, with how each uses time (``time_role``).  :func:`load_comparison_data` returns
a data set as train / test splits with the ``(X_image, X_text, time)`` blocks of each, so
that the controls and the references never slice X again.

Read more in docs/index.md ("Comparing the estimators").
"""

import os
from collections import namedtuple
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Callable, Optional

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._constraints import Interval
from .._input import split_blocks, split_time_column
from .._stacking import stack_modalities, stack_rows
from ..datasets import load_wiki, make_temporal_crossmodal
from ..datasets._ticrc_features import ticrc_features
from ..estimators import all_estimators
from ..estimators._registry import Fresh
from ..estimators.binned import default_base_estimator
from ..time import time_role
from .job import DATASETS, data_folder

__all__ = ["COMPARED", "DEMO_WORLD", "CompareEntry", "Entry", "default_estimators",
           "estimator_registry", "left_out", "load_comparison_data", "set_matching_params",
           "synthetic_split", "training_epochs", "with_constant_time"]


@dataclass(frozen=True)
class CompareEntry:
    """An estimator's line in ``python -m temporal_xmodal compare``.

    Parameters
    ----------
    name : str
        Display name in the table, the figure and ``--estimators``.
    params : dict, default={}
        Parameters beyond the estimator's defaults (values may be
        :class:`~temporal_xmodal.estimators._registry.Fresh`).
    seeded : bool, default=True
        Whether the job's ``random_state`` is passed (False: a deterministic estimator).
    time_window : callable or None, default=None
        ``time_window(window) -> dict``: parameters set from the data's time scale (a
        number in the estimator's ``time_unit``) when the job has one.
    datasets : dict of str -> dict, default={}
        Parameters set on one data set only (``{"wiki": {"bins": 1}}``).
    leave_out : dict of str -> str, default={}
        Data sets the job leaves the estimator out of by default, with the reason it prints;
        data read as pairs without labels count as ``"ticrc"``.
    """

    name: str
    params: dict = field(default_factory=dict)
    seeded: bool = True
    time_window: Optional[Callable[[float], dict]] = None
    datasets: dict = field(default_factory=dict)
    leave_out: dict = field(default_factory=dict)

    def make(self, registered, common, random_state, time_window, dataset=None):
        """The unfitted estimator of ``registered`` (its registry entry) in the job:
        ``common`` parameters, the seed, the time scale's and ``dataset``'s parameters."""
        params = dict(common)
        if self.seeded:
            params["random_state"] = random_state
        if self.time_window is not None and time_window is not None:
            params.update(self.time_window(time_window))
        return registered.make(**{**self.params, **params, **self.datasets.get(dataset, {})})


#: The reason SM and SCML are left out of pairs without labels.
_UNSEEN = ("TICRC's labels are the pairs, so every held-out caption is a class it never saw: "
           "its ranking is at chance by construction")
#: Each compared estimator's line, keyed by the registry's short name.
COMPARED = {
    "CCA": CompareEntry("CCA", seeded=False),  # deterministic
    "SM": CompareEntry("SM", seeded=False,  # deterministic (L-BFGS)
                       leave_out={"ticrc": f"it learns class posteriors, and {_UNSEEN}"}),
    "SAM": CompareEntry("SAM"),
    "TempXNet": CompareEntry("TempXNet-Rec", {"correlation": "recency"}),
    # TICRC: the scalar time input with time dropout (docs/estimators/diachronic.md)
    "Diachronic": CompareEntry("Diachronic", datasets={"ticrc": {"time_encoding": "minmax",
                                                                 "time_dropout": 0.5}}),
    "Binned": CompareEntry("Binned+Procrustes", {"base_estimator": Fresh(default_base_estimator)},
                           datasets={"wiki": {"bins": 1}}),  # undated: a single bin
    # 25 of the paper's 150 epochs per stage keep the default job to a few minutes
    "SCML": CompareEntry("SCML", {"max_epochs": 25}, leave_out={"ticrc": (
        "it learns from shared class labels only, with no image–text pairing, and "
        f"{_UNSEEN} (`benchmarks/bench_ticrc_all.py` measures it)")}),
}

#: One compared estimator: how it uses time and the unfitted estimator.
Entry = namedtuple("Entry", ["time_role", "estimator"])
Entry.__doc__ = "One compared estimator: its ``time_role`` and the unfitted estimator."

_REGISTRY_CONSTRAINTS = {
    "n_image_features": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
    "time_window": [Interval(Real, 0, None, closed="neither"), None],
    "dataset": [str],
}


@validate_params(_REGISTRY_CONSTRAINTS, prefer_skip_nested_validation=True)
def estimator_registry(n_image_features, random_state=0, time_window=1.0, dataset="synthetic"):
    """The compared estimators with how each uses time, by display name.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    n_image_features : int
        Leading image columns of X.
    random_state : int, default=0
        Seed of the stochastic estimators.
    time_window : float or None, default=1.0
        The data's time scale in the estimators' ``time_unit`` (``None``: their defaults).
    dataset : str, default="synthetic"
        Key of the data-set settings (``CompareEntry.datasets``).

    Returns
    -------
    registry : dict of str -> Entry
    """
    common = {"n_image_features": n_image_features}
    estimators = {COMPARED[entry.name].name: COMPARED[entry.name].make(
        entry, common, random_state, time_window, dataset)
        for entry in all_estimators() if entry.name in COMPARED}
    return {name: Entry(time_role(est), est) for name, est in estimators.items()}


@validate_params(_REGISTRY_CONSTRAINTS, prefer_skip_nested_validation=True)
def default_estimators(n_image_features, random_state=0, time_window=1.0, dataset="synthetic"):
    """The unfitted estimators of :func:`estimator_registry` (same parameters), by
    display name."""
    registry = estimator_registry(n_image_features, random_state, time_window, dataset)
    return {name: entry.estimator for name, entry in registry.items()}


def left_out(dataset):
    """The estimators ``compare`` leaves out of ``dataset`` (``"ticrc"`` for pairs without
    labels) by default: ``{display name: the reason it prints}``."""
    return {COMPARED[entry.name].name: COMPARED[entry.name].leave_out[dataset]
            for entry in all_estimators()
            if entry.name in COMPARED and dataset in COMPARED[entry.name].leave_out}


@validate_params({"estimator": [HasMethods(["get_params", "set_params"])]},
                 prefer_skip_nested_validation=True)
def set_matching_params(estimator, **params):
    """Set each parameter on every (nested) parameter of that name, e.g. ``max_epochs`` on
    ``base_estimator__max_epochs``; names the estimator lacks are skipped.  Returns the
    estimator."""
    matching = {key: params[key.split("__")[-1]] for key in estimator.get_params()
                if key.split("__")[-1] in params}
    return estimator.set_params(**matching)


def training_epochs(estimator):
    """Epochs of one fit of a compared estimator (its base estimator's for Binned); ``None``
    for a closed form."""
    params = estimator.get_params(deep=False)
    if params.get("max_epochs"):
        return params["max_epochs"]
    if "base_estimator" in params:
        base = params["base_estimator"] or default_base_estimator()
        return training_epochs(base)
    return None


# ------------------------------------------------------------------------- the data sets
#: The synthetic world of the job: the generator's defaults with a stable writing style, so
#: that only the date tells a routine caption's era (docs/index.md).
DEMO_WORLD = {"drift": 0.0}


def _blocks(X, n_image_features):
    """``(X_image, X_text, time)`` of an X this module did not build itself."""
    features, time = split_time_column(X)
    n_text = features.shape[1] - n_image_features
    return (*split_blocks(np.asarray(features), n_image_features, n_text),
            np.asarray(time, dtype=np.float64))


@validate_params(
    {"n_samples": [Interval(Integral, 1, None, closed="left")],
     "test_fraction": [Interval(Real, 0, 1, closed="neither")],
     "random_state": [Interval(Integral, 0, None, closed="left")],
     "generator": [callable]},
    prefer_skip_nested_validation=False,  # **world is checked by the generator
)
def synthetic_split(n_samples=3000, test_fraction=0.3, random_state=0, *,
                    generator=make_temporal_crossmodal, **world):
    """The embedded data set split at random: ``(X_train, y_train, X_test, y_test,
    n_image_features, time_window)``.

    ``n_samples`` items, each in the test split with probability ``test_fraction``, drawn
    by ``generator(n_samples, return_info=True, random_state=random_state, **world)`` in
    :data:`DEMO_WORLD` updated with ``world``; ``time_window``: t-mAP@50's window, 5 % of
    the time span in the time column's unit.
    """
    X, y, info = generator(n_samples, return_info=True, random_state=random_state,
                           **{**DEMO_WORLD, **world})
    rng = np.random.default_rng(random_state)
    test = rng.random(n_samples) < test_fraction
    span = float(np.ptp(info.time))
    return X[~test], y[~test], X[test], y[test], info.n_image_features, 0.05 * span


def _subset(n_total, n_train, n_samples, rng):
    """Train / test rows of a random ``n_samples`` subset in the split's proportions."""
    if n_samples is None or n_samples >= n_total:
        return slice(None), slice(None)
    n_tr = max(2, int(round(n_samples * n_train / n_total)))
    n_te = max(2, n_samples - n_tr)
    return (np.sort(rng.choice(n_train, n_tr, replace=False)),
            np.sort(rng.choice(n_total - n_train, n_te, replace=False)))


def with_constant_time(blocks, value=0.0):
    """X of a split's ``(X_image, X_text, time)`` blocks with the time column set to
    ``value`` (on the time axis): a constant-time control's input.  float32 when both
    blocks are."""
    X_image, X_text, _ = blocks
    return stack_rows(X_image, X_text, np.full(len(X_image), float(value)))


@validate_params(
    {"dataset": [StrOptions(set(DATASETS))], "data_dir": [str, os.PathLike, None],
     "n_samples": [Interval(Integral, 1, None, closed="left"), None],
     "random_state": [Interval(Integral, 0, None, closed="left")],
     "cache_dir": [str, os.PathLike, None], "progress": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def load_comparison_data(dataset="synthetic", *, data_dir=None, n_samples=None, random_state=0,
                         cache_dir=None, progress=True):
    """Training and test data of ``compare --dataset``, ready for the estimators.

    ``synthetic``: :func:`synthetic_split` in :data:`DEMO_WORLD`, t-mAP@50 window 5 % of the
    span.  ``wiki``: the Wikipedia benchmark's own split, undated.  ``ticrc``: TICRC
    ``train`` + 80 % of ``train2`` to fit, the rest held out; captions undated, time in years.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    dataset : {"synthetic", "wiki", "ticrc"}, default="synthetic"
    data_dir : str, Path or None, default=None
        Folder holding ``wiki/`` and ``ticrc/`` (``None``: ``job.default_data_dir()``).
    n_samples : int or None, default=None
        Items, train + test: the synthetic data set's size (``None``: 3000); a random
        subset of wiki or ticrc in the split's proportions (``None``: all).
    random_state : int, default=0
        Seed of the synthetic data and of the wiki subset (TICRC's split is fixed).
    cache_dir : str, Path or None, default=None
        TICRC image feature cache (``None``: ``$TEMPORAL_XMODAL_CACHE``, else ~/.cache).
    progress : bool, default=True
        Progress bar of the image featuriser.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X_train``, ``y_train``, ``X_test``, ``y_test``, ``blocks_train``,
        ``blocks_test``, ``n_image_features``, ``time_window`` (the estimators' time
        scale; ``None``: their defaults), ``eval_window`` (``None`` when undated),
        ``dated``, ``protocol`` (``"labels"`` or ``"undated"``), ``description`` and
        ``extra`` (JSON-ready); ticrc also ``test_picture_paths``.

    Raises
    ------
    FileNotFoundError
        The data folder of ``wiki`` / ``ticrc`` is absent (the message says how to set it).
    """
    if dataset == "synthetic":
        X_tr, y_tr, X_te, y_te, n_img, window = synthetic_split(
            3000 if n_samples is None else n_samples, random_state=random_state)
        data = Bunch(X_train=X_tr, y_train=y_tr, X_test=X_te, y_test=y_te,
                     blocks_train=_blocks(X_tr, n_img), blocks_test=_blocks(X_te, n_img),
                     n_image_features=n_img, time_window=None, eval_window=window,
                     protocol="labels", extra={"world": dict(DEMO_WORLD)},
                     description=f"synthetic, {len(X_tr)} train / {len(X_te)} test items, "
                                 f"{n_img} image + {X_tr.shape[1] - 1 - n_img} text features; "
                                 f"t-mAP@50 window = {window:.2f}; the demo world, built so "
                                 "that time helps (caption meanings move between eras, the "
                                 "writing style stays): your own data may differ (--data FILE)")
    elif dataset == "wiki":
        wiki = load_wiki(data_folder(data_dir, "wiki"))
        n_tr = len(wiki.X_train)
        tr, te = _subset(n_tr + len(wiki.X_test), n_tr, n_samples,
                         np.random.default_rng(random_state))
        X_tr, y_tr = wiki.X_train[tr], wiki.y_train[tr]
        X_te, y_te = wiki.X_test[te], wiki.y_test[te]
        n_img = wiki.n_image_features
        data = Bunch(X_train=X_tr, y_train=y_tr, X_test=X_te, y_test=y_te,
                     blocks_train=_blocks(X_tr, n_img), blocks_test=_blocks(X_te, n_img),
                     n_image_features=n_img, time_window=1.0, eval_window=None,
                     protocol="labels", extra={"categories": list(wiki.categories)},
                     description=f"wiki, {len(X_tr)} train / {len(X_te)} test items, "
                                 f"{n_img} image (SIFT BoW) + {X_tr.shape[1] - 1 - n_img} text (LDA) features, "
                                 f"{len(wiki.categories)} categories; undated (time = 0): the "
                                 "temporal protocols and Δ-time are n/a")
    else:
        data = _ticrc(data_dir, n_samples, cache_dir, progress)
    data.dated = bool(np.ptp(data.blocks_train[2]) > 0)
    return data


def _ticrc(data_dir, n_samples, cache_dir, progress):
    feats = ticrc_features(data_folder(data_dir, "ticrc"), n_samples=n_samples,
                           cache_dir=cache_dir, progress=progress)
    blocks_tr = (feats.image_fit, feats.text_fit, np.asarray(feats.time_fit, dtype=np.float64))
    blocks_te = (feats.image_heldout, feats.text_heldout,
                 np.asarray(feats.time_heldout, dtype=np.float64))
    X_tr, X_te = stack_modalities(*blocks_tr), stack_modalities(*blocks_te)
    n_img = feats.image_fit.shape[1]
    stats = feats.image_stats
    computed = (f", {stats['n_computed']} computed at {stats['images_per_second']:.1f} images/s"
                if stats["n_computed"] else "")
    return Bunch(X_train=X_tr, y_train=np.arange(len(X_tr)), X_test=X_te,
                 y_test=np.arange(len(X_te)), blocks_train=blocks_tr, blocks_test=blocks_te,
                 n_image_features=n_img, time_window=2.0, eval_window=None, protocol="undated",
                 test_picture_paths=[feats.picture_paths[i] for i in feats.heldout_rows],
                 extra={"cache_dir": feats.cache_dir, "n_cached": stats["n_cached"],
                        "n_computed": stats["n_computed"],
                        "text_features": feats.text_fit.shape[1]},
                 description=f"ticrc, {len(X_tr)} training pairs (train + 80 % of train2) / "
                             f"{len(X_te)} held-out train2 pictures × {len(X_te)} captions; "
                             f"EfficientNet-Lite0 ({n_img}) + TF-IDF ({X_tr.shape[1] - 1 - n_img}"
                             f" terms) features, image cache {feats.cache_dir} "
                             f"({stats['n_cached']} cached{computed}); time in years, "
                             "Diachronic window 2 years; labels = the pairs; captions "
                             "projected at the query picture's date")
