"""load_wiki: shapes on the real folder, clear errors on malformed ones."""

import re
import shutil

import numpy as np
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


# ------------------------------------------- tiny folders built here: encodings, .mat damage
def _make_wiki(root, *, categories="art\nbiology\ngeography\n", n_train=4, n_test=2):
    """A 3-class Wikipedia-layout folder: 5 image and 2 text features per document."""
    from scipy.io import savemat

    rng = np.random.default_rng(0)
    root.mkdir(parents=True, exist_ok=True)
    savemat(root / "raw_features.mat", {
        "I_tr": rng.random((n_train, 5)), "T_tr": rng.random((n_train, 2)),
        "I_te": rng.random((n_test, 5)), "T_te": rng.random((n_test, 2))})
    (root / "categories.list").write_text(categories, encoding="utf-8")
    for name, n in (("trainset_txt_img_cat.list", n_train), ("testset_txt_img_cat.list", n_test)):
        rows = "".join(f"text{i}\timage{i}\t{i % 3 + 1}\n" for i in range(n))
        (root / name).write_text(rows, encoding="utf-8")
    return root


def test_tiny_folder_loads(tmp_path):
    data = load_wiki(_make_wiki(tmp_path))
    assert data.X_train.shape == (4, 8) and data.X_test.shape == (2, 8)
    assert data.n_image_features == 5 and data.categories == ["art", "biology", "geography"]
    assert data.y_train.tolist() == [1, 2, 3, 1]


def test_byte_order_mark_and_windows_line_ends_accepted(tmp_path):
    folder = _make_wiki(tmp_path)
    for name in ("categories.list", "trainset_txt_img_cat.list"):
        text = (folder / name).read_text(encoding="utf-8").replace("\n", "\r\n")
        (folder / name).write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    data = load_wiki(folder)
    assert data.categories[0] == "art"  # not "\ufeffart"
    assert data.y_train.tolist() == [1, 2, 3, 1]


@pytest.mark.parametrize("name", ["categories.list", "trainset_txt_img_cat.list",
                                  "testset_txt_img_cat.list"])
def test_non_utf8_byte_names_file_and_line(tmp_path, name):
    folder = _make_wiki(tmp_path)
    lines = (folder / name).read_bytes().split(b"\n")
    lines[1] = b"caf\xe9" + lines[1]  # Latin-1 é
    (folder / name).write_bytes(b"\n".join(lines))
    with pytest.raises(ValueError, match=re.escape(f"{folder / name}:2: byte 0xe9 at column 4")):
        load_wiki(folder)


def test_empty_categories_blames_categories_list(tmp_path):
    folder = _make_wiki(tmp_path, categories="\n\n")
    with pytest.raises(ValueError, match=re.escape(str(folder / "categories.list"))
                       + ": no category names"):
        load_wiki(folder)


def test_repeated_category_names_line(tmp_path):
    folder = _make_wiki(tmp_path, categories="art\nbiology\nart\n")
    with pytest.raises(ValueError, match=re.escape(f"{folder / 'categories.list'}:3:")
                       + ".*'art' repeated .first on line 1"):
        load_wiki(folder)


@pytest.mark.parametrize("keep", [0, 10, 100, 127, 300, -10])
def test_empty_or_truncated_mat_names_file(tmp_path, keep):
    # scipy raises MatReadError, IndexError, TypeError or OSError depending on the cut
    folder = _make_wiki(tmp_path)
    path = folder / "raw_features.mat"
    raw = path.read_bytes()
    path.write_bytes(raw[:keep] if keep >= 0 else raw[:len(raw) + keep])
    with pytest.raises(ValueError, match=re.escape(str(path))
                       + ": not a readable MATLAB .mat file"):
        load_wiki(folder)


def test_not_a_mat_file_names_file(tmp_path):
    folder = _make_wiki(tmp_path)
    (folder / "raw_features.mat").write_text("<html>404 Not Found</html>\n" * 8)
    with pytest.raises(ValueError, match="raw_features.mat: not a readable MATLAB .mat file"):
        load_wiki(folder)


def test_missing_matrix_names_variable(tmp_path):
    from scipy.io import loadmat, savemat

    folder = _make_wiki(tmp_path)
    path = folder / "raw_features.mat"
    mat = {k: v for k, v in loadmat(path).items() if k in ("I_tr", "T_tr", "I_te")}
    savemat(path, mat)
    with pytest.raises(ValueError, match=re.escape(str(path)) + ": variable.s. T_te missing; "
                       "the file holds I_te, I_tr, T_tr"):
        load_wiki(folder)


def test_matrices_disagree_names_them(tmp_path):
    from scipy.io import loadmat, savemat

    folder = _make_wiki(tmp_path)
    path = folder / "raw_features.mat"
    mat = {k: v for k, v in loadmat(path).items() if not k.startswith("__")}
    savemat(path, {**mat, "T_te": mat["T_te"][:1]})
    with pytest.raises(ValueError, match="I_te has 2 rows but T_te has 1"):
        load_wiki(folder)
    savemat(path, {**mat, "I_te": mat["I_te"][:, :4]})
    with pytest.raises(ValueError, match="I_tr has 5 columns but I_te has 4"):
        load_wiki(folder)


def test_short_categories_list_is_blamed_not_the_class_lists(tmp_path):
    """Lists that use classes 1..10 with a categories.list of 3 names: the message names
    categories.list, its 3 names and the largest class the lists use (not line 1 of the
    train list alone)."""
    folder = _make_wiki(tmp_path)
    for name, n in (("trainset_txt_img_cat.list", 4), ("testset_txt_img_cat.list", 2)):
        rows = "".join(f"text{i}\timage{i}\t{(5 + i) % 10 + 1}\n" for i in range(n))
        (folder / name).write_text(rows, encoding="utf-8")  # classes 6, 7, 8, 9 / 6, 7
    with pytest.raises(ValueError) as error:
        load_wiki(folder)
    message = str(error.value)
    assert message.startswith(f"{folder / 'categories.list'}: 3 category name(s) (classes "
                              "1..3), but the class lists use classes up to 9")
    assert f"{folder / 'trainset_txt_img_cat.list'}:1: class 6 outside 1..3 (4 line(s)" in message
    assert f"{folder / 'testset_txt_img_cat.list'}:1: class 6 outside 1..3 (2 line(s)" in message
    assert "add the missing names" in message


def test_class_below_one_still_blames_its_line(copy):
    path = copy / "testset_txt_img_cat.list"
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = "a\tb\t0\n"
    path.write_text("".join(lines))
    with pytest.raises(ValueError, match=r"testset_txt_img_cat.list:3: class 0 outside 1..10"):
        load_wiki(copy)
