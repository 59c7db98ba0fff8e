"""load_wiki: shapes on the real folder, clear errors on malformed ones."""

import shutil

import pytest

from temporal_xmodal.datasets import load_wiki


def test_real_folder(wiki):
    assert wiki.X_train.shape == (2173, 139) and wiki.X_test.shape == (693, 139)
    assert wiki.n_image_features == 128 and len(wiki.categories) == 10
    assert set(wiki.y_train) == set(range(1, 11))
    assert (wiki.X_train[:, -1] == 0).all()


@pytest.fixture
def copy(tmp_path, wiki):
    from conftest import DATA_DIR

    target = tmp_path / "wiki"
    shutil.copytree(DATA_DIR / "wiki", target)
    for f in target.iterdir():
        f.chmod(0o644)
    return target


def test_missing_file(copy):
    (copy / "categories.list").unlink()
    with pytest.raises(FileNotFoundError, match="categories.list"):
        load_wiki(copy)


@pytest.mark.parametrize("line, match", [
    ("a\tb\n", r"trainset_txt_img_cat.list:1: expected 3 tab-separated fields"),
    ("a\tb\tx\n", r"trainset_txt_img_cat.list:1: class 'x' is not an integer"),
    ("a\tb\t11\n", r"trainset_txt_img_cat.list:1: class 11 outside 1..10"),
])
def test_malformed_list_names_file_and_line(copy, line, match):
    path = copy / "trainset_txt_img_cat.list"
    rest = path.read_text().splitlines(keepends=True)[1:]
    path.write_text(line + "".join(rest))
    with pytest.raises(ValueError, match=match):
        load_wiki(copy)


def test_row_count_mismatch(copy):
    path = copy / "testset_txt_img_cat.list"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))
    with pytest.raises(ValueError, match="692 rows, but the feature matrices have 693"):
        load_wiki(copy)
