import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def read_only(*arrays):
    """Shared test arrays are made read-only so no test (or fit) can alter them."""
    for a in arrays:
        a.flags.writeable = False
    return arrays


@pytest.fixture(params=[np.float64, np.float32], ids=["float64", "float32"])
def global_dtype(request):
    """Both input precisions every estimator accepts (float32 is kept in float32)."""
    return request.param


def _dense(X):
    return np.asarray(X)


def _csr(X):
    import scipy.sparse as sp

    return sp.csr_matrix(X)


@pytest.fixture(params=[_dense, _csr], ids=["dense", "csr"])
def container(request):
    """The input containers every estimator accepts: a dense array and a CSR matrix."""
    return request.param
