"""Loader of TICRC, the Temporal Image Caption Retrieval Competition data (kubapok/cnlps-ticrc).

Dated pictures from historical US newspapers and all captions of the split, exactly one per
picture.  A split folder holds::

    in.tsv         <md5>.png<TAB>YYYY-MM-DD       one row per picture (query)
    captions.tsv   <caption id><TAB><caption>      1-based ids; a line break is
                                                   written as the two characters \\n
    expected.tsv   <caption id>                    gold caption of each in.tsv row
                                                   (train, train2, dev-0 only)
    pictures/      the PNG files named in in.tsv

Captions carry no date: a time-conditioned model must project every candidate caption at the
query picture's date (the caption's own picture's date leaks the answer).  Read more in
docs/datasets.md.
"""

import os
import re
from datetime import date
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils._param_validation import validate_params

from ..time import fractional_year
from ._reading import read_lines

#: ``YYYY-MM-DD`` (the data files) or ``YYYYMMDD`` (the challenge README): both are read.
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


@validate_params({"path": [str, os.PathLike], "split": [str], "with_target": ["boolean"]},
                 prefer_skip_nested_validation=True)
def load_ticrc(path, split, *, with_target=True):
    """Load one split of the TICRC newspaper image–caption retrieval data.

    Read more in docs/datasets.md.

    Parameters
    ----------
    path : str or Path
        Root folder holding one sub-folder per split (e.g. ``../shared/data/ticrc``).
    split : str
        Sub-folder name: ``"train"``, ``"train2"``, ``"dev-0"``, ``"test-A"``, ``"test-B"``.
    with_target : bool, default=True
        Read ``expected.tsv`` (each picture's gold caption); False for the test splits, whose
        answers are hidden (``target`` is then None).

    Returns
    -------
    data : sklearn.utils.Bunch
        ``picture_paths`` (absolute, in ``in.tsv`` order), ``dates`` (datetime64[D], the issue
        dates), ``time`` (the same as fractional years,
        :func:`~temporal_xmodal.time.fractional_year`), ``captions`` (caption id ``i`` at index
        ``i - 1``, real line breaks), ``target`` (int64 0-based index into ``captions`` of each
        picture's caption, or None), ``split`` and ``folder`` (absolute).

    Raises
    ------
    FileNotFoundError
        The split folder, a TSV file or a picture is missing (the message names it).
    ValueError
        A byte that is not UTF-8 or a malformed line (wrong number of fields, a bad date, a
        non-integer, repeated or out-of-range caption id; the message names the file and the
        1-based line), or ``expected.tsv`` and ``in.tsv`` of different lengths.  A UTF-8 byte-order
        mark is accepted.

    Examples
    --------
    >>> data = load_ticrc("../shared/data/ticrc", "train")  # doctest: +SKIP
    >>> len(data.picture_paths), len(data.captions)          # doctest: +SKIP
    (675, 675)
    """
    if not split or Path(split).name != split:
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

    Read more in docs/datasets.md.

    Parameters
    ----------
    data : Bunch or sequence of Bunch
        Output(s) of :func:`load_ticrc` with ``target``; several splits are concatenated in order.

    Returns
    -------
    picture_paths : list of str, length n
    captions : list of str, length n
        The gold caption of each picture.
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
