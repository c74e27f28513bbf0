"""Tests for sparsekernel.datasets: file loaders, shipped data, synthetic problems."""

import bz2
import gzip
import lzma
import shutil
import warnings
from collections import Counter
from importlib.resources import files

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from sparsekernel.datasets import (
    SvmlightChunks,
    find_shared_data,
    load_banana,
    load_ida,
    load_ripley,
    load_shuttle,
    load_svmlight_path,
    load_svmlight_paths,
    make_checkerboard,
    make_sine_regression,
)
from sparsekernel.datasets._svmlight import ReadLimitError

_COMPRESSORS = {"": open, ".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def _write(path, data):
    """Write bytes to ``path``, compressed according to its suffix."""
    with _COMPRESSORS.get(path.suffix, open)(path, "wb") as f:
        f.write(data)
    return path


def _svmlight_bytes(tmp_path, X, y, zero_based=False):
    plain = tmp_path / "plain.svm"
    dump_svmlight_file(X, y, str(plain), zero_based=zero_based)
    return plain.read_bytes()


def _shared(*parts):
    path = find_shared_data(*parts)
    if path is None:
        pytest.skip(f"shared data {'/'.join(parts)} not available")
    return path


# --------------------------------------------------------------------------- shipped data


def test_ripley_shapes_and_counts():
    X_train, y_train, X_test, y_test = load_ripley()
    assert X_train.shape == (250, 2) and X_test.shape == (1000, 2)
    assert y_train.dtype.kind == "i" and y_test.dtype.kind == "i"
    assert Counter(y_train.tolist()) == {0: 125, 1: 125}
    assert Counter(y_test.tolist()) == {0: 500, 1: 500}
    np.testing.assert_allclose(X_train[0], [0.05100797, 0.16086164])


def test_banana_split_shapes_counts_and_seeds():
    X_train, y_train, X_test, y_test = load_banana(random_state=0)
    assert X_train.shape == (400, 2) and X_test.shape == (4900, 2)
    assert Counter(np.r_[y_train, y_test].tolist()) == {-1.0: 2924, 1.0: 2376}
    # The split is a partition of the 5300 distinct points.
    assert np.unique(np.vstack([X_train, X_test]), axis=0).shape == (5300, 2)
    again = load_banana(random_state=0)
    np.testing.assert_array_equal(again[0], X_train)
    np.testing.assert_array_equal(again[3], y_test)
    assert not np.array_equal(load_banana(random_state=1)[0], X_train)
    assert not np.array_equal(load_banana()[0], load_banana()[0])  # None: non-deterministic
    assert load_banana(random_state=np.random.RandomState(0), n_train=1000)[0].shape == (1000, 2)
    with pytest.raises(ValueError, match="'random_state'.*Generator"):
        load_banana(random_state=np.random.default_rng(0))


@pytest.mark.parametrize("n_train", [0, 5300, 2.5])
def test_banana_bad_n_train(n_train):
    with pytest.raises(ValueError, match=rf"'n_train'.*Got {n_train}"):
        load_banana(n_train=n_train)


@pytest.mark.parametrize(
    ("name", "shared"),
    [
        ("synth.tr.xz", ("ripley",)),
        ("synth.te.xz", ("ripley",)),
        ("banana.all.txt.xz", ("banana",)),
    ],
)
def test_shipped_files_are_byte_copies(name, shared):
    source = _shared(*shared, name)
    assert (files("sparsekernel.datasets") / "data" / name).read_bytes() == source.read_bytes()


# --------------------------------------------------------------------------- svmlight


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2", ".xz"])
def test_svmlight_round_trip_all_suffixes(tmp_path, suffix):
    rng = np.random.default_rng(0)
    # Dyadic values print exactly with sklearn's "%.16g", so the round trip is exact.
    X = rng.integers(-500, 500, size=(30, 6)) / 64 * (rng.random((30, 6)) < 0.5)
    X[:, -1] = 0.0
    X[0, -1] = 2.5  # the last feature is used
    y = rng.integers(-1, 2, size=30).astype(float)
    path = _write(tmp_path / f"data.svm{suffix}", _svmlight_bytes(tmp_path, X, y))
    for arg in (path, str(path)):
        X_read, y_read = load_svmlight_path(arg)
        assert sp.isspmatrix_csr(X_read) and X_read.dtype == np.float64
        np.testing.assert_array_equal(X_read.toarray(), X)
        np.testing.assert_array_equal(y_read, y)
    X32, _ = load_svmlight_path(path, n_features=9, dtype=np.float32)
    assert X32.dtype == np.float32 and X32.shape == (30, 9)
    np.testing.assert_array_equal(X32.toarray()[:, :6], X.astype(np.float32))


def test_svmlight_paths_align_n_features(tmp_path):
    wide = np.zeros((3, 5))
    wide[:, 4] = 1.0
    narrow = np.eye(2, 3)
    a = _write(tmp_path / "a.svm.xz", _svmlight_bytes(tmp_path, wide, [1, -1, 1]))
    b = _write(tmp_path / "b.svm.gz", _svmlight_bytes(tmp_path, narrow, [1, -1]))
    (Xa, ya), (Xb, yb) = load_svmlight_paths([a, b])
    assert Xa.shape == (3, 5) and Xb.shape == (2, 5)
    np.testing.assert_array_equal(Xb.toarray()[:, :3], narrow)
    np.testing.assert_array_equal(yb, [1.0, -1.0])
    assert load_svmlight_path(b)[0].shape == (2, 2)  # alone: max index used is 2
    assert all(X.shape[1] == 8 for X, _ in load_svmlight_paths([a, b], n_features=8))
    with pytest.raises(ValueError,
                       match=r"a\.svm\.xz'.*line 1: feature index 5 is beyond n_features=4"):
        load_svmlight_paths([a, b], n_features=4)


def test_svmlight_paths_zero_based_auto_is_global(tmp_path):
    # 'auto': one file uses index 0, so both files are read as zero-based, with a warning.
    a = tmp_path / "a.svm"
    a.write_text("# header\n\n1 0:1 2:3\n")
    b = tmp_path / "b.svm"
    b.write_text("-1 1:2\n")
    with pytest.warns(UserWarning, match=r"'.*a\.svm' uses feature index 0 \(line 3\)"):
        (Xb, _), (Xa, _) = load_svmlight_paths([b, a], zero_based="auto")
    np.testing.assert_array_equal(Xa.toarray(), [[1.0, 0.0, 3.0]])
    np.testing.assert_array_equal(Xb.toarray(), [[0.0, 2.0, 0.0]])
    # Without index 0 anywhere the files are one-based (LIBSVM), silently.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(load_svmlight_path(b, zero_based="auto")[0].toarray(),
                                      [[2.0]])
    np.testing.assert_array_equal(load_svmlight_path(b)[0].toarray(), [[2.0]])
    np.testing.assert_array_equal(load_svmlight_path(b, zero_based=True)[0].toarray(), [[0, 2.0]])


def test_svmlight_stray_zero_index_is_an_error_by_default(tmp_path):
    # One stray "0:" used to make every row zero-based (shifting all features by one).
    rows = [f"{(-1) ** i} {i % 5 + 1}:1.5 7:2" for i in range(40)]
    rows[27] = "1 0:1.5 7:2"
    path = tmp_path / "train.svm.gz"
    _write(path, ("# exported by a tool\n" + "\n".join(rows) + "\n").encode())
    with pytest.raises(ValueError, match=r"train\.svm\.gz'.*line 29: feature index 0 in a "
                                         r"one-based \(LIBSVM\) file; pass zero_based=True"):
        load_svmlight_path(path)
    X, _ = load_svmlight_path(path, zero_based=True)
    assert X.shape == (40, 8) and X[27, 0] == 1.5


@pytest.mark.parametrize("bad_line, match", [
    ("1 3:x", "could not convert string to float"),
    ("1 4:1 2:1", "sorted and unique"),
    ("1 -2:1", "Invalid index -2"),
    ("one 1:1", "could not convert"),
    ("1 99999999999999999999:1", "too large"),
])
@pytest.mark.parametrize("suffix", ["", ".xz"])
def test_svmlight_parse_errors_name_file_and_line(bad_line, match, suffix, tmp_path):
    lines = ["1 1:1"] * 12_345 + ["# a comment", bad_line] + ["-1 2:1"] * 10
    path = _write(tmp_path / f"d.svm{suffix}", ("\n".join(lines) + "\n").encode())
    with pytest.raises(ValueError, match=rf"d\.svm{suffix}'.*line 12347: .*{match}"):
        load_svmlight_path(path)
    with pytest.raises(ValueError, match=rf"d\.svm{suffix}'.*line 12347: .*{match}"):
        list(SvmlightChunks(path, 1000))


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_svmlight_truncated_compressed_file_names_a_line(suffix, tmp_path):
    path = _write(tmp_path / f"d.svm{suffix}", b"1 1:0.5 2:0.25\n" * 50_000)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=rf"d\.svm\{suffix}'.*line \d+: cannot decompress"):
        load_svmlight_path(path)


def test_svmlight_errors(tmp_path):
    missing = tmp_path / "missing.svm.xz"
    with pytest.raises(FileNotFoundError, match="missing.svm.xz"):
        load_svmlight_path(missing)
    bad = tmp_path / "bad.svm.gz"
    _write(bad, b"1 1:2\nthis is not svmlight\n")
    with pytest.raises(ValueError, match=r"bad\.svm\.gz"):
        load_svmlight_path(bad)
    with pytest.raises(ValueError, match="'zero_based'"):
        load_svmlight_path(bad, zero_based="yes")
    with pytest.raises(TypeError, match="sequence"):
        load_svmlight_paths(str(bad))


@pytest.mark.parametrize("bad_line, what", [
    ("1 1:0.5 2:nan", "feature 2 is nan"),
    ("1 1:-inf", "feature 1 is -inf"),
    ("1 1:1e400", "feature 1 is inf"),
    ("nan 1:1", "the label is nan"),
    ("1e400 1:1", "the label is inf"),
])
@pytest.mark.parametrize("suffix", ["", ".xz"])
def test_svmlight_finite_refuses_non_finite_values_with_the_line(bad_line, what, suffix,
                                                                 tmp_path):
    lines = ["1 1:1"] * 12_345 + ["# a comment", bad_line, "-1 2:1"]
    path = _write(tmp_path / f"d.svm{suffix}", ("\n".join(lines) + "\n").encode())
    match = rf"d\.svm{suffix}'.*line 12347: {what}; expected a finite number"
    with pytest.raises(ValueError, match=match):
        load_svmlight_path(path, finite=True)
    with pytest.raises(ValueError, match=match):
        list(SvmlightChunks(path, 1000, finite=True))
    X, y = load_svmlight_path(path)  # by default the values are read as they are
    assert not (np.isfinite(X.data).all() and np.isfinite(y).all())


def test_svmlight_finite_float32_overflow(tmp_path):
    path = _write(tmp_path / "d.svm", b"1 1:1\n-1 1:1e39\n")
    with pytest.raises(ValueError, match="line 2: feature 1 is inf.*range of float32"):
        load_svmlight_path(path, dtype=np.float32, finite=True)
    assert load_svmlight_path(path, finite=True)[0][1, 0] == 1e39  # float64 holds it


@pytest.mark.parametrize("zero_based, written", [(False, 100_000), (True, 99_999)])
def test_svmlight_max_features_names_index_and_line(zero_based, written, tmp_path):
    path = _write(tmp_path / "d.svm", f"1 1:1\n-1 2:1 {written}:0.5\n".encode())
    with pytest.raises(ReadLimitError, match=rf"line 2: feature index {written} is beyond "
                                             r"max_features=1000") as caught:
        load_svmlight_path(path, zero_based=zero_based, max_features=1000)
    assert (caught.value.line, caught.value.index) == (2, written)
    assert caught.value.limit_name == "max_features" and isinstance(caught.value, ValueError)
    with pytest.raises(ReadLimitError, match="n_features=5000: above max_features=1000"):
        load_svmlight_path(path, n_features=5000, max_features=1000)
    with pytest.raises(ReadLimitError, match="line 2: feature index"):
        list(SvmlightChunks(path, 1, dense=True, zero_based=zero_based, max_features=1000))
    X, _ = load_svmlight_path(path, zero_based=zero_based, max_features=100_000)
    assert X.shape[1] == 100_000


@pytest.mark.parametrize("suffix", ["", ".gz", ".xz"])
def test_svmlight_max_bytes_caps_what_reading_holds(suffix, tmp_path):
    # 1.2 MB of text (a few KiB compressed) parsing to 100,000 rows and 200,000 values, 16
    # bytes each: 4.8 MB. Reading stops once the count passes 1 MiB.
    path = _write(tmp_path / f"d.svm{suffix}", b"1 1:1 2:0.5\n" * 100_000)
    with pytest.raises(ReadLimitError, match=r"takes more than max_bytes=1048576 bytes"):
        load_svmlight_path(path, max_bytes=2**20)
    with pytest.raises(ReadLimitError, match="in one chunk of lines"):
        list(SvmlightChunks(path, 50_000, max_bytes=2**20))
    assert sum(len(y) for _, y in SvmlightChunks(path, 10_000, max_bytes=2**20)) == 100_000
    assert load_svmlight_path(path, max_bytes=5 * 10**6)[0].shape == (100_000, 2)
    with pytest.raises(ReadLimitError):
        load_svmlight_path(path, max_bytes=47 * 10**5)
    # One long line: its text is what reading holds.
    long_line = _write(tmp_path / f"long.svm{suffix}", b"1 " + b" " * 3_000_000 + b"\n")
    with pytest.raises(ReadLimitError, match="max_bytes=1048576"):
        load_svmlight_path(long_line, max_bytes=2**20)


@pytest.mark.parametrize("suffix", ["", ".xz"])
def test_svmlight_nul_bytes_are_refused(suffix, tmp_path):
    # A file of zeros is one 'line' of its whole size: refused at the first NUL byte.
    path = _write(tmp_path / f"zeros{suffix}", b"1 1:1\n" + bytes(1_000_000))
    with pytest.raises(ValueError, match=rf"zeros{suffix}'.*byte 6 is a NUL byte"):
        load_svmlight_path(path)
    with pytest.raises(ValueError, match="byte 6 is a NUL byte"):
        list(SvmlightChunks(path, 10))


def test_svmlight_error_quotes_a_huge_token_briefly(tmp_path):
    path = _write(tmp_path / "d.svm", b"1 1:1\n1 1:" + b"x" * 1_000_000 + b"\n")
    with pytest.raises(ValueError, match="line 2: could not convert") as caught:
        load_svmlight_path(path)
    assert len(str(caught.value)) < 600


def test_svmlight_chunks_are_re_iterable(tmp_path):
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(23, 4)), 3)
    y = np.where(rng.normal(size=23) > 0, 1.0, -1.0)
    path = _write(tmp_path / "d.svm.bz2", _svmlight_bytes(tmp_path, X, y))
    chunks = SvmlightChunks(path, 10, n_features=4, dtype=np.float32)
    first, second = list(chunks), list(chunks)  # every iteration reopens the file
    assert [len(c[1]) for c in first] == [10, 10, 3] and "d.svm.bz2" in repr(chunks)
    for (Xa, ya), (Xb, yb) in zip(first, second, strict=True):
        np.testing.assert_array_equal(Xa, Xb)
        np.testing.assert_array_equal(ya, yb)
    np.testing.assert_allclose(np.vstack([c[0] for c in first]), X, rtol=1e-6)
    assert first[0][0].dtype == np.float32
    sparse = next(iter(SvmlightChunks(path, 5, dense=False)))[0]
    assert sp.issparse(sparse) and sparse.shape == (5, 4)


def test_svmlight_chunks_check_arguments_at_construction(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.svm"):
        SvmlightChunks(tmp_path / "nope.svm", 5)
    path = _write(tmp_path / "d.svm", b"1 1:2\n")
    with pytest.raises(ValueError, match="chunk_size"):
        SvmlightChunks(path, 0)
    with pytest.raises(ValueError, match="'zero_based'"):
        SvmlightChunks(path, 5, zero_based="yes")
    with pytest.raises(TypeError, match="path"):
        SvmlightChunks(b"d.svm", 5)


def test_svmlight_paths_real_a9a():
    folder = _shared("a9a")
    (X_train, y_train), (X_test, y_test) = load_svmlight_paths(
        [folder / "a9a.xz", folder / "a9a.t.xz"]
    )
    assert X_train.shape == (32561, 123) and X_test.shape == (16281, 123)
    assert Counter(y_test.tolist()) == {-1.0: 12435, 1.0: 3846}


# --------------------------------------------------------------------------- synthetic


def _parity_labels(X):
    return np.where((np.floor(X[:, 0]) + np.floor(X[:, 1])) % 2 == 0, 1.0, -1.0)


@pytest.mark.parametrize("cells", [1, 2, 4, 7])
def test_checkerboard_noiseless_is_parity(cells):
    X, y = make_checkerboard(5000, cells=cells, random_state=0)
    assert X.shape == (5000, 2) and y.shape == (5000,)
    assert X.min() >= 0.0 and X.max() < cells
    np.testing.assert_array_equal(y, _parity_labels(X))
    # Every cell is populated (uniform on the board).
    assert np.unique(np.floor(X), axis=0).shape[0] == cells * cells


@pytest.mark.parametrize("noise", [0.2, 0.333, 0.5, 1.0])
def test_checkerboard_flips_exact_count(noise):
    n = 1001
    X0, y0 = make_checkerboard(n, random_state=3)
    X, y = make_checkerboard(n, noise=noise, random_state=3)
    np.testing.assert_array_equal(X, X0)
    assert np.sum(y != y0) == round(noise * n)
    assert set(np.unique(y).tolist()) <= {-1.0, 1.0}


def test_checkerboard_reproducible_and_dtype():
    a = make_checkerboard(300, noise=0.2, random_state=7)
    b = make_checkerboard(300, noise=0.2, random_state=7)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], make_checkerboard(300, noise=0.2, random_state=8)[0])
    X32, y32 = make_checkerboard(20000, random_state=1, dtype=np.float32)
    assert X32.dtype == np.float32 and X32.max() < 4
    np.testing.assert_array_equal(y32, _parity_labels(X32))


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"n_samples": 0}, r"'n_samples'.*Got 0"),
        ({"n_samples": 10.0}, r"'n_samples'.*Got 10\.0"),
        ({"noise": -0.1}, r"'noise'.*Got -0\.1"),
        ({"noise": 1.5}, r"'noise'.*Got 1\.5"),
        ({"cells": 0}, r"'cells'.*Got 0"),
        ({"cells": 2.5}, r"'cells'.*Got 2\.5"),
        ({"random_state": "seed"}, r"'random_state'.*Got 'seed'"),
        ({"dtype": np.int32}, r"dtype.*int32"),
    ],
)
def test_checkerboard_bad_arguments(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        make_checkerboard(**kwargs)


def test_sine_regression_shape_and_noise():
    X, y = make_sine_regression(200_000, noise=0.3, random_state=0)
    assert X.shape == (200_000, 1) and y.shape == (200_000,)
    assert X.min() >= -np.pi and X.max() <= np.pi
    residual = y - (np.sin(X[:, 0]) + 0.5)
    assert abs(residual.std() - 0.3) < 0.005 and abs(residual.mean()) < 0.005
    X0, y0 = make_sine_regression(50, noise=0.0, random_state=1)
    np.testing.assert_allclose(y0, np.sin(X0[:, 0]) + 0.5)
    np.testing.assert_array_equal(make_sine_regression(50, random_state=1)[0], X0)


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [({"n_samples": -3}, r"'n_samples'.*Got -3"), ({"noise": -1.0}, r"'noise'.*Got -1\.0")],
)
def test_sine_regression_bad_arguments(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        make_sine_regression(**kwargs)


# --------------------------------------------------------------------------- paths


def test_find_shared_data_env_and_upward_search(tmp_path, monkeypatch):
    data = tmp_path / "shared" / "data"
    (data / "toy").mkdir(parents=True)
    monkeypatch.setenv("SPARSEKERNEL_DATA", str(data))
    assert find_shared_data() == data
    assert find_shared_data("toy") == data / "toy"
    assert find_shared_data("absent") is None
    monkeypatch.setenv("SPARSEKERNEL_DATA", str(tmp_path / "nowhere"))
    assert find_shared_data() is None
    monkeypatch.delenv("SPARSEKERNEL_DATA")
    checkout = tmp_path / "main" / "src"
    checkout.mkdir(parents=True)
    monkeypatch.chdir(checkout)
    assert find_shared_data("toy") == data / "toy"


# --------------------------------------------------------------------------- IDA and shuttle


def test_load_ida_real_banana():
    X_train, y_train, X_test, y_test = load_ida(_shared("raetsch_banana"), "banana", split=1)
    assert X_train.shape == (400, 2) and X_test.shape == (4900, 2)
    assert Counter(y_train.tolist()) == {-1.0: 183, 1.0: 217}
    assert Counter(y_test.tolist()) == {-1.0: 2741, 1.0: 2159}


def test_load_ida_real_heart_split_and_missing():
    folder = _shared("raetsch_heart")
    X_train, y_train, X_test, y_test = load_ida(folder, "heart", split=10, dtype=np.float32)
    assert X_train.shape == (170, 13) and X_test.shape == (100, 13)
    assert X_train.dtype == np.float32 and y_train.dtype == np.float64
    with pytest.raises(FileNotFoundError, match=r"heart_train_data_11\.asc"):
        load_ida(folder, "heart", split=11)


def test_load_ida_mixed_suffixes_and_errors(tmp_path):
    _write(tmp_path / "toy_train_data_2.asc", b" 1.0  2.0\n 3.0 4.0\n")
    _write(tmp_path / "toy_train_labels_2.asc.gz", b" 1\n-1\n")
    _write(tmp_path / "toy_test_data_2.asc.xz", b"5 6\n")
    _write(tmp_path / "toy_test_labels_2.asc.bz2", b"-1\n")
    X_train, y_train, X_test, y_test = load_ida(tmp_path, "toy", split=2)
    np.testing.assert_array_equal(X_train, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(y_train, [1.0, -1.0])
    np.testing.assert_array_equal(X_test, [[5, 6]])
    np.testing.assert_array_equal(y_test, [-1.0])
    with pytest.raises(FileNotFoundError, match=r"toy_train_data_1\.asc.*'\.xz'"):
        load_ida(tmp_path, "toy")
    with pytest.raises(ValueError, match="'split'"):
        load_ida(tmp_path, "toy", split=0)
    _write(tmp_path / "toy_test_labels_2.asc.bz2", b"-1\n1\n")
    with pytest.raises(ValueError, match="1 rows but"):
        load_ida(tmp_path, "toy", split=2)


def test_load_shuttle_real():
    X_train, y_train, X_test, y_test = load_shuttle(_shared("shuttle"))
    assert X_train.shape == (43500, 9) and X_test.shape == (14500, 9)
    assert X_train.dtype == np.float64 and X_test.dtype == np.float64
    assert not sp.issparse(X_test)
    np.testing.assert_array_equal(X_train.min(axis=0), -1.0)
    np.testing.assert_array_equal(X_train.max(axis=0), 1.0)
    assert {str(k): v for k, v in Counter(y_train.tolist()).items()} == {
        "1": 34108,
        "2": 37,
        "3": 132,
        "4": 6748,
        "5": 2458,
        "6": 6,
        "7": 11,
    }
    assert Counter(y_test.tolist()) == {1: 11478, 4: 2155, 5: 809, 3: 39, 2: 13, 6: 4, 7: 2}
    assert y_train.dtype.kind == "i" and y_test.dtype.kind == "i"


def test_load_shuttle_scaling_formula(tmp_path):
    # Whitespace-delimited (UCI) training file with a constant feature, plain LIBSVM test file.
    rows = np.array(
        [
            [0, 5, 7, 0, 0, 0, 0, 0, 10, 1],
            [10, 5, 8, 0, 0, 0, 0, 0, 20, 4],
            [5, 5, 9, 0, 0, 0, 0, 1, 30, 7],
        ]
    )
    text = "\n".join(" ".join(map(str, r)) for r in rows)
    _write(tmp_path / "shuttle.trn", text.encode())
    _write(tmp_path / "shuttle.scale.t.xz", b"3 1:0.5 9:-1\n")
    X_train, y_train, X_test, y_test = load_shuttle(tmp_path)
    np.testing.assert_array_equal(X_train[:, 0], [-1.0, 1.0, 0.0])
    np.testing.assert_array_equal(X_train[:, 1], 0.0)  # constant: 0 as in svm-scale
    np.testing.assert_array_equal(X_train[:, 2], [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(y_train, [1, 4, 7])
    np.testing.assert_array_equal(X_test, [[0.5, 0, 0, 0, 0, 0, 0, 0, -1.0]])
    np.testing.assert_array_equal(y_test, [3])
    (tmp_path / "shuttle.scale.t.xz").unlink()
    with pytest.raises(FileNotFoundError, match=r"shuttle\.scale\.t"):
        load_shuttle(tmp_path)


def test_shuttle_copy_of_shared_folder_loads(tmp_path):
    # The loader finds the files by base name whatever the compression suffix.
    folder = _shared("shuttle")
    with lzma.open(folder / "shuttle.trn.xz") as src:
        _write(tmp_path / "shuttle.trn.gz", src.read())
    shutil.copy(folder / "shuttle.scale.t.xz", tmp_path)
    X_train, y_train, _, _ = load_shuttle(tmp_path)
    assert X_train.shape == (43500, 9) and np.bincount(y_train)[1] == 34108


def test_shipped_sets_leave_no_file_open():
    """The shipped ``.xz`` files are read whole and closed (no ResourceWarning later)."""
    import gc
    import warnings

    from sparsekernel.datasets import load_banana, load_ripley

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        load_ripley()
        load_banana(random_state=0)
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
