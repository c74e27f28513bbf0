"""LowRankSVC: the low-rank linearized SVM (LLSVM; Zhang, Lan, Wang, Moerchen, AISTATS 2012).

Objective per binary sub-problem (the SVM family's; ``C`` means the same everywhere)::

    min_{beta, b}  1/2 ||beta||^2 + 1/2 b^2 + C/2 * sum_i s_i * loss_i,   f(x) = F(x) beta + b

    F(x) = K(x, Z) M,   M = U Lambda^(-1/2),   K(Z, Z) = U Lambda U^T   (Nystrom features)

or, with ``whitening='cholesky'`` (the default), M = L_r^(-T) from the pivoted Cholesky
factorization of K(Z, Z), on the r <= k landmarks that are numerically independent (the
others are in their span to within the eigenvalue floor and are dropped from ``basis_``): the
same features up to a rotation, which the rotation-invariant penalty ||beta||^2 does not see,
at half the cost of the map (features/_nystrom.py).

Identity (Proposition 2 of the paper, in this family's scaling). With mu = M beta we have
f(x) = K(x, Z) mu + b and ||beta||^2 = mu^T K(Z, Z) mu, so for the squared hinge LowRankSVC
solves exactly

    min_{mu, b}  1/2 mu^T K(Z, Z) mu + 1/2 b^2 + C/2 * sum_i s_i max(0, 1 - y_i f(x_i))^2,
    f(x) = K(x, Z) mu + b,

the reduced SVM whose regularizer is the RKHS norm of sum_j mu_j k(., z_j) (paper eq. 21).
Equivalently: it is the foundation's SSVM problem (``newton_armijo`` with the exact squared
hinge, smoothing=inf) on the features K(X, Z) M. It is NOT the problem ``ReducedSVC``
solves, which is that same SSVM problem on the features K(X, Z) themselves, i.e. the
Euclidean penalty 1/2 ||mu||^2 (Lee & Mangasarian's simplification); the two coincide only
when K(Z, Z) = I. ``tests/test_lowrank.py`` checks both statements. For C in LIBLINEAR's or
``LinearSVC``'s scaling on the same features: ``C = 2 * C_liblinear``.
"""

from __future__ import annotations

import itertools
import numbers
import os
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_array
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..features import NystromMap, fit_nystrom_map
from ..features._reduced import BASIS_CONSTRAINTS, KERNEL_CONSTRAINTS
from ..kernels import Kernel
from ..kernels._functions import working_dtype
from ..solvers import SelectiveBlockMinimization, dual_cd
from ..utils import (
    Interval,
    Options,
    SolverProgress,
    check_sample_weight,
    parse_memory_budget,
    plain,
    validate_params,
)

__all__ = ["LowRankSVC"]

_DTYPES = [np.float64, np.float32]


class LowRankSVC(ClassifierMixin, BaseEstimator):
    """Low-rank linearized SVM: a linear SVM on Nystrom features, in memory or streamed.

    See the module docstring for the objective and its exact identity with the reduced SVM
    with RKHS regularizer (Proposition 2). ``fit`` stores the n x r features when they fit
    ``memory_budget`` and solves each one-vs-rest problem by dual coordinate descent to
    ``tol``; otherwise (and in ``fit_stream`` / ``partial_fit``) it runs selective block
    minimization over chunks of ``chunk_size`` rows with a retained cache of the rows
    nearest the margin; rows let go keep their exact squared-hinge loss as an m x m summary
    with their active set frozen (``solvers.SelectiveBlockMinimization``, forget='summary'),
    so memory is O((chunk_size + cache) * m + m^2), never O(n * m), and one pass lands close
    to the exact solution.

    Parameters
    ----------
    kernel : {'rbf', 'laplacian', 'polynomial', 'linear', 'sigmoid'}, default='rbf'
    gamma : 'scale', 'auto' or float, default='scale'
        As in scikit-learn's SVC ('scale' is resolved on the data that choose the landmarks).
    degree : int, default=3
    coef0 : float, default=0.0
    C : float, default=1.0
        Loss weight of the SVM family (``C = 2 * C_liblinear``).
    loss : {'squared_hinge', 'hinge'}, default='squared_hinge'
        L2-loss (exactly the RSVM problem, Proposition 2) or L1-loss SVM.
    n_basis : 'auto', int or float, default='auto'
        Number of landmarks k: an int, a fraction of n, or 'auto' = min(n, 1000).
    basis : {'kmeans', 'random'}, array-like or BasisSelector, default='kmeans'
        Landmarks: k-means centroids of a subsample (the paper's choice), random training
        rows, or an explicit array.
    n_passes : int, default=1
        Passes over the data in block minimization (the paper uses one).
    chunk_size : int, default=20000
        Rows per block (the paper's 20,000); the cache holds at most as many.
    drop_fraction : float, default=0.75
        Fraction of the non-support rows of a block that are not retained (the paper's p).
    whitening : {'cholesky', 'eigh'}, default='cholesky'
        How K(Z, Z)^(-1/2) is applied: by the triangular inverse of its pivoted Cholesky
        factor on the independent landmarks (half the flops of the map; redundant landmarks
        are dropped), or by U Lambda^(-1/2) on all landmarks (the paper's Algorithm 1;
        eigenvalues below the floor are dropped). Both give the same model up to the floor.
    memory_budget : int, str or None, default=None
        Bytes for kernel blocks and for storing the n x r features in ``fit`` (None: 1 GiB).
    tol : float, default=1e-3
        Relative duality gap of every dual coordinate descent solve: the objective is within
        ``tol`` of its optimum. 1e-2 saves a third of the passes and was as accurate on ijcnn1
        (1.325 % against 1.318 % test error at k = 1000) but not on the noisy checkerboard
        (100k rows, k = 1000: 1.85 % against 1.33 %).
    max_iter : int, default=1000
        Passes of dual coordinate descent per (sub-)problem.
    class_weight : dict, 'balanced' or None, default=None
    random_state : int, RandomState or None, default=None
        Seeds landmark selection and the coordinate order.
    verbose : int, default=0

    Attributes
    ----------
    basis_ : ndarray of shape (k, n_features)
        Landmarks Z (with Cholesky whitening, the r independent ones, in pivot order).
    basis_indices_ : ndarray or None
    normalization_ : ndarray of shape (k, r)
        M with features K(X, Z) M: L_r^(-T) (upper triangular, r x r) for Cholesky whitening,
        U Lambda^(-1/2) (eigenvalues below the floor dropped; see NystromFeatures) for 'eigh'.
    eigenvalues_ : ndarray of shape (r,) or None
        Kept eigenvalues of K(Z, Z) ('eigh' whitening; None for 'cholesky').
    coef_ : ndarray of shape (1, r) or (n_classes, r)
        beta, the weights on the Nystrom features.
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray
    gamma_ : float
    n_iter_ : ndarray of shape (n_problems,)
        Dual coordinate descent passes (summed over blocks when streaming).
    n_features_in_ : int
    """

    _parameter_constraints = {
        **KERNEL_CONSTRAINTS,
        **BASIS_CONSTRAINTS,
        "C": [Interval("real", 0, None, closed="neither")],
        "loss": [Options("squared_hinge", "hinge")],
        "n_passes": [Interval("int", 1, None, closed="left")],
        "chunk_size": [Interval("int", 1, None, closed="left")],
        "drop_fraction": [Interval("real", 0, 1, closed="both")],
        "whitening": [Options("cholesky", "eigh")],
        "tol": [Interval("real", 0, None, closed="neither")],
        "max_iter": [Interval("int", 1, None, closed="left")],
        "class_weight": [None, Options("balanced"), "dict"],
        "verbose": [Interval("int", 0, None, closed="left"), "boolean"],
    }
    rcond = "auto"  # the feature map's eigenvalue floor (NystromFeatures documents it)

    def __init__(self, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0,
                 loss="squared_hinge", n_basis="auto", basis="kmeans", n_passes=1,
                 chunk_size=20000, drop_fraction=0.75, whitening="cholesky", memory_budget=None,
                 tol=1e-3, max_iter=1000, class_weight=None, random_state=None, verbose=0):
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
        self.memory_budget = memory_budget
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose

    # ----------------------------------------------------------------- set-up
    def _check_params(self):
        validate_params(type(self).__name__, self._parameter_constraints, self.get_params(False))
        parse_memory_budget(self.memory_budget)

    def _set_classes(self, y, classes=None):
        check_classification_targets(y)
        self.classes_ = np.unique(y) if classes is None else np.unique(np.asarray(classes))
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes; got 1 class "
                f"({plain(self.classes_[0])!r})."
            )

    def _targets(self, y):
        """(n, n_problems) matrix of +-1 targets; unknown labels raise."""
        idx = np.searchsorted(self.classes_, y)
        idx = np.minimum(idx, len(self.classes_) - 1)
        bad = self.classes_[idx] != y
        if np.any(bad):
            raise ValueError(
                f"Label {plain(np.asarray(y)[bad][0])!r} is not one of the classes "
                f"{[plain(c) for c in self.classes_]} fixed by the first chunk or `classes`."
            )
        if len(self.classes_) == 2:
            return np.where(idx == 1, 1.0, -1.0)[:, None]
        return np.where(idx[:, None] == np.arange(len(self.classes_)), 1.0, -1.0)

    def _weights(self, y, sample_weight):
        sw = check_sample_weight(sample_weight, len(y))
        if self.class_weight is not None:  # 'balanced' is computed per chunk when streaming
            sw = sw * compute_sample_weight(self.class_weight, y)
        return sw

    def _build_map(self, X, y_basis):
        fmap = fit_nystrom_map(self, X, y_basis, self.whitening)
        self.basis_, self.normalization_ = fmap.Z, fmap.normalization
        self.eigenvalues_ = fmap.eigenvalues
        return fmap

    def _kernel(self):
        return Kernel(self.kernel, gamma=self.gamma_, degree=self.degree, coef0=self.coef0,
                      memory_budget=self.memory_budget)

    def _map(self):
        return NystromMap(self._kernel(), self.basis_, self.normalization_, self.eigenvalues_,
                          triangular=self.eigenvalues_ is None)  # Cholesky: M = L^(-T)

    def _n_problems(self):
        return 1 if len(self.classes_) == 2 else len(self.classes_)

    # -------------------------------------------------------------- in memory
    def fit(self, X, y, sample_weight=None):
        """Fit on in-memory data (features stored if they fit ``memory_budget``, else blocks).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            float32 input gives float32 features (twice as fast).
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        self._check_params()
        self.__dict__.pop("_sbm", None)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=_DTYPES)
        self._set_classes(y)
        sw = self._weights(y, sample_weight)
        Y = self._targets(y)
        fmap = self._build_map(X, np.searchsorted(self.classes_, y))
        r, n = fmap.n_components, X.shape[0]
        if n * r * working_dtype(X, fmap.Z).itemsize <= parse_memory_budget(self.memory_budget):
            self._solve_in_memory(fmap.transform(X), Y, sw)
        else:
            self._stream_fit(lambda: _array_chunks(X, y, sw, self.chunk_size), fmap)
        return self

    def _solve_in_memory(self, F, Y, sw):
        k = Y.shape[1]
        self.coef_ = np.zeros((k, F.shape[1]))
        self.intercept_ = np.zeros(k)
        self.n_iter_ = np.zeros(k, dtype=int)
        rng = np.random.default_rng(_seed(self.random_state))
        with SolverProgress(self.verbose, k, type(self).__name__) as progress:
            for j in range(k):
                res = dual_cd(F, np.ascontiguousarray(Y[:, j]), self.C, loss=self.loss,
                              sample_weight=sw, tol=self.tol, max_iter=self.max_iter,
                              random_state=rng.integers(2**31),
                              callback=progress.callback(None if k == 1 else self.classes_[j]))
                progress.done()
                self.coef_[j], self.intercept_[j], self.n_iter_[j] = (res.coef, res.intercept,
                                                                      res.n_iter)
                if self._report(res, j):
                    break

    def _report(self, res, j):
        where = "" if self._n_problems() == 1 else f" for class {plain(self.classes_[j])!r}"
        if res.status == "interrupted":
            warnings.warn(f"{type(self).__name__} fit interrupted{where}: {res.message}",
                          UserWarning, stacklevel=4)
            return True
        if not res.converged:
            warnings.warn(f"{type(self).__name__} did not converge{where}: {res.message}",
                          ConvergenceWarning, stacklevel=4)
        return False

    # ---------------------------------------------------------------- streams
    def _new_solver(self, fmap):
        return SelectiveBlockMinimization(
            fmap.n_components, self._n_problems(), self.C, self.loss,
            cache_size=self.chunk_size, drop_fraction=self.drop_fraction, tol=self.tol,
            max_iter=self.max_iter, store=self.n_passes > 1,
            random_state=_seed(self.random_state))

    def _stream_fit(self, make_chunks, fmap):
        """Block minimization over ``n_passes`` passes of ``make_chunks()``."""
        sbm = self._new_solver(fmap)
        self.n_rows_seen_ = 0
        with SolverProgress(self.verbose, self.n_passes, type(self).__name__) as progress:
            report = progress.callback(None)
            try:
                for p in range(self.n_passes):
                    start = 0
                    for X, y, sw in make_chunks():
                        ids = np.arange(start, start + len(y))
                        start += len(y)
                        self._feed(sbm, fmap, X, y, sw, ids)
                        if report is not None:
                            report({"n_iter": int(sbm.n_iter.max()), "grad_norm": np.nan,
                                    "pass": p, "rows": start})
                    self.n_rows_seen_ = start
                    progress.done()
            except KeyboardInterrupt:
                warnings.warn(f"{type(self).__name__} fit interrupted after "
                              f"{sbm.n_rows_seen} rows; the model is the one reached so far.",
                              UserWarning, stacklevel=3)
        self._store_solution(sbm)
        self._sbm = sbm
        return self

    def _feed(self, sbm, fmap, X, y, sw, ids=None):
        F = fmap.transform(X)
        sbm.step(F, self._targets(y), sw, ids)

    def _store_solution(self, sbm):
        self.coef_, self.intercept_ = sbm.coef, sbm.intercept
        self.n_iter_ = sbm.n_iter.copy()

    def fit_stream(self, source, *, classes=None, n_features=None, dtype=np.float64):
        """Fit by selective block minimization on data that need not fit in memory.

        The landmarks (and gamma='scale') are chosen on the first chunk; then every chunk,
        the first included, is mapped to Nystrom features and fed to the block solver.

        Parameters
        ----------
        source : path, (X, y[, sample_weight]) tuple, or iterable of (X, y[, sw]) chunks
            A LIBSVM/svmlight file (read ``chunk_size`` lines at a time, optionally
            compressed), arrays or ``np.memmap`` sliced ``chunk_size`` rows at a time, or an
            iterable of chunks. With ``n_passes > 1`` an iterable must be re-iterable (a
            list, or an object whose ``__iter__`` starts over), not a one-shot iterator.
        classes : array-like, optional
            All class labels; default: the labels of the first chunk.
        n_features : int, optional
            Columns of a LIBSVM file (default: the largest index of its first chunk).
        dtype : {np.float64, np.float32}, default=np.float64
            Dtype in which a LIBSVM file is read (float32 halves feature memory and time).

        Returns
        -------
        self
        """
        self._check_params()
        self.__dict__.pop("_sbm", None)
        self.__dict__.pop("n_features_in_", None)
        make_chunks = self._chunk_source(source, n_features, dtype)
        chunks = iter(make_chunks())
        first = next(chunks, None)
        if first is None:
            raise ValueError("The stream is empty: no chunk to fit on.")
        X0, y0, _ = first
        self._set_classes(y0, classes)
        self.n_features_in_ = X0.shape[1]
        fmap = self._build_map(X0, np.searchsorted(self.classes_, y0))
        del X0, y0
        # The first pass continues the iterator already opened (a one-shot iterator cannot
        # be restarted, and a file need not be reopened); later passes start over.
        passes = [itertools.chain([first], chunks)]
        del first
        return self._stream_fit(lambda: passes.pop() if passes else make_chunks(), fmap)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One block-minimization step on the chunk (X, y); the first call fixes the map.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, optional
            All class labels; required unless the first chunk contains every class.
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        first = not hasattr(self, "_sbm")
        if first:
            self._check_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=_DTYPES, reset=first)
        if first:
            self._set_classes(y, classes)
            fmap = self._build_map(X, np.searchsorted(self.classes_, y))
            self._sbm = self._new_solver(fmap)
            self.n_rows_seen_ = 0
        self._feed(self._sbm, self._map(), X, y, self._weights(y, sample_weight))
        self.n_rows_seen_ += X.shape[0]
        self._store_solution(self._sbm)
        return self

    def _chunk_source(self, source, n_features, dtype):
        """A function returning a fresh iterator of validated (X, y, sw) chunks."""
        if isinstance(source, str | os.PathLike):
            from ..datasets._svmlight import iter_svmlight_chunks

            def from_file():
                for X, y in iter_svmlight_chunks(source, self.chunk_size, n_features, dtype):
                    yield self._check_chunk(X, y, None)
            return from_file
        if isinstance(source, tuple) and len(source) in (2, 3) and hasattr(source[0], "shape"):
            X, y, sw = (*source, None)[:3]
            y = np.asarray(y)
            return lambda: (self._check_chunk(*c) for c in _array_chunks(X, y, sw,
                                                                         self.chunk_size))
        if self.n_passes > 1 and iter(source) is source:
            raise ValueError(
                f"n_passes={self.n_passes} needs a re-iterable source (a list of chunks, "
                "arrays or a file path); got a one-shot iterator."
            )
        return lambda: (self._check_chunk(*c) for c in source)

    def _check_chunk(self, X, y, sw=None):
        X = check_array(X, accept_sparse="csr", dtype=_DTYPES, input_name="X")
        if hasattr(self, "n_features_in_") and X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        y = np.asarray(y)
        if y.shape != (X.shape[0],):
            raise ValueError(f"A chunk has {X.shape[0]} rows but {y.shape} labels.")
        return X, y, self._weights(y, sw)

    # ------------------------------------------------------------- prediction
    def decision_function(self, X):
        """Scores K(X, Z) (M beta^T) + b: shape (n,) for two classes, (n, n_classes) otherwise.

        The k x n_problems product M beta^T is formed first, so prediction costs O(n k d +
        n k) per class: the paper's reduced-SVM form mu = U Lambda^(-1/2) beta.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=_DTYPES, reset=False)
        mu = self.normalization_ @ np.atleast_2d(self.coef_).T
        Z = self.basis_.astype(X.dtype, copy=False)
        scores = self._kernel().apply(X, Z, mu) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class labels: the sign for two classes, the largest one-vs-rest score otherwise."""
        scores = self.decision_function(X)
        idx = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[idx]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _seed(random_state):
    """An int seed for NumPy Generators from a scikit-learn style random_state."""
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**31))
    return int(time.time_ns() % 2**31) if random_state is None else None


def _array_chunks(X, y, sw, chunk_size):
    """Row slices of (X, y, sw); slices of a memmap are read only when used."""
    for start in range(0, X.shape[0], chunk_size):
        rows = slice(start, start + chunk_size)
        yield X[rows], y[rows], None if sw is None else sw[rows]
