"""The estimator base every family plugs into: the scikit-learn glue, written once.

:class:`SparseKernelEstimator` checks parameters at every fit entry and makes fits
transactional; :class:`KernelExpansionMixin` holds the one basis -> kernel path and the
blockwise decision ``K(X, Z) coef^T + intercept``; :class:`OneVsRestClassifierMixin` and
:class:`SingleTargetRegressorMixin` handle targets, weights and prediction;
:func:`report_result` turns every ``SolverResult`` into warnings and ``verbose`` lines. The
contract they implement is the table in CONTRIBUTING.md, enforced by ``tests/test_common.py``.
"""

from __future__ import annotations

import contextlib
import functools
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .basis import BasisSelector, fit_kernel_basis, resolve_n_basis
from .basis._base import auto_sample_bytes
from .compute import NonFiniteError, astype, backend_of, namespace_of, thread_plan, to_numpy
from .kernels import KERNELS, Kernel
from .utils import (
    COMMON_CONSTRAINTS,
    UNLIMITED_MEMORY_BUDGET,
    Interval,
    MemoryBudgetWarning,
    MemoryPlan,
    Options,
    SolverProgress,
    check_sample_weight,
    format_bytes,
    is_dask_collection,
    largest_within,
    log_line,
    parse_memory_budget,
    plain,
    validate_params,
)
from .utils._progress import run_fit_task

# scikit-learn's callback API (``set_callbacks``, ``sklearn.callback``) is newer than the
# declared minimum scikit-learn; without it the estimators simply have no ``set_callbacks``
# (a stand-in base, not a raised minimum: progress display is no reason to refuse 1.6-1.8).
try:
    from sklearn.callback import CallbackSupportMixin
except ImportError:  # pragma: no cover - scikit-learn without sklearn.callback
    class CallbackSupportMixin:
        """Stand-in for ``sklearn.callback.CallbackSupportMixin`` (no callbacks)."""

__all__ = ["BASIS_CONSTRAINTS", "DTYPES", "KERNEL_CONSTRAINTS", "KernelExpansionMixin",
           "OneVsRestClassifierMixin", "SingleTargetRegressorMixin", "SparseKernelEstimator",
           "fit_transaction", "report_result"]

#: Input dtypes every estimator accepts; float32 stays float32 through the kernel blocks.
DTYPES = [np.float64, np.float32]

KERNEL_CONSTRAINTS = {
    "kernel": [Options(*KERNELS, "gaussian", "poly")],
    "gamma": [Options("scale", "auto"), Interval("real", 0, None, closed="neither")],
    "degree": [Interval("int", 1, None, closed="left")],
    "coef0": [Interval("real", None, None, closed="neither")],
    "memory_budget": COMMON_CONSTRAINTS["memory_budget"],
}
#: ``n_basis`` means one thing everywhere: the number m of basis functions of the fitted
#: model, as an int, a fraction of the training rows in (0, 1], or 'auto' (data-adaptive:
#: :func:`sparsekernel.basis.auto_n_basis`).
#: Estimators with an exact (full-kernel) form also accept None: every training row.
N_BASIS = [Options("auto"), Interval("int", 1, None, closed="left"),
           Interval("real", 0, 1, closed="right")]
BASIS_CONSTRAINTS = {
    "n_basis": N_BASIS,
    "basis": [str, "array-like", BasisSelector],
    "random_state": ["random_state"],
}


def report_result(estimator, result, label=None):
    """Turn a solver's ``SolverResult`` into the estimator's warning and ``verbose`` line.

    Parameters
    ----------
    estimator : estimator
        Who reports (its class name starts the message).
    result : SolverResult
        ``status``, ``converged`` and ``message`` are read.
    label : object, optional
        The class (one-vs-rest sub-problem) the result belongs to.
    """
    name = type(estimator).__name__
    where = "" if label is None else f" for class {plain(label)!r}"
    if not result.converged:
        warnings.warn(f"{name} did not converge{where}: {result.message}",
                      ConvergenceWarning, stacklevel=3)
    log_line(getattr(estimator, "verbose", 0), name, f"solved{where}",
             {"status": result.status, "n_iter": int(result.n_iter),
              "objective": float(result.objective)})


def lazy_rows(model, X, method):
    """``model.method`` on the dask collection ``X``: a lazy dask array (or dataframe
    object), block by block where the rows are (the model is what travels), as dask-ml's
    ``ParallelPostFit``; :func:`sparsekernel.distributed.parallel_predict` without a client."""
    from .distributed._predict import parallel_predict

    return parallel_predict(model, X, method)


def lazy_on_dask(method):
    """Decorate a row-wise method (``predict``, ``decision_function``, ``predict_proba``,
    ``transform``, ...): called with a dask collection alone, it returns
    :func:`lazy_rows`'s lazy result, computed block by block where the rows are; otherwise
    the method runs as written (also on each block)."""
    name = method.__name__

    @functools.wraps(method)
    def wrapper(self, X, *args, **kwargs):
        if not args and not kwargs and is_dask_collection(X):
            return lazy_rows(self, X, name)
        return method(self, X, *args, **kwargs)

    return wrapper


@contextlib.contextmanager
def fit_transaction(estimator):
    """Run a fit as a transaction: if the block raises, ``estimator`` is restored.

    Any exception counts, KeyboardInterrupt (Ctrl-C) included; it is raised again once the
    attributes the estimator had on entry are back (all of them, and only them), so an
    estimator fitted before stays the same model and an unfitted one stays unfitted.

    The snapshot is shallow: a dict of the attribute bindings, O(number of attributes),
    whatever the size of the model. A fit that rebinds attributes (``self.coef_ = ...``, the
    usual case) is therefore fully undone, but one that mutates in place an object it found
    on the estimator would not be. Fit methods that continue a previous state
    (``partial_fit``, warm starts) therefore copy on write: they update a copy of every
    mutable state object (a stateful solver, a working set, an array they would change with
    ``+=``) and assign the copies when the step has succeeded. That copy costs about as much
    as the state, less than the step that updates it; a deep snapshot here would instead
    copy the whole model on every fit.
    """
    before = dict(estimator.__dict__)
    try:
        yield
    except BaseException:
        estimator.__dict__.clear()
        estimator.__dict__.update(before)
        raise


#: The parameters that set the scale of a fit, named when a solver meets non-finite values.
_SCALE_PARAMS = ("kernel", "gamma", "C", "ridge", "alpha")


def _scale_params(estimator):
    """``ReducedSVC(kernel='rbf', gamma='scale' (0.05 resolved), C=10)``: who failed, how."""
    params = estimator.get_params(deep=False)
    parts = [f"{name}={params[name]!r}" for name in _SCALE_PARAMS if name in params]
    resolved = getattr(estimator, "gamma_", None)
    if isinstance(params.get("gamma"), str) and np.isscalar(resolved):
        parts = [p + f" ({resolved:.4g} resolved)" if p.startswith("gamma=") else p
                 for p in parts]
    return f"{type(estimator).__name__}({', '.join(parts)})"


def _fit_entry(method):
    """Validate parameters, then run ``method`` under the thread plan as a transaction, as
    the root task of the callbacks (set up before the transaction, torn down after it)."""

    @functools.wraps(method)
    def fit_entry(self, *args, **kwargs):
        self._validate_params()

        def transaction():
            with fit_transaction(self):
                with thread_plan():
                    try:
                        result = method(self, *args, **kwargs)
                    except NonFiniteError as exc:  # name the parameters the solver can't see
                        raise NonFiniteError(f"{_scale_params(self)}: {exc}") from exc
                    if hasattr(self, "_after_fit"):  # state derived once from the fit
                        self._after_fit()
                    return result

        return run_fit_task(self, method, transaction, args, kwargs)

    fit_entry._fit_entry = True
    return fit_entry


class SparseKernelEstimator(CallbackSupportMixin, BaseEstimator):
    """Base of every public estimator: checked parameters, transactional fits, callbacks.

    Subclasses declare ``_parameter_constraints`` (see :mod:`sparsekernel.utils`); the fit
    methods named in ``_FIT_METHODS`` are wrapped when the subclass is defined, so checking
    happens at every entry without a call in the subclass, a fit that raises (bad input,
    a solver error, Ctrl-C) leaves the estimator as it was (:func:`fit_transaction`, whose
    copy-on-write rule binds fit methods that continue a state), and every fit runs under
    one thread plan (:func:`sparsekernel.compute.thread_plan`: BLAS on one thread,
    the library's own threads over classes and row blocks).

    Every fit reports to the callbacks of ``set_callbacks`` (scikit-learn's
    ``sklearn.callback``, e.g. ``ProgressBar``) as one task tree: the fit, its named steps
    (``basis-selection``, ``feature-map``), and ``solve`` with one sub-task per sub-problem
    and their iterations (:mod:`sparsekernel.utils._progress`). Callbacks are not fitted
    state: a failed fit keeps them, ``clone`` passes them on.
    """

    _parameter_constraints: dict = {}
    _FIT_METHODS = ("fit", "partial_fit", "fit_stream")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in cls._FIT_METHODS:
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "_fit_entry", False):
                setattr(cls, name, _fit_entry(method))

    def _validate_params(self):
        validate_params(type(self).__name__, self._parameter_constraints,
                        self.get_params(deep=False))
        if "memory_budget" in self._parameter_constraints:
            parse_memory_budget(self.memory_budget)

    def _solve_each(self, n_problems, solve, labels=None):
        """Run ``solve(j, callback)`` for each sub-problem with progress and warnings.

        Returns the ``n_problems`` results in order.
        """
        results = []
        verbose = getattr(self, "verbose", 0)
        with SolverProgress(verbose, n_problems, type(self).__name__) as progress:
            for j in range(n_problems):
                label = None if labels is None else labels[j]
                results.append(solve(j, progress.callback(label)))
                progress.done()
                report_result(self, results[-1], label)
        return results


class KernelExpansionMixin:
    """Fit and predict glue of ``f(x) = K(x, Z) coef^T + intercept`` models.

    Fitted attributes read: ``basis_`` (Z, or None for a linear model on X itself),
    ``coef_``, ``intercept_``, ``gamma_``; parameters read: ``kernel``, ``degree``,
    ``coef0``, ``memory_budget`` (estimators without them use the RBF defaults).

    Memory (CONTRIBUTING.md, "Memory is planned"): every fit that chooses m basis functions
    plans before it allocates, by one rule (:meth:`_plan_basis`): its
    :class:`~sparsekernel.utils.MemoryPlan` (:meth:`_memory_parts`, at least the arrays
    every kernel fit holds) must fit ``memory_budget``; ``n_basis='auto'`` is lowered to the
    largest m whose plan fits, an explicit ``n_basis`` whose plan does not fit raises
    :class:`~sparsekernel.utils.MemoryBudgetError` with the estimate before the basis is
    chosen, and the kernel's row blocks get what the plan leaves.
    """

    #: m x m float64 arrays the fit holds at its peak: a kernel on the basis (or a moment
    #: matrix), its factor or eigenvectors and LAPACK's workspace. A Nystrom map holds six
    #: (:func:`~sparsekernel.features.nystrom_map_bytes`).
    _M_SQUARES = 3

    def _validate_X(self, X, reset=False):
        backend = backend_of(X)
        if backend.is_numpy:
            return validate_data(self, X, accept_sparse="csr", dtype=DTYPES, reset=reset)
        return validate_data(self, X, accept_sparse=False, dtype=backend.float_dtypes(),
                             reset=reset)

    def _fit_kernel_basis(self, X, y_basis=None, max_n_basis=None, all_rows_up_to=None,
                          gamma=None, n_rows=None, X_device=None, budget_for=None):
        """Choose Z with the estimator's own kernel; sets ``basis_``, ``basis_indices_``,
        ``gamma_`` and returns ``(kernel, BasisResult)``. ``max_n_basis`` caps 'auto' (the
        largest m the caller's own memory plan allows; the shared plan of
        :meth:`_plan_basis` applies as well); where a cap lowers 'auto', a
        :class:`~sparsekernel.utils.MemoryBudgetWarning` names the budget that would hold
        the basis 'auto' wanted (``budget_for(m)``: bytes of the caller's preferred plan on
        m basis functions, beside the shared plan's); ``all_rows_up_to``: see
        :func:`~sparsekernel.basis.fit_kernel_basis`; ``gamma`` and ``n_rows``: for ``X`` a
        sample of a dask collection, gamma resolved on all its rows (instead of
        ``self.gamma``) and their number (which 'auto' and a fractional n_basis size m
        for); ``X_device``: X's rows on a namespace's device, where k-means chooses."""
        kern, res = fit_kernel_basis(
            X, y_basis, kernel=self.kernel, gamma=self.gamma if gamma is None else gamma,
            degree=getattr(self, "degree", 3), coef0=getattr(self, "coef0", 0.0),
            memory_budget=self.memory_budget, n_basis=self.n_basis, basis=self.basis,
            random_state=self.random_state, max_n_basis=self._plan_basis(X, max_n_basis),
            C=self._auto_C(), all_rows_up_to=all_rows_up_to, n_rows=n_rows,
            X_device=X_device)
        self._share_kernel_budget(kern, X, res.centers.shape[0])
        self.basis_, self.basis_indices_, self.gamma_ = res.centers, res.indices, kern.gamma
        if "n_basis_wanted" in res.info:
            self._warn_budget_set_m(X, res.info["n_basis_wanted"], res.centers.shape[0],
                                    budget_for)
        return kern, res

    def _warn_budget_set_m(self, X, wanted, m, budget_for=None):
        """:class:`~sparsekernel.utils.MemoryBudgetWarning`: the budget, not the problem,
        set m (``wanted`` is what 'auto' chose); with the budget that would hold ``wanted``."""
        (n, d), itemsize = X.shape, np.result_type(X.dtype, np.float32).itemsize
        needed = self._memory_plan(n, wanted, d, itemsize).total
        if budget_for is not None:
            needed = max(needed, budget_for(wanted))
        budget = format_bytes(parse_memory_budget(self.memory_budget))
        needed *= 1.01  # format_bytes keeps 3 digits: never show less than the plan needs
        warnings.warn(MemoryBudgetWarning(
            f"{type(self).__name__}: memory_budget={budget} set the number of basis "
            f"functions, not the problem: n_basis='auto' wanted {wanted} and the fit uses {m}. "
            f"memory_budget='{format_bytes(needed)}' would hold {wanted} (float('inf') for no "
            "cap); or pass n_basis to choose m yourself.", wanted, m, needed), stacklevel=2)

    def _auto_C(self):
        """The regularisation ``n_basis='auto'`` sizes the basis for
        (:func:`~sparsekernel.basis.auto_n_basis`): the estimator's ``C``; 1.0, the default
        C of the estimators a transformer feeds, for those without one."""
        C = getattr(self, "C", None)
        return float(C) if isinstance(C, numbers.Real) and C > 0 else 1.0

    # ------------------------------------------------------------------ memory plan
    def _n_planned_outputs(self):
        """Columns of targets a fit holds per row: one per one-vs-rest problem, one for a
        regressor, none for a transformer."""
        if is_classifier(self) and getattr(self, "classes_", None) is not None:
            return 1 if len(self.classes_) <= 2 else len(self.classes_)
        return 1 if isinstance(self, RegressorMixin) else 0

    def _memory_parts(self, n, m, d, itemsize):
        """Bytes a fit on n rows (d features) and m basis functions allocates beyond X at
        its peak, as named parts of a :class:`~sparsekernel.utils.MemoryPlan`.

        The default is what every kernel fit holds: float64 targets and weights (a
        transformer: a selection's row indices), the basis Z, ``_M_SQUARES`` m x m
        matrices and one row of K(X, Z) (the blocks grow into what the plan leaves:
        :meth:`_share_kernel_budget`). Families that store n x m features or keep other
        arrays add them.
        """
        return {"working_vectors": 8.0 * n * (self._n_planned_outputs() + 1),
                "basis": float(m) * d * itemsize,
                "m_x_m_matrices": self._M_SQUARES * 8.0 * m * m,
                "kernel_block": (2.0 * m + d + 1) * itemsize}

    def _memory_plan(self, n, m, d, itemsize):
        """The fit's :class:`~sparsekernel.utils.MemoryPlan` on m basis functions."""
        return MemoryPlan(type(self).__name__, parse_memory_budget(self.memory_budget),
                          **self._memory_parts(n, m, d, itemsize))

    def _plan_basis(self, X, max_n_basis=None, basis=None):
        """The memory rule at the entry of basis selection; returns the cap on 'auto'.

        An explicit m (``n_basis`` a number, or ``basis`` an array of m rows) whose plan
        does not fit ``memory_budget`` raises :class:`~sparsekernel.utils.MemoryBudgetError`
        before anything is allocated. ``n_basis='auto'`` first needs its spectrum sample
        (:func:`~sparsekernel.basis._base.auto_sample_bytes`), then is capped at the
        largest m whose plan fits (and at ``max_n_basis``), and refused when even one basis
        function does not fit.
        """
        budget = parse_memory_budget(self.memory_budget)
        if budget >= UNLIMITED_MEMORY_BUDGET:
            return max_n_basis
        (n, d), basis = X.shape, self.basis if basis is None else basis
        itemsize = np.result_type(X.dtype, np.float32).itemsize
        fixed = _fixed_basis_size(basis)
        if fixed is not None or not (isinstance(self.n_basis, str) and self.n_basis == "auto"):
            m = fixed if fixed is not None else resolve_n_basis(self.n_basis, n)
            what = (f"a basis of {m} rows is too many basis functions for this budget: pass "
                    "fewer" if fixed is not None else f"n_basis={self.n_basis!r} is too many "
                    "basis functions for this budget: lower n_basis")
            self._memory_plan(n, m, d, itemsize).require(
                f"{what}, or raise memory_budget (float('inf') for no cap)")
            return max_n_basis
        owner = type(self).__name__
        MemoryPlan(owner, budget, spectrum_sample=auto_sample_bytes(n)).require(
            "n_basis='auto' reads the kernel's spectrum on a sample of rows first: pass an "
            "int n_basis, or raise memory_budget (float('inf') for no cap)")
        m_max = largest_within(lambda m: self._memory_plan(n, m, d, itemsize).total, budget,
                               1, n)
        if m_max is None:
            self._memory_plan(n, 1, d, itemsize).require(
                "raise memory_budget (float('inf') for no cap)")
        return m_max if max_n_basis is None else min(max_n_basis, m_max)

    def _share_kernel_budget(self, kern, X, m):
        """Give the kernel's row blocks what the plan on the chosen m leaves of the budget
        (at least one row of K(X, Z)): blocks, and features stored when they fit
        (``reduced_design``, the LS-SVMs), then stay within ``memory_budget``."""
        budget = parse_memory_budget(self.memory_budget)
        if budget >= UNLIMITED_MEMORY_BUDGET:
            return
        (n, d), itemsize = X.shape, np.result_type(X.dtype, np.float32).itemsize
        parts = self._memory_parts(n, m, d, itemsize)
        block = parts["kernel_block"]
        kern.memory_budget = int(max(block, budget - sum(parts.values()) + block))

    def _kernel(self):
        """The fitted kernel (gamma resolved at fit time)."""
        return Kernel(getattr(self, "kernel", "rbf"), gamma=self.gamma_,
                      degree=getattr(self, "degree", 3), coef0=getattr(self, "coef0", 0.0),
                      memory_budget=self.memory_budget)

    def _expansion_coef(self):
        """Coefficients on K(X, Z), shape (m, n_outputs); low-rank models fold their map in."""
        coef = self.coef_
        if isinstance(coef, np.ndarray):
            return np.atleast_2d(coef).T
        return (namespace_of(coef).reshape(coef, (1, -1)) if coef.ndim == 1 else coef).T

    def _kernel_dtype(self):
        """Precision of K(X, Z) at prediction; None: the input's (working) dtype."""
        return None

    def _raw_decision(self, X):
        """``K(X, Z) coef^T + intercept`` in memory-bounded row blocks: shape (n, n_outputs),
        where X is (a namespace's X on its device, the model's arrays moved there)."""
        check_is_fitted(self)
        X = self._validate_X(X)
        backend = backend_of(X)
        with thread_plan():  # (one-thread BLAS: waking its threads costs time on every product)
            coef = self._expansion_coef()
            # the kernel's precision (:meth:`_kernel_dtype`): the input's, or float64 (the
            # device's widest float)
            dtype = self._kernel_dtype() or X.dtype
            if self.basis_ is None:  # linear model in the primal on X itself
                scores = (np.asarray(X @ coef) if backend.is_numpy
                          else X @ backend.asarray(coef, dtype=X.dtype))
            else:
                Z = self.basis_
                if backend.is_numpy:
                    Z = Z.astype(dtype, copy=False)
                scores = self._kernel().apply(X, Z, coef, dtype=dtype)
        # The intercept's precision, as NumPy's sum of float32 scores and a float64
        # intercept (float64 where the device has it).
        intercept = astype(backend.asarray(self.intercept_), backend.widest_float())
        intercept = backend.xp.reshape(intercept, (1, -1))
        return astype(scores, intercept.dtype) + intercept

    @property
    def n_support_(self):
        """Number of basis functions the model evaluates per prediction (m)."""
        check_is_fitted(self)
        return 0 if self.basis_ is None else self.basis_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _ravel(a):
    """``a.ravel()`` for NumPy, its reshape to 1-D on an array-API namespace."""
    if isinstance(a, np.ndarray):
        return a.ravel()
    return namespace_of(a).reshape(a, (-1,))


def _fixed_basis_size(basis):
    """Rows of a basis given as an array (or a selector holding one), else None."""
    if isinstance(basis, str):
        return None
    centers = getattr(basis, "centers", None) if isinstance(basis, BasisSelector) else basis
    if centers is None or not hasattr(centers, "__len__") and not hasattr(centers, "shape"):
        return None
    return int(centers.shape[0] if hasattr(centers, "shape") else len(centers))


class _NoProbabilities:
    """A method name that neither the class nor its instances have: looking it up raises
    AttributeError, caused by one that says where probabilities come from.

    As scikit-learn's ``available_if`` (SVC(probability=False)), ``hasattr(est, name)`` is
    False, so meta-estimators fall back on ``decision_function``; unlike it, the class has
    no such attribute either, so ``help()`` and the API reference list no method that no
    instance can call."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        cls = type(obj) if obj is not None else owner
        reason = AttributeError(
            f"{cls.__name__} has no {self.name}: its loss gives scores "
            "(decision_function), not probabilities. For probabilities fit "
            "sparsekernel.KernelLogisticRegression, or calibrate this classifier's scores "
            f"with sklearn.calibration.CalibratedClassifierCV({cls.__name__}(...), "
            "method='sigmoid')."
        )
        raise AttributeError(f"This {cls.__name__!r} has no attribute {self.name!r}") from reason


class OneVsRestClassifierMixin(ClassifierMixin):
    """Labels -> +-1 targets (one column for two classes, one-vs-rest past two) and back."""

    def _classifier_data(self, X, y, sample_weight, classes=None, reset=True):
        """Validated ``(X, y_enc, Y, sw)``; sets ``classes_`` (from ``classes`` if given).

        ``sw`` is ``sample_weight`` times the class weight; ``Y`` is (n, n_problems) +-1.
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=DTYPES, reset=reset)
        if reset:
            self._set_classes(y, classes)
        y_enc = self._encode(y)
        return X, y_enc, self._targets(y_enc), self._weights(y, sample_weight)

    def _set_classes(self, y, classes=None):
        check_classification_targets(y)
        self.classes_ = np.unique(y if classes is None else np.asarray(classes))
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes; got 1 class "
                f"({plain(self.classes_[0])!r})."
            )

    def _encode(self, y):
        """Indices of ``y`` in ``classes_``; a label outside ``classes_`` raises."""
        y = np.asarray(y)
        idx = np.minimum(np.searchsorted(self.classes_, y), len(self.classes_) - 1)
        bad = self.classes_[idx] != y
        if np.any(bad):
            raise ValueError(
                f"Label {plain(y[bad][0])!r} is not one of the classes "
                f"{[plain(c) for c in self.classes_]} fixed by the first fit or `classes`."
            )
        return idx

    def _targets(self, y_enc):
        if len(self.classes_) == 2:
            return np.where(y_enc == 1, 1.0, -1.0)[:, None]
        return np.where(y_enc[:, None] == np.arange(len(self.classes_)), 1.0, -1.0)

    def _weights(self, y, sample_weight):
        sw = check_sample_weight(sample_weight, len(y))
        if getattr(self, "class_weight", None) is not None:
            sw = sw * compute_sample_weight(self.class_weight, y)
        return sw

    @property
    def _n_problems(self):
        return 1 if len(self.classes_) == 2 else len(self.classes_)

    @property
    def _problem_labels(self):
        return [None] if len(self.classes_) == 2 else list(self.classes_)

    @lazy_on_dask
    def decision_function(self, X):
        """Scores: shape (n,) for two classes (positive means ``classes_[1]``), else
        (n, n_classes) one-vs-rest scores. A dask collection gives a lazy dask result,
        block by block (:func:`lazy_on_dask`)."""
        scores = self._raw_decision(X)
        return _ravel(scores) if scores.shape[1] == 1 else scores

    @lazy_on_dask
    def predict(self, X):
        """Class labels: the sign for two classes, the largest one-vs-rest score otherwise
        (lazy on a dask collection, as :meth:`decision_function`)."""
        scores = self.decision_function(X)
        if isinstance(scores, np.ndarray):
            idx = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
            return self.classes_[idx]
        backend = backend_of(X)  # an array-API namespace: labels there when numeric
        xp = backend.xp
        idx = (xp.astype(scores > 0, xp.int64) if scores.ndim == 1
               else xp.argmax(scores, axis=1))
        if isinstance(self.classes_, np.ndarray) and self.classes_.dtype.kind not in "biuf":
            return self.classes_[to_numpy(idx)]  # strings: NumPy labels
        return xp.take(backend.asarray(self.classes_), idx)

    # Hinge, squared hinge and squared losses give scores, not probabilities (CONTRIBUTING.md,
    # "Probabilities"); KernelLogisticRegression defines its own predict_proba, which takes
    # precedence over these names.
    predict_proba = _NoProbabilities()
    predict_log_proba = _NoProbabilities()


class SingleTargetRegressorMixin(RegressorMixin):
    """One real target: validated data in, ``predict`` out."""

    def _regressor_data(self, X, y, sample_weight, reset=True):
        """Validated ``(X, y float64, sw)``."""
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=DTYPES, y_numeric=True,
                             reset=reset)
        return X, np.asarray(y, dtype=np.float64), check_sample_weight(sample_weight,
                                                                         X.shape[0])

    @lazy_on_dask
    def predict(self, X):
        """Predicted targets, shape (n,) (lazy on a dask collection: :func:`lazy_on_dask`)."""
        return _ravel(self._raw_decision(X))
