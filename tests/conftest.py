"""Shared fixtures: the real data sets in ``../shared/data`` (skipped when absent)."""

import os
from pathlib import Path

import numpy as np
import pytest

DATA_DIR = Path(
    os.environ.get("TEMPORAL_XMODAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def _require(path):
    if not path.exists():
        pytest.skip(f"real data not found at {path} (set TEMPORAL_XMODAL_DATA to its folder)")
    return path


@pytest.fixture(scope="session")
def wiki():
    """Wikipedia benchmark features read straight from ``raw_features.mat``.

    Returns ``(I_tr, T_tr, y_tr, I_te, T_te, y_te)``.
    """
    from scipy.io import loadmat

    folder = _require(DATA_DIR / "wiki")
    mat = loadmat(folder / "raw_features.mat")

    def labels(name):
        rows = np.loadtxt(folder / name, dtype=str, delimiter="\t")
        return rows[:, 2].astype(int)

    return (mat["I_tr"], mat["T_tr"], labels("trainset_txt_img_cat.list"),
            mat["I_te"], mat["T_te"], labels("testset_txt_img_cat.list"))
