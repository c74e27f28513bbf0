"""The LS-SVM family's objective and shared glue; LSSVR and LSSVC, its exact and reduced fit.

Objective of the whole LS-SVM family (LSSVR/LSSVC, the pruned and online variants, and the
low-rank LR-LSSVM), per regression target or one-vs-rest class problem::

    min_{w, b}  1/2 ||w||^2 + C/2 * sum_i s_i * (y_i - f(x_i))^2,   f(x) = w^T phi(x) + b

``s_i`` is ``sample_weight`` times the class weight; classifiers use targets in {-1, +1}.
``C`` scales the summed loss as in the SVM family; the bias is unpenalized, as in Suykens'
formulation (:doc:`/user_guide/lssvm`).

- exact (``n_basis=None``): the (n+1) bordered dual system on the n x n kernel matrix, about
  24 n^2 bytes, refused past ``memory_budget``.
- reduced (``n_basis`` a number or 'auto'): the same problem on the span of m basis points Z,
  solved on the Nystrom features (:func:`sparsekernel.features.nystrom_from_basis`), so
  ``||w||^2`` is the RKHS norm of ``f(x) = sum_j beta_j K(x, z_j) + b``. The features are
  whitened by the pivoted Cholesky factor of K(Z, Z), as LowRankSVC's: a triangular product
  on the numerically independent landmarks (the model keeps those), with no
  eigendecomposition, and the normal equations' Gram sum is a ``syrk``.
- streamed (``partial_fit``, reduced only): the reduced problem on a map fixed by the first
  chunk, over every row passed so far; each chunk is merged exactly into a float64 summary
  of O(m^2) memory and the centred (m+1) normal equations are solved again.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from sklearn.utils.metaestimators import available_if

from .._docs import fill_doc
from .._input import fit_data, fit_input
from ..base import (
    BASIS_CONSTRAINTS,
    KERNEL_CONSTRAINTS,
    N_BASIS,
    KernelExpansionMixin,
    OneVsRestClassifierMixin,
    SingleTargetRegressorMixin,
    SparseKernelEstimator,
    _fit_entry,
    report_result,
)
from ..compute import (
    add_to_diagonal,
    namespace_of,
    spd_cholesky,
    to_numpy,
)
from ..features import nystrom_from_basis
from ..kernels import resolve_gamma
from ..solvers import (
    NormalEquations,
    as_row_blocks,
    lssvm_dual,
    lssvm_normal_equations,
)
from ..utils import (
    MemoryPlan,
    constraints,
    fit_step,
    parse_memory_budget,
)
from ..utils.fitted_spec import (
    CLASSES,
    FEATURES,
    INFO,
    OVR,
    SINGLE,
    Basis,
    ClassSpec,
    Gamma,
    Indices,
    Nullable,
)

__all__ = ["ATTRIBUTES", "BaseLSSVM", "KERNEL_PARAMS", "LSSVC", "LSSVM_CONSTRAINTS", "LSSVR",
           "fit_data", "fitted"]

#: Parameters of every kernel LS-SVM (the low-rank one has no kernel).
LSSVM_CONSTRAINTS = {**KERNEL_CONSTRAINTS, **constraints("C", "verbose")}

#: Docstring pieces of the kernel LS-SVMs: the first parameters (``fill_doc`` placeholders)
#: and the fitted attributes of the exact, reduced and pruned fits.
KERNEL_PARAMS = """
    Parameters
    ----------
    {kernel}
    {gamma}
    {degree}
    {coef0}
    {C}
"""
ATTRIBUTES = """
    Attributes
    ----------
    basis_ : ndarray or CSR matrix of shape (m, n_features)
        The support vectors / basis points Z (the training rows for the exact fit; for a
        reduced fit the landmarks independent to float64 precision, in pivot order, so
        possibly fewer than ``n_basis``).
    basis_indices_ : ndarray of shape (m,) or None
        Training rows used as basis points, when they are training rows.
    coef_ : ndarray
        Dual weights beta on the basis: f(x) = sum_j beta_j K(x, z_j) + b. Shape (m,) for
        regression, (1, m) for two classes, (n_classes, m) one-vs-rest.
    intercept_ : float or ndarray of shape (1,) or (n_classes,)
        Bias b.
    gamma_ : float or ndarray
        Kernel width used.
    objective_ : float
        Objective value (summed over one-vs-rest problems).
    n_support_ : int
        Number of basis functions evaluated at prediction (property).
    n_features_in_ : int
"""


#: The fitted attribute of a streamed LSSVR / LSSVC.
_STREAM_ATTRIBUTES = """    n_rows_seen_ : int
        Rows summed so far: those of ``fit`` and of every ``partial_fit`` since (set by
        ``partial_fit`` only).
"""


def lssvm_spec(classifier, extra=None):
    """The fitted attributes of an (exact, reduced or pruned) LS-SVM."""
    head = {**FEATURES, **(CLASSES if classifier else {}), "gamma_": Gamma()}
    # n_rows_seen_ after partial_fit; the stream's moments are not saved, so a loaded model
    # refuses a further partial_fit instead of restarting from one chunk.
    return ClassSpec({**head, "basis_": Basis(), "basis_indices_": Nullable(Indices(("m",))),
                      **(OVR if classifier else SINGLE), "objective_": INFO,
                      "n_rows_seen_": INFO, **(extra or {})},
                     optional=frozenset({"feature_names_in_", "n_rows_seen_"}))


class _FeatureBlocks:
    """Row blocks of the Nystrom features ``fmap.transform(X[rows])``, recomputed per pass
    (the solvers' row-block protocol), for when the n x r features exceed the budget."""

    def __init__(self, fmap, X):
        self.fmap, self.X = fmap, X
        self.block_rows = fmap.kernel.block_rows(X, fmap.Z)
        self.shape = (X.shape[0], fmap.n_components)
        self.dtype = np.result_type(X.dtype, np.float32)

    def __iter__(self):
        n = self.X.shape[0]
        for start in range(0, n, self.block_rows):
            rows = slice(start, min(start + self.block_rows, n))
            yield rows, self.fmap.transform(self.X[rows])


def _feature_rows(fmap, X):
    """The features of X: stored if they fit the kernel's memory budget, else row blocks."""
    nbytes = X.shape[0] * fmap.n_components * np.result_type(X.dtype, np.float32).itemsize
    return fmap.transform(X) if nbytes <= fmap.kernel.memory_budget else _FeatureBlocks(fmap, X)


@dataclass(frozen=True)
class _Moments:
    """Weighted means and centred sums of features F and targets Y over some rows (float64).

    Frozen, and merged into new objects only: ``partial_fit`` builds the next summary beside
    the current one and assigns it when the step has succeeded (``base.fit_transaction``).
    Centred sums merge exactly, without the cancellation that raw sums F^T S F suffer when
    the features have a large mean.
    """

    weight: float  # sum_i s_i
    fbar: np.ndarray  # (r,) weighted feature means
    ybar: np.ndarray  # (k,) weighted target means
    gram: np.ndarray  # (r, r) F_c^T S F_c
    cross: np.ndarray  # (r, k) F_c^T S Y_c
    yy: float  # sum_i s_i ||y_i - ybar||^2

    @classmethod
    def of_rows(cls, F, Y, sw):
        """The summary of one block of rows (dense or CSR F); None if its weights are 0.

        F, Y and sw are NumPy arrays, or arrays of one array-API namespace (a device's,
        ``Y`` and ``sw`` in its widest float): the sums are then computed there and the
        summary stays there, to be merged and solved there (:meth:`merge`,
        :meth:`solution`).
        """
        xp = namespace_of(sw)
        total = float(xp.sum(sw))
        if not total > 0:
            return None
        if xp is np:
            F = np.asarray(F.toarray() if hasattr(F, "toarray") else F, dtype=np.float64)
        else:
            F = xp.astype(F, sw.dtype)
        fbar, ybar = (sw @ F) / total, (sw @ Y) / total
        Fc, Yc = F - fbar, Y - ybar
        FcS = Fc * xp.reshape(sw, (-1, 1))
        return cls(total, fbar, ybar, FcS.T @ Fc, FcS.T @ Yc, float(xp.sum(sw @ (Yc * Yc))))

    def merge(self, other):
        """The summary of both sets of rows (a new object); ``other`` None is no rows."""
        if other is None:
            return self
        weight = self.weight + other.weight
        share, c = other.weight / weight, self.weight * other.weight / weight
        df, dy = other.fbar - self.fbar, other.ybar - self.ybar
        xp = namespace_of(df)  # (NumPy's, or the device's where the sums were made)

        def outer(a, b):
            return xp.reshape(a, (-1, 1)) * xp.reshape(b, (1, -1))

        return _Moments(weight, self.fbar + share * df, self.ybar + share * dy,
                        self.gram + other.gram + c * outer(df, df),
                        self.cross + other.cross + c * outer(df, dy),
                        self.yy + other.yy + c * float(xp.sum(dy * dy)))

    def solution(self, C):
        """The LS-SVM on these rows, as :func:`~sparsekernel.solvers.lssvm_primal` solves it
        (factored where the sums are: the host, or a namespace's device)."""
        A = add_to_diagonal(self.gram, 1.0 / C, copy=True)
        L, jitter = spd_cholesky(A)
        return NormalEquations(self.fbar, self.ybar, A, self.cross, self.yy, L, jitter,
                               float(C)).solution()


def _chunk_moments(F, Y, sw):
    """The :class:`_Moments` of a chunk's features, merged block by block (one pass)."""
    moments = None
    for rows, Fb in as_row_blocks(F):
        block = _Moments.of_rows(Fb, Y[rows], sw[rows])
        moments = block if moments is None else moments.merge(block)
    return moments


def _streamable(est):
    """``available_if`` check of ``partial_fit``: the number of basis functions must be known
    before the rows are (the reason is the cause of the AttributeError)."""
    n_basis = est.n_basis
    if n_basis == "auto" or (isinstance(n_basis, numbers.Integral)
                             and not isinstance(n_basis, bool)):
        return True
    raise ValueError(
        f"{type(est).__name__}.partial_fit needs n_basis an int, or 'auto' (chosen on the "
        f"first chunk); got n_basis={n_basis!r}. The exact LS-SVM (None) solves a system "
        f"over every row at once, and a fraction of the training rows has no n to refer to "
        f"in a stream."
    )


_NO_STREAM_STATE = (
    "{name}.partial_fit continues the normal equations summed by fit or earlier partial_fit "
    "calls, but this model was loaded from a file (or fitted exactly), which keeps no such "
    "sums. Call partial_fit from the first chunk on an unfitted model "
    "(sklearn.base.clone(model)), or fit on all the data."
)


class BaseLSSVM(KernelExpansionMixin, SparseKernelEstimator):
    """Exact or reduced LS-SVM fit of target columns; subclasses turn labels into targets."""

    _parameter_constraints = {**LSSVM_CONSTRAINTS, **BASIS_CONSTRAINTS,
                              "n_basis": [None, *N_BASIS]}
    #: The Nystrom map's six m x m arrays (features.nystrom_map_bytes); the normal
    #: equations (their matrix, factor and the threads' partial sums) need no more.
    _M_SQUARES = 6

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask dataframe} of shape \
(n_samples, n_features)
            A dask collection is fitted where its rows are (reduced fits only;
            :doc:`/distributed`).
        y : array-like or dask array of shape (n_samples,)
            Real targets (regression) or class labels; more than two classes are fitted
            one-vs-rest on one shared kernel factorization (exact) or feature map (reduced).
        sample_weight : array-like or dask array of shape (n_samples,), optional
            Weights ``s_i`` of the squared errors.

        Returns
        -------
        self
        """
        for name in ("_nystrom", "_moments", "_rows_summed", "n_rows_seen_"):  # start over
            self.__dict__.pop(name, None)
        data = fit_input(self, X, y, sample_weight)
        if not data.local and self.n_basis is None:
            raise ValueError(
                f"{type(self).__name__} with n_basis=None is the exact LS-SVM (an n x n "
                "system), which runs on NumPy arrays in memory only: pass n_basis (an int, a "
                "fraction or 'auto') to fit on this input, or NumPy arrays.")
        Y, sw, y_enc = data.targets(self)
        if not data.local:
            res = self._fit_where_rows_are(data, Y, sw)
        elif self.n_basis is None:
            self.gamma_ = resolve_gamma(self.gamma, data.X)
            res = self._fit_exact(data.X, Y, sw)
        else:
            res = self._fit_reduced(data.X, Y, sw, y_enc)
        report_result(self, res)
        return data.finish(fitted(self))

    def _fit_exact(self, X, Y, sw):
        """The exact LS-SVM with the kernel of ``gamma_``: every positive-weight row is a
        basis point (zero-weight rows have alpha = 0, so they stay out of the n x n system)."""
        keep = np.flatnonzero(sw > 0)
        n = len(keep)
        self._check_exact_budget(n, kernel_matrix=8.0 * n * n, system_and_factor=16.0 * n * n,
                                 working_vectors=8.0 * X.shape[0] * (Y.shape[1] + 1))
        Xk = X[keep]
        with fit_step("solve"):
            res = lssvm_dual(self._kernel()(Xk, Xk), Y[keep], self.C, sw[keep])
        self.basis_, self.basis_indices_ = Xk, keep
        self._store(res.coef, res)
        return res

    def _check_exact_budget(self, n, **parts):
        """Refuse an exact fit on n rows whose plan (``parts``, bytes) exceeds the budget
        (:class:`~sparsekernel.utils.MemoryBudgetError`, the rule of every estimator)."""
        MemoryPlan(type(self).__name__, parse_memory_budget(self.memory_budget),
                   **parts).require(
            f"an exact fit on n={n} rows holds the n x n kernel matrix and its Cholesky "
            "factor: pass n_basis (the default 'auto' chooses about 4-10 sqrt(n) basis "
            "functions) for the reduced LS-SVM, or raise memory_budget")

    def _fit_reduced(self, X, Y, sw, y_basis):
        kern, basis = self._fit_kernel_basis(X, y_basis)
        fmap = nystrom_from_basis(kern, basis, "auto", "cholesky")
        with fit_step("solve"):
            eq = lssvm_normal_equations(_feature_rows(fmap, X), Y, self.C, sw)
            res = eq.solution()
        # The same summary partial_fit keeps, so that a later partial_fit continues from it
        # (the system is solved: its matrix becomes the summary's, without the ridge).
        gram = eq.gram
        gram[np.diag_indices_from(gram)] -= 1.0 / self.C
        self._nystrom, self._rows_summed = fmap, X.shape[0]
        self._moments = _Moments(float(sw.sum()), eq.fbar, eq.ybar, gram, eq.rhs, eq.yy)
        self._keep_basis(fmap)
        # f(x) = K(x, Z) M w + b: store the coefficients on K(x, Z) for _raw_decision.
        self._store(fmap.normalization @ res.coef, res)
        return res

    def _fit_where_rows_are(self, data, Y, sw):
        """The reduced LS-SVM of rows on a device or a cluster (:mod:`sparsekernel._input`):
        the basis chosen on a sample (``gamma='scale'`` from all rows), the map fitted on
        X's device or the client, and the features' centred moments that ``partial_fit``
        merges (:class:`_Moments`) summed where the rows are, a block or a chunk at a
        time; the (m+1)-square system is solved on the host. The in-memory model to
        rounding, for the same basis."""
        kern, basis = self._fit_kernel_basis(data.sample, data.y_basis(self),
                                             **data.basis_args)
        fmap = nystrom_from_basis(kern, basis, "auto", "cholesky",
                                  rows=data.basis_args.get("X_device"))
        with data.rows(self, fmap.transform, fmap.n_components,
                       np.result_type(data.sample.dtype, np.float32), store=False,
                       block_rows=kern.block_rows(data.sample, basis.centers)) as rows:
            moments = rows.reduce(_Moments.of_rows, _Moments.merge, Y, sw)
        if moments is None:
            raise ValueError("sample_weight: every weight is 0; no row to fit on.")
        with fit_step("solve"):
            res = moments.solution(self.C)
        self._nystrom, self._moments = fmap, moments
        self._rows_summed = data.n_rows
        self._keep_basis(fmap)
        self._store(to_numpy(fmap.normalization) @ res.coef, res)
        return res

    def _partial_fit(self, X, y, sample_weight, classes=None):
        """One streamed step (module docstring); the first fixes the basis and the map."""
        first = not hasattr(self, "_moments")
        if first and hasattr(self, "coef_"):
            raise ValueError(_NO_STREAM_STATE.format(name=type(self).__name__))
        X, Y, sw, y_enc = fit_data(self, X, y, sample_weight, classes=classes, reset=first)
        if first:
            kern, basis = self._fit_kernel_basis(X, y_enc)
            fmap = nystrom_from_basis(kern, basis, "auto", "cholesky")
        else:
            fmap = self._nystrom
        moments = _chunk_moments(_feature_rows(fmap, X), Y, sw)
        moments = moments if first else self._moments.merge(moments)
        with fit_step("solve"):
            res = moments.solution(self.C)
        # Assigned once the step has succeeded (copy on write, base.fit_transaction).
        self._nystrom, self._moments = fmap, moments
        self._rows_summed = X.shape[0] + (0 if first else self._rows_summed)
        self.n_rows_seen_ = self._rows_summed
        self._keep_basis(fmap)
        self._store(fmap.normalization @ res.coef, res)
        report_result(self, res)
        return fitted(self)

    def _keep_basis(self, fmap):
        """The basis of the reduced model: the landmarks the Cholesky whitening kept (the
        numerically independent ones), their training rows and widths."""
        self.basis_, self.basis_indices_ = fmap.Z, fmap.indices
        self.gamma_ = fmap.kernel.gamma

    def _store(self, coef, res):
        self.coef_ = np.ascontiguousarray(coef.T)
        self.intercept_ = np.atleast_1d(res.intercept)
        self.objective_ = float(res.objective)


def fitted(est):
    """``est``, a regressor's one target column stored as ``coef_`` (m,), float intercept."""
    if not isinstance(est, OneVsRestClassifierMixin):
        est.coef_, est.intercept_ = est.coef_[0, ...], float(est.intercept_[0])
    return est


@fill_doc
class LSSVR(SingleTargetRegressorMixin, BaseLSSVM):
    __doc__ = """Least-squares support vector regression (Suykens), reduced or exact.

    Reduced on ``n_basis`` points, or exact with ``n_basis=None``. It solves

        min_{w, b}  1/2 ||w||^2 + C/2 * sum_i s_i (y_i - f(x_i))^2,    f(x) = w^T phi(x) + b,

    with phi the kernel's feature map (exact fit) or the Nystrom features of the basis
    points (reduced fit, so that ||w||^2 is the RKHS norm of the kernel expansion), s_i the
    sample weights and the bias unpenalized: the LS-SVM family's objective
    (:doc:`/user_guide/lssvm`). A reduced model also learns from a stream of chunks
    (:meth:`partial_fit`).
""" + KERNEL_PARAMS + """    {n_basis}
    {basis}
    {memory_budget}
    {random_state}
    {verbose}
""" + ATTRIBUTES + _STREAM_ATTRIBUTES + """
    See Also
    --------
    LSSVC : The LS-SVM classifier.
    PrunedLSSVR : The exact LS-SVR made sparse by pruning.
    OnlineLSSVR : An LS-SVR on a fixed budget of support vectors, one arrival at a time.
    ReducedSVR : The smooth epsilon-insensitive SVR on a reduced kernel.
    sklearn.kernel_ridge.KernelRidge : Kernel ridge regression (the exact LS-SVR without
        bias).

    References
    ----------
    .. [1] J. A. K. Suykens and J. Vandewalle, "Least squares support vector machine
       classifiers", Neural Processing Letters 9, 293-300, 1999.

    Examples
    --------
    >>> from sparsekernel import LSSVR
    >>> from sparsekernel.datasets import make_sine_regression
    >>> X, y = make_sine_regression(400, noise=0.1, random_state=0)
    >>> reg = LSSVR(gamma=1.0, C=100.0, n_basis=20, random_state=0).fit(X, y)
    >>> reg.n_support_  # the landmarks independent to float64 precision, of 20 drawn
    19
    >>> bool(reg.score(X, y) > 0.9)
    True
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = lssvm_spec(False)

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0, n_basis="auto",
                 basis="random", memory_budget=None, random_state=None, verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.n_basis = n_basis
        self.basis = basis
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose

    @available_if(_streamable)
    @_fit_entry
    def partial_fit(self, X, y, sample_weight=None):
        """Add the chunk (X, y): the model becomes the reduced LS-SVR of every row seen.

        The first call fixes the basis (``n_basis`` points chosen on that chunk by
        ``basis``; an int needs that many rows in it), ``gamma='scale'`` and the Nystrom map.
        Each call adds the chunk to a float64 summary of O(m^2) memory and solves the (m+1)
        normal equations again with the current ``C``, so the model is, up to round-off, the
        batch fit on all rows seen with that basis. ``n_basis=None`` or a fraction has no
        ``partial_fit`` (an AttributeError says why).

        A ``partial_fit`` after ``fit`` continues from the fitted model. A model loaded by
        :func:`sparsekernel.io.load` has no summary (it is private, not saved), so
        ``partial_fit`` refuses it.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Weights ``s_i`` of the squared errors, with a positive sum in every chunk.

        Returns
        -------
        self
        """
        return self._partial_fit(X, y, sample_weight)


@fill_doc
class LSSVC(OneVsRestClassifierMixin, BaseLSSVM):
    __doc__ = """Least-squares support vector classifier (Suykens & Vandewalle 1999).

    Reduced on ``n_basis`` points, or exact with ``n_basis=None``. Each one-vs-rest problem
    (targets y_i = +-1) solves

        min_{w, b}  1/2 ||w||^2 + C/2 * sum_i s_i (y_i - f(x_i))^2,    f(x) = w^T phi(x) + b,

    with phi the kernel's feature map (exact fit) or the Nystrom features of the basis
    points (reduced fit), s_i the sample times the class weight and the bias unpenalized:
    the LS-SVM family's objective (:doc:`/user_guide/lssvm`). There is no
    ``predict_proba``: calibrate ``decision_function`` with
    :class:`sklearn.calibration.CalibratedClassifierCV`, or fit
    :class:`KernelLogisticRegression`.
""" + KERNEL_PARAMS + """    {n_basis}
    {basis}
    {memory_budget}
    {class_weight}
    {random_state}
    {verbose}
""" + ATTRIBUTES + _STREAM_ATTRIBUTES + """    classes_ : ndarray of shape (n_classes,)
        Class labels.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sparsekernel import LSSVC
    >>> X, y = make_moons(300, noise=0.1, random_state=0)
    >>> exact = LSSVC(gamma=2.0, C=10.0, n_basis=None).fit(X, y)
    >>> reduced = LSSVC(gamma=2.0, C=10.0, n_basis=40, random_state=0).fit(X, y)
    >>> exact.n_support_, reduced.n_support_
    (300, 40)

    See Also
    --------
    LSSVR : The LS-SVM regressor.
    PrunedLSSVC : The exact LS-SVM made sparse by pruning.
    LowRankLSSVC : An LS-SVM on a few learned basis functions.
    ReducedSVC : The smooth SVM (squared hinge) on a reduced kernel.
    sklearn.linear_model.RidgeClassifier : The same least-squares loss on explicit features.

    References
    ----------
    .. [1] J. A. K. Suykens and J. Vandewalle, "Least squares support vector machine
       classifiers", Neural Processing Letters 9, 293-300, 1999.
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = lssvm_spec(True)
    _parameter_constraints = {**BaseLSSVM._parameter_constraints,
                              **constraints("class_weight")}

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0, n_basis="auto",
                 basis="random", memory_budget=None, class_weight=None, random_state=None,
                 verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.n_basis = n_basis
        self.basis = basis
        self.memory_budget = memory_budget
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose

    @available_if(_streamable)
    @_fit_entry
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Add the chunk (X, y): the model becomes the reduced LS-SVC of every row seen.

        As :meth:`LSSVR.partial_fit`, on the one-vs-rest +-1 targets of ``classes_``
        (``n_basis=None`` or a fraction has no ``partial_fit``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, optional
            All class labels, read on the first call; required unless the first chunk
            contains every class.
        sample_weight : array-like of shape (n_samples,), optional
            Weights ``s_i``, times the class weight, with a positive sum in every chunk.

        Returns
        -------
        self
        """
        if isinstance(self.class_weight, str):  # 'balanced', the only string allowed
            raise ValueError(
                "class_weight='balanced' weighs the classes by their frequencies in all the "
                "data, which partial_fit never sees at once; pass a dict of class weights."
            )
        return self._partial_fit(X, y, sample_weight, classes)
