"""The TICRC loader: the real folder (skipped when absent) and malformed folders."""

import re

import numpy as np
import pytest
from conftest import DATA_DIR

from temporal_xmodal.datasets import fractional_year, load_ticrc, ticrc_training_pairs

TICRC = DATA_DIR / "ticrc"
SIZES = {"train": 675, "train2": 2054}


@pytest.fixture(scope="module")
def real_ticrc():
    if not (TICRC / "train").is_dir():
        pytest.skip(f"TICRC data not found at {TICRC} (set TEMPORAL_XMODAL_DATA to the folder "
                    "holding ticrc/)")
    return {split: load_ticrc(TICRC, split) for split in SIZES}


@pytest.mark.parametrize("split", sorted(SIZES))
def test_real_split(real_ticrc, split):
    data = real_ticrc[split]
    n = SIZES[split]
    assert data.split == split
    assert len(data.picture_paths) == len(data.captions) == n
    assert data.dates.dtype == np.dtype("datetime64[D]") and data.dates.shape == (n,)
    assert data.time.dtype == np.float64
    # the training years span 1853–1922
    assert 1853 <= data.time.min() and data.time.max() < 1923
    assert data.target.dtype == np.int64 and data.target.min() >= 0
    assert data.target.max() < n
    assert len(np.unique(data.target)) == n  # captions are not shared between pictures
    assert all(p.startswith("/") and p.endswith(".png") for p in data.picture_paths)
    # literal "\n" became real line breaks, and no literal ones remain
    assert any("\n" in c for c in data.captions)
    assert not any("\\n" in c for c in data.captions)


def test_real_first_rows(real_ticrc):
    train = real_ticrc["train"]
    assert str(train.dates[0]) == "1910-07-16"
    assert train.picture_paths[0].endswith("cf11add65c893f1667fea395ae8a3c99.png")
    assert train.target[0] == 474  # expected.tsv line 1: caption id 475
    assert train.captions[1].startswith('"ARTISTIC"\naccurately describes')
    # 1910-07-16 is day 197 of a 365-day year
    assert train.time[0] == pytest.approx(1910 + 196 / 365)
    # train2 captions may contain tabs: the caption is everything after the first tab
    assert any("\t" in c for c in real_ticrc["train2"].captions)


def test_real_training_pairs(real_ticrc):
    splits = [real_ticrc["train"], real_ticrc["train2"]]
    paths, texts, time = ticrc_training_pairs(splits)
    assert len(paths) == len(texts) == len(time) == sum(SIZES.values())
    train = real_ticrc["train"]
    assert texts[0] == train.captions[train.target[0]]
    assert time[SIZES["train"]] == real_ticrc["train2"].time[0]


def test_fractional_year():
    d = np.array(["1900-01-01", "1904-07-02", "1900-12-31"], dtype="datetime64[D]")
    np.testing.assert_allclose(fractional_year(d), [1900.0, 1904.5, 1900 + 364 / 365])


# --------------------------------------------------------------- malformed folders
def _make_split(root, split="train", *, in_rows=None, captions=None, expected=None,
                pictures=None):
    folder = root / split
    (folder / "pictures").mkdir(parents=True)
    in_rows = in_rows if in_rows is not None else ["a.png\t1900-01-01", "b.png\t1901-06-15"]
    captions = captions if captions is not None else ["1\tfirst\\ncaption", "2\tsecond"]
    expected = expected if expected is not None else ["2", "1"]
    pictures = pictures if pictures is not None else ["a.png", "b.png"]
    for name, rows in (("in.tsv", in_rows), ("captions.tsv", captions),
                       ("expected.tsv", expected)):
        if rows is not False:
            (folder / name).write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    for name in pictures:
        (folder / "pictures" / name).write_bytes(b"")  # existence is all the loader checks
    return folder


def test_tiny_folder_loads(tmp_path):
    _make_split(tmp_path)
    data = load_ticrc(tmp_path, "train")
    assert data.captions == ["first\ncaption", "second"]
    assert data.target.tolist() == [1, 0]
    assert [str(d) for d in data.dates] == ["1900-01-01", "1901-06-15"]
    paths, texts, time = ticrc_training_pairs(data)
    assert texts == ["second", "first\ncaption"] and time.tolist() == data.time.tolist()


def test_without_target(tmp_path):
    _make_split(tmp_path, "test-A", expected=False)
    assert load_ticrc(tmp_path, "test-A", with_target=False).target is None
    with pytest.raises(FileNotFoundError, match="expected.tsv"):
        load_ticrc(tmp_path, "test-A")


@pytest.mark.parametrize("name", ["in.tsv", "captions.tsv", "expected.tsv"])
def test_missing_file(tmp_path, name):
    folder = _make_split(tmp_path)
    (folder / name).unlink()
    with pytest.raises(FileNotFoundError, match=re.escape(str(folder / name))):
        load_ticrc(tmp_path, "train")


def test_missing_split_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="dev-0"):
        load_ticrc(tmp_path, "dev-0")


def test_missing_picture(tmp_path):
    folder = _make_split(tmp_path, pictures=["a.png"])
    with pytest.raises(FileNotFoundError, match=re.escape(str(folder / "pictures" / "b.png"))):
        load_ticrc(tmp_path, "train")


@pytest.mark.parametrize("bad", ["1901-13-01", "1901-02-30", "June 1901", ""])
def test_bad_date(tmp_path, bad):
    folder = _make_split(tmp_path, in_rows=["a.png\t1900-01-01", f"b.png\t{bad}"])
    with pytest.raises(ValueError, match=re.escape(f"{folder / 'in.tsv'}:2:") + ".*date"):
        load_ticrc(tmp_path, "train")


def test_compact_date_accepted(tmp_path):
    # the challenge README's YYYYMMDD
    _make_split(tmp_path, in_rows=["a.png\t19000101", "b.png\t1901-06-15"])
    assert str(load_ticrc(tmp_path, "train").dates[0]) == "1900-01-01"


def test_expected_id_out_of_range(tmp_path):
    folder = _make_split(tmp_path, expected=["2", "3"])
    with pytest.raises(ValueError, match=re.escape(f"{folder / 'expected.tsv'}:2:")
                       + r".*3 outside 1\.\.2"):
        load_ticrc(tmp_path, "train")


def test_expected_id_zero(tmp_path):
    folder = _make_split(tmp_path, expected=["0", "1"])
    with pytest.raises(ValueError, match=re.escape(f"{folder / 'expected.tsv'}:1:")):
        load_ticrc(tmp_path, "train")


def test_caption_id_not_integer(tmp_path):
    folder = _make_split(tmp_path, captions=["1\tfirst", "two\tsecond"])
    with pytest.raises(ValueError, match=re.escape(f"{folder / 'captions.tsv'}:2:")
                       + ".*not an integer"):
        load_ticrc(tmp_path, "train")


def test_caption_id_out_of_range_and_repeated(tmp_path):
    folder = _make_split(tmp_path, captions=["1\tfirst", "5\tsecond"])
    with pytest.raises(ValueError, match=re.escape(f"{folder / 'captions.tsv'}:2:")
                       + ".*outside"):
        load_ticrc(tmp_path, "train")
    folder = _make_split(tmp_path / "other", captions=["1\tfirst", "1\tagain"])
    with pytest.raises(ValueError, match=re.escape(f"{folder / 'captions.tsv'}:2:")
                       + ".*repeated"):
        load_ticrc(tmp_path / "other", "train")


@pytest.mark.parametrize("file, rows, line", [
    ("in.tsv", ["a.png\t1900-01-01", "b.png"], 2),
    ("in.tsv", ["a.png\t1900-01-01\textra", "b.png\t1900-01-01"], 1),
    ("captions.tsv", ["1\tfirst", "2"], 2),
    ("expected.tsv", ["1\t2", "1"], 1),
])
def test_wrong_field_count(tmp_path, file, rows, line):
    key = {"in.tsv": "in_rows", "captions.tsv": "captions", "expected.tsv": "expected"}[file]
    folder = _make_split(tmp_path, **{key: rows})
    with pytest.raises(ValueError, match=re.escape(f"{folder / file}:{line}:")):
        load_ticrc(tmp_path, "train")


def test_expected_length_mismatch(tmp_path):
    folder = _make_split(tmp_path, expected=["1"])
    with pytest.raises(ValueError, match=re.escape(str(folder / "expected.tsv"))):
        load_ticrc(tmp_path, "train")


def test_training_pairs_need_target(tmp_path):
    _make_split(tmp_path, "test-A", expected=False)
    with pytest.raises(ValueError, match="with_target=False"):
        ticrc_training_pairs(load_ticrc(tmp_path, "test-A", with_target=False))


# --------------------------------------------------------------- encodings
def test_byte_order_mark_accepted(tmp_path):
    # A BOM used to stay in the first picture name ("\ufeffa.png": "picture missing").
    folder = _make_split(tmp_path)
    for name in ("in.tsv", "captions.tsv", "expected.tsv"):
        (folder / name).write_bytes(b"\xef\xbb\xbf" + (folder / name).read_bytes())
    data = load_ticrc(tmp_path, "train")
    assert data.picture_paths[0] == str(folder / "pictures" / "a.png")
    assert data.captions[0] == "first\ncaption" and data.target.tolist() == [1, 0]


@pytest.mark.parametrize("name, line, bad, column", [
    ("in.tsv", b"b.png\t1901-06-15", b"b\xff.png\t1901-06-15", 2),
    ("captions.tsv", b"2\tsecond", b"2\tsecond caf\xe9", 13),
    ("captions.tsv", b"2\tsecond", b"2\tsecond \xe2\x82", 10),  # truncated 3-byte sequence
    ("expected.tsv", b"1", b"\x81", 1),
])
def test_non_utf8_byte_names_file_line_and_column(tmp_path, name, line, bad, column):
    folder = _make_split(tmp_path)
    path = folder / name
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(line, bad))  # BOM too
    byte = f"0x{bad[column - 1]:02x}"
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: ") + f"bytes? {byte}"
                       + f".* at column {column} is not valid UTF-8"):
        load_ticrc(tmp_path, "train")
