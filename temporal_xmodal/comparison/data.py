"""Data of ``compare --dataset``: train / test splits and the blocks they were built from.

``synthetic`` (default)
    :func:`~temporal_xmodal.datasets.make_temporal_crossmodal` in the world of
    :data:`DEMO_WORLD` (meanings move between eras, the writing style stays), a
    random 70/30 split; the t-mAP@50 window is 5 % of the time span.
``wiki``
    The Wikipedia benchmark (:func:`~temporal_xmodal.datasets.load_wiki`), its
    own train/test split; undated (time = 0), so the temporal protocols are n/a.
``ticrc``
    TICRC newspaper pictures
    (:func:`~temporal_xmodal.datasets._ticrc_features.ticrc_features`: ``train`` + 80 %
    of ``train2`` to fit, the other 20 % held out); captions are undated
    (:func:`temporal_xmodal.evaluation.evaluate_undated`); time in years.

Every loader returns the ``(X_image, X_text, time)`` blocks of both splits
along with X, so that callers (the constant-time controls, the references)
never slice X again.
"""

import os
from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils._param_validation import StrOptions, validate_params

from .._constraints import Interval
from .._layout import split_blocks, split_time_column
from .._stacking import stack_modalities, stack_rows
from ..datasets import load_wiki, make_temporal_crossmodal
from ..datasets._ticrc_features import ticrc_features
from .job import DATASETS, MIN_SAMPLES, data_folder, default_data_dir

__all__ = ["DATASETS", "DEMO_WORLD", "MIN_SAMPLES", "data_folder", "default_data_dir",
           "load_comparison_data", "synthetic_split", "with_constant_time"]

#: The main job's synthetic world: the generator's defaults (3 eras, every category's
#: wording passes to another category at each era boundary) with a stable writing style
#: (``drift=0``), so that nothing in a routine caption tells its era but its date.  With
#: the generator's default ``drift=1`` the style rotates by 90° over the span and dates
#: every caption: a well-trained static model reads the era off the wording and undoes
#: the meaning shift by itself (docs/index.md), so that world cannot show what time buys.
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
    """The embedded default data set, split at random into train and test.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    n_samples : int, default=3000
        Items, train + test.
    test_fraction : float, default=0.3
        Probability of an item being in the test split.
    random_state : int, default=0
        Seed of the generator and of the split.
    generator : callable, default=make_temporal_crossmodal
        The data's generator, called as ``generator(n_samples, return_info=True,
        random_state=random_state, **world)``; e.g.
        :func:`~temporal_xmodal.datasets.make_clip_like` (the same world in CLIP's
        geometry).
    **world
        Parameters of the generator (of :func:`~temporal_xmodal.datasets.
        make_temporal_crossmodal`) overriding :data:`DEMO_WORLD` (e.g.
        ``meaning_shift=0`` for the static world).

    Returns
    -------
    X_train, y_train, X_test, y_test : arrays
    n_image_features : int
    time_window : float
        5 % of the time span (in the units of the time column), the window
        of t-mAP@50.
    """
    X, y, info = generator(n_samples, return_info=True, random_state=random_state,
                           **{**DEMO_WORLD, **world})
    rng = np.random.default_rng(random_state)
    test = rng.random(n_samples) < test_fraction
    span = float(np.ptp(info.time))
    return X[~test], y[~test], X[test], y[test], info.n_image_features, 0.05 * span


def _subset(n_total, n_train, n_samples, rng):
    """Train / test row masks of a random ``n_samples`` subset keeping the split's proportions."""
    if n_samples is None or n_samples >= n_total:
        return slice(None), slice(None)
    n_tr = max(2, int(round(n_samples * n_train / n_total)))
    n_te = max(2, n_samples - n_tr)
    return (np.sort(rng.choice(n_train, n_tr, replace=False)),
            np.sort(rng.choice(n_total - n_train, n_te, replace=False)))


def with_constant_time(blocks, value=0.0):
    """X rebuilt from its blocks with the time column replaced by a constant.

    The input of an estimator's constant-time control.

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    blocks : tuple (X_image, X_text, time)
        The blocks of one split.
    value : float, default=0.0
        The constant, on the time axis (only differences matter to the
        models).

    Returns
    -------
    X : ndarray
        float32 when both blocks are float32, else float64
        (:func:`~temporal_xmodal._stacking.stack_rows`).
    """
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

    Read more in the user guide: docs/index.md.

    Parameters
    ----------
    dataset : {"synthetic", "wiki", "ticrc"}, default="synthetic"
        The data set.
    data_dir : str, Path or None, default=None
        Folder holding ``wiki/`` and ``ticrc/`` (``None``: :func:`default_data_dir`).
    n_samples : int or None, default=None
        Items used in all, train + test (at least :data:`MIN_SAMPLES`; the
        command line checks it): the size of the synthetic data set
        (``None``: 3000); for ``wiki`` and ``ticrc`` a random subset keeping
        the train/test proportions (``None``: everything).
    random_state : int, default=0
        Synthetic generator and wiki subset seed (the TICRC held-out split and
        subset are fixed: seed 0).
    cache_dir : str, Path or None, default=None
        TICRC image feature cache (``None``: ``$TEMPORAL_XMODAL_CACHE`` or
        ``~/.cache/temporal_xmodal``).
    progress : bool, default=True
        Progress bar of the image featuriser.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X_train``, ``y_train``, ``X_test``, ``y_test``, ``blocks_train`` and
        ``blocks_test`` (``(X_image, X_text, time)`` of each split),
        ``n_image_features``, ``time_window`` (the estimators' time scale, on
        the time axis; ``None``: the estimators' own defaults),
        ``eval_window`` (t-mAP@50 window; ``None`` when undated), ``dated`` (the training times are not all equal),
        ``protocol`` (``"labels"`` or ``"undated"``), ``description`` and
        ``extra`` (JSON-ready details); ticrc also ``test_picture_paths``.

    Raises
    ------
    FileNotFoundError
        The data folder of ``wiki`` / ``ticrc`` is absent (the message says
        how to point to it).
    ValueError
        Unknown ``dataset``.
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
        X_tr, y_tr, X_te, y_te = wiki.X_train[tr], wiki.y_train[tr], wiki.X_test[te], wiki.y_test[te]
        n_img = wiki.n_image_features
        data = Bunch(X_train=X_tr, y_train=y_tr, X_test=X_te, y_test=y_te,
                     blocks_train=_blocks(X_tr, n_img), blocks_test=_blocks(X_te, n_img),
                     n_image_features=n_img, time_window=1.0, eval_window=None,
                     protocol="labels", extra={"categories": list(wiki.categories)},
                     description=f"wiki, {len(X_tr)} train / {len(X_te)} test items, {n_img} image "
                                 f"(SIFT BoW) + {X_tr.shape[1] - 1 - n_img} text (LDA) features, "
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
