"""On-line pruning LS-SVM regression with a fixed budget (Kim, Shim & Oh, section 3).

As in the paper, the kept points keep their own targets (``support_targets_``), the point
of smallest ``|alpha_i|`` among all N_w + 1 (the new one included) leaves, the bias is the
unpenalised LS-SVM bias, and the first N_w points are solved exactly before pruning starts.
Each arrival costs O(N_w^2): :class:`~sparsekernel.solvers.IncrementalLSSVM` borders and
downdates the inverse of the working set's system.
"""

from __future__ import annotations

import copy

import numpy as np
import scipy.sparse as sp

from .._docs import fill_doc
from ..base import (
    KernelExpansionMixin,
    SingleTargetRegressorMixin,
    SparseKernelEstimator,
    report_result,
)
from ..compute import blas_threads
from ..kernels import resolve_gamma
from ..solvers import IncrementalLSSVM
from ..utils import Interval, MemoryPlan, log_line, parse_memory_budget
from ..utils.fitted_spec import FEATURES, INFO, SINGLE, Basis, ClassSpec, Count, Floats, Gamma
from ._base import KERNEL_PARAMS, LSSVM_CONSTRAINTS

__all__ = ["OnlineLSSVR"]

_CHUNK = 512  # arrivals per K(chunk, working set + chunk) evaluation


@fill_doc
class OnlineLSSVR(SingleTargetRegressorMixin, KernelExpansionMixin, SparseKernelEstimator):
    __doc__ = """On-line pruning LS-SVM regression on a fixed budget of n_basis support vectors.

    Kim, Shim & Oh: every arrival joins the working set, the LS-SVM is solved on those
    n_basis + 1 points, and the one with the smallest ``|alpha|`` leaves; O(n_basis^2) time per
    arrival and memory. Each solve is :class:`LSSVR`'s objective on the working set
    (:doc:`/user_guide/lssvm`).

    Pruning forgets rows for good, one arrival at a time, so it loses accuracy where no
    n_basis of the rows summarise the data, and most when the rows arrive in an order (sorted
    by target, say), where the exact LS-SVR and a reduced one on as many random basis
    functions do far better. When the rows need not be forgotten, stream them into
    :meth:`LSSVR(n_basis=m).partial_fit <sparsekernel.LSSVR.partial_fit>` instead: O(m^2)
    memory as well, and after every chunk the reduced LS-SVR of all the rows seen (nearly
    as accurate as the exact one in either order, though the first chunk chooses the
    basis).
""" + KERNEL_PARAMS + """    n_basis : int, default=200
        Number m of basis functions of the fitted model: here the budget N_w of support
        vectors the working set keeps (an int only: a stream has no n to take a fraction
        of, and no 'auto').
    refactor_every : int or None, default=1000
        Updates (additions and removals) between full refactorizations of the working-set
        system, which bound the round-off drift of the O(N_w^2) updates; None never.
    {memory_budget}
    verbose : int, default=0
        2 or more: a line per 512 streamed rows and one for the final solve, on standard
        error or through the ``sparsekernel`` logger when it is configured.

    Attributes
    ----------
    basis_ : ndarray of shape (m, n_features)
        The kept support vectors.
    coef_ : ndarray of shape (m,)
        Their dual weights alpha: f(x) = sum_j alpha_j K(x, z_j) + b.
    intercept_ : float
        Bias b.
    gamma_ : float
        Kernel width used.
    objective_ : float
        Objective on the working set.
    support_targets_, support_weights_ : ndarray of shape (m,)
        Targets and sample weights of the kept points.
    n_samples_seen_ : int
        Rows streamed so far.
    n_support_ : int
        m (property).
    n_features_in_ : int

    Notes
    -----
    ``partial_fit`` after :func:`sparsekernel.io.load` rebuilds the working-set system
    from ``basis_``, ``support_targets_`` and ``support_weights_``.

    See Also
    --------
    LSSVR : Its ``partial_fit`` keeps every row's contribution in an O(m^2) summary.
    PrunedLSSVR : Batch pruning of the exact LS-SVR.

    References
    ----------
    .. [1] D. Kim, J. Shim and K. Oh, "Training for huge data set with on line pruning
       regression by LS-SVM", Department of Statistical Information, Catholic University
       of Daegu.

    Examples
    --------
    >>> from sparsekernel import OnlineLSSVR
    >>> from sparsekernel.datasets import make_sine_regression
    >>> X, y = make_sine_regression(300, noise=0.1, random_state=0)
    >>> reg = OnlineLSSVR(gamma=1.0, C=100.0, n_basis=30).fit(X, y)
    >>> reg.n_support_
    30
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = ClassSpec(
        {**FEATURES, "gamma_": Gamma(), "n_samples_seen_": Count(), **SINGLE,
         "objective_": INFO, "basis_": Basis(csr=False),
         "support_targets_": Floats(("m",)), "support_weights_": Floats(("m",))})
    _parameter_constraints = {
        **LSSVM_CONSTRAINTS,
        "n_basis": [Interval("int", 1, None, closed="left")],
        "refactor_every": [None, Interval("int", 1, None, closed="left")],
    }

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0, n_basis=200,
                 refactor_every=1000, memory_budget=None, verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.n_basis = n_basis
        self.refactor_every = refactor_every
        self.memory_budget = memory_budget
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        """Stream the rows of (X, y) in order through a fresh model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Weight ``s_i`` each point carries while it is in the working set; zero-weight
            points are skipped.

        Returns
        -------
        self
        """
        X, y, sw = self._regressor_data(X, y, sample_weight)
        self._plan_memory(X)
        self._start(X)
        return self._stream(X, y, sw)

    def _plan_memory(self, X):
        """The memory rule of every estimator (``KernelExpansionMixin._plan_basis``) for
        the working set of ``n_basis`` + 1 slots: targets and weights, the solver's two
        slot-square matrices and the slots' rows, and one chunk of arrivals with its kernel
        against the slots and itself; refused with the estimate before anything is
        allocated."""
        n, d = X.shape
        cap, chunk = self.n_basis + 1, min(_CHUNK, n)
        MemoryPlan(type(self).__name__, parse_memory_budget(self.memory_budget),
                   working_vectors=8.0 * n * 2, working_set=8.0 * cap * (2 * cap + d + 4),
                   chunk=8.0 * chunk * (cap + chunk + 2 * d) + 8.0 * (cap + chunk) * d).require(
            f"n_basis={self.n_basis!r} is too large a working set for this budget: lower "
            "n_basis, or raise memory_budget (float('inf') for no cap)")

    def partial_fit(self, X, y, sample_weight=None):
        """Stream one point or a batch (rows in order) into the current model.

        The first call sets up the model (``gamma='scale'`` is then resolved on that batch;
        give a number when streaming single points); later calls, after ``fit`` or
        :func:`sparsekernel.io.load` too, continue it with ``gamma_`` as it is.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        first = not hasattr(self, "basis_")
        X, y, sw = self._regressor_data(X, y, sample_weight, reset=first)
        self._plan_memory(X)
        if first:
            self._start(X)
        elif hasattr(self, "_solver"):  # copy on write (base.fit_transaction)
            self._solver, self._Xw = copy.deepcopy(self._solver), self._Xw.copy()
        else:
            self._restore()
        return self._stream(X, y, sw)

    def _start(self, X):
        self.gamma_ = resolve_gamma(self.gamma, X)
        self.n_samples_seen_ = 0
        self._new_solver(X.shape[1])

    def _new_solver(self, n_features):
        self._solver = IncrementalLSSVM(self.n_basis + 1, self.C, self.refactor_every)
        self._Xw = np.zeros((self.n_basis + 1, n_features))

    def _restore(self):
        """Rebuild the solver from the public attributes (after :func:`sparsekernel.io.load`)."""
        self._new_solver(self.basis_.shape[1])
        Xw = np.asarray(self.basis_, dtype=np.float64)
        K = self._kernel()(Xw, Xw)
        solver = self._solver
        for i in range(Xw.shape[0]):
            row = np.zeros(solver.capacity)
            row[:i] = K[i, :i]  # slots are taken in order 0, 1, ... on a fresh solver
            slot = solver.add(row, K[i, i], self.support_targets_[i], key=i,
                              weight=self.support_weights_[i])
            self._Xw[slot] = Xw[i]

    def _stream(self, X, y, sw):
        kern = self._kernel()
        # The per-point work is O(N_w^2) on small matrices: threaded BLAS only adds overhead.
        with blas_threads(1):
            for start in range(0, X.shape[0], _CHUNK):
                rows = slice(start, min(start + _CHUNK, X.shape[0]))
                Xc = X[rows].toarray() if sp.issparse(X) else X[rows]
                done = self._stream_chunk(kern, np.asarray(Xc, dtype=np.float64), y[rows],
                                          sw[rows], start)
                log_line(self.verbose, "OnlineLSSVR", "streamed",
                         {"rows": done, "of": X.shape[0], "support": self._solver.size})
        self.n_samples_seen_ += X.shape[0]
        self._publish()
        return self

    def _stream_chunk(self, kern, Xc, yc, sc, offset):
        """Stream one chunk; return the rows done. One K(chunk, slots at the chunk's start +
        chunk) serves every arrival: the working set only ever holds those points meanwhile."""
        solver, Xw, budget = self._solver, self._Xw, self.n_basis
        cap = solver.capacity
        Kc = kern(Xc, np.vstack([Xw, Xc]))
        solver.keys[:] = np.arange(cap)  # key of a slot = its column in Kc
        keys = solver.keys
        for t in range(Xc.shape[0]):
            if sc[t] <= 0:
                continue
            slot = solver.add(Kc[t, keys], Kc[t, cap + t], yc[t], key=cap + t, weight=sc[t])
            Xw[slot] = Xc[t]
            if solver.size > budget:
                alpha, _ = solver.solve()
                solver.remove(int(np.argmin(np.where(solver.active, np.abs(alpha), np.inf))))
        return offset + Xc.shape[0]

    def _publish(self):
        """Public fitted attributes from the current working set (slot order)."""
        solver = self._solver
        idx = np.flatnonzero(solver.active)
        if idx.size == 0:
            raise ValueError("OnlineLSSVR has seen no sample with a positive weight.")
        res = solver.result()  # coef = alpha over the occupied slots, in slot order
        self.coef_, self.intercept_, self.objective_ = res.coef, res.intercept, res.objective
        self.basis_ = self._Xw[idx].copy()
        self.support_targets_ = solver.y[idx].copy()
        self.support_weights_ = solver.s[idx].copy()
        report_result(self, res)

