"""The joint one-vs-rest Newton solver: against the per-problem reference, and its parts."""

import importlib

import numpy as np
import pytest

from sparsekernel.compute._threads import map_threads, row_slices, thread_budget, thread_plan
from sparsekernel.solvers import SquaredSmoothHinge
from sparsekernel.solvers._line_search import exact_step, exact_steps, line_terms
from sparsekernel.solvers.newton_ovr import newton_ovr

from ._reference import reference_newton


def _problem(n=600, m=30, k=4, seed=0):
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n, m))
    y = rng.integers(0, k, n)
    F[:, :k] += 1.5 * np.eye(k)[y]
    Y = np.where(y[:, None] == np.arange(k), 1.0, -1.0)
    return F, Y, rng.uniform(0.2, 3.0, n)


@pytest.mark.parametrize("C", [0.01, 1.0, 1e3])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_matches_a_reference_newton_per_problem(C, n_threads):
    F, Y, sw = _problem()
    results = newton_ovr(F, Y, C=C, sample_weight=sw, tol=1e-12, n_threads=n_threads)
    for j, res in enumerate(results):
        ref = reference_newton(F, Y[:, j], SquaredSmoothHinge(np.inf), C=C, sample_weight=sw,
                            tol=1e-12)
        assert res.converged
        np.testing.assert_allclose(res.coef, ref.coef, atol=1e-9, rtol=1e-9)
        assert res.intercept == pytest.approx(ref.intercept, abs=1e-9)
        assert res.objective == pytest.approx(ref.objective, rel=1e-10)


@pytest.mark.parametrize("k", [1, 3])
def test_fewer_active_rows_than_features_take_the_row_space_system(k, monkeypatch):
    """n < m (a basis as large as the data): later directions come from the active rows'
    own system (Woodbury), and the solutions are the reference's."""
    module = importlib.import_module("sparsekernel.solvers.newton_ovr")

    F, Y, sw = _problem(n=80, m=120, k=max(k, 2), seed=3)
    Y = Y[:, :k]
    taken = []
    take = module.HingeRows.take
    monkeypatch.setattr(module.HingeRows, "take",
                        lambda self, *a: taken.append(len(A := take(self, *a))) or A)
    results = newton_ovr(F, Y, C=10.0, sample_weight=sw, tol=1e-12)
    assert taken and max(taken) < 80
    for j, res in enumerate(results):
        ref = reference_newton(F, Y[:, j], SquaredSmoothHinge(np.inf), C=10.0, sample_weight=sw,
                            tol=1e-12)
        np.testing.assert_allclose(res.coef, ref.coef, atol=1e-9, rtol=1e-9)
        assert res.objective == pytest.approx(ref.objective, rel=1e-10)


def test_optimality_conditions():
    """At the solution the gradient of every problem vanishes."""
    F, Y, sw = _problem(seed=1)
    C = 5.0
    for j, res in enumerate(newton_ovr(F, Y, C=C, sample_weight=sw, tol=1e-12)):
        f = F @ res.coef + res.intercept
        r = np.maximum(1.0 - Y[:, j] * f, 0.0)
        v = -C * sw * Y[:, j] * r
        grad = np.r_[res.coef + F.T @ v, res.intercept + v.sum()]
        assert np.abs(grad).max() < 1e-8


def test_float32_features_give_the_float64_model():
    F, Y, sw = _problem(seed=2)
    r64 = newton_ovr(F, Y, C=10.0, sample_weight=sw)
    r32 = newton_ovr(F.astype(np.float32), Y, C=10.0, sample_weight=sw)
    for a, b in zip(r64, r32, strict=True):
        np.testing.assert_allclose(a.coef, b.coef, atol=1e-3)


def test_without_kept_hessians_same_solution():
    """Updating each Hessian by the rows that changed equals rebuilding it."""
    F, Y, sw = _problem(seed=3)
    kept = newton_ovr(F, Y, C=30.0, sample_weight=sw, tol=1e-12)
    rebuilt = newton_ovr(F, Y, C=30.0, sample_weight=sw, tol=1e-12, hessian_bytes=0)
    for a, b in zip(kept, rebuilt, strict=True):
        np.testing.assert_allclose(a.coef, b.coef, atol=1e-9)


def _providers(F, gather_bytes):
    """Every row provider of F: in memory on one thread or two, and block by block (dense
    blocks of 37 rows, and CSR)."""
    import scipy.sparse as sp

    from sparsekernel.solvers._blocks import ArrayBlocks
    from sparsekernel.solvers._rows import ArrayRows, BlockRows

    return [("memory, 1 thread", ArrayRows(F, 1, gather_bytes), 1),
            ("memory, 2 threads", ArrayRows(F, 2, gather_bytes), 2),
            ("blocks", BlockRows(ArrayBlocks(F, block_rows=37), gather_bytes), 1),
            ("CSR blocks", BlockRows(ArrayBlocks(sp.csr_matrix(F), block_rows=50),
                                     gather_bytes), 1)]


def test_hessian_updates_in_place_equal_rebuilds(monkeypatch):
    """The kept Hessian updated in place (rows in, rows out, float64 and float32 products,
    rows split over two threads, or read block by block) equals the one built from the
    new rows; the upper triangle stays untouched."""
    from sparsekernel.compute import _products

    monkeypatch.setattr(_products, "_PARALLEL_MIN_WORK", 0.0)  # two threads: two slices
    F, _, sw = _problem(n=600, seed=8)
    cs = 7.0 * sw
    rng = np.random.default_rng(0)
    old = np.sort(rng.choice(600, 300, replace=False))
    new = np.sort(rng.choice(600, 250, replace=False))
    enter, leave = np.setdiff1d(new, old), np.setdiff1d(old, new)
    low = np.tril_indices(F.shape[1] + 1)
    A = np.hstack([F[new], np.ones((len(new), 1))]) * np.sqrt(cs[new])[:, None]
    expected = np.eye(F.shape[1] + 1) + A.T @ A
    for name, rows, threads in _providers(F, gather_bytes=8 * 17 * F.shape[1]):
        for dtype, eps in ((np.float64, 1e-13), (np.float32, 1e-6)):  # of the largest entry
            H = rows.add_gram(np.eye(F.shape[1] + 1), cs, old, 1.0, threads, dtype)
            rows.add_gram(H, cs, enter, 1.0, threads, dtype)
            rows.add_gram(H, cs, leave, -1.0, threads, dtype)
            np.testing.assert_allclose(H[low], expected[low], rtol=0,
                                       atol=eps * np.abs(expected).max(), err_msg=name)
            assert not np.triu(H, 1).any()


def test_every_provider_gives_the_same_products_and_rows():
    """margins, gradient, take and every: the same numbers from the rows in memory and
    block by block (the provider interface of solvers._rows)."""
    F, Y, _ = _problem(n=300, seed=3)
    W = np.random.default_rng(1).standard_normal((F.shape[1], 3))
    idx = np.array([299, 0, 150, 37, 38, 7])
    for name, rows, _ in _providers(F, gather_bytes=2**20):
        assert rows.shape == F.shape and rows.dtype == F.dtype
        np.testing.assert_allclose(rows.margins(W), F @ W, rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(rows.gradient(Y), np.vstack([F.T @ Y, Y.sum(axis=0)]),
                                   rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_array_equal(rows.take(idx), F[idx], err_msg=name)
        sub = rows.every(7)
        assert sub.shape == F[::7].shape
        np.testing.assert_allclose(sub.margins(W), F[::7] @ W, rtol=1e-12, err_msg=name)


@pytest.mark.parametrize("k", [1, 3])
def test_the_solver_is_the_same_on_rows_read_block_by_block(k):
    """newton_ovr on a CSR matrix or on row blocks (its rows streamed through BlockRows)
    reaches the model it reaches on the dense array in memory."""
    import scipy.sparse as sp

    from sparsekernel.solvers._blocks import ArrayBlocks

    F, Y, sw = _problem(n=700, seed=4)
    dense = newton_ovr(F, Y[:, :k], C=20.0, sample_weight=sw, tol=1e-10)
    for other in (sp.csr_matrix(F), ArrayBlocks(F, block_rows=64)):
        streamed = newton_ovr(other, Y[:, :k], C=20.0, sample_weight=sw, tol=1e-10)
        for a, b in zip(dense, streamed, strict=True):
            assert b.converged
            np.testing.assert_allclose(b.coef, a.coef, rtol=1e-8, atol=1e-9)
            np.testing.assert_allclose(b.intercept, a.intercept, rtol=1e-8, atol=1e-9)


def test_rows_read_block_by_block_are_read_twice_an_iteration(monkeypatch):
    """Where each pass reads (or recomputes) the rows, every Hessian whose rows a step fixes
    is summed in the next gradient's pass: two passes an iteration (gradient, direction)
    after the first, not three; the model is the one of the rows in memory."""
    from sparsekernel.solvers._blocks import ArrayBlocks

    F, Y, sw = _problem(n=700, seed=4)
    passes, iterate = [0], ArrayBlocks.__iter__

    def counting(self):
        passes[0] += 1
        return iterate(self)

    monkeypatch.setattr(ArrayBlocks, "__iter__", counting)
    streamed = newton_ovr(ArrayBlocks(F, block_rows=64), Y[:, :1], C=20.0, sample_weight=sw,
                          tol=1e-10)
    (dense,) = newton_ovr(F, Y[:, :1], C=20.0, sample_weight=sw, tol=1e-10)
    n_iter = streamed[0].n_iter
    assert n_iter >= 3
    # per iteration: the gradient with its Hessian, the direction; one last gradient and
    # the objective's pass (none: the loss reads no rows)
    assert passes[0] == 2 * n_iter + 1
    np.testing.assert_allclose(streamed[0].coef, dense.coef, rtol=1e-8, atol=1e-9)


def test_a_single_problem_updates_its_hessian(monkeypatch):
    """Binary classification (one problem) updates its kept Hessian by the rows that changed
    side instead of rebuilding it from every active row, to the same solution."""
    from sparsekernel.solvers._rows import ArrayRows

    F, Y, sw = _problem(n=2000, seed=6)
    rows, add_gram = [], ArrayRows.add_gram

    def counting(self, H, weights, idx, *args):
        rows.append(len(idx))
        return add_gram(self, H, weights, idx, *args)

    monkeypatch.setattr(ArrayRows, "add_gram", counting)
    (kept,) = newton_ovr(F, Y[:, :1], C=30.0, sample_weight=sw, tol=1e-12, n_threads=1)
    n_kept, rows[:] = sum(rows), []
    (rebuilt,) = newton_ovr(F, Y[:, :1], C=30.0, sample_weight=sw, tol=1e-12, n_threads=1,
                            hessian_bytes=0)
    assert kept.n_iter == rebuilt.n_iter >= 3
    assert n_kept < sum(rows)
    np.testing.assert_allclose(kept.coef, rebuilt.coef, atol=1e-9)


@pytest.mark.parametrize("C", [1e3, 1e4])
def test_float32_raw_kernel_features_get_float64_hessians(C):
    """Raw kernel columns (ReducedSVC's features) at large C: float32 products make
    I + C F^T F indefinite (C = 1e4) or inaccurate (C = 1e3). Before the fallback to float64
    Hessians every problem ran all 50 iterations, 0.6 (C = 1e4) and 0.17 away from the
    float64 solution; now they converge near it."""
    from sparsekernel.kernels import rbf_kernel
    from sparsekernel.solvers._constants import F32_PATIENCE

    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 4))
    y = rng.integers(0, 3, 2000)
    X[:, 0] += y
    F = rbf_kernel(X, X[rng.choice(2000, 200, replace=False)], 0.125)
    Y = np.where(y[:, None] == np.arange(3), 1.0, -1.0)
    r64 = newton_ovr(F, Y, C=C, tol=1e-5)
    r32 = newton_ovr(F.astype(np.float32), Y, C=C, tol=1e-5)
    for a, b in zip(r64, r32, strict=True):
        assert b.converged and b.n_iter < 2 * F32_PATIENCE
        np.testing.assert_allclose(b.coef, a.coef, atol=5e-3 * np.abs(a.coef).max())


def test_zero_weight_rows_are_ignored():
    F, Y, sw = _problem(seed=4)
    sw[::3] = 0.0
    full = newton_ovr(F, Y, C=2.0, sample_weight=sw, tol=1e-12)
    keep = sw > 0
    sub = newton_ovr(F[keep], Y[keep], C=2.0, sample_weight=sw[keep], tol=1e-12)
    for a, b in zip(full, sub, strict=True):
        np.testing.assert_allclose(a.coef, b.coef, atol=1e-9)


def test_max_iter_reports_not_converged():
    F, Y, sw = _problem(seed=5)
    res = newton_ovr(F, Y, C=100.0, sample_weight=sw, max_iter=1)
    assert not any(r.converged for r in res)
    assert all(r.status == "max_iter" and "max_iter=1" in r.message for r in res)


@pytest.mark.parametrize("scale", [0.05, 1.0, 20.0])
def test_exact_step_is_the_line_minimum(scale, monkeypatch):
    """Minimum on either side of t = 1 (the step tries t = 1 first and, when the root is
    below it, sorts only the breakpoints below 1)."""
    rng = np.random.default_rng(6)
    n = 200
    r, c, cs = rng.standard_normal(n), rng.standard_normal(n), rng.uniform(0.5, 2, n)
    z, d = rng.standard_normal(5), rng.standard_normal(5)
    slope = z @ d - np.sum(cs * c * np.maximum(r, 0))
    if slope > 0:  # make d a descent direction
        c, d = -c, -d
    c, d = scale * c, scale * d  # a longer direction puts the minimum at a smaller t

    def phi(t):
        return 0.5 * np.sum((z + t * d) ** 2) + 0.5 * np.sum(cs * np.maximum(r - t * c, 0) ** 2)

    t = exact_step(r, c, cs, z @ d, d @ d)
    from sparsekernel.solvers import _line_search as line_search

    assert (t > 1.0) == (scale < 1.0)
    grid = np.linspace(0, 3 * max(t, 1.0), 20001)
    assert phi(t) <= min(phi(g) for g in grid) + 1e-9
    # the sorted breakpoints agree, and so does bisection alone (the fallback)
    assert _sorted_step(r, c, cs, z @ d, d @ d) == pytest.approx(t, rel=1e-12)
    monkeypatch.setattr(line_search, "MAX_TRIES", 0)
    assert exact_step(r, c, cs, z @ d, d @ d) == pytest.approx(t, rel=1e-12)


def test_exact_steps_of_many_lines_at_once_are_each_lines_step():
    """k lines searched together (a cluster's rows: one pass of sums per trial for all of
    them) give each line's own step."""
    rng = np.random.default_rng(3)
    n, k = 300, 5
    r, c = rng.standard_normal((n, k)), rng.standard_normal((n, k))
    cs = rng.uniform(0.5, 2, n)
    zd, dd = -np.abs(rng.standard_normal(k)) - 50.0, rng.uniform(1, 3, k)
    w = cs[:, None] * c
    joint = exact_steps(lambda T, P: line_terms(r, c, w, T, P), zd, dd)
    for j in range(k):
        assert joint[j] == pytest.approx(exact_step(r[:, j], c[:, j], cs, zd[j], dd[j]),
                                         rel=1e-12)
        assert joint[j] == pytest.approx(_sorted_step(r[:, j], c[:, j], cs, zd[j], dd[j]),
                                         rel=1e-9)


def _sorted_step(r, c, cs, zd, dd):
    """The reference: the line minimum from every breakpoint, sorted."""
    act0 = r > 0
    a0 = zd - np.sum((cs * c * r)[act0])
    b0 = dd + np.sum((cs * c * c)[act0])
    leave, enter = act0 & (c > 0), ~act0 & (c < 0)
    ev = leave | enter
    with np.errstate(over="ignore"):
        t_ev = r[ev] / c[ev]
    sign = np.where(leave[ev], 1.0, -1.0)
    order = np.argsort(t_ev, kind="stable")
    t_ev, w = t_ev[order], (cs * c)[ev][order]
    a = np.concatenate([[a0], a0 + np.cumsum(sign[order] * w * r[ev][order])])
    b = np.concatenate([[b0], b0 - np.cumsum(sign[order] * w * c[ev][order])])
    hit = np.flatnonzero(a[:-1] + b[:-1] * t_ev >= 0)
    seg = hit[0] if hit.size else len(t_ev)
    return float(-a[seg] / b[seg]) if b[seg] > 0 else 0.0


def test_exact_step_agrees_with_sorting_on_many_lines():
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 300))
        r, c = rng.standard_normal(n), rng.standard_normal(n) * rng.uniform(0.01, 10)
        cs = rng.uniform(0.1, 5, n)
        z, d = rng.standard_normal(4), rng.standard_normal(4)
        zd, dd = z @ d, d @ d
        t = exact_step(r, c, cs, zd, dd)
        assert t >= 0
        assert t == pytest.approx(max(_sorted_step(r, c, cs, zd, dd), 0.0),
                                  rel=1e-9, abs=1e-12)


def test_threads_helpers():
    assert row_slices(10, 3) == [slice(0, 3), slice(3, 6), slice(6, 10)]
    assert row_slices(2, 5) == [slice(0, 1), slice(1, 2)]
    assert map_threads(lambda x: x * x, range(7), 2) == [x * x for x in range(7)]
    with pytest.raises(ZeroDivisionError):
        map_threads(lambda x: 1 // x, [1, 0, 2], 2)
    with thread_plan() as n:
        assert n >= 1
        assert thread_budget() == 1  # BLAS held to one thread inside a plan
        with thread_plan() as inner:
            assert inner == n  # nested plans keep the outer one


@pytest.mark.parametrize("m, stride", [(30, 8), (150, 3)])
def test_warm_start_from_sampled_rows_same_solution(monkeypatch, m, stride):
    """Large problems start from the solution on every stride-th row: the same solution as
    from zero, stopped on the same scale (the gradient at zero), without a Hessian over all
    rows; the memory estimate counts the sampled rows and their solve. With few rows per
    basis function the sample is larger (every 3rd row of 4,000 for m = 150: 8 per basis
    function), so that its solution does not merely fit its own rows."""
    mod = importlib.import_module("sparsekernel.solvers.newton_ovr")

    F, Y, sw = _problem(n=4000, m=m, seed=6)
    cold = newton_ovr(F, Y, C=30.0, sample_weight=sw, tol=1e-12)
    before = mod.newton_ovr_bytes(4000, m, 4, 2)
    monkeypatch.setattr(mod, "WARM_WORK", 0.0)
    assert mod._warm_stride(4000, m) == stride
    from sparsekernel.solvers._rows import ArrayRows

    sizes, grams = [], ArrayRows.add_gram
    monkeypatch.setattr(ArrayRows, "add_gram", lambda self, H, cs, rows, *a:
                        sizes.append(len(rows)) or grams(self, H, cs, rows, *a))
    warm = newton_ovr(F, Y, C=30.0, sample_weight=sw, tol=1e-12)
    assert max(sizes) < 4000  # never a Hessian over every row
    for a, b in zip(cold, warm, strict=True):
        assert b.converged
        np.testing.assert_allclose(b.coef, a.coef, atol=1e-9)
        assert b.tol_reached == pytest.approx(a.tol_reached, rel=1e-12)
    assert sum(r.n_iter for r in warm) <= sum(r.n_iter for r in cold)
    sample = -(-4000 // stride)
    assert mod.newton_ovr_bytes(4000, m, 4, 2) >= before + 8.0 * sample * m


def test_warm_start_sample_size_follows_the_basis_size(monkeypatch):
    """WARM_PER_BASIS rows per basis function when that is at most every third row, else
    every 8th row when that gives two per basis function, else no warm start; below
    WARM_WORK none. The suite's sets: ijcnn1 every 3rd row, a9a and w8a every 8th, letter
    (m = 1,074) none."""
    mod = importlib.import_module("sparsekernel.solvers.newton_ovr")

    assert mod._warm_stride(49990, 1736) == 3
    assert mod._warm_stride(32561, 1805) == mod._warm_stride(49749, 2231) == 8
    assert mod._warm_stride(15000, 1074) == 0
    assert mod._warm_stride(10**6, 1000) == 8  # plenty of rows: the smallest sample
    assert mod._warm_stride(40 * 1001, 1000) == 5
    monkeypatch.setattr(mod, "WARM_WORK", 0.0)
    assert mod._warm_stride(400, 30) == 0  # 50 rows in every 8th: too few
    assert mod._warm_stride(4000, 30) == 8


def test_warm_start_sample_fits_what_the_provider_keeps():
    """A provider that keeps only ``keep_rows`` of a sample's recomputed features gets a
    sample that fits (its passes then compute them once), unless that leaves fewer than
    WARM_PER_BASIS rows per basis function."""
    mod = importlib.import_module("sparsekernel.solvers.newton_ovr")

    n, m = 10**8, 300
    assert mod._warm_stride(n, m) == 8
    assert mod._warm_stride(n, m, keep_rows=2 * 10**7) == 8  # the sample fits already
    stride = mod._warm_stride(n, m, keep_rows=1.6 * 10**6)
    assert -(-n // stride) <= 1.6 * 10**6 < -(-n // (stride - 1))
    assert mod._warm_stride(n, m, keep_rows=mod.WARM_PER_BASIS * 301 - 1) == 8


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_warm_start_memory_estimate_bounds_the_traced_peak(monkeypatch, dtype):
    """The warm start's sampled rows and their solve are freed before the full solve builds
    its Hessians: the estimate counts the larger phase, not both, and still bounds the peak
    (the sampled rows counted in F's dtype)."""
    import tracemalloc

    mod = importlib.import_module("sparsekernel.solvers.newton_ovr")

    F, Y, sw = _problem(n=4000, m=30, seed=6)
    F = F.astype(dtype)
    itemsize = F.itemsize
    monkeypatch.setattr(mod, "WARM_WORK", 0.0)
    gather = 8.0 * 31 * 64  # small buffers, so that the F-sized parts decide the peak
    run = lambda: newton_ovr(F, Y, C=30.0, sample_weight=sw, n_threads=2,  # noqa: E731
                             gather_bytes=gather)
    run()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        run()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    estimate = mod.newton_ovr_bytes(4000, 30, 4, 2, gather_bytes=gather, itemsize=itemsize)
    square = 8.0 * 31 ** 2
    arrays, work = 8.0 * 4000 * 33, 2 * (gather + 3 * square) + square + 4 * square
    warm = itemsize * 500 * 30 + mod.newton_ovr_bytes(500, 30, 4, 2, gather_bytes=gather)
    assert peak <= estimate < arrays + work + warm  # (the sum: what it counted before)


def test_warm_start_takes_a_full_step_before_stopping(monkeypatch):
    """The sample's solution can meet a loose tolerance on the whole data's gradient without
    being its solution (Fashion-MNIST: 2 of 10 classes stopped there, 0.3 points of test
    error); each problem takes one Newton step on every row at least."""
    mod = importlib.import_module("sparsekernel.solvers.newton_ovr")

    F, Y, sw = _problem(n=4000, m=30, seed=6)
    monkeypatch.setattr(mod, "WARM_WORK", 0.0)
    warm = newton_ovr(F, Y, C=30.0, sample_weight=sw, tol=0.2)
    assert all(r.n_iter >= 1 and r.converged for r in warm)


@pytest.mark.parametrize("k", [1, 4])
def test_lone_systems_factor_on_one_blas_thread_below_the_threshold(monkeypatch, k):
    """The shared first system and a problem solved alone factor on one BLAS thread below
    LONE_SOLVE_MIN (two threads of two OpenBLAS builds spin against each other there), on
    the planned threads from it; the solution does not change."""
    from sparsekernel.compute import _threads
    from sparsekernel.compute._threads import blas_limit
    module = importlib.import_module("sparsekernel.solvers.newton_ovr")

    F, Y, sw = _problem(seed=9)
    limits, solve = [], module.spd_solve

    def recording(*args, **kwargs):
        limits.append(blas_limit())
        return solve(*args, **kwargs)

    monkeypatch.setattr(module, "spd_solve", recording)
    below = newton_ovr(F, Y[:, :k], C=10.0, sample_weight=sw, n_threads=2, tol=1e-10)
    assert limits and set(limits) == {1}
    monkeypatch.setattr(_threads, "LONE_SOLVE_MIN", 0)
    limits.clear()
    above = newton_ovr(F, Y[:, :k], C=10.0, sample_weight=sw, n_threads=2, tol=1e-10)
    assert 2 in limits  # (side by side, k > 1 problems keep one thread each)
    for a, b in zip(below, above, strict=True):
        np.testing.assert_allclose(a.coef, b.coef, atol=1e-8)


def test_features_recomputed_block_by_block_give_the_stored_features_model():
    """The streamed provider on features recomputed from the kernel at every pass (the
    memory-limited path, KernelBlocks with small blocks) reaches the model newton_ovr
    reaches on K(X, Z) stored."""
    from sparsekernel.features._reduced import KernelBlocks
    from sparsekernel.kernels import Kernel

    rng = np.random.default_rng(5)
    X = rng.standard_normal((500, 4))
    Z = X[:40]
    y = (X[:, 0] * X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    Y = np.where(y[:, None] == np.arange(3), 1.0, -1.0)
    kernel = Kernel("rbf", gamma=0.5, memory_budget=40 * 8 * 64)  # blocks of 64 rows
    blocks = KernelBlocks(kernel, X, Z)
    assert blocks.block_rows < 500
    stored = newton_ovr(kernel(X, Z), Y, C=10.0, tol=1e-10)
    streamed = newton_ovr(blocks, Y, C=10.0, tol=1e-10)
    for a, b in zip(stored, streamed, strict=True):
        assert a.converged and b.converged
        np.testing.assert_allclose(b.coef, a.coef, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("epsilon", [0.0, 0.2])
@pytest.mark.parametrize("where", ["stored", "blocks", "warm", "float32"])
def test_the_epsilon_insensitive_regression_is_the_reference_newtons(monkeypatch, epsilon, where):
    """k regressions with the exact squared epsilon-insensitive loss on the same
    iteration (EpsilonRows): each column's solution is the reference Newton's on the
    same loss, on stored rows, on rows read block by block, from a warm start on a sample
    and on float32 features (to float32's reach); rows on both sides of the tube and inside
    it, a zero-width tube included."""
    mod = importlib.import_module("sparsekernel.solvers.newton_ovr")
    from sparsekernel.solvers import SquaredSmoothEpsilonInsensitive

    rng = np.random.default_rng(3)
    F = rng.standard_normal((1500, 12))
    Y = np.column_stack([F[:, 0] - 0.5 * F[:, 1] ** 2, np.sin(F[:, 2])])
    Y += 0.3 * rng.standard_normal(Y.shape)
    sw = rng.uniform(0.2, 3.0, len(F))
    if where == "warm":
        monkeypatch.setattr(mod, "WARM_WORK", 0.0)
    from sparsekernel.solvers._blocks import ArrayBlocks

    rows = {"blocks": lambda: ArrayBlocks(F, block_rows=64),
            "float32": lambda: F.astype(np.float32)}.get(where, lambda: F)()
    tol = 1e-9 if where == "float32" else 1e-11  # (float32 products' reach)
    loss = SquaredSmoothEpsilonInsensitive(np.inf, epsilon)
    got = newton_ovr(rows, Y, C=5.0, sample_weight=sw, tol=tol, loss=loss)
    for j, res in enumerate(got):
        ref = reference_newton(F, Y[:, j], loss, C=5.0, sample_weight=sw, tol=1e-11)
        assert res.converged
        atol = 1e-5 if where == "float32" else 1e-9
        np.testing.assert_allclose(res.coef, ref.coef, atol=atol * np.abs(ref.coef).max())
        assert res.intercept == pytest.approx(ref.intercept, abs=atol)
        assert res.objective == pytest.approx(ref.objective, rel=1e-9 if atol < 1e-6 else 1e-6)
        inside = np.abs(Y[:, j] - F @ ref.coef - ref.intercept) <= epsilon
        assert 0 < inside.sum() < len(F) or epsilon == 0.0
