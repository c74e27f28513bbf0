"""SvmlightChunks: the chunks put together are the whole file, whatever the chunking, and one
scan finds the width and the labels of the whole file."""

import lzma

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from sparsekernel.datasets import SvmlightChunks, load_svmlight_path
from sparsekernel.datasets._svmlight import FeatureIndexError, ReadLimitError


@pytest.mark.parametrize("zero_based", [True, False])
def test_chunks_concatenate_to_the_file(tmp_path, zero_based):
    rng = np.random.default_rng(0)
    X = sp.random(103, 7, density=0.4, random_state=0, format="csr")
    y = rng.integers(0, 2, 103) * 2.0 - 1
    path = tmp_path / "d.svm.xz"
    with lzma.open(path, "wb") as fh:
        dump_svmlight_file(X, y, fh, zero_based=zero_based)
    Xf, yf = load_svmlight_path(path, n_features=7, dtype=np.float32, zero_based=zero_based)
    parts = list(SvmlightChunks(path, 10, n_features=7, dtype=np.float32,
                                zero_based=zero_based))
    assert [len(p[1]) for p in parts] == [10] * 10 + [3]
    np.testing.assert_array_equal(np.vstack([p[0] for p in parts]), Xf.toarray())
    np.testing.assert_array_equal(np.concatenate([p[1] for p in parts]), yf)
    assert parts[0][0].dtype == np.float32 and parts[0][0].flags.c_contiguous


def test_chunks_width_fixed_by_the_first_chunk(tmp_path):
    path = tmp_path / "d.svm"
    path.write_text("1 1:1 2:1\n-1 1:2\n1 5:1\n")
    with pytest.raises(ValueError, match="line 3: feature index 5 is beyond n_features=2"):
        list(SvmlightChunks(path, 2))
    (X, _), (X2, _) = SvmlightChunks(path, 2, n_features=5, dense=False)
    assert X.shape == (2, 5) and X2[0, 4] == 1.0 and sp.issparse(X)


def test_chunks_bad_input(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope"):
        list(SvmlightChunks(tmp_path / "nope", 5))
    bad = tmp_path / "bad.svm"
    bad.write_text("1 a:b\n")
    with pytest.raises(ValueError, match="bad.svm"):
        list(SvmlightChunks(bad, 5))
    with pytest.raises(ValueError, match="chunk_size"):
        list(SvmlightChunks(bad, 0))


def test_chunks_index_zero(tmp_path):
    path = tmp_path / "d.svm"
    path.write_text("1 1:1\n-1 2:1\n# note\n1 0:1 2:1\n")
    with pytest.raises(ValueError, match="line 4: feature index 0 in a one-based"):
        list(SvmlightChunks(path, 2))  # one-based (LIBSVM) by default
    # 'auto' decides on the first chunk: one-based here, so the later 0 is an error.
    with pytest.raises(ValueError, match="line 4: .*'auto' chose one-based"):
        list(SvmlightChunks(path, 2, zero_based="auto"))
    # With index 0 in the first chunk, 'auto' reads every chunk zero-based and says where.
    with pytest.warns(UserWarning, match=r"d\.svm' uses feature index 0 \(line 4\)"):
        chunks = list(SvmlightChunks(path, 10, zero_based="auto"))
    np.testing.assert_array_equal(chunks[0][0], [[0, 1, 0], [0, 0, 1], [1, 0, 1]])
    assert len(list(SvmlightChunks(path, 2, zero_based=True))) == 2


def test_scan_finds_the_width_and_the_labels_of_the_whole_file(tmp_path):
    # The first chunk (2 lines) holds one class and indices up to 2 only.
    path = tmp_path / "d.svm"
    path.write_text("1 1:1 2:1\n1 1:2\n-1 5:1\n# note\n2 3:1\n")
    n_rows, n_features, labels = SvmlightChunks(path, 2).scan()
    assert (n_rows, n_features) == (4, 5)
    np.testing.assert_array_equal(labels, [-1.0, 1.0, 2.0])
    parts = list(SvmlightChunks(path, 2, n_features=n_features, dense=False))
    assert [X.shape for X, _ in parts] == [(2, 5), (1, 5), (1, 5)]  # chunks of 2 lines
    assert parts[1][0][0, 4] == 1.0
    # Given n_features, the scan checks it (the line and index are attributes too).
    assert SvmlightChunks(path, 2, n_features=7).scan().n_features == 7
    with pytest.raises(FeatureIndexError, match="line 3: feature index 5 is beyond "
                                                "n_features=4") as caught:
        SvmlightChunks(path, 2, n_features=4).scan()
    assert (caught.value.line, caught.value.index, caught.value.n_features) == (3, 5, 4)
    # Zero-based files count index 0 as a column.
    assert SvmlightChunks(path, 2, zero_based=True).scan().n_features == 6


def test_scan_checks_every_line_before_any_chunk_is_used(tmp_path):
    path = tmp_path / "d.svm"
    path.write_text("1 1:1\n-1 2:1\n1 1:0.5\n-1 2:x\n")
    with pytest.raises(ValueError, match="line 4"):
        SvmlightChunks(path, 2).scan()
    path.write_text("1 1:1\n-1 2:1\n1 1:0.5\n-1 2:nan\n")
    with pytest.raises(ValueError, match="line 4: feature 2 is nan"):
        SvmlightChunks(path, 2, finite=True).scan()
    path.write_text("1 1:1\n-1 2:1\n1 1:0.5\n-1 2000:1\n")
    with pytest.raises(ReadLimitError, match="line 4: feature index 2000") as caught:
        SvmlightChunks(path, 2, max_features=1000).scan()
    assert caught.value.index == 2000
    path.write_text("")
    assert SvmlightChunks(path, 2).scan()[:2] == (0, 0)
