"""SvmlightChunks: the chunks put together are the whole file, whatever the chunking."""

import lzma

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from sparsekernel.datasets import SvmlightChunks, load_svmlight_path


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
