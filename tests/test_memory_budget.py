"""memory_budget is a cap: the traced peak of a fit stays within it, or the fit refuses early.

tracemalloc sees every NumPy allocation, so its peak during a fit is what the library
allocated beyond the input (BLAS's own thread buffers and the interpreter are not traced and
not in the budget).
"""

import re
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sparsekernel import (
    LSSVC,
    KernelLogisticRegression,
    LowRankSVC,
    NystromFeatures,
    OnlineLSSVR,
    ReducedKernelCCA,
    ReducedKernelPCA,
    ReducedSetSVC,
    ReducedSVC,
    ReducedSVR,
    SparseFisherDiscriminant,
)
from sparsekernel.utils import (
    MemoryBudgetError,
    MemoryBudgetWarning,
    MemoryPlan,
    largest_within,
)

MiB = 2**20


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12000, 10))
    y = (np.arctan2(X[:, 1], X[:, 0]) // (2 * np.pi / 3)).astype(int) + 2  # three sectors
    return X, y


def traced_peak(fit, warm=True):
    """Bytes allocated at the peak of ``fit()`` beyond what was live before it; ``warm`` runs
    it once untraced first, so that first-use imports and compilation are not counted."""
    if warm:
        fit()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = fit()
        return result, tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_plan_names_its_parts_and_refuses_above_the_budget():
    plan = MemoryPlan("ReducedSVC", 100 * MiB, features=80 * MiB, solver=30 * MiB)
    assert plan.total == 110 * MiB and not plan.fits()
    with pytest.raises(MemoryBudgetError, match=r"ReducedSVC needs about 110 MiB \(features "
                       r"80 MiB, solver 30 MiB\).*memory_budget=100 MiB; lower n_basis"):
        plan.require("lower n_basis")
    assert MemoryPlan("x", 100, a=60, b=40).require("-").fits()


def test_largest_within_is_the_last_value_under_the_budget():
    assert largest_within(lambda m: m * m, 1000, 1, 100) == 31  # 31^2 = 961, 32^2 = 1024
    assert largest_within(lambda m: m, 1000, 1, 50) == 50
    assert largest_within(lambda m: m + 2000, 1000, 1, 50) is None


# (estimator, budget, streamed): each row exercises another path of the plan.
CASES = [
    (LowRankSVC(n_basis=400, random_state=0), 96 * MiB, False),  # stored, joint Newton
    (LowRankSVC(n_basis=400, random_state=0), 32 * MiB, True),  # streamed chunks
    (LowRankSVC(n_basis=400, loss="hinge", random_state=0), 64 * MiB, False),
    (ReducedSVC(n_basis=400, random_state=0), 80 * MiB, None),  # stored K(X, Z)
    (ReducedSVC(n_basis=400, random_state=0), 16 * MiB, None),  # K(X, Z) in blocks
    (ReducedSVR(n_basis=300, random_state=0), 12 * MiB, None),
    # 'auto' (1,800 here) lowered to what streaming allows, the stored plan's m being below
    # AUTO_MIN: the largest m whose plan fits with the smallest chunks, the whole budget planned.
    (LowRankSVC(random_state=0), 16 * MiB, True),
]


@pytest.mark.parametrize(("est", "budget", "streamed"), CASES,
                         ids=[f"{type(e).__name__}-{b // MiB}MiB-{i}"
                              for i, (e, b, _) in enumerate(CASES)])
def test_fit_stays_within_the_budget(data, est, budget, streamed):
    X, y = data
    target = y if type(est).__name__.endswith("SVC") else X[:, 0] * X[:, 1]
    est = est.set_params(memory_budget=budget)
    model, peak = traced_peak(lambda: est.fit(X, target))
    assert peak <= 1.1 * budget, f"peak {peak / MiB:.1f} MiB over {budget / MiB:.0f} MiB"
    assert model.score(X[:2000], target[:2000]) > 0.8  # and still the model it should be
    if streamed is not None:  # only a streamed fit keeps block-minimization state
        assert hasattr(model, "n_rows_seen_") == streamed


def test_auto_lowers_n_basis_to_fit_the_budget(data):
    X, y = data
    free = ReducedSVC(random_state=0).fit(X, y)
    tight, peak = traced_peak(lambda: ReducedSVC(random_state=0, memory_budget=6 * MiB)
                              .fit(X, y))
    assert tight.basis_.shape[0] < free.basis_.shape[0]
    assert peak <= 1.1 * 6 * MiB


@pytest.mark.parametrize("Est", [LowRankSVC, ReducedSVC])
def test_explicit_n_basis_above_the_budget_is_refused_before_allocating(data, Est):
    X, y = data
    est = Est(n_basis=6000, memory_budget="64MB")
    with pytest.raises(MemoryBudgetError, match=r"needs about .* m x m matrices|needs about .*"
                       r"solver.*above memory_budget=64 MiB; n_basis=6000 is too many"):
        _, peak = traced_peak(lambda: est.fit(X, y), warm=False)
    assert not hasattr(est, "basis_")  # refused before the basis was chosen


def test_exact_machine_above_the_budget_names_the_reduced_estimator(data):
    X, y = data
    with pytest.raises(MemoryBudgetError, match="n_basis=None is the full 'rbf' kernel on all "
                       "n=12000 rows: use the reduced estimator"):
        ReducedSVC(n_basis=None, memory_budget="256MB").fit(X, y)


def test_no_cap_keeps_the_requested_basis(data):
    X, y = data
    model = LowRankSVC(n_basis=1000, memory_budget=float("inf"), random_state=0).fit(X, y)
    assert model.basis_.shape[0] == 1000 and not hasattr(model, "n_rows_seen_")


def test_auto_keeps_the_stored_path_when_it_allows_a_basis_in_range(data):
    # At 96 MiB the stored features fit for m around 500, fewer than 'auto' wants here:
    # 'auto' stays on the (faster) stored path rather than streaming more basis functions,
    # and says that the budget set m.
    X, y = data
    with pytest.warns(MemoryBudgetWarning):
        model, peak = traced_peak(lambda: LowRankSVC(random_state=0, memory_budget=96 * MiB)
                                  .fit(X, y))
    assert not hasattr(model, "n_rows_seen_") and model.basis_.shape[0] >= 439
    assert peak <= 1.1 * 96 * MiB


def test_the_auto_cap_grows_with_the_budget():
    """Budget.check_n_basis on plans of known cost, over budgets from too small for one
    basis function to all n stored: never smaller at a larger budget; the stored plan's m
    wherever that holds AUTO_MIN, else AUTO_MIN on the cheapest plan (while it fits)."""
    from sparsekernel.basis._base import AUTO_MIN
    from sparsekernel.svm._memory import Budget

    n = 10_000

    def cheapest(m):  # streamed: the m x m matrices only
        return MemoryPlan("x", 0, squares=8.0 * m * m)

    def stored(m):  # the n x m features besides
        return MemoryPlan("x", 0, squares=8.0 * m * m, features=8.0 * n * m)

    caps = []
    for budget in np.geomspace(0.05 * MiB, 2048 * MiB, 60):
        est = ReducedSVC(memory_budget=float(budget))
        if cheapest(1).total > budget:
            with pytest.raises(MemoryBudgetError):
                Budget(est).check_n_basis("auto", n, cheapest, stored)
            continue
        cap = Budget(est).check_n_basis("auto", n, cheapest, stored)
        m_stored = largest_within(lambda m: stored(m).total, budget, 1, n) or 0
        m_cheap = largest_within(lambda m: cheapest(m).total, budget, 1, n)
        assert cap == (m_stored if m_stored >= AUTO_MIN else min(AUTO_MIN, m_cheap))
        assert not caps or cap >= caps[-1], (budget, cap, caps)
        caps.append(cap)
    assert caps[0] < AUTO_MIN and caps[-1] == n  # (from one square to every row stored)


@pytest.mark.parametrize("Est", [ReducedSVC, LowRankSVC])
def test_a_larger_budget_never_gives_a_smaller_auto_basis(Est):
    """Over budgets from streaming AUTO_MIN basis functions to storing all 'auto' wants:
    the basis never shrinks, and its accuracy never falls (the rule this replaces streamed
    many basis functions at a small budget and stored far fewer at a larger one)."""
    from sklearn.datasets import make_moons

    X, y = make_moons(20000, noise=0.3, random_state=0)
    Xt, yt = make_moons(4000, noise=0.3, random_state=1)
    sizes, scores = [], []
    for budget in (6, 24, 48, 128):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MemoryBudgetWarning)
            model = Est(C=1e4, random_state=0, memory_budget=budget * MiB).fit(X, y)
        sizes.append(model.basis_.shape[0])
        scores.append(model.score(Xt, yt))
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1], sizes
    assert all(s >= max(scores[:i], default=0) - 0.003 for i, s in enumerate(scores)), scores


@pytest.mark.parametrize("Est", [ReducedSVC, LowRankSVC])
def test_the_budget_that_set_m_is_named_and_holds_the_basis_auto_wanted(data, Est):
    """The warning names 'auto''s m, the m used and a budget; at that budget the fit uses
    'auto''s m, without a warning."""
    X, y = data
    with pytest.warns(MemoryBudgetWarning) as record:
        small = Est(random_state=0, memory_budget=24 * MiB).fit(X, y)
    message = str(record[0].message)
    wanted, used, needed = re.search(
        r"n_basis='auto' wanted (\d+) and the fit uses (\d+)\. memory_budget='([^']+)' would "
        r"hold \1", message).groups()
    assert int(used) == small.basis_.shape[0] < int(wanted), message
    assert message.startswith(f"{Est.__name__}: memory_budget=24 MiB set the number of basis")
    with warnings.catch_warnings():
        warnings.simplefilter("error", MemoryBudgetWarning)
        large = Est(random_state=0, memory_budget=needed.replace(" ", "")).fit(X, y)
        unlimited = Est(random_state=0, memory_budget=float("inf")).fit(X, y)
    assert large.basis_.shape[0] == unlimited.basis_.shape[0]
    # (Cholesky whitening may drop dependent landmarks: LowRankSVC keeps at most 'auto''s m.)
    assert large.basis_.shape[0] <= int(wanted)
    assert not hasattr(large, "n_rows_seen_")


def _flat(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, 60)) < 0.3).astype(float)
    y = (X[:, :5].sum(axis=1) + rng.standard_normal(n) > 1.8).astype(int) + (X[:, 5] > 0)
    return X, y


@pytest.mark.parametrize(("budget", "all_rows"), [(128 * MiB, True), (64 * MiB, False)])
def test_exact_machine_on_all_rows_only_within_the_budget(budget, all_rows):
    """Small data with a flat spectrum: the kernel machine on every row (n x n kernel,
    basis = its support rows) when its estimate (103 MiB here) fits, else k-means centres;
    within the budget either way."""
    X, y = _flat()
    model, peak = traced_peak(lambda: LowRankSVC(C=10.0, random_state=0,
                                                 memory_budget=budget).fit(X, y))
    assert (model.basis_indices_ is not None) == all_rows
    assert peak <= 1.1 * budget, f"peak {peak / MiB:.1f} MiB over {budget / MiB:.0f} MiB"


#: Estimators under the shared rule (base.KernelExpansionMixin._plan_basis, or their own plan
#: by it): 'auto' lowered to the largest m whose plan fits, explicit sizes checked; rows:
#: (estimator, rows of the data it fits).
SHARED_RULE = [
    (LSSVC(random_state=0), 12000),  # features recomputed in blocks past the budget
    (KernelLogisticRegression(random_state=0), 12000),
    (NystromFeatures(random_state=0), 12000),  # k-means distances within the budget too
    (ReducedKernelPCA(random_state=0), 12000),
    (ReducedKernelCCA(random_state=0), 12000),
    (SparseFisherDiscriminant(n_basis=50, max_iter=3, random_state=0), 3000),
    (OnlineLSSVR(n_basis=100), 3000),
    (ReducedSetSVC(n_basis=20, random_state=0), 3000),
]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize(("est", "n"), SHARED_RULE,
                         ids=[type(e).__name__ for e, _ in SHARED_RULE])
def test_every_estimator_taking_a_budget_stays_within_it(data, est, n):
    X, y = data[0][:n], data[1][:n]
    name = type(est).__name__
    target = {"ReducedKernelPCA": None, "ReducedKernelCCA": X[:, :2] ** 2,
              "OnlineLSSVR": X[:, 0] * X[:, 1]}.get(name, y)
    budget = 6 * MiB
    est = est.set_params(memory_budget=budget)
    model, peak = traced_peak(lambda: est.fit(X, target))
    assert peak <= 1.1 * budget, f"peak {peak / MiB:.1f} MiB over {budget / MiB:.0f} MiB"
    assert model.basis_.shape[0] >= 1


def test_kmeans_on_wide_sparse_rows_stays_within_the_budget():
    """k-means landmarks of CSR rows with a million columns: dense m x d centres (and the
    loop's copies of them) would be several times the budget; CSR centres are not."""
    rng = np.random.default_rng(0)
    n, d, k = 400, 1_000_000, 10
    indices = np.sort(rng.choice(d, (n, k)), axis=1).ravel()
    X = sp.csr_matrix((rng.random(n * k), indices, np.arange(0, n * k + 1, k)), shape=(n, d))
    y = np.arange(n) % 2
    budget = 512 * MiB  # the plan counts the basis as dense: 40 x 10^6 x 8 bytes
    est = LowRankSVC(n_basis=40, gamma=1.0, memory_budget=budget, random_state=0)
    model, peak = traced_peak(lambda: est.fit(X, y))
    assert sp.issparse(model.basis_) and model.basis_.shape == (40, d)
    assert peak <= 0.25 * budget, f"peak {peak / MiB:.1f} MiB"


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("basis", ["random", "kmeans", "kmedoids", "clustering", "incremental",
                                   "systematic"])
def test_every_basis_scheme_selects_within_the_budget(data, basis):
    """A selector's working arrays (incremental's QR of kernel columns, systematic's growing
    features, k-means' distances) span only the rows a share of the budget holds."""
    X, y = data[0][:12000], data[1][:12000]
    budget = 6 * MiB
    est = ReducedSVC(n_basis=50, basis=basis, memory_budget=budget, random_state=0)
    model, peak = traced_peak(lambda: est.fit(X, y))
    assert peak <= 1.1 * budget, f"peak {peak / MiB:.1f} MiB over {budget / MiB:.0f} MiB"
    assert model.basis_.shape[0] >= 1
