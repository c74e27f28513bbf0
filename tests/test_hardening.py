"""Clear errors for non-finite intermediate results and degenerate kernels."""

import contextlib

import numpy as np
import pytest
from sklearn.datasets import make_classification

from sparsekernel import SparseFisherDiscriminant
from sparsekernel.compute import spd_cholesky
from sparsekernel.compute._lapack import potrf_lower as potrf
from sparsekernel.solvers import (
    NonFiniteError,
    SquaredSmoothHinge,
    logistic_newton,
    newton_ovr,
)


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(150, 5, random_state=0)
    return X, np.where(y == 1, 1.0, -1.0)


def test_non_finite_error_is_a_value_error():
    assert issubclass(NonFiniteError, ValueError)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_spd_cholesky_names_non_finite_systems(bad):
    A = np.eye(4)
    A[2, 1] = A[1, 2] = bad
    with pytest.raises(NonFiniteError, match=r"4x4 linear system .* NaN or infinite.*"
                       r"standardize X.*gamma.*extreme C"):
        spd_cholesky(A)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_newton_reports_an_overflowing_objective(data):
    X, y = data
    # The Hessian's Cholesky or the per-iteration check, whichever meets the overflow first.
    with pytest.raises(NonFiniteError, match=r"(newton_ovr: the (objective|gradient norm) "
                       r"is (inf|nan) at iteration 1|linear system .* NaN or infinite).*"
                       r"badly scaled"):
        newton_ovr(X * 1e160, y[:, None], loss=SquaredSmoothHinge(), C=1.0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_logistic_newton_reports_an_overflowing_objective(data):
    X, y = data
    with pytest.raises(NonFiniteError,
                       match=r"(logistic_newton|linear system).*(inf|nan|NaN).*badly scaled"):
        logistic_newton(X * 1e160, (y > 0).astype(int), C=1.0)


def test_check_finite_names_the_solver_the_quantity_and_the_iteration():
    from sparsekernel.solvers._result import check_finite

    check_finite("dual_cd", 3, objective=1.0, duality_gap=0.5)  # finite: silent
    with pytest.raises(NonFiniteError, match=r"dual_cd: the duality gap is nan at iteration 3\."
                       r" .*standardize X"):
        check_finite("dual_cd", 3, objective=1.0, duality_gap=np.nan)


def test_solvers_still_fit_well_scaled_problems(data):
    X, y = data
    assert newton_ovr(X, y[:, None], loss=SquaredSmoothHinge(), C=1.0)[0].converged


def test_fisher_discriminant_with_a_huge_gamma_names_gamma(data):
    X, y = data
    with pytest.raises(NonFiniteError, match=r"Fisher criterion is degenerate.*gamma=1e\+06.*"
                       r"gamma is too large.*smaller gamma"):
        SparseFisherDiscriminant(gamma=1e6, random_state=0).fit(X, y)


def test_fisher_discriminant_failure_leaves_the_estimator_unfitted(data):
    X, y = data
    model = SparseFisherDiscriminant(gamma=1e6, random_state=0)
    with pytest.raises(NonFiniteError):
        model.fit(X, y)
    assert not hasattr(model, "coef_")
    assert model.set_params(gamma=0.2).fit(X, y).score(X, y) > 0.8


@pytest.mark.parametrize("scale", [1e160, 1e-160])
def test_learnable_bases_standardize_features_of_any_scale(scale):
    # The same model in any units: features are standardized without squaring raw values.
    from sparsekernel import LowRankLSSVR

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.sin(X[:, 0]) + X[:, 1]
    unit = LowRankLSSVR(random_state=0).fit(X, y)
    scaled = LowRankLSSVR(random_state=0).fit(X * scale, y)
    np.testing.assert_allclose(scaled.predict(X * scale), unit.predict(X), rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("threads", [None, 1, 2])  # outside a plan, one BLAS thread, two
@pytest.mark.parametrize("p", [5, 300, 600])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_spd_cholesky_reads_the_lower_triangle_and_returns_numpys_factor(p, dtype, threads,
                                                                         monkeypatch):
    # LAPACK without the GIL on one BLAS thread, NumPy's otherwise (module docstring).
    from sparsekernel.compute import _spd
    from sparsekernel.compute._threads import blas_threads

    calls = []
    monkeypatch.setattr(_spd, "potrf_lower",
                        lambda M, overwrite: calls.append(len(M)) or potrf(M, overwrite))
    rng = np.random.default_rng(p)
    G = rng.standard_normal((p, p + 3))
    A = (G @ G.T / p + np.eye(p)).astype(dtype)
    ref = np.linalg.cholesky(A)
    A[np.triu_indices(p, 1)] = np.nan  # the upper triangle is never read
    with blas_threads(threads) if threads else contextlib.nullcontext():
        L, jitter = spd_cholesky(A)
    assert calls == ([p] if threads == 1 else [])
    assert jitter == 0.0 and L.dtype == dtype and L.flags.c_contiguous
    assert not np.triu(L, 1).any()
    np.testing.assert_allclose(L, ref, rtol=1e-4 if dtype == np.float32 else 1e-10,
                               atol=1e-5 if dtype == np.float32 else 1e-12)


def test_lapack_without_the_gil_is_scipys_export():
    # The fast path exists on the supported SciPy builds, and agrees with SciPy's wrapper,
    # also on an indefinite matrix (info > 0 where the wrapper reports it).
    from sparsekernel.compute import _lapack

    assert _lapack._export("dpotrf") is not None and _lapack._export("spotrf") is not None
    A = np.array([[4.0, 2.0, 1.0], [2.0, 3.0, 0.5], [1.0, 0.5, -2.0]])
    for M in (A[:2, :2], A):
        L, info = potrf(M)
        L_ref, info_ref = _lapack._wrapped(np.array(M))
        assert info == info_ref
        if info == 0:
            np.testing.assert_allclose(L, L_ref, rtol=1e-14)
    assert potrf(np.zeros((0, 0)))[1] == 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_spd_cholesky_in_place_and_restored_when_it_needs_a_jitter(dtype):
    from sparsekernel.compute._threads import blas_threads

    rng = np.random.default_rng(1)
    G = rng.standard_normal((40, 50))
    A = (G @ G.T / 50 + np.eye(40)).astype(dtype)
    ref = np.linalg.cholesky(A)
    with blas_threads(1):
        L, jitter = spd_cholesky(A, overwrite=True)
    assert jitter == 0.0 and L is A and not np.triu(L, 1).any()
    np.testing.assert_allclose(L, ref, rtol=1e-4 if dtype == np.float32 else 1e-12)
    v = np.arange(1.0, 41.0, dtype=dtype)
    S = np.outer(v, v)  # rank one: LAPACK fails on it, then the jitter is added to S itself
    original = S.copy()
    L, used = potrf(S, overwrite=True)
    assert used > 0 and L is S
    np.testing.assert_array_equal(S, original)  # restored, bit for bit
    with blas_threads(1):
        L, jitter = spd_cholesky(S, overwrite=True)
    assert jitter > 0 and L is not S
    np.testing.assert_array_equal(S, original)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_syrk_lower_adds_to_the_lower_triangle_in_place(dtype):
    # H[:p, :p] = beta H + alpha G^T G on the lower triangle of a larger square; the upper
    # triangle and the border are not written.
    from sparsekernel.compute._lapack import _export, syrk_lower

    assert _export("dsyrk") is not None and _export("ssyrk") is not None
    rng = np.random.default_rng(2)
    G = rng.standard_normal((9, 5)).astype(dtype)
    H = rng.standard_normal((7, 7)).astype(dtype)
    for alpha, beta in ((1.0, 1.0), (-2.5, 1.0), (3.0, 0.0)):
        before = H.copy()
        assert syrk_lower(H, G, alpha, beta) is H
        expected = before.copy()
        expected[:5, :5] = beta * before[:5, :5] + alpha * (G.T @ G)
        low = np.tril_indices(5)
        np.testing.assert_allclose(H[:5, :5][low], expected[:5, :5][low],
                                   rtol=1e-5 if dtype == np.float32 else 1e-13)
        untouched = np.ones((7, 7), dtype=bool)
        untouched[:5, :5][low] = False
        np.testing.assert_array_equal(H[untouched], before[untouched])


def test_syrk_lower_refuses_what_it_would_have_to_copy():
    from sparsekernel.compute._lapack import syrk_lower

    G = np.ones((3, 2))
    for H in (np.zeros((2, 2), dtype=np.float32), np.zeros((2, 2), order="F")[:, :1],
              np.asfortranarray(np.zeros((3, 2))).T[:2], np.zeros((1, 1))):
        with pytest.raises(ValueError, match="syrk_lower needs"):
            syrk_lower(H, G)
    with pytest.raises(ValueError, match="syrk_lower needs"):
        syrk_lower(np.zeros((2, 2)), np.asfortranarray(np.ones((3, 2))))


@pytest.mark.parametrize("dtype", [">f8", ">f4", np.float16, np.int64])
def test_potrf_converts_what_lapack_cannot_read(dtype):
    # Byte-swapped or other dtypes are converted (never handed to LAPACK as they are).
    A = np.array([[4.0, 2.0], [2.0, 3.0]])
    L, info = potrf(A.astype(dtype), overwrite=True)
    assert info == 0 and L.dtype.isnative
    assert L.dtype == (np.float32 if np.dtype(dtype).itemsize == 4 else np.float64)
    np.testing.assert_allclose(L, np.linalg.cholesky(A), rtol=1e-6)


def test_spd_cholesky_jitters_a_singular_small_system():
    v = np.arange(1.0, 5.0)
    L, jitter = spd_cholesky(np.outer(v, v))  # rank one: needs a jitter to factor
    assert jitter > 0
    np.testing.assert_allclose(L @ L.T, np.outer(v, v) + jitter * np.mean(v * v) * np.eye(4),
                               rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_potrf_is_numpys_factor_and_restores_an_indefinite_matrix(dtype):
    """A large system in one ``potrf`` call: NumPy's factor; on an indefinite matrix
    LAPACK's info (the first failing pivot's row) with the matrix restored in place."""
    from sparsekernel.compute import blas_threads

    n = 1300
    rng = np.random.default_rng(n)
    G = rng.standard_normal((n, 40))
    A = (G @ G.T / 40 + np.eye(n)).astype(dtype)
    with blas_threads(1):
        L, info = potrf(A)
    assert info == 0 and not np.triu(L, 1).any()
    np.testing.assert_allclose(L, np.linalg.cholesky(A.astype(np.float64)),
                               rtol=1e-3 if dtype == np.float32 else 1e-10,
                               atol=1e-4 if dtype == np.float32 else 1e-12)
    bad = A.copy()
    bad[700, 700] = -1.0  # the first non-positive pivot is row 701 (1-based)
    before = bad.copy()
    with blas_threads(1):
        L, info = potrf(bad, overwrite=True)
    assert info == 701 and L is bad
    np.testing.assert_array_equal(bad, before)


def test_an_unbounded_end_is_infinity_and_belongs_where_closed_says():
    """'(0, inf)' refuses inf, '(0, inf]' accepts it (smoothing=inf, the exact loss);
    '[1, inf]' is memory_budget's (inf: no cap)."""
    from sparsekernel.utils import Interval

    inf = float("inf")
    positive = Interval("real", 0, None, closed="neither")
    assert str(positive) == "a float in the range (0, inf)"
    assert positive.is_satisfied_by(1e300) and not positive.is_satisfied_by(inf)
    assert not positive.is_satisfied_by(np.float64(inf))
    assert Interval("real", 0, None, closed="right").is_satisfied_by(inf)
    assert Interval("real", 1, None, closed="both").is_satisfied_by(inf)
    assert not Interval("real", None, None, closed="neither").is_satisfied_by(-inf)
    assert Interval("real", None, 0, closed="both").is_satisfied_by(-inf)


@pytest.mark.parametrize("params", [{"C": float("inf")}, {"gamma": float("inf")},
                                    {"C": np.inf, "gamma": 1.0}])
def test_infinite_c_and_gamma_are_refused_before_any_arithmetic(params, data):
    """The symptoms: LowRankLSSVC(C=inf) failed with a TypeError deep in its fit, and
    ReducedKernelCCA/SIR(gamma=inf) inside SciPy's Cholesky."""
    from sparsekernel import LowRankLSSVC, ReducedKernelCCA, ReducedKernelSIR, ReducedSVC
    from sparsekernel.utils import InvalidParameterError

    X, y = data
    for Est in (LowRankLSSVC, ReducedKernelCCA, ReducedKernelSIR, ReducedSVC):
        given = {k: v for k, v in params.items() if k in Est().get_params()}
        if not any(np.isinf(v) for v in given.values()):
            continue  # (LowRankLSSVC has no gamma)
        name = next(k for k, v in given.items() if np.isinf(v))
        est = Est(**given)
        with pytest.raises(InvalidParameterError, match=rf"'{name}' parameter of "
                           rf"{Est.__name__} must be .*a float in the range \(0, inf\)\. "
                           r"Got inf instead"):
            est.fit(X, X[:, :1] if Est is ReducedKernelCCA else y)
        assert not hasattr(est, "n_features_in_")
