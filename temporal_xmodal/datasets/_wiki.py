"""Loader of the Wikipedia image–text benchmark (Rasiwasia et al. 2010)."""

import os
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils._param_validation import validate_params

from .._stacking import stack_modalities
from ._reading import read_lines, read_mat

_DATASET = "Wikipedia benchmark"
_LISTS = {"train": "trainset_txt_img_cat.list", "test": "testset_txt_img_cat.list"}
_MATRICES = ("I_tr", "T_tr", "I_te", "T_te")


def _read_categories(path):
    """Category names, one per non-blank line; class ``k`` is line ``k``'s name."""
    names, first_line = [], {}
    for lineno, line in enumerate(read_lines(path, dataset=_DATASET), 1):
        name = line.strip()
        if not name:
            continue
        if name in first_line:
            raise ValueError(f"{path}:{lineno}: category {name!r} repeated "
                             f"(first on line {first_line[name]}).")
        first_line[name] = lineno
        names.append(name)
    if not names:
        raise ValueError(f"{path}: no category names (expected one per line, e.g. 'art').")
    return names


def _check_matrices(path, mat):
    """Image and text matrices agree: rows per split, columns across splits."""
    for key in ("tr", "te"):
        image, text = mat[f"I_{key}"], mat[f"T_{key}"]
        if len(image) != len(text):
            raise ValueError(f"{path}: I_{key} has {len(image)} rows but T_{key} has "
                             f"{len(text)}; row i of both must describe the same document.")
    for modality in ("I", "T"):
        n_train, n_test = mat[f"{modality}_tr"].shape[1], mat[f"{modality}_te"].shape[1]
        if n_train != n_test:
            raise ValueError(f"{path}: {modality}_tr has {n_train} columns but "
                             f"{modality}_te has {n_test}.")


def _read_list(path, n_rows, n_classes):
    """Classes (1-based) of a list file and the 1-based line of each; classes above ``n_classes``
    are left to :func:`_check_classes`, which sees both lists.
    """
    labels, lines = [], []
    for lineno, line in enumerate(read_lines(path, dataset=_DATASET), 1):
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
        if label < 1:
            raise ValueError(f"{path}:{lineno}: class {label} outside 1..{n_classes} "
                             "(classes are numbered from 1).")
        labels.append(label)
        lines.append(lineno)
    if len(labels) != n_rows:
        raise ValueError(f"{path}: {len(labels)} rows, but the feature matrices have {n_rows}.")
    return np.asarray(labels), np.asarray(lines)


def _check_classes(categories_path, n_names, lists):
    """Every class of the ``lists`` ((path, classes, lines) each) names a category (class k is line
    k of the category file), else a ``ValueError`` naming the category file, its count, the largest
    class and the first line above it in each list.
    """
    largest = max((int(labels.max()) for _, labels, _ in lists if len(labels)), default=0)
    if largest <= n_names:
        return
    where = []
    for path, labels, lines in lists:
        above = labels > n_names
        if above.any():
            first = int(np.argmax(above))
            where.append(f"{path}:{lines[first]}: class {labels[first]} outside 1..{n_names} "
                         f"({int(above.sum())} line(s) of {path.name} above {n_names})")
    raise ValueError(
        f"{categories_path}: {n_names} category name(s) (classes 1..{n_names}), but the "
        f"class lists use classes up to {largest}: " + "; ".join(where) + ". Class k is "
        f"the k-th name of {categories_path.name}: if it is short, add the missing names; "
        "otherwise correct those lines.")


@validate_params({"path": [str, os.PathLike]}, prefer_skip_nested_validation=True)
def load_wiki(path):
    """Load the Wikipedia benchmark's original features (Rasiwasia et al. 2010) from a folder.

    Read more in docs/datasets.md.

    Parameters
    ----------
    path : str or Path
        Folder with ``raw_features.mat`` (``I_tr``/``I_te``: 128-d SIFT bag of visual words,
        ``T_tr``/``T_te``: 10-d LDA topic proportions), ``trainset_txt_img_cat.list`` and
        ``testset_txt_img_cat.list`` (text id, image id, class 1–10, tab-separated, in the row
        order of the matrices) and ``categories.list``.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X_train`` (2173, 139) and ``X_test`` (693, 139) in the ``[image | text | time]`` layout
        (time = 0: the data set is static), ``y_train``/``y_test`` (classes 1–10),
        ``n_image_features`` (128), ``categories`` (names).

    Raises
    ------
    FileNotFoundError
        A file is missing (the message names it).
    ValueError
        Naming the file, and the 1-based line where there is one: a byte that is not UTF-8, a
        malformed list line, an empty or repeated category list, a list whose row count differs
        from its matrices, a class beyond the category names, or a ``raw_features.mat`` that cannot
        be read, lacks one of the four matrices or has matrices that disagree in shape.  A UTF-8
        byte-order mark is accepted.
    """
    folder = Path(path)
    for name in ("raw_features.mat", "categories.list", *_LISTS.values()):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{_DATASET} file missing: {folder / name}")
    categories = _read_categories(folder / "categories.list")
    mat = read_mat(folder / "raw_features.mat", _MATRICES, dataset=_DATASET)
    _check_matrices(folder / "raw_features.mat", mat)
    out = Bunch(n_image_features=mat["I_tr"].shape[1], categories=categories)
    lists = []
    for split, key in (("train", "tr"), ("test", "te")):
        I, T = mat[f"I_{key}"], mat[f"T_{key}"]
        labels, lines = _read_list(folder / _LISTS[split], len(I), len(categories))
        lists.append((folder / _LISTS[split], labels, lines))
        out[f"y_{split}"] = labels
        out[f"X_{split}"] = stack_modalities(I, T)
    _check_classes(folder / "categories.list", len(categories), lists)
    return out
