"""Loader of the Wikipedia image–text benchmark (Rasiwasia et al. 2010)."""

from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from .._layout import stack_modalities

_LISTS = {"train": "trainset_txt_img_cat.list", "test": "testset_txt_img_cat.list"}


def _read_list(path, n_rows, n_classes):
    labels = []
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise ValueError(f"{path}:{lineno}: expected 3 tab-separated fields "
                             f"(text id, image id, class); got {len(parts)}.")
        try:
            label = int(parts[2])
        except ValueError:
            raise ValueError(f"{path}:{lineno}: class {parts[2]!r} is not an integer.") from None
        if not 1 <= label <= n_classes:
            raise ValueError(f"{path}:{lineno}: class {label} outside 1..{n_classes}.")
        labels.append(label)
    if len(labels) != n_rows:
        raise ValueError(f"{path}: {len(labels)} rows, but the feature matrices have {n_rows}.")
    return np.asarray(labels)


def load_wiki(path):
    """Load the Wikipedia benchmark's original features from a folder.

    Parameters
    ----------
    path : str or Path
        Folder with ``raw_features.mat`` (``I_tr``/``I_te``: 128-d SIFT
        bag-of-visual-words, ``T_tr``/``T_te``: 10-d LDA topic proportions),
        ``trainset_txt_img_cat.list`` and ``testset_txt_img_cat.list`` (text
        id, image id, class 1–10, tab-separated, same row order as the
        matrices) and ``categories.list``.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X_train`` (2173, 139) and ``X_test`` (693, 139) in the
        ``[image | text | time]`` layout (time = 0: the data set is static),
        ``y_train``/``y_test`` (classes 1–10), ``n_image_features`` (128),
        ``categories`` (names).

    Raises
    ------
    FileNotFoundError
        A file is missing (the message names it).
    ValueError
        A malformed list (the message names the file and line).
    """
    from scipy.io import loadmat

    folder = Path(path)
    for name in ("raw_features.mat", "categories.list", *_LISTS.values()):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"Wikipedia benchmark file missing: {folder / name}")
    mat = loadmat(folder / "raw_features.mat")
    categories = [c for c in (folder / "categories.list").read_text().split() if c]
    out = Bunch(n_image_features=mat["I_tr"].shape[1], categories=categories)
    for split, key in (("train", "tr"), ("test", "te")):
        I, T = mat[f"I_{key}"], mat[f"T_{key}"]
        out[f"y_{split}"] = _read_list(folder / _LISTS[split], len(I), len(categories))
        out[f"X_{split}"] = stack_modalities(I, T)
    return out
