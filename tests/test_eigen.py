"""Tests for solvers/eigen.py: block moments and the small eigenproblems, against dense NumPy."""

import numpy as np
import pytest
import scipy.linalg as la

from sparsekernel.solvers import (
    MomentAccumulator,
    canonical_correlations,
    generalized_low_rank_eigen,
    symmetric_eigen,
    whitening,
)


def _accumulate(F, block, weight=None, group=None, n_groups=0):
    acc = MomentAccumulator(n_groups)
    for start in range(0, F.shape[0], block):
        rows = slice(start, start + block)
        acc.update(F[rows], None if weight is None else weight[rows],
                   None if group is None else group[rows])
    return acc.result()


@pytest.mark.parametrize("block", [1, 7, 1000])
def test_moment_accumulator_matches_weighted_numpy(rng, block):
    F = rng.normal(size=(60, 4)) + 1e6  # a large common offset must not cancel
    w = rng.uniform(0.1, 2.0, size=60)
    g = rng.integers(0, 3, size=60)
    mom = _accumulate(F, block, w, g, 3)
    np.testing.assert_allclose(mom.mean, np.average(F, axis=0, weights=w), rtol=1e-14)
    np.testing.assert_allclose(mom.cov, np.cov(F.T, aweights=w, bias=True), rtol=1e-8,
                               atol=1e-9)
    assert mom.weight == pytest.approx(w.sum())
    for j in range(3):
        np.testing.assert_allclose(mom.group_means[j],
                                   np.average(F[g == j], axis=0, weights=w[g == j]))
        assert mom.group_weights[j] == pytest.approx(w[g == j].sum())


def test_moment_accumulator_empty_raises():
    with pytest.raises(ValueError, match="No rows"):
        MomentAccumulator().result()


def test_symmetric_eigen_floors_negative_and_tiny_eigenvalues(rng):
    A = rng.normal(size=(6, 3))
    C = A @ A.T  # rank 3
    res = symmetric_eigen(C)
    assert res.rank == 3 and res.vectors.shape == (6, 3)
    np.testing.assert_allclose(res.values, np.sort(la.eigvalsh(C))[::-1][:3])
    np.testing.assert_allclose(C @ res.vectors, res.vectors * res.values, atol=1e-10)
    with pytest.raises(ValueError, match="n_components=7"):
        symmetric_eigen(C, 7)


@pytest.mark.parametrize("singular", [False, True])
def test_whitening_gives_identity(rng, singular):
    A = rng.normal(size=(5, 3 if singular else 8))
    C = A @ A.T
    T, how = whitening(C)
    assert how.startswith("eigen" if singular else "cholesky")
    assert T.shape == (5, 3 if singular else 5)
    np.testing.assert_allclose(T.T @ C @ T, np.eye(T.shape[1]), atol=1e-8)


def test_whitening_zero_matrix_raises():
    with pytest.raises(ValueError, match="zero"):
        whitening(np.zeros((3, 3)))


def test_singular_whitening_is_pseudo_inverse_square_root(rng):
    A = rng.normal(size=(6, 4))
    W = A @ A.T
    T, how = whitening(W)
    assert how == "eigen (4 of 6 kept)"
    np.testing.assert_allclose(T @ T.T, np.linalg.pinv(W), atol=1e-8)


def test_generalized_low_rank_eigen_matches_scipy_eigh(rng):
    p, J = 6, 3
    A = rng.normal(size=(p, 20))
    C, W = A @ A.T / 20, rng.normal(size=(p, J))
    res = generalized_low_rank_eigen(W, C, ridge=0.1)
    vals, vecs = la.eigh(W @ W.T, C + 0.1 * np.eye(p))
    np.testing.assert_allclose(res.values, vals[::-1][:J], rtol=1e-10)
    assert res.rank == J
    # Normalised w.r.t. the regularised covariance; same directions up to sign.
    np.testing.assert_allclose(res.vectors.T @ (C + 0.1 * np.eye(p)) @ res.vectors, np.eye(J),
                               atol=1e-10)
    ref = vecs[:, ::-1][:, :J]
    np.testing.assert_allclose(np.abs(res.vectors), np.abs(ref), atol=1e-8)


def test_canonical_correlations_match_textbook_formula(rng):
    X, Y = rng.normal(size=(200, 4)), rng.normal(size=(200, 3))
    Y[:, 0] += X[:, 0]
    F = np.hstack([X, Y])
    S = np.cov(F.T, bias=True)
    S11, S22, S12 = S[:4, :4], S[4:, 4:], S[:4, 4:]
    res = canonical_correlations(S11, S22, S12)
    # rho^2 are the eigenvalues of S11^-1 S12 S22^-1 S21.
    M = np.linalg.solve(S11, S12 @ np.linalg.solve(S22, S12.T))
    rho2 = np.sort(np.linalg.eigvals(M).real)[::-1][:3]
    np.testing.assert_allclose(res.values**2, rho2, rtol=1e-10)
    np.testing.assert_allclose(res.vectors.T @ S11 @ res.vectors, np.eye(3), atol=1e-10)
    np.testing.assert_allclose(res.vectors.T @ S12 @ res.vectors_y, np.diag(res.values),
                               atol=1e-10)


def test_whitening_rank_is_decided_by_rtol():
    """Pivots and eigenvalues at or below rtol times the largest are dropped, others kept."""
    A = np.diag([1.0, 1e-8, 1e-12])
    assert whitening(A)[0].shape == (3, 2)  # RANK_RTOL = 1e-10
    T, how = whitening(A, rtol=1e-14)
    assert how == "cholesky"
    np.testing.assert_allclose(T, np.diag([1.0, 1e4, 1e6]))


def test_moment_accumulators_merged_equal_one_over_all_rows():
    """Accumulators of row sets summed apart (other shifts, an empty one, group sums)
    merge into the moments of all the rows, without cancelling a large common offset."""
    from sparsekernel.solvers import MomentAccumulator

    rng = np.random.default_rng(1)
    F = rng.normal(size=(300, 4)) + 1e4
    w, groups = rng.uniform(0.5, 2.0, 300), rng.integers(0, 3, 300)
    whole = MomentAccumulator(3)
    whole.update(F, w, groups)
    parts = []
    for rows in (slice(0, 40), slice(40, 41), slice(41, 300)):
        acc = MomentAccumulator(3)
        acc.update(F[rows], w[rows], groups[rows])
        parts.append(acc)
    merged = MomentAccumulator(3).merge(parts[0]).merge(parts[1]).merge(parts[2])
    a, b = whole.result(), merged.result()
    np.testing.assert_allclose(b.mean, a.mean, rtol=1e-13)
    np.testing.assert_allclose(b.cov, a.cov, rtol=1e-9, atol=1e-9 * np.abs(a.cov).max())
    np.testing.assert_allclose(b.group_means, a.group_means, rtol=1e-13)
    np.testing.assert_allclose(b.group_weights, a.group_weights, rtol=1e-13)
