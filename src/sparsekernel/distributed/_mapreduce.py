"""MapReduceSVC: the MapReduce reduced SVM (MRRSVM) of Yeh, Huang, Pao & Lee, section 5."""

from __future__ import annotations

import contextlib
import numbers
import operator
import os
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg import block_diag
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from .._docs import fill_doc
from ..base import (
    DTYPES,
    KERNEL_CONSTRAINTS,
    N_BASIS,
    KernelExpansionMixin,
    OneVsRestClassifierMixin,
    SparseKernelEstimator,
)
from ..basis import BasisSelector, resolve_n_basis
from ..kernels import resolve_gamma
from ..solvers import SquaredSmoothHinge
from ..svm._base import solve_newton
from ..svm._memory import Budget
from ..utils import (
    Interval,
    SolverProgress,
    check_random_state,
    check_sample_weight,
    constraints,
    is_dask_collection,
    log_line,
    plain,
)
from ..utils.fitted_spec import CLASSES, FEATURES, INFO, Basis, ClassSpec, Floats, Gamma, Offsets
from . import _parts
from ._cluster import iter_completed, n_threads, open_client

__all__ = ["MapReduceSVC"]

_SEED_MAX = 2**31 - 1


def _part_scores(model, symbols):
    if symbols["Q"] != symbols["P"] * symbols["p"]:
        return "part_coef_", (f"must have n_parts * n_problems = {symbols['P'] * symbols['p']}"
                              f" columns, has {symbols['Q']}")
    return None


class _ClientConstraint:
    """A ``distributed.Client`` (checked by name: dask is not imported to validate)."""

    def is_satisfied_by(self, value):
        return any(c.__name__ == "Client" and c.__module__.startswith("distributed")
                   for c in type(value).__mro__)

    def __str__(self):
        return "a distributed.Client"


def _is_path_list(X):
    return (isinstance(X, list | tuple) and len(X) > 0
            and all(isinstance(p, str | os.PathLike) for p in X))


@fill_doc
class MapReduceSVC(OneVsRestClassifierMixin, KernelExpansionMixin, SparseKernelEstimator):
    """MapReduce reduced SVM (MRRSVM; Yeh, Huang, Pao & Lee, section 5) on Dask.

    Map (Algorithm 4, steps 0-1): the training rows are dealt into ``n_parts`` stratified,
    disjoint parts and one :class:`~sparsekernel.ReducedSVC` is fitted per part on its own
    reduced set of random rows of that part, in parallel on a Dask cluster. Reduce (steps
    2-3): the union of the reduced sets is encoded by the part models' decision values (the
    "big table": one row per reduced-set point, one column per part model and class) and a
    linear smooth SVM (``SmoothSVC(kernel='linear', C=final_C)``: the same Newton solver, in
    the primal on the table) is fitted on it. Prediction (Algorithm 5) maps a row to its part
    scores, then applies the final linear model. For k > 2 classes the part models and the
    final model are one-vs-rest (k scores per part). All of them solve the SVM family's
    objective (:class:`~sparsekernel.ReducedSVC`; :doc:`/user_guide/svm`) on their own data;
    :doc:`/distributed` compares the model with one fit on all the rows.

    Parameters
    ----------
    n_parts : int, default=4
        Number n of parts (map tasks). Every class needs at least n_parts samples.
    {kernel}
    {gamma}
        Resolved once on all the training data and shared by every part.
    {degree}
    {coef0}
    {C}
        ``C`` weights the part models' loss, ``final_C`` the final model's.
    {n_basis}
        Here it is M, the size of the union of the reduced sets (the rows of the big table):
        part p gets ``M // n_parts`` rows, one more for the first ``M % n_parts`` parts.
    basis : str or BasisSelector, default='random'
        How each part chooses its reduced set (as in ReducedSVC); it must return training
        rows (the reduce step needs their labels), as 'random' does.
    final_C : float, default=1.0
        Loss weight of the final linear SSVM on the big table.
    smoothing : float, default=inf
        Smoothing of the plus function (``inf``: exact squared hinge, generalized Newton).
    {memory_budget}
    tol : float, default=1e-3
        Newton stopping tolerance (parts and final model).
    {max_iter}
    {class_weight}
    client : None, str or distributed.Client, default=None
        Where the map step runs. None: an in-process LocalCluster with ``n_jobs`` threads for
        the fit. A scheduler address ('tcp://host:8786'): connect for the fit (workers need
        sparsekernel installed). A Client: use it as is (it cannot be deep-copied: pass the
        address to clone the estimator, e.g. in GridSearchCV; pickling stores its address).
    n_jobs : int or None, default=None
        Threads of the embedded cluster (None: 1, -1: all cores); ignored with ``client``.
    timeout : float or None, default=None
        Seconds the fit may wait for the cluster (connecting to a scheduler address, then
        the map tasks) before it cancels its tasks and raises a TimeoutError. None, the
        default, sets no limit: the map step's duration grows with the data and the
        cluster, so any fixed default would abort some legitimate fits. The hang a dead
        cluster would cause is caught whatever the timeout: when the cluster has had no
        worker for 10 s (or ``timeout`` if shorter; a restarted worker comes back within
        that) or the scheduler connection is lost, the fit raises a RuntimeError. Either
        way the estimator keeps the state it had before ``fit``.
    {random_state}
        For one value and one input (and one chunking of dask arrays and files) the fit is
        identical on any cluster.
    {verbose}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    basis_ : ndarray or CSR matrix of shape (M, n_features)
        The union of the reduced sets, part after part.
    part_offsets_ : ndarray of shape (n_parts + 1,)
        Part p's reduced set is ``basis_[part_offsets_[p]:part_offsets_[p + 1]]``.
    part_coef_ : ndarray of shape (M, n_parts * k)
        Part models' weights, block diagonal: column p * k + j holds part p's score j.
    part_intercept_ : ndarray of shape (n_parts * k,)
    gamma_ : float or ndarray of shape (M,)
        Kernel width used (per-centre widths when the basis selector provides them).
    coef_ : ndarray of shape (1, n_parts * k) or (n_classes, n_parts * k)
        Final linear model's weights on the part scores.
    intercept_ : ndarray of shape (1,) or (n_classes,)
    n_iter_ : ndarray of shape (n_problems,)
        Newton iterations of the final model per sub-problem.
    part_n_iter_ : ndarray of shape (n_parts, n_problems)
    part_n_samples_ : ndarray of shape (n_parts,)
        Training rows per part.
    n_features_in_ : int

    Raises
    ------
    RuntimeError
        From ``fit``, when the cluster has no worker or the scheduler is unreachable (see
        ``timeout``), or a worker died repeatedly while fitting a part.
    TimeoutError
        From ``fit``, when ``timeout`` seconds pass before the map step is done.

    Notes
    -----
    An error raised while fitting a part (e.g. non-finite kernel values) is raised again by
    ``fit`` with this estimator's own parameters named (kernel, gamma and the width it
    resolved to, C, n_basis, n_parts).

    Fault tolerance comes from Dask: every map task can be recomputed from what the
    scheduler holds (in-memory parts travel inside their task, dask chunks and files are
    recomputed from their graph), so when a worker dies its parts are rerun elsewhere.
    With n_parts = 1 the model is a ReducedSVC followed by a linear SSVM on its own scores.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sparsekernel.distributed import MapReduceSVC
    >>> X, y = make_moons(2000, noise=0.1, random_state=0)
    >>> clf = MapReduceSVC(n_parts=4, n_basis=120, gamma=2.0, C=10.0, random_state=0)
    >>> bool(clf.fit(X, y).score(X, y) > 0.95)
    True

    See Also
    --------
    sparsekernel.ReducedSVC : One reduced SVM on all the rows (on a dask collection too).
    sparsekernel.LowRankSVC : The low-rank SVM, fitted on a dask collection where its rows
        are.
    sparsekernel.distributed.parallel_predict : Predictions of any model on Dask.

    References
    ----------
    .. [1] Y.-R. Yeh, S.-Y. Huang, H.-K. Pao and Y.-J. Lee, "A review of reduced kernel
       trick in machine learning", Journal of the Chinese Statistical Association 52,
       85-114, 2014 (section 5, Algorithm 4).
    """
    #: Fitted attributes, checked when a model is saved or loaded (sparsekernel.io).
    _fitted_spec = ClassSpec(
        {**FEATURES, **CLASSES, "basis_": Basis(), "part_offsets_": Offsets(),
         "part_coef_": Floats(("m", "Q")), "part_intercept_": Floats(("Q",)),
         "gamma_": Gamma(), "part_n_iter_": INFO, "part_n_samples_": INFO,
         "coef_": Floats(("p", "Q")), "intercept_": Floats(("p",)), "n_iter_": INFO},
        relations=(_part_scores,))
    _parameter_constraints = {
        **KERNEL_CONSTRAINTS,
        **constraints("C", "tol", "max_iter", "class_weight", "random_state", "verbose"),
        "smoothing": [Interval("real", 0, None, closed="right")],  # inf: the exact loss
        "n_basis": N_BASIS,
        "basis": [str, BasisSelector],
        "n_parts": [Interval("int", 1, None, closed="left")],
        "final_C": [Interval("real", 0, None, closed="neither")],
        "client": [None, str, _ClientConstraint()],
        "n_jobs": [None, Interval("int", None, -1, closed="right"),
                   Interval("int", 1, None, closed="left")],
        "timeout": [None, Interval("real", 0, None, closed="neither")],
    }
    # Where a fit runs is not part of the model: sparsekernel.io neither writes nor restores
    # it, so a tampered model file cannot pick the scheduler the next fit connects to.
    _transient_params = ("client",)

    def __init__(self, *, n_parts=4, kernel="rbf", gamma="scale", degree=3, coef0=0.0, C=1.0,
                 n_basis="auto", basis="random", final_C=1.0, smoothing=float("inf"),
                 memory_budget=None, tol=1e-3, max_iter=100, class_weight=None, client=None,
                 n_jobs=None, timeout=None, random_state=None, verbose=0):
        self.n_parts = n_parts
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.n_basis = n_basis
        self.basis = basis
        self.final_C = final_C
        self.smoothing = smoothing
        self.memory_budget = memory_budget
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.client = client
        self.n_jobs = n_jobs
        self.timeout = timeout
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None, sample_weight=None):
        """Fit the part models on the cluster (map), then the final linear SSVM (reduce).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), dask array, or list
            of paths
            Training data. NumPy / CSR data are split on the driver and each part is shipped
            inside its task. A dask array (and a dask ``y``) stays on the workers: each chunk
            of rows is dealt into the parts where it lies. A list of LIBSVM files (one-based
            indices, labels in the files; ``y`` must be None) is read by the workers, one task
            per file.
        y : array-like or dask array of shape (n_samples,), or None for file input
            Class labels.
        sample_weight : array-like or dask array of shape (n_samples,), optional
            Per-sample weights; they weight the part fits and, for the reduced-set rows, the
            final linear fit.

        Returns
        -------
        self
        """
        rng = check_random_state(self.random_state)
        split_seed = int(rng.randint(_SEED_MAX))
        part_seeds = [int(s) for s in rng.randint(_SEED_MAX, size=self.n_parts)]
        submit = (self._submit_blocks if _is_path_list(X) or is_dask_collection(X)
                  else self._submit_arrays)
        start = time.monotonic()
        with open_client(self.client, self.n_jobs, type(self).__name__,
                         self.timeout) as client, _one_blas_thread(self.client, self.n_jobs):
            tasks = submit(client, X, y, sample_weight, split_seed, part_seeds, start)
            payloads = self._gather(client, tasks, start)
        self._union(payloads)
        self._fit_final(payloads)
        return self

    def _part_params(self, gamma, n_samples):
        """ReducedSVC parameters of each part: one gamma for all, n_basis split over parts."""
        shared = {"kernel": self.kernel, "gamma": gamma, "degree": self.degree,
                  "coef0": self.coef0, "C": self.C, "basis": self.basis,
                  "smoothing": self.smoothing, "memory_budget": self.memory_budget,
                  "tol": self.tol, "max_iter": self.max_iter, "class_weight": self.class_weight}
        # M split as the deal splits rows (the first M % n_parts parts get one more), so no
        # part gets more than its rows: part p has n // n_parts rows, +1 for p < n % n_parts.
        M, n_parts = resolve_n_basis(self.n_basis, n_samples), self.n_parts
        if M < n_parts:  # a part without basis functions has no model
            raise ValueError(
                f"{type(self).__name__} splits its n_basis basis functions over the "
                f"n_parts={n_parts} parts, and each part needs at least one, so n_basis must "
                f"give at least n_parts={n_parts}; n_basis={self.n_basis!r} gives {M} on "
                f"{n_samples} samples. Raise n_basis or lower n_parts.")
        sizes = M // n_parts + (np.arange(n_parts) < M % n_parts)
        return [{**shared, "n_basis": int(m)} for m in sizes]

    def _check_counts(self, counts):
        """Every class is dealt over every part, so each needs n_parts samples."""
        short = counts < self.n_parts
        if short.any():
            k = int(np.flatnonzero(short)[0])
            raise ValueError(
                f"{type(self).__name__} deals every class over the n_parts={self.n_parts} "
                f"parts, so each class needs at least n_parts samples; class "
                f"{plain(self.classes_[k])!r} has {int(counts[k])}. Lower n_parts."
            )

    def _submit_arrays(self, client, X, y, sample_weight, split_seed, part_seeds, start):
        """In-memory data: deal on the driver; each part rides inside its task, so the
        scheduler can rerun it on another worker if its worker dies."""
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=DTYPES)
        sw = None if sample_weight is None else check_sample_weight(sample_weight, X.shape[0])
        self._set_classes(y)
        counts = np.bincount(self._encode(y), minlength=len(self.classes_))
        self._check_counts(counts)
        offsets = _parts.start_offsets(counts[None, :], self.n_parts)[0]
        pieces = _parts.split_block((X, y, sw), self.classes_, self.n_parts, offsets,
                                    [split_seed, 0], X.shape[1])
        with np.errstate(over="ignore", divide="ignore"):  # an overflow is checked next
            gamma = resolve_gamma(self.gamma, X)
        params = self._part_params(self._finite_gamma(gamma), X.shape[0])
        return [client.submit(_parts.fit_part, data, params[p], seed, pure=False)
                for p, (data, seed) in enumerate(zip(pieces, part_seeds, strict=True))]

    def _block_futures(self, client, X, y, sample_weight):
        if _is_path_list(X):
            if y is not None or sample_weight is not None:
                raise ValueError("With a list of LIBSVM files the labels come from the files: "
                                 "y and sample_weight must be None.")
            return [client.submit(_parts.load_libsvm_block, os.fspath(p), np.float64,
                                  pure=False) for p in X]
        import dask
        import dask.array as da

        if hasattr(X, "to_dask_array"):  # a dask DataFrame
            X = X.to_dask_array(lengths=True)
        if X.ndim != 2:
            raise ValueError(f"Expected a 2-D dask array for X, got {X.ndim} dimension(s).")
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but y is None.")
        X = X.rechunk({1: -1})
        rows = X.chunks[0]
        ys = da.asarray(y).rechunk((rows,)).to_delayed().ravel()
        ws = ([None] * len(rows) if sample_weight is None else
              da.asarray(sample_weight).rechunk((rows,)).to_delayed().ravel())
        blocks = [dask.delayed(_parts.make_block)(xb, yb, wb)
                  for xb, yb, wb in zip(X.to_delayed().ravel(), ys, ws, strict=True)]
        return client.compute(blocks)

    def _submit_blocks(self, client, X, y, sample_weight, split_seed, part_seeds, start):
        """Blocks stay on the workers: summarise, deal each block, then fit each part."""
        blocks = self._block_futures(client, X, y, sample_weight)
        summaries = [client.submit(_parts.block_stats, b) for b in blocks]
        stats = self._wait_all(client, summaries, start, cancel=blocks + summaries)
        classes, counts, n_features, variance = _parts.merge_stats(stats)
        self._set_classes(classes)
        self._check_counts(counts.sum(axis=0))
        self.n_features_in_ = int(n_features)
        self.__dict__.pop("feature_names_in_", None)  # left by an earlier DataFrame fit
        params = self._part_params(self._resolve_gamma(n_features, variance),
                                   int(counts.sum()))
        offsets = _parts.start_offsets(counts, self.n_parts)
        pieces = [[] for _ in range(self.n_parts)]
        for b, block in enumerate(blocks):
            split = client.submit(_parts.split_block, block, classes, self.n_parts, offsets[b],
                                  [split_seed, b], n_features, pure=False)
            for p in range(self.n_parts):
                pieces[p].append(client.submit(operator.getitem, split, p, pure=False))
        return [client.submit(_parts.fit_part, pieces[p], params[p], seed, pure=False)
                for p, seed in enumerate(part_seeds)]

    def _resolve_gamma(self, n_features, variance):
        """'scale' and 'auto' as in :func:`resolve_gamma`, from the blocks' moments."""
        if isinstance(self.gamma, str):
            if self.gamma == "auto" or variance <= 0:
                return 1.0 / n_features if self.gamma == "auto" else 1.0
            with np.errstate(over="ignore", divide="ignore"):
                return self._finite_gamma(float(1.0 / (n_features * variance)))
        return float(self.gamma)

    def _finite_gamma(self, gamma):
        """The resolved width, checked here: a width of 0 or inf from data of extreme scale
        would otherwise fail inside the parts, naming a ReducedSVC the user never made."""
        if isinstance(gamma, numbers.Real) and not (np.isfinite(gamma) and gamma > 0):
            raise ValueError(
                f"{type(self).__name__}(gamma={self.gamma!r}) resolved the kernel width to "
                f"{gamma:g}: 1 / (n_features * X.var()) is not a positive finite number "
                "because the features' scale is extreme (their variance overflows or "
                "underflows). Standardize the features (e.g. "
                "sklearn.preprocessing.StandardScaler) or pass a numeric gamma.")
        return gamma

    def _remaining(self, start):
        """What is left of ``timeout`` since the fit started (None: no limit)."""
        return None if self.timeout is None else max(0.0, self.timeout - (time.monotonic()
                                                                          - start))

    def _wait_all(self, client, tasks, start, cancel):
        """Results of ``tasks`` in order, within the timeout; on any error ``cancel``."""
        try:
            for _ in iter_completed(client, tasks, self._remaining(start), type(self).__name__,
                                      self.timeout):
                pass
            return client.gather(tasks)
        except BaseException:
            _cancel(client, cancel)
            raise

    def _gather(self, client, tasks, start):
        """Wait for the part models, advancing the progress bar; cancel them on any error
        (Ctrl-C included, which propagates). A part's error is raised again in this
        estimator's terms."""
        order = {t.key: p for p, t in enumerate(tasks)}
        payloads = [None] * len(tasks)
        name = type(self).__name__
        try:
            with SolverProgress(self.verbose, len(tasks), f"{name} map") as bar:
                for task in iter_completed(client, tasks, self._remaining(start), name,
                                           self.timeout):
                    p = order[task.key]
                    payloads[p] = pl = self._part_result(task, p, tasks)
                    bar.done()
                    log_line(self.verbose, name, f"part {p} fitted",
                             {"n_rows": int(pl["n_rows"]), "n_iter": int(np.max(pl["n_iter"])),
                              "n_basis": int(pl["centers"].shape[0])})
        except BaseException:
            _cancel(client, tasks)
            raise
        return payloads

    def _part_result(self, task, p, tasks):
        """Part p's payload; its error names this estimator's parameters, not the part's."""
        try:
            return task.result()
        except Exception as exc:
            raise _reraised(exc, self._part_error(p, exc)) from exc

    def _part_error(self, p, exc):
        name, params = type(self).__name__, self.get_params()
        shown = ", ".join(f"{k}={params[k]!r}" for k in ("n_parts", "kernel", "gamma", "C",
                                                         "n_basis", "max_iter"))
        died = type(exc).__name__ == "KilledWorker"
        cause = ("a worker died (e.g. out of memory) each time it ran this part: lower "
                 "n_basis or raise n_parts so that a part fits in a worker's memory. "
                 if died else "")
        return (f"{name}({shown}) failed to fit part {p} of its map step "
                f"(ReducedSVC on the part's rows): {cause}{type(exc).__name__}: {exc}")

    # --------------------------------------------------------------- reduce
    def _union(self, payloads):
        """The union of the reduced sets and the part models as one block-diagonal map."""
        for p, pl in enumerate(payloads):
            if not np.array_equal(pl["classes"], self.classes_):
                raise ValueError(f"Part {p} holds classes {pl['classes'].tolist()}, not all "
                                 f"of {self.classes_.tolist()}.")
        # The parts' ReducedSVC results stay on the workers; their iteration counts do not.
        late = [p for p, pl in enumerate(payloads) if np.any(pl["n_iter"] >= self.max_iter)]
        if late:
            warnings.warn(f"{type(self).__name__} did not converge: the models of parts {late} "
                          f"reached max_iter={self.max_iter} Newton iterations.",
                          ConvergenceWarning, stacklevel=3)
        centers = [pl["centers"] for pl in payloads]
        self.basis_ = (sp.vstack(centers, format="csr") if sp.issparse(centers[0])
                       else np.vstack(centers))
        sizes = np.array([c.shape[0] for c in centers])
        self.part_offsets_ = np.r_[0, np.cumsum(sizes)]
        self.part_coef_ = block_diag(*[pl["coef"].T for pl in payloads])
        self.part_intercept_ = np.concatenate([pl["intercept"] for pl in payloads])
        self.gamma_ = _union_gamma([pl["gamma"] for pl in payloads], sizes)
        self.part_n_iter_ = np.array([pl["n_iter"] for pl in payloads])
        self.part_n_samples_ = np.array([pl["n_rows"] for pl in payloads])

    def _fit_final(self, payloads):
        """The linear SSVM on the big table (the reduced-set rows encoded by the parts), its
        problems jointly (newton_ovr)."""
        table = self._part_scores(self.basis_)
        y = np.concatenate([pl["y"] for pl in payloads])
        weights = [pl["sample_weight"] for pl in payloads]
        sw = self._weights(y, None if weights[0] is None else np.concatenate(weights))
        targets = self._targets(self._encode(y))
        self.coef_, self.intercept_, self.n_iter_, _ = solve_newton(
            self, table, targets, sw, self._problem_labels, Budget(self),
            SquaredSmoothHinge(self.smoothing), C=self.final_C)

    # -------------------------------------------------------------- predict
    def _part_scores(self, X):
        Z = self.basis_.astype(X.dtype, copy=False)
        return self._kernel().apply(X, Z, self.part_coef_) + self.part_intercept_

    def part_decision_function(self, X):
        """Algorithm 5, step 0: the part models' decision values, the final model's input.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or dask array

        Returns
        -------
        ndarray of shape (n_samples, n_parts * k)
            Column ``p * k + j`` is part model p's one-vs-rest score j (k = 1 for two
            classes). A dask array in, a dask array out (computed block by block).
        """
        if is_dask_collection(X):
            return _dask_method(self, X, "part_decision_function")
        check_is_fitted(self)
        return self._part_scores(self._validate_X(X))

    def _raw_decision(self, X):
        return self.part_decision_function(X) @ self.coef_.T + self.intercept_

    def decision_function(self, X):
        """Final linear model on the part scores: shape (n,) for two classes, else (n, k).

        A dask array (or dataframe) in gives a dask collection out, computed block by block
        on the cluster it belongs to (see :func:`parallel_predict`).
        """
        if is_dask_collection(X):
            return _dask_method(self, X, "decision_function")
        return super().decision_function(X)

    def predict(self, X):
        """Class labels (Algorithm 5, step 1); dask in, dask out as for decision_function."""
        if is_dask_collection(X):
            return _dask_method(self, X, "predict")
        return super().predict(X)

    def __getstate__(self):
        # A live Client cannot be pickled; a fitted model must still travel to workers
        # (parallel_predict), so a Client parameter is pickled as its scheduler address.
        state = dict(super().__getstate__())
        if _ClientConstraint().is_satisfied_by(state.get("client")):
            state["client"] = state["client"].scheduler.address
        return state


def _reraised(exc, message):
    """An exception of ``exc``'s type when it takes a message (ValueError, NonFiniteError,
    LinAlgError, ...), so that callers catching that type still do; RuntimeError otherwise."""
    if isinstance(exc, ValueError | ArithmeticError | TypeError):
        with contextlib.suppress(Exception):
            return type(exc)(message)
    return RuntimeError(message)


def _cancel(client, tasks):
    """Cancel ``tasks``, unless the scheduler is gone: then nothing runs them, and a
    cancel message would only wait on the lost connection and hide the error."""
    if client.status == "running":
        with contextlib.suppress(Exception):  # the error being raised matters more
            client.cancel(tasks)


def _one_blas_thread(client, n_jobs):
    """The embedded cluster runs parts in threads of this process: one BLAS thread each,
    or n_jobs parts times all-core BLAS oversubscribe the machine (worker processes that a
    Dask nanny starts already get one BLAS thread through the environment)."""
    if client is None and n_threads(n_jobs) > 1:
        return threadpool_limits(limits=1, user_api="blas")
    return contextlib.nullcontext()


def _dask_method(model, X, method):
    from ._predict import parallel_predict

    return parallel_predict(model, X, method=method)


def _union_gamma(gammas, sizes):
    """One scalar when every part used the same width, else one width per centre."""
    if all(np.isscalar(g) for g in gammas) and len({float(g) for g in gammas}) == 1:
        return float(gammas[0])
    return np.concatenate([np.broadcast_to(np.asarray(g, dtype=np.float64), (m,))
                           for g, m in zip(gammas, sizes, strict=True)])
