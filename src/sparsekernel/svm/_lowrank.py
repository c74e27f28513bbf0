"""LowRankSVC: the low-rank linearized SVM (LLSVM; Zhang, Lan, Wang, Moerchen, AISTATS 2012).

It solves the SVM family's objective (:mod:`sparsekernel.svm._base`), with weights beta, on
the Nystrom features F(x) = K(x, Z) M of k landmarks Z (M as chosen by ``whitening``;
:mod:`sparsekernel.features._nystrom`).

Identity (Proposition 2 of the paper, in this family's scaling). With mu = M beta we have
f(x) = K(x, Z) mu + b and ||beta||^2 = mu^T K(Z, Z) mu, so for the squared hinge LowRankSVC
solves exactly

    min_{mu, b}  1/2 mu^T K(Z, Z) mu + 1/2 b^2 + C/2 * sum_i s_i max(0, 1 - y_i f(x_i))^2,
    f(x) = K(x, Z) mu + b,

the reduced SVM whose regularizer is the RKHS norm of sum_j mu_j k(., z_j) (paper eq. 21):
the SSVM problem (``newton_ovr``, smoothing=inf) on the features K(X, Z) M. It is NOT the
problem ``ReducedSVC`` solves, the same SSVM on K(X, Z) itself, i.e. the Euclidean penalty
1/2 ||mu||^2 (Lee & Mangasarian's simplification); the two coincide only when K(Z, Z) = I.
``tests/test_lowrank.py`` checks both statements.
"""

from __future__ import annotations

import copy
import itertools
import os

import numpy as np
from sklearn.utils import check_array

from .._docs import fill_doc
from .._input import fit_input
from ..base import (
    BASIS_CONSTRAINTS,
    DTYPES,
    KERNEL_CONSTRAINTS,
    KernelExpansionMixin,
    OneVsRestClassifierMixin,
    SparseKernelEstimator,
)
from ..basis._base import BasisResult
from ..features._nystrom import NystromMapMixin, nystrom_from_basis, nystrom_map_spec
from ..solvers import SelectiveBlockMinimization, dual_cd, newton_kernel_bytes
from ..solvers.newton_ovr import newton_ovr_bytes
from ..utils import (
    Interval,
    Options,
    SolverProgress,
    constraints,
    feature_dtype,
    fit_note,
    largest_within,
    log_line,
    plain,
    repeated_rows,
    seed_from,
)
from ..utils.fitted_spec import CLASSES, INFO, Floats
from ._base import kernel_newton, solve_newton
from ._memory import MIN_CHUNK, Budget, budget_holding, lowrank_plan

__all__ = ["LowRankSVC"]

#: Largest training set whose kernel machine 'auto' may solve on every row
#: (:meth:`LowRankSVC._fit_all_rows`): its first Newton system, shared by the classes, is
#: n-square (n^3 / 3 flops: 9e9 at 3,000 rows).
ALL_ROWS_MAX = 3000


def all_rows_bytes(n, k, n_threads):
    """Peak memory of :meth:`LowRankSVC._fit_all_rows`: the solver with its n x n kernel
    (no map follows: the model is the kernel expansion on its support rows)."""
    return newton_kernel_bytes(n, k, n_threads)


@fill_doc
class LowRankSVC(OneVsRestClassifierMixin, NystromMapMixin, KernelExpansionMixin,
                 SparseKernelEstimator):
    """Low-rank linearized SVM: a linear SVM on Nystrom features, in memory or streamed.

    With landmarks Z and a whitening M (M^T K(Z, Z) M = I), each binary problem solves

        min_{beta, b}  1/2 ||beta||^2 + 1/2 b^2 + C/2 * sum_i s_i loss(y_i (beta^T F(x_i) + b)),
        F(x) = M^T K(Z, x),

    with the squared hinge (default) or the hinge as loss: the SVM family's objective
    (:doc:`/user_guide/lowrank`) on the features F. With mu = M beta the model is the
    kernel expansion f(x) = K(x, Z) mu + b and ||beta||^2 = mu^T K(Z, Z) mu, its RKHS norm,
    so with the squared hinge this is exactly the reduced SVM regularized by the RKHS norm
    (the paper's Proposition 2), where :class:`ReducedSVC` penalizes ||mu||^2. The
    k = ``n_basis`` landmarks are k-means centres by
    default (the paper's choice). ``fit`` stores the n x r features when they and the solver
    fit ``memory_budget`` (planned before anything is allocated,
    :doc:`/user_guide/concepts`) and solves every one-vs-rest
    problem together by exact Newton (squared hinge) or each by dual coordinate descent
    (hinge); otherwise (and in ``fit_stream`` / ``partial_fit``) it runs selective block
    minimization over chunks of at most ``chunk_size`` rows (fewer when the budget requires)
    with a retained cache of the rows
    nearest the margin; rows let go keep their exact squared-hinge loss as an m x m summary
    with their active set frozen (``solvers.SelectiveBlockMinimization``, forget='summary'),
    so memory is O((chunk_size + cache) * m + m^2), never O(n * m), and one pass lands close
    to the exact solution. When streaming, ``class_weight='balanced'`` is computed per chunk.
    ``partial_fit`` continues any fitted model, one fitted in memory or loaded included
    (from its weights, with the rows it was fitted on held fixed: :meth:`partial_fit`).

    Small data whose effective dimension is a large share of n (at most ``ALL_ROWS_MAX`` =
    3,000 rows, where ``n_basis='auto'`` would take at least 35 % of them, the squared
    hinge, a basis chosen among or around the rows, and an n x n kernel within
    ``memory_budget``): a reduced basis loses accuracy there (its test error is above both
    the machine on every row and SVC), so ``fit`` solves the kernel machine on every row
    exactly, in the rows' coordinates, and keeps
    as its basis the rows with a nonzero coefficient in some class, a repeated row once with
    its coefficients added, with ``coef_`` their weights in the kernel expansion and no
    whitening (``normalization_`` None, the identity): the same model as a LowRankSVC on
    those landmarks, and its exact optimum.

    Parameters
    ----------
    {kernel}
    {gamma}
    {degree}
    {coef0}
    {C}
    loss : {'squared_hinge', 'hinge'}, default='squared_hinge'
        L2-loss (exactly the RSVM problem, Proposition 2) or L1-loss SVM.
    {n_basis}
    {basis}
    n_passes : int, default=1
        Passes over the data in block minimization (the paper uses one).
    chunk_size : int, default=20000
        Rows per block when arrays are streamed (the paper's 20,000), or fewer when
        ``memory_budget`` allows fewer; the cache holds at most as many rows. An iterable of
        chunks keeps its own chunking: ``fit_stream`` and ``partial_fit`` take the caller's
        chunks as they come, so only ``fit`` plans its memory against the budget.
    drop_fraction : float, default=0.75
        Fraction of the non-support rows of a block that are not retained (the paper's p).
    whitening : {'cholesky', 'eigh'}, default='cholesky'
        How K(Z, Z)^(-1/2) is applied: by the triangular inverse of its pivoted Cholesky
        factor on the independent landmarks (half the flops of the map; redundant landmarks
        are dropped), or by U Lambda^(-1/2) on all landmarks (the paper's Algorithm 1;
        eigenvalues below the floor are dropped). Both give the same model up to the floor.
    {rcond}
    {memory_budget}
    tol : float, default=1e-3
        The squared hinge on stored features (Newton, as ReducedSVC) stops when
        ||grad||_inf <= tol * max(1, ||grad at 0||_inf); at 1e-3 that can leave the
        objective noticeably above its optimum. Lower it when accuracy matters more than
        time: on some data that brings the test error to the optimum's for little more
        fit time, on other data the error stays and the fit takes longer (the exact
        machine on every row, above, ends exactly and needs no tolerance). Dual coordinate
        descent (the hinge, streamed fits) stops at a relative duality gap of ``tol``: the
        objective is within ``tol`` of its optimum. 1e-2 saves passes and can be as
        accurate, but not on noisy data.
    {max_iter}
    {class_weight}
    {random_state}
    {verbose}

    Attributes
    ----------
    basis_ : ndarray of shape (r, n_features)
        Landmarks Z (with Cholesky whitening, the r independent ones, in pivot order; for
        the exact machine on every row, its distinct support rows in row order).
    basis_indices_ : ndarray of shape (r,) or None
        Training rows of the landmarks, when they are training rows.
    normalization_ : ndarray of shape (k, r) or None
        M with features K(X, Z) M: L_r^(-T) (upper triangular, r x r) for Cholesky whitening,
        U Lambda^(-1/2) (eigenvalues below the floor dropped; see NystromFeatures) for 'eigh';
        None for the exact machine on every row (M = I: the features are K(X, Z) itself).
    eigenvalues_ : ndarray of shape (r,) or None
        Kept eigenvalues of K(Z, Z) ('eigh' whitening; None for 'cholesky').
    coef_ : ndarray of shape (1, r) or (n_classes, r)
        beta, the weights on the features K(X, Z) M (with M = I, the kernel expansion's).
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray
    gamma_ : float or ndarray of shape (r,)
    n_iter_ : ndarray of shape (n_problems,)
        Dual coordinate descent passes (summed over blocks when streaming; after a fit in
        memory, ``partial_fit`` counts those of its own steps).
    n_rows_seen_ : int
        Rows of one pass of a completed ``fit_stream`` (or streamed ``fit``), plus those of
        the ``partial_fit`` steps since; absent after a ``fit`` in memory, which records no
        row count: a ``partial_fit`` continuing such a model counts its own rows from zero.
    n_features_in_ : int

    See Also
    --------
    NystromFeatures : The same whitened Nystrom features, as a transformer.
    ReducedSVC : The reduced SVM on K(X, Z) itself (Euclidean penalty on the weights).
    KernelLogisticRegression : Class probabilities on the same features.
    MapReduceSVC : Reduced SVMs fitted on parts of the rows in parallel, then combined.
    sklearn.kernel_approximation.Nystroem : scikit-learn's Nystrom map (random landmarks).
    sklearn.svm.LinearSVC : A linear SVM, for a pipeline after a feature map.
    sklearn.calibration.CalibratedClassifierCV : Probabilities from ``decision_function``
        (this classifier has no ``predict_proba``).

    References
    ----------
    .. [1] K. Zhang, L. Lan, Z. Wang and F. Moerchen, "Scaling up kernel SVM on limited
       resources: A low-rank linearization approach", Proceedings of the 15th
       International Conference on Artificial Intelligence and Statistics (AISTATS), 2012.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sparsekernel import LowRankSVC
    >>> X, y = make_moons(500, noise=0.1, random_state=0)
    >>> clf = LowRankSVC(gamma=2.0, C=10.0, n_basis=30, random_state=0).fit(X, y)
    >>> clf.coef_.shape
    (1, 30)
    >>> bool(clf.score(X, y) > 0.95)
    True

    Streamed in chunks, the model stays close to the one fitted in memory:

    >>> stream = LowRankSVC(gamma=2.0, C=10.0, n_basis=30, random_state=0)
    >>> for rows in (slice(0, 250), slice(250, 500)):
    ...     _ = stream.partial_fit(X[rows], y[rows], classes=[0, 1])
    >>> bool(stream.score(X, y) > 0.95)
    True
    """

    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = nystrom_map_spec(
        {"coef_": Floats(("p", "r")), "intercept_": Floats(("p",)), "n_iter_": INFO,
         "n_rows_seen_": INFO}, head=CLASSES, identity=True, optional=("n_rows_seen_",))
    _parameter_constraints = {
        **KERNEL_CONSTRAINTS,
        **BASIS_CONSTRAINTS,
        **constraints("C", "tol", "max_iter", "class_weight", "verbose"),
        "loss": [Options("squared_hinge", "hinge")],
        "n_passes": [Interval("int", 1, None, closed="left")],
        "chunk_size": [Interval("int", 1, None, closed="left")],
        "drop_fraction": [Interval("real", 0, 1, closed="both")],
        "whitening": [Options("cholesky", "eigh")],
        "rcond": [Options("auto"), Interval("real", 0, 1, closed="left")],
    }

    def __init__(self, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0,
                 loss="squared_hinge", n_basis="auto", basis="kmeans", n_passes=1,
                 chunk_size=20000, drop_fraction=0.75, whitening="cholesky", rcond="auto",
                 memory_budget=None, tol=1e-3, max_iter=1000, class_weight=None,
                 random_state=None, verbose=0):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.loss = loss
        self.n_basis = n_basis
        self.basis = basis
        self.n_passes = n_passes
        self.chunk_size = chunk_size
        self.drop_fraction = drop_fraction
        self.whitening = whitening
        self.rcond = rcond
        self.memory_budget = memory_budget
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------ in memory
    def fit(self, X, y, sample_weight=None):
        """Fit on in-memory data (features stored if they fit ``memory_budget``, else
        blocks), or on a dask collection where its rows are (:doc:`/distributed`).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask dataframe} of shape \
(n_samples, n_features)
            float32 input gives float32 features (faster products), and so does a large
            problem (``n * m**2 >= 1e10``; :func:`sparsekernel.utils.feature_dtype`).
        y : array-like or dask array of shape (n_samples,)
        sample_weight : array-like or dask array of shape (n_samples,), optional

        Returns
        -------
        self
        """
        self.__dict__.pop("_sbm", None)
        self.__dict__.pop("n_rows_seen_", None)
        # Few enough rows for the exact machine on every row (chosen by the fit): a
        # device's rows are fitted on a host copy, the model then moved to the device.
        data = fit_input(self, X, y, sample_weight).on_host(ALL_ROWS_MAX)
        if not data.local and self.loss != "squared_hinge":
            raise ValueError(
                f"LowRankSVC fits {type(X).__name__} input where its rows are with "
                f"loss='squared_hinge' (the Newton solver on the rows' provider); got "
                f"loss={self.loss!r}.")
        Y, sw, y_enc = data.targets(self)
        if data.local:
            fmap = self._plan_in_memory(data.X, Y, sw, y_enc)
            if fmap is None:  # fitted on every row, or streamed
                return data.finish(self)
        else:
            fmap = self._fit_map(data.sample, data.y_basis(self), self.whitening,
                                 planned=True, **data.basis_args)
        squares, gather = self._solver_squares(fmap.n_components, Y.shape[1])
        with data.rows(self, fmap.transform, fmap.n_components, fmap.dtype,
                       squares, gather) as rows:
            self._solve_features(rows, Y, sw)
        return data.finish(self)

    def _plan_in_memory(self, X, Y, sw, y_enc):
        """The memory plan of a fit in memory, and the map when the features are stored
        (None when the fit ended here: the exact machine on every row, or block
        minimization over chunks of as many rows as fit)."""
        (n, k), budget = Y.shape, Budget(self)
        smallest = min(MIN_CHUNK, self.chunk_size, n)

        def itemsize(m):
            return feature_dtype(X.dtype, n, m).itemsize

        def plan(m, chunk=None):
            return lowrank_plan(budget, self, n, m, k, itemsize(m), chunk)

        m_max = budget.check_n_basis(self.n_basis, n, lambda m: plan(m, smallest), plan)
        exact = (self.loss == "squared_hinge" and n <= ALL_ROWS_MAX
                 and all_rows_bytes(n, k, budget.threads) <= budget.bytes)
        kern, res = self._fit_kernel_basis(
            X, y_enc, m_max, n if exact else None, budget_for=lambda m: budget_holding(
                self, lambda b: lowrank_plan(b, self, n, m, k, itemsize(m)).total))
        if res.info.get("all_rows"):
            self._fit_all_rows(X, Y, sw, kern)
            return None
        fmap = self._map_on_basis(kern, res, X, self.whitening, planned=True)
        fmap.kernel.memory_budget = int(budget.kernel)  # the blocks' share of the budget
        m = fmap.n_components
        if plan(m).fits():
            return fmap
        # stream chunks of as many rows as fit (at most chunk_size)
        rows = largest_within(lambda c: plan(m, c).total, budget.bytes, smallest,
                              max(smallest, min(self.chunk_size, n))) or smallest
        self._stream_fit(lambda: _row_chunks(rows, X, Y, sw), fmap, rows)
        return None

    def _solver_squares(self, m, k):
        """``(bytes, gather_bytes)``: newton_ovr's squares and gathers (its memory without
        the per-row arrays, which stay with the rows), and one gather's bytes."""
        budget = Budget(self)
        gather = budget.gather(m)
        return newton_ovr_bytes(0, m, k, budget.threads, budget.hessians, gather), gather

    def _fit_all_rows(self, X, Y, sw, kern):
        """The kernel machine on every row, solved in the rows' coordinates
        (:func:`~sparsekernel.solvers.newton_kernel.newton_kernel`), stored on its support:
        at the optimum the coefficients vanish outside the rows inside some problem's
        margin, so ``f(x) = K(x, S) a_S + b`` with those rows S as the basis and a_S as
        ``coef_`` on the identity map (``normalization_`` None). No whitening is computed:
        the model needs none, and the support's pivoted Cholesky and its inverse (a
        Nystrom map on S) were a large share of a small fit's time and of the saved
        model."""
        K = np.asarray(kern(X, X), dtype=np.float64)
        results = kernel_newton(self, K, Y, sw, self._problem_labels)
        del K
        A = np.column_stack([r.coef for r in results])
        support = np.flatnonzero((A != 0).any(axis=1))
        if not support.size:  # every problem at a = 0: a constant model on one row
            support = np.arange(1)
        # A repeated row is one basis function: its coefficients are added onto its first
        # occurrence.
        first, group = repeated_rows(X[support])
        self.basis_indices_ = support[first]
        self.basis_ = X[self.basis_indices_]
        # 'auto' announced every row; say what the model evaluates.
        fit_note("kept its support rows as the basis",
                 {"m": len(self.basis_indices_), "of": X.shape[0]})
        self.normalization_, self.eigenvalues_ = None, None
        self.coef_ = np.array([np.bincount(group, weights=A[support, j], minlength=len(first))
                               for j in range(A.shape[1])])
        self.intercept_ = np.array([r.intercept for r in results])
        self.n_iter_ = np.array([r.n_iter for r in results])
        return self

    def _solve_features(self, F, Y, sw):
        """Every problem on the features F (stored, or a provider of them): jointly by
        exact Newton (squared hinge), or each by dual coordinate descent (hinge, stored F)."""
        if self.loss == "squared_hinge":
            self.coef_, self.intercept_, self.n_iter_, _ = solve_newton(
                self, F, Y, sw, self._problem_labels, Budget(self))
            return
        k = Y.shape[1]
        rng = np.random.default_rng(seed_from(self.random_state))

        def solve(j, callback):
            return dual_cd(F, np.ascontiguousarray(Y[:, j]), self.C, loss=self.loss,
                           sample_weight=sw, tol=self.tol, max_iter=self.max_iter,
                           random_state=int(rng.integers(2**31)), callback=callback)

        results = self._solve_each(k, solve, self._problem_labels)
        self.coef_, self.intercept_ = np.zeros((k, F.shape[1])), np.zeros(k)
        self.n_iter_ = np.zeros(k, dtype=int)
        for j, res in enumerate(results):
            self.coef_[j], self.intercept_[j], self.n_iter_[j] = (res.coef, res.intercept,
                                                                  res.n_iter)

    # -------------------------------------------------------------- streams
    def _new_solver(self, fmap, cache_size=None, frozen=None):
        return SelectiveBlockMinimization(
            fmap.n_components, self._n_problems, self.C, self.loss,
            cache_size=cache_size or self.chunk_size, drop_fraction=self.drop_fraction,
            tol=self.tol, max_iter=self.max_iter, store=self.n_passes > 1,
            random_state=seed_from(self.random_state), frozen=frozen)

    def _stream_fit(self, make_chunks, fmap, cache_size=None):
        """Block minimization over ``n_passes`` passes of ``make_chunks()`` -> (X, Y, sw),
        retaining at most ``cache_size`` rows (default ``chunk_size``) between chunks."""
        sbm = self._new_solver(fmap, cache_size)
        with SolverProgress(self.verbose, self.n_passes, type(self).__name__, task="stream",
                            unit="pass", step="chunk") as progress:
            report = progress.callback(None)
            for p in range(self.n_passes):
                n_rows = self._stream_pass(sbm, fmap, make_chunks(), p, report)
                progress.done()
        log_line(self.verbose, type(self).__name__, "streamed",
                 {"passes": self.n_passes, "rows": n_rows, "n_iter": int(sbm.n_iter.max())})
        self._sbm, self.n_rows_seen_ = sbm, n_rows
        self._store_solution(sbm)
        return self

    @staticmethod
    def _stream_pass(sbm, fmap, chunks, p, report):
        """Feed one pass of chunks to the block solver; returns the rows seen."""
        start = 0
        for X, Y, sw in chunks:
            ids = np.arange(start, start + len(Y))
            start += len(Y)
            sbm.step(fmap.transform(X), Y, sw, ids)
            if report is not None:
                report({"n_iter": int(sbm.n_iter.max()), "pass": p, "rows": start})
        return start

    def _store_solution(self, sbm):
        self.coef_, self.intercept_ = sbm.coef, sbm.intercept
        self.n_iter_ = sbm.n_iter.copy()

    def fit_stream(self, source, *, classes=None):
        """Fit by selective block minimization on data that need not fit in memory.

        The landmarks (and gamma='scale') are chosen on the first chunk; then every chunk,
        the first included, is mapped to Nystrom features and fed to the block solver.

        Parameters
        ----------
        source : (X, y[, sample_weight]) tuple, or iterable of (X, y[, sample_weight]) chunks
            Arrays (or ``np.memmap``, read only when sliced) are cut into ``chunk_size``
            rows. An iterable (a list, a generator, a
            :class:`~sparsekernel.datasets.SvmlightChunks`) yields chunks of its own size;
            with ``n_passes > 1`` it must be re-iterable (not a one-shot iterator).
        classes : array-like, optional
            All class labels; default: the labels of the first chunk.

        Returns
        -------
        self

        Examples
        --------
        >>> from sparsekernel.datasets import SvmlightChunks
        >>> chunks = SvmlightChunks("huge.libsvm", chunk_size=20000)  # doctest: +SKIP
        >>> clf = LowRankSVC(n_basis=1000, n_passes=2).fit_stream(chunks)  # doctest: +SKIP
        """
        self.__dict__.pop("_sbm", None)
        self.__dict__.pop("n_features_in_", None)
        make_chunks = self._chunk_source(source)
        chunks = iter(make_chunks())
        first = next(chunks, None)
        if first is None:
            raise ValueError("The stream is empty: no chunk to fit on.")
        X0, y0, _ = self._check_chunk(*first)
        self._set_classes(y0, classes)
        self.n_features_in_ = X0.shape[1]
        fmap = self._fit_map(X0, self._encode(y0), self.whitening)
        del X0, y0
        # The first pass continues the iterator already opened (a one-shot iterator cannot
        # be restarted, and a file need not be reopened); later passes start over.
        passes = [self._validated(itertools.chain([first], chunks))]
        del first
        return self._stream_fit(
            lambda: passes.pop() if passes else self._validated(make_chunks()), fmap)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One block-minimization step on the chunk (X, y), continuing the fitted model.

        On an unfitted model the first call chooses the landmarks and the map on its chunk.
        Later calls continue the block minimization of the earlier ``partial_fit`` calls or
        of ``fit_stream`` (or of a ``fit`` that streamed). A model fitted in memory by
        ``fit``, or loaded by :func:`sparsekernel.io.load`, keeps no block-minimization
        state, but at its optimum its weights are the sum alpha_i y_i [F_i, 1] over its rows
        (KKT), so the solver starts from [``coef_``, ``intercept_``] with those rows' duals
        frozen (``SelectiveBlockMinimization(frozen=...)``): the chunk is optimized against
        the fitted rows rather than in their place, and a chunk of rows all outside the
        margin leaves the model unchanged. The fitted rows do not react to the chunk (their
        duals stay fixed), so a small chunk moves the model further than a fit on all the
        rows would.

        The exact machine on every row (``normalization_`` None) is a kernel expansion
        f(x) = K(x, S) a + b on its support S with the penalty a^T K(S, S) a, not the
        Euclidean norm of a linear model on K(x, S). Before its first step it is therefore
        expressed on the whitened Nystrom map of S (``whitening``, ``rcond``), with weights
        w = M^T K(Z, S) a: then ||w||^2 = a^T K(S, S) a and the features' predictions are
        those of the expansion (up to the map's eigenvalue floor, which drops directions
        carrying nothing). ``basis_``, ``normalization_`` and the other map attributes
        change accordingly, once the step has succeeded.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels among ``classes_`` once the model is fitted (another label raises).
        classes : array-like, optional
            All class labels; required unless the first chunk contains every class. On a
            fitted model it may only repeat ``classes_``.
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        fitted = hasattr(self, "coef_")
        if fitted and classes is not None:
            given = np.unique(np.asarray(classes))
            if not np.array_equal(given, self.classes_):
                raise ValueError(
                    f"classes={[plain(c) for c in given]} differs from the classes "
                    f"{[plain(c) for c in self.classes_]} of the fitted model; partial_fit "
                    "continues that model and cannot change its classes."
                )
        X, y_enc, Y, sw = self._classifier_data(X, y, sample_weight, classes=classes,
                                                reset=not fitted)
        fitted_map = None
        if not fitted:
            sbm, n_rows = self._new_solver(self._fit_map(X, y_enc, self.whitening)), 0
            fmap = self._map()
        elif hasattr(self, "_sbm"):
            # Copy on write (base.fit_transaction): a failed step leaves _sbm as it was.
            sbm, n_rows, fmap = copy.deepcopy(self._sbm), self.n_rows_seen_, self._map()
        else:  # fitted in memory or loaded: start from its weights, nothing changed yet
            fmap, W, fitted_map = self._continuation()
            sbm = self._new_solver(fmap, frozen=np.column_stack([W, self.intercept_]))
            n_rows = getattr(self, "n_rows_seen_", 0)
        sbm.step(fmap.transform(X), Y, sw)
        if fitted_map is not None:
            vars(self).update(fitted_map)
        self._sbm, self.n_rows_seen_ = sbm, n_rows + X.shape[0]
        self._store_solution(sbm)
        return self

    def _continuation(self):
        """``(fmap, W, attributes)``: the map and the weights (one row per problem) that
        the fitted model has on its features, and the map's fitted attributes to set once
        a step from them has succeeded (None when the map is the model's own).

        On the identity map (the exact machine, ``normalization_`` None) the model is
        re-expressed on the whitened map of its basis S (:meth:`partial_fit`): with
        features K(x, Z) M, Z the landmarks the whitening keeps, M M^T the (pseudo)inverse
        of K(Z, Z) and w = M^T K(Z, S) a, the features' f(x) = K(x, Z) M M^T K(Z, S) a is
        the projection of sum_j a_j k(., s_j) onto the span of the k(., z): the expansion
        itself when Z = S, and within the whitening's floor otherwise (a landmark dropped
        is in the span of the others to that accuracy). ``||w||^2 = a^T K(S, Z) M M^T
        K(Z, S) a`` is likewise the RKHS norm a^T K(S, S) a of the expansion.
        """
        if self.normalization_ is not None:
            return self._map(), np.atleast_2d(self.coef_), None
        S, kern = self.basis_, self._kernel()
        fmap = nystrom_from_basis(kern, BasisResult(S, self.basis_indices_), self.rcond,
                                  self.whitening)
        K_ZS = np.asarray(kern(fmap.Z.astype(np.float64), S.astype(np.float64)),
                          dtype=np.float64)
        W = (fmap.normalization.T @ (K_ZS @ np.atleast_2d(self.coef_).T)).T
        attributes = {"basis_": fmap.Z, "basis_indices_": fmap.indices,
                      "gamma_": fmap.kernel.gamma, "normalization_": fmap.normalization,
                      "eigenvalues_": fmap.eigenvalues}
        return fmap, W, attributes

    # ---------------------------------------------------------- chunk input
    def _chunk_source(self, source):
        """A function returning a fresh iterator of raw (X, y[, sw]) chunks."""
        if isinstance(source, str | bytes | os.PathLike):
            raise TypeError(
                f"fit_stream takes arrays or an iterable of chunks, not a path ({source!r}); "
                "stream a LIBSVM file with sparsekernel.datasets.SvmlightChunks(path, "
                "chunk_size)."
            )
        if isinstance(source, tuple) and len(source) in (2, 3) and hasattr(source[0], "shape"):
            X, y, sw = (*source, None)[:3]
            y = np.asarray(y)
            return lambda: _row_chunks(self.chunk_size, X, y, sw)
        if self.n_passes > 1 and iter(source) is source:
            raise ValueError(
                f"n_passes={self.n_passes} needs a re-iterable source (arrays, a list of "
                "chunks or an object such as datasets.SvmlightChunks); got a one-shot "
                "iterator."
            )
        return lambda: iter(source)

    def _check_chunk(self, X, y, sw=None):
        X = check_array(X, accept_sparse="csr", dtype=DTYPES, input_name="X")
        if hasattr(self, "n_features_in_") and X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        y = np.asarray(y)
        if y.shape != (X.shape[0],):
            raise ValueError(f"A chunk has {X.shape[0]} rows but {y.shape} labels.")
        return X, y, sw

    def _validated(self, chunks):
        """(X, Y, sw) from raw chunks: checked, +-1 targets, sample times class weights."""
        for chunk in chunks:
            X, y, sw = self._check_chunk(*chunk)
            yield X, self._targets(self._encode(y)), self._weights(y, sw)


def _row_chunks(chunk_size, X, *others):
    """Row slices of X and of the arrays ``others`` (None stays None); memmaps are read
    only when sliced."""
    for start in range(0, X.shape[0], chunk_size):
        rows = slice(start, start + chunk_size)
        yield (X[rows], *(None if a is None else a[rows] for a in others))
