"""The GIL-free LAPACK/BLAS calls of ``solvers._lapack`` and their fallback: SciPy's
wrappers give the same models, and an export whose C signature differs from the assumed
one (an ILP64 build) is never called."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from sparsekernel import LSSVC, LowRankSVC, ReducedSVC
from sparsekernel.compute import _lapack


def test_signature_matches_only_the_assumed_prototype():
    import ctypes

    int_p, array = ctypes.POINTER(ctypes.c_int), ctypes.c_void_p
    potrf = (ctypes.c_char_p, int_p, array, int_p, int_p)
    lp64 = b"void (char *, int *, __pyx_t_5scipy_6linalg_13cython_lapack_d *, int *, int *)"
    assert _lapack.signature_matches(lp64, potrf)
    assert not _lapack.signature_matches(lp64.replace(b"int *", b"long *"), potrf)  # ILP64
    assert not _lapack.signature_matches(lp64.replace(b"int *", b"npy_int64 *"), potrf)
    assert not _lapack.signature_matches(lp64, potrf[:-1])
    assert not _lapack.signature_matches(None, potrf)
    assert not _lapack.signature_matches(b"int (char *)", potrf[:1])


def test_this_scipy_exports_the_assumed_prototypes():
    for name in ("dpotrf", "spotrf", "dsyrk", "ssyrk", "dlacpy", "dlaset"):
        assert _lapack._export(name) is not None, name


def _fits():
    X, y = make_classification(n_samples=2400, n_features=10, n_informative=8,
                               n_classes=3, random_state=0)
    models = [LowRankSVC(C=10.0, n_basis=1100, random_state=0),  # syrk, potrf
              ReducedSVC(C=10.0, n_basis=300, random_state=0),
              LSSVC(C=10.0, n_basis=300, random_state=0)]
    return X, [m.fit(X, y) for m in models]


def test_forced_fallback_gives_the_same_models(monkeypatch):
    X, native = _fits()
    monkeypatch.setattr(_lapack, "_export", lambda name: None)  # no ctypes LAPACK at all
    L, info = _lapack.potrf_lower(np.eye(3) * 4.0)
    assert info == 0 and np.allclose(L, 2.0 * np.eye(3))
    _, fallback = _fits()
    for a, b in zip(native, fallback, strict=True):
        np.testing.assert_array_equal(a.predict(X), b.predict(X))
        np.testing.assert_allclose(a.decision_function(X), b.decision_function(X),
                                   rtol=1e-6, atol=1e-6, err_msg=type(a).__name__)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fallback_syrk_and_potrf_match_the_exports(monkeypatch, dtype):
    rng = np.random.default_rng(0)
    G = rng.standard_normal((50, 1100)).astype(dtype)
    A = (G.T @ G + 50 * np.eye(1100)).astype(dtype)
    L, info = _lapack.potrf_lower(A)
    H = np.eye(1100, dtype=dtype)
    _lapack.syrk_lower(H, G, alpha=0.5)
    monkeypatch.setattr(_lapack, "_export", lambda name: None)
    L2, info2 = _lapack.potrf_lower(A)
    H2 = _lapack.syrk_lower(np.eye(1100, dtype=dtype), G, alpha=0.5)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    assert info == info2 == 0
    np.testing.assert_allclose(L, L2, rtol=tol, atol=tol)
    low = np.tril_indices(1100)
    np.testing.assert_allclose(H[low], H2[low], rtol=tol, atol=tol)
