"""TICRC ``train + train2`` as an evaluation with gold answers.

The held-out split and the shared features (EfficientNet-Lite0 pictures, TF-IDF captions).
Read more in docs/datasets.md.
"""

import os
from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils._param_validation import validate_params

from .._constraints import Interval
from ..features import EfficientNetImageFeatures, TfidfTextFeatures
from ._ticrc import load_ticrc, ticrc_training_pairs

# ------------------------------------------------------- evaluation split and features
#: Default folder of the on-disk image feature cache (env ``TEMPORAL_XMODAL_CACHE``).
DEFAULT_CACHE_DIR = "~/.cache/temporal_xmodal"


def default_cache_dir():
    """The image feature cache: ``$TEMPORAL_XMODAL_CACHE``, else ``~/.cache/temporal_xmodal``."""
    return os.environ.get("TEMPORAL_XMODAL_CACHE", DEFAULT_CACHE_DIR)


@validate_params(
    {"n_train": [Interval(Integral, 0, None, closed="left")],
     "n_train2": [Interval(Integral, 1, None, closed="left")],
     "holdout_fraction": [Interval(Real, 0, 1, closed="neither")],
     "random_state": [Interval(Integral, 0, None, closed="left"), None],
     "n_samples": [Interval(Integral, 4, None, closed="left"), None]},
    prefer_skip_nested_validation=True)
def ticrc_holdout_split(n_train, n_train2, *, holdout_fraction=0.2, random_state=0,
                        n_samples=None):
    """Fitting and held-out rows of ``train + train2`` (the public test answers are hidden).

    A random ``holdout_fraction`` of ``train2`` (rounded to the nearest row; ``random_state`` 0 is
    the split of the TICRC benchmarks) is held out; the models fit on all of ``train`` (the first
    ``n_train`` rows, as :func:`ticrc_training_pairs` concatenates them) plus the rest of
    ``train2``.  ``n_samples`` optionally caps the rows used in all: random subsets of both parts,
    in the split's proportions (at least 2 of each).  Returns the sorted, disjoint int64 row
    indices ``fit_rows, heldout_rows``.

    Examples
    --------
    >>> fit, held = ticrc_holdout_split(675, 2054)
    >>> len(fit), len(held)
    (2318, 411)
    """
    rng = np.random.default_rng(random_state)
    train2 = n_train + rng.permutation(n_train2)
    n_hold = int(round(holdout_fraction * n_train2))
    held, rest = np.sort(train2[:n_hold]), np.sort(train2[n_hold:])
    fit = np.concatenate([np.arange(n_train), rest])
    if n_samples is not None and n_samples < len(fit) + len(held):
        n_fit = min(len(fit), max(2, round(n_samples * len(fit) / (len(fit) + len(held)))))
        fit = np.sort(rng.choice(fit, n_fit, replace=False))
        held = np.sort(rng.choice(held, min(len(held), max(2, n_samples - n_fit)),
                                  replace=False))
    return fit.astype(np.int64), held.astype(np.int64)


def ticrc_features(path, *, holdout_fraction=0.2, random_state=0, n_samples=None,
                   cache_dir=None, progress=True, text_features=None):
    """TICRC ``train + train2`` featurised and split for a held-out evaluation.

    The splits of :func:`ticrc_holdout_split` (``holdout_fraction``, ``random_state``,
    ``n_samples``) of the folder ``path`` holding ``train/`` and ``train2/``; the pictures'
    EfficientNet-Lite0 features (1280-d, cached in ``cache_dir``, default
    :func:`default_cache_dir`; a progress bar with ``progress``) standardised on the fitting
    pictures; the captions' ``text_features`` (default ``TfidfTextFeatures(max_features=4096,
    min_df=2, sublinear_tf=True)``) fitted on the fitting captions.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``image_fit``, ``text_fit``, ``time_fit``, ``image_heldout``, ``text_heldout``,
        ``time_heldout`` (float32 features, fractional-year dates; held-out row ``i`` pairs picture
        ``i`` with its gold caption), ``fit_rows`` / ``heldout_rows`` (into the concatenation),
        ``picture_paths`` and ``captions`` (the whole concatenation), ``text_features`` (fitted),
        ``image_stats`` (the featuriser's ``last_stats_``) and ``cache_dir``.

    Raises
    ------
    FileNotFoundError
        A split folder, file or picture is missing.
    ImportError
        Without the optional feature packages (``pip install 'temporal-xmodal[features]'``).
    """
    from sklearn.preprocessing import StandardScaler


    splits = [load_ticrc(path, "train"), load_ticrc(path, "train2")]
    paths, captions, time = ticrc_training_pairs(splits)
    fit_rows, held_rows = ticrc_holdout_split(
        len(splits[0].picture_paths), len(splits[1].picture_paths),
        holdout_fraction=holdout_fraction, random_state=random_state, n_samples=n_samples)
    cache_dir = default_cache_dir() if cache_dir is None else cache_dir
    rows = np.concatenate([fit_rows, held_rows])
    featuriser = EfficientNetImageFeatures(cache_dir=cache_dir, progress=progress).fit()
    image = featuriser.transform([paths[i] for i in rows])
    n_fit = len(fit_rows)
    scaler = StandardScaler().fit(image[:n_fit])
    image = scaler.transform(image).astype(np.float32)
    if text_features is None:
        text_features = TfidfTextFeatures(max_features=4096, min_df=2, sublinear_tf=True)
    text_fit = text_features.fit_transform([captions[i] for i in fit_rows])
    text_held = text_features.transform([captions[i] for i in held_rows])
    return Bunch(image_fit=image[:n_fit], text_fit=text_fit, time_fit=time[fit_rows],
                 image_heldout=image[n_fit:], text_heldout=text_held,
                 time_heldout=time[held_rows], fit_rows=fit_rows, heldout_rows=held_rows,
                 picture_paths=paths, captions=captions, text_features=text_features,
                 image_stats=dict(featuriser.last_stats_), cache_dir=str(cache_dir))


def image_feature_throughput(paths, *, threads=(1,), batch_size=16):
    """Uncached EfficientNet-Lite0 throughput on the CPU, in images per second per thread count.

    Measured after a 4-image warm-up, once per torch intra-op thread count in ``threads`` (restored
    afterwards), on ``paths`` in batches of ``batch_size``.

    Returns
    -------
    images_per_second : dict of int -> float
    """
    import torch


    paths = list(paths)
    probe = EfficientNetImageFeatures(batch_size=batch_size, device="cpu",
                                      progress=False).fit()
    probe.transform(paths[:4])
    previous = torch.get_num_threads()
    figures = {}
    try:
        for n in threads:
            torch.set_num_threads(int(n))
            probe.transform(paths)
            figures[int(n)] = float(probe.last_stats_["images_per_second"])
    finally:
        torch.set_num_threads(previous)
    return figures
