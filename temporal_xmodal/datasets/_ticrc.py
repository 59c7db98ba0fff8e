"""Loader of TICRC, the Temporal Image Caption Retrieval Competition data.

Pictures from historical US newspapers (Chronicling America), each with the
publication date of its issue, and the collection of all captions of the
split; exactly one caption belongs to each picture (spec
``sequential_ticrc_cca.md`` §B).  A split folder holds::

    in.tsv         <md5>.png<TAB>YYYY-MM-DD       one row per picture (query)
    captions.tsv   <caption id><TAB><caption>      1-based ids; a line break is
                                                   written as the two characters \\n
    expected.tsv   <caption id>                    gold caption of each in.tsv row
                                                   (train, train2, dev-0 only)
    pictures/      the PNG files named in in.tsv

Captions carry no date of their own.  A time-conditioned model must project
every candidate caption at the *query picture's* date; ranking captions with
the date of the picture they belong to leaks the answer (``DESIGN.md``).
"""

import os
import re
from datetime import date
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ._reading import read_lines

#: ``YYYY-MM-DD`` (files, paper) or ``YYYYMMDD`` (README; spec ambiguity B-4).
_DATE = re.compile(r"^(\d{4})-?(\d{2})-?(\d{2})$")


def _read_lines(path):
    """Lines of a TICRC TSV file (:func:`._reading.read_lines`)."""
    return read_lines(path, dataset="TICRC")


def _parse_date(text, path, lineno):
    match = _DATE.match(text.strip())
    try:
        if match is None:
            raise ValueError
        return date(*(int(g) for g in match.groups()))
    except ValueError:
        raise ValueError(
            f"{path}:{lineno}: date {text!r} is not a valid YYYY-MM-DD date.") from None


def _parse_id(text, path, lineno, n_captions=None):
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError(f"{path}:{lineno}: caption id {text!r} is not an integer.") from None
    if n_captions is not None and not 1 <= value <= n_captions:
        raise ValueError(f"{path}:{lineno}: caption id {value} outside 1..{n_captions} "
                         f"(the split has {n_captions} captions).")
    return value


def _read_in(folder):
    path = folder / "in.tsv"
    names, dates = [], []
    for lineno, line in enumerate(_read_lines(path), 1):
        parts = line.split("\t")
        if len(parts) != 2:
            raise ValueError(f"{path}:{lineno}: expected 2 tab-separated fields (picture file, "
                             f"date YYYY-MM-DD); got {len(parts)}.")
        name = parts[0].strip()
        if not name or Path(name).name != name:
            raise ValueError(f"{path}:{lineno}: picture field {parts[0]!r} is not a file name.")
        names.append(name)
        dates.append(_parse_date(parts[1], path, lineno))
    if not names:
        raise ValueError(f"{path}: no pictures.")
    return names, dates


def _read_captions(folder):
    path = folder / "captions.tsv"
    by_id = {}
    lines = _read_lines(path)
    for lineno, line in enumerate(lines, 1):
        # The caption itself may contain tabs (train2 has some): split once.
        parts = line.split("\t", 1)
        if len(parts) != 2:
            raise ValueError(f"{path}:{lineno}: expected a caption id, a tab and the caption "
                             f"text; got {len(parts)} field.")
        caption_id = _parse_id(parts[0], path, lineno, n_captions=len(lines))
        if caption_id in by_id:
            raise ValueError(f"{path}:{lineno}: caption id {caption_id} repeated "
                             f"(first on line {by_id[caption_id][0]}).")
        by_id[caption_id] = (lineno, parts[1].replace("\\n", "\n"))
    if not by_id:
        raise ValueError(f"{path}: no captions.")
    # ids are unique and within 1..n with n entries, hence exactly 1..n
    return [by_id[i][1] for i in range(1, len(by_id) + 1)]


def _read_expected(folder, n_pictures, n_captions):
    path = folder / "expected.tsv"
    lines = _read_lines(path)
    target = []
    for lineno, line in enumerate(lines, 1):
        parts = line.split("\t")
        if len(parts) != 1:
            raise ValueError(f"{path}:{lineno}: expected 1 field (the gold caption id); "
                             f"got {len(parts)}.")
        target.append(_parse_id(parts[0], path, lineno, n_captions=n_captions) - 1)
    if len(target) != n_pictures:
        raise ValueError(f"{path}: {len(target)} lines, but {folder / 'in.tsv'} has "
                         f"{n_pictures} pictures (one gold caption id per picture).")
    return np.asarray(target, dtype=np.int64)


def fractional_year(dates):
    """Dates as fractional years: ``year + (day_of_year - 1) / days_in_year``.

    Parameters
    ----------
    dates : array-like of datetime64 or datetime.date

    Returns
    -------
    time : ndarray of float64
        E.g. 1900-01-01 → 1900.0, 1904-07-02 → 1904.5 (leap year: 183/366).

    Examples
    --------
    >>> fractional_year(np.array(["1900-01-01", "1904-07-02"], dtype="datetime64[D]"))
    array([1900. , 1904.5])
    """
    d = np.asarray(dates, dtype="datetime64[D]")
    year = d.astype("datetime64[Y]")
    start = year.astype("datetime64[D]")
    days_in_year = ((year + 1).astype("datetime64[D]") - start).astype(np.float64)
    day_index = (d - start).astype(np.float64)  # day_of_year - 1
    return year.astype(np.int64) + 1970 + day_index / days_in_year


def load_ticrc(path, split, *, with_target=True):
    """Load one split of the TICRC newspaper image–caption retrieval data.

    Parameters
    ----------
    path : str or Path
        Root folder holding one sub-folder per split
        (e.g. ``../shared/data/ticrc``).
    split : str
        Sub-folder name: ``"train"``, ``"train2"``, ``"dev-0"``, ``"test-A"``,
        ``"test-B"``.
    with_target : bool, default=True
        Read ``expected.tsv`` (the gold caption of each picture).  Pass False
        for the test splits, whose answers are hidden; ``target`` is then None.

    Returns
    -------
    data : sklearn.utils.Bunch
        picture_paths : list of str, length n_pictures
            Absolute paths of the pictures, in ``in.tsv`` order.
        dates : ndarray of datetime64[D], shape (n_pictures,)
            Issue date of each picture.
        time : ndarray of float64, shape (n_pictures,)
            The same dates as fractional years (see :func:`fractional_year`),
            ready for the last column of ``X``.
        captions : list of str, length n_captions
            All captions of the split, caption id ``i`` at index ``i - 1``,
            with real line breaks.
        target : ndarray of int64, shape (n_pictures,), or None
            0-based index into ``captions`` of each picture's caption.
        split : str
            Name of the split.
        folder : str
            Absolute path of the split folder.

    Raises
    ------
    FileNotFoundError
        The split folder, a TSV file or a picture is missing (the message
        names it).
    ValueError
        A byte that is not UTF-8 or a malformed line: wrong number of fields,
        a bad date, a non-integer, repeated or out-of-range caption id (the
        message names the file and the 1-based line); or ``expected.tsv`` and
        ``in.tsv`` disagree in length.  A UTF-8 byte-order mark at the start
        of a file is accepted and dropped.

    Examples
    --------
    >>> data = load_ticrc("../shared/data/ticrc", "train")  # doctest: +SKIP
    >>> len(data.picture_paths), len(data.captions)          # doctest: +SKIP
    (675, 675)
    """
    if not isinstance(split, str) or not split or Path(split).name != split:
        raise ValueError(f"split must be the name of a split folder such as 'train'; "
                         f"got {split!r}.")
    folder = (Path(path) / split).resolve()
    if not folder.is_dir():
        raise FileNotFoundError(f"TICRC split folder missing: {folder}")
    names, dates = _read_in(folder)
    captions = _read_captions(folder)
    target = _read_expected(folder, len(names), len(captions)) if with_target else None
    pictures = folder / "pictures"
    picture_paths = []
    for name in names:
        picture = pictures / name
        if not picture.is_file():
            raise FileNotFoundError(f"TICRC picture missing: {picture} (listed in "
                                    f"{folder / 'in.tsv'})")
        picture_paths.append(str(picture))
    dates = np.array(dates, dtype="datetime64[D]")
    return Bunch(picture_paths=picture_paths, dates=dates, time=fractional_year(dates),
                 captions=captions, target=target, split=split, folder=str(folder))


def ticrc_training_pairs(data):
    """Aligned (picture, caption, time) triples for building ``X``.

    Parameters
    ----------
    data : Bunch or sequence of Bunch
        Output(s) of :func:`load_ticrc` with ``target``; several splits are
        concatenated in order (e.g. ``[train, train2]``).

    Returns
    -------
    picture_paths : list of str, length n
    captions : list of str, length n
        The gold caption of each picture (row ``i`` pairs with picture ``i``).
    time : ndarray of float64, shape (n,)
        Fractional-year date of each picture.

    Examples
    --------
    >>> paths, texts, time = ticrc_training_pairs([train, train2])  # doctest: +SKIP
    >>> X = stack_modalities(image_features.fit_transform(paths),   # doctest: +SKIP
    ...                      text_features.fit_transform(texts), time)
    """
    bunches = [data] if isinstance(data, Bunch) else list(data)
    if not bunches:
        raise ValueError("ticrc_training_pairs needs at least one loaded split.")
    paths, texts, times = [], [], []
    for bunch in bunches:
        if not isinstance(bunch, Bunch) or "captions" not in bunch:
            raise TypeError(f"expected the output of load_ticrc; got {type(bunch).__name__}.")
        if bunch.target is None:
            raise ValueError(f"split {bunch.split!r} was loaded without targets "
                             "(with_target=False); training pairs need expected.tsv.")
        paths.extend(bunch.picture_paths)
        texts.extend(bunch.captions[i] for i in bunch.target)
        times.append(np.asarray(bunch.time, dtype=np.float64))
    return paths, texts, np.concatenate(times)


# ------------------------------------------------------- evaluation split and features
#: Default folder of the on-disk image feature cache (env ``TEMPORAL_XMODAL_CACHE``).
DEFAULT_CACHE_DIR = "~/.cache/temporal_xmodal"


def default_cache_dir():
    """The image feature cache folder: ``$TEMPORAL_XMODAL_CACHE`` or ``~/.cache/temporal_xmodal``.

    Returns
    -------
    cache_dir : str
    """
    return os.environ.get("TEMPORAL_XMODAL_CACHE", DEFAULT_CACHE_DIR)


def ticrc_holdout_split(n_train, n_train2, *, holdout_fraction=0.2, random_state=0,
                        n_samples=None):
    """Fitting and held-out rows of ``train + train2`` for an evaluation with gold answers.

    The public test splits of TICRC have hidden answers, so the evaluation
    holds out a random ``holdout_fraction`` of ``train2``; the models are
    fitted on all of ``train`` plus the rest of ``train2``.

    Parameters
    ----------
    n_train, n_train2 : int
        Pictures of ``train`` and ``train2`` (rows ``0 … n_train - 1`` and
        ``n_train … n_train + n_train2 - 1`` of the concatenation, as built by
        :func:`ticrc_training_pairs`).
    holdout_fraction : float, default=0.2
        Share of ``train2`` held out (rounded to the nearest row).
    random_state : int, default=0
        Seed of the permutation (0 gives the split of the TICRC benchmarks:
        2,318 fitting pairs and 411 held-out pictures).
    n_samples : int or None, default=None
        Optional cap on the rows used in all (for quick runs): random subsets
        of the fitting and held-out rows, in the split's proportions (at
        least 2 of each).

    Returns
    -------
    fit_rows, heldout_rows : ndarray of int64
        Sorted, disjoint row indices.

    Examples
    --------
    >>> fit, held = ticrc_holdout_split(675, 2054)
    >>> len(fit), len(held)
    (2318, 411)
    """
    if not 0 < holdout_fraction < 1:
        raise ValueError(f"holdout_fraction must be in (0, 1); got {holdout_fraction!r}.")
    rng = np.random.default_rng(random_state)
    train2 = n_train + rng.permutation(n_train2)
    n_hold = int(round(holdout_fraction * n_train2))
    held, rest = np.sort(train2[:n_hold]), np.sort(train2[n_hold:])
    fit = np.concatenate([np.arange(n_train), rest])
    if n_samples is not None and n_samples < 4:
        raise ValueError(f"n_samples must be at least 4 or None; got {n_samples!r}.")
    if n_samples is not None and n_samples < len(fit) + len(held):
        n_fit = min(len(fit), max(2, round(n_samples * len(fit) / (len(fit) + len(held)))))
        fit = np.sort(rng.choice(fit, n_fit, replace=False))
        held = np.sort(rng.choice(held, min(len(held), max(2, n_samples - n_fit)),
                                  replace=False))
    return fit.astype(np.int64), held.astype(np.int64)


def ticrc_features(path, *, holdout_fraction=0.2, random_state=0, n_samples=None,
                   cache_dir=None, progress=True, text_features=None):
    """TICRC ``train + train2`` featurised and split for a held-out evaluation.

    Loads both splits (:func:`load_ticrc`), splits them with
    :func:`ticrc_holdout_split`, and builds the features every model shares:
    EfficientNet-Lite0 pooled features of the pictures (1280-d, cached on
    disk), standardised with the fitting pictures' mean and std, and TF-IDF of
    the captions fitted on the fitting captions only.

    Parameters
    ----------
    path : str or Path
        Folder holding ``train/`` and ``train2/``.
    holdout_fraction, random_state, n_samples
        See :func:`ticrc_holdout_split`.
    cache_dir : str, Path or None, default=None
        Image feature cache (``None``: :func:`default_cache_dir`).
    progress : bool, default=True
        Progress bar while computing uncached image features.
    text_features : transformer or None, default=None
        Caption featuriser (``None``: ``TfidfTextFeatures(max_features=4096,
        min_df=2, sublinear_tf=True)``); fitted here on the fitting captions.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``image_fit``, ``text_fit``, ``time_fit`` and ``image_heldout``,
        ``text_heldout``, ``time_heldout`` (float32 features, fractional-year
        dates; held-out row ``i`` is picture ``i`` with its gold caption
        ``i``); ``fit_rows`` / ``heldout_rows`` (indices into the
        concatenation), ``picture_paths`` and ``captions`` (the whole
        concatenation), ``text_features`` (the fitted featuriser),
        ``image_stats`` (the featuriser's ``last_stats_``) and ``cache_dir``.

    Raises
    ------
    FileNotFoundError
        A split folder, file or picture is missing.
    ImportError
        The optional feature packages are missing
        (``pip install 'temporal-xmodal[features]'``).
    """
    from sklearn.preprocessing import StandardScaler

    from ..features import EfficientNetImageFeatures, TfidfTextFeatures

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
    """Uncached EfficientNet-Lite0 throughput (images per second) on the CPU.

    Features are computed without a cache after a 4-image warm-up (weights,
    oneDNN kernels), once per thread count; torch's thread count is restored.

    Parameters
    ----------
    paths : sequence of str
        The images to featurise (e.g. 64 pictures).
    threads : sequence of int, default=(1,)
        torch intra-op thread counts to measure.
    batch_size : int, default=16

    Returns
    -------
    images_per_second : dict of int -> float
    """
    import torch

    from ..features import EfficientNetImageFeatures

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
