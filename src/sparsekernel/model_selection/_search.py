"""Nested uniform-design search over (log2 C, log2 gamma) as a scikit-learn *SearchCV."""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import GridSearchCV
from sklearn.utils import check_array

from ..base import fit_transaction
from ..utils import Interval, Options, validate_params
from ._uniform_design import (
    UD_TABLES,
    check_search_boundary,
    gamma_search_range,
    ud_points,
)

__all__ = ["UniformDesignSearchCV"]

#: (stage-1 table, stage-2 table) per design name.
DESIGNS = {"13-9": (13, 9), "9-5": (9, 5)}
#: 'auto' uses the small design from this many samples on (the paper: "large data sets").
LARGE_N = 10000
#: log10 C ranges of the paper (section 5): full-kernel SVMs and reduced-kernel RSVMs.
C_RANGES = {"full": (-2.0, 4.0), "reduced": (0.0, 6.0)}

_UD_CONSTRAINTS = {
    "design": [Options("auto", *DESIGNS)],
    "C_range": [Options("auto", *C_RANGES), "array-like"],
    "gamma_range": [Options("auto", "paper", "toolbox"), "array-like"],
    "param_names": ["array-like"],
    "fixed_params": [None, "dict"],
    "max_gamma_samples": [Interval("int", 2, None, closed="left")],
    "random_state": ["random_state"],
}


def _check_range(value, name):
    r = np.asarray(value, dtype=np.float64)
    if r.shape != (2,) or not np.all(r > 0) or not r[0] < r[1]:
        raise ValueError(f"{name} must be 'auto' or (low, high) with 0 < low < high. "
                         f"Got {value!r} instead.")
    return np.log2(r)


class UniformDesignSearchCV(GridSearchCV):
    """Nested two-stage uniform-design search for C and gamma (Huang et al. 2007).

    Stage 1 evaluates a 13-point (or 9-point) uniform design over the search box in
    (log2 C, log2 gamma). Stage 2 centres a box of half the width on the best stage-1 point
    (moved inside the search box where it would stick out) and evaluates a 9-point (or
    5-point) design there, less the points stage 1 evaluated. The best of all points wins;
    ties go to the first point evaluated. Everything else (``cv``, ``scoring``, ``refit``,
    ``cv_results_``, ``best_*``) is ``GridSearchCV``'s; there is no ``param_grid``.

    Parameters
    ----------
    estimator : estimator object
        Any estimator (or pipeline) with a C-like and a gamma-like parameter.
    design : {'auto', '13-9', '9-5'}, default='auto'
        Tables of the two stages; 'auto' is '13-9' (21 or 22 points) below 10,000 samples
        and '9-5' (13 or 14 points) from there on, as the paper advises for large data.
    C_range : 'auto', 'full', 'reduced' or (low, high), default='auto'
        Range of C (natural scale). 'full' is [1e-2, 1e4] (full-kernel SVM/SSVM/SSVR),
        'reduced' [1e0, 1e6] (RSVM); 'auto' picks 'reduced' when the estimator has an
        ``n_basis`` parameter (at any nesting level) that is not None, else 'full'.
    gamma_range : 'auto', 'paper', 'toolbox' or (low, high), default='auto'
        Range of gamma for the kernel exp(-gamma ||u - v||^2). 'auto' is 2^-5 to 2^5 times
        scikit-learn's ``gamma='scale'``, 1 / (d var(X)). 'paper' is the paper's
        0.150 <= exp(-gamma rho) <= 0.999, rho the smallest nonzero squared distance between
        rows, and 'toolbox' the authors' code
        (:func:`~sparsekernel.model_selection.gamma_search_range`). All are computed on X as
        passed to ``fit`` (before any pipeline step).
    param_names : (str, str), default=('C', 'gamma')
        Names of the two parameters, e.g. ``('svc__C', 'svc__gamma')`` for a pipeline.
    fixed_params : dict or None, default=None
        Other parameters set for every candidate (e.g. ``{'epsilon': 0.05}`` for SVR); they
        appear in ``cv_results_`` and ``best_params_``.
    scoring, n_jobs, refit, cv, verbose, pre_dispatch, error_score, return_train_score
        As in :class:`sklearn.model_selection.GridSearchCV`. With several metrics, ``refit``
        must name the one that steers stage 2.
    max_gamma_samples : int, default=3000
        Rows used to compute rho for the gamma range.
    random_state : int, RandomState or None, default=None
        Seed of that subsample.

    Attributes
    ----------
    cv_results_ : dict of ndarrays
        As in GridSearchCV, plus ``stage`` (1 or 2) and ``log2_C``, ``log2_gamma``.
    best_estimator_, best_score_, best_params_, best_index_, scorer_, n_splits_,
    refit_time_, multimetric_
        As in GridSearchCV.
    search_box_ : ndarray of shape (2, 2)
        The stage-1 box: rows (log2 C, log2 gamma), columns (low, high).
    design_ : str
        The design used ('13-9' or '9-5').

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sparsekernel import ReducedSVC
    >>> from sparsekernel.model_selection import UniformDesignSearchCV
    >>> X, y = make_moons(300, noise=0.2, random_state=0)
    >>> search = UniformDesignSearchCV(ReducedSVC(n_basis=30, random_state=0), cv=3)
    >>> search.fit(X, y).design_
    '13-9'
    >>> len(search.cv_results_["params"])  # 13 + 9 (8 when stage 2 is centred on a stage-1 point)
    22

    See Also
    --------
    plot_ud_search : Draws the two stages' points and scores.
    gamma_search_range : The default gamma range, from the data's distances.
    sklearn.model_selection.GridSearchCV : Every point of a grid.
    sklearn.model_selection.RandomizedSearchCV : Random points.

    References
    ----------
    .. [1] C.-M. Huang, Y.-J. Lee, D. K. J. Lin and S.-Y. Huang, "Model selection for
       support vector machines via uniform design", Computational Statistics and Data
       Analysis 52, 335-346, 2007.
    """

    # scikit-learn checks its own parameters at fit entry; ours are checked by
    # validate_params in fit (sklearn's constraint classes are private).
    _parameter_constraints = {
        **{k: v for k, v in GridSearchCV._parameter_constraints.items() if k != "param_grid"},
        **dict.fromkeys(_UD_CONSTRAINTS, "no_validation"),
    }

    def __init__(self, estimator, *, design="auto", C_range="auto", gamma_range="auto",
                 param_names=("C", "gamma"), fixed_params=None, scoring=None, n_jobs=None,
                 refit=True, cv=None, verbose=0, pre_dispatch="2*n_jobs",
                 error_score=np.nan, return_train_score=False, max_gamma_samples=3000,
                 random_state=None):
        self.estimator = estimator
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.refit = refit
        self.cv = cv
        self.verbose = verbose
        self.pre_dispatch = pre_dispatch
        self.error_score = error_score
        self.return_train_score = return_train_score
        self.design = design
        self.C_range = C_range
        self.gamma_range = gamma_range
        self.param_names = param_names
        self.fixed_params = fixed_params
        self.max_gamma_samples = max_gamma_samples
        self.random_state = random_state

    def fit(self, X, y=None, **params):
        """Run the two stages of cross-validated fits, then refit the best (if ``refit``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional
        **params : dict
            Passed to the estimator's ``fit``, the scorer and the splitter (as in
            GridSearchCV).

        Returns
        -------
        self

        Notes
        -----
        The search is a transaction, like every estimator's fit: an exception, or a Ctrl-C
        during any candidate's fit (it propagates, never scored), leaves the search as it was
        before ``fit``, unfitted or with its previous results.
        """
        with fit_transaction(self):
            return self._fit_stages(X, y, **params)

    def _fit_stages(self, X, y, **params):
        validate_params(type(self).__name__, _UD_CONSTRAINTS, self.get_params(deep=False))
        names = tuple(self.param_names)
        if len(names) != 2 or not all(isinstance(n, str) for n in names):
            raise ValueError("param_names must be two parameter names (C, gamma). Got "
                             f"{self.param_names!r} instead.")
        self._steering_metric()
        Xc = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32])
        self.design_ = self.design if self.design != "auto" else (
            "9-5" if Xc.shape[0] >= LARGE_N else "13-9")
        self.search_box_ = np.vstack([self._c_box(), self._gamma_box(Xc)])
        super().fit(X, y, **params)
        self.cv_results_["stage"] = np.asarray(self._stages)
        log2 = np.asarray(self._log2_points)
        self.cv_results_["log2_C"], self.cv_results_["log2_gamma"] = log2[:, 0], log2[:, 1]
        check_search_boundary(self, stacklevel=4)  # an optimum on the box's edge: widen it
        return self

    def _steering_metric(self):
        multi = isinstance(self.scoring, list | tuple | set | dict)
        if multi and not isinstance(self.refit, str):
            raise ValueError("With several scoring metrics, refit must name the metric that "
                             f"chooses the stage-2 centre. Got refit={self.refit!r}.")
        return f"mean_test_{self.refit}" if multi else "mean_test_score"

    def _c_box(self):
        if isinstance(self.C_range, str):
            kind = self.C_range
            if kind == "auto":
                params = self.estimator.get_params(deep=True)
                reduced = any((k == "n_basis" or k.endswith("__n_basis")) and v is not None
                              for k, v in params.items())  # n_basis=None: the full kernel
                kind = "reduced" if reduced else "full"
            return np.log2(10.0 ** np.asarray(C_RANGES[kind]))
        return _check_range(self.C_range, "C_range")

    def _gamma_box(self, X):
        if isinstance(self.gamma_range, str):
            mode = "scale" if self.gamma_range == "auto" else self.gamma_range
            return gamma_search_range(X, self.max_gamma_samples, self.random_state, mode)
        return _check_range(self.gamma_range, "gamma_range")

    def _candidates(self, points):
        c_name, g_name = self.param_names
        fixed = dict(self.fixed_params or {})
        return [{**fixed, c_name: float(2.0**p), g_name: float(2.0**q)} for p, q in points]

    def _run_search(self, evaluate_candidates, *, callback_ctx=None):
        """Stage 1 on the whole box, stage 2 around its best point (first index on ties).

        ``callback_ctx`` (scikit-learn's callbacks, from GridSearchCV.fit) gets a ``search``
        task with one sub-task per stage, each holding that stage's cross-validated fits.
        """
        n1, n2 = DESIGNS[self.design_]
        low, high = self.search_box_[:, 0], self.search_box_[:, 1]
        search = _begin_task(callback_ctx, self, "search", max_subtasks=2)
        stage1 = ud_points(UD_TABLES[n1], low, high, stage=1)
        results = self._evaluate_stage(evaluate_candidates, stage1, search, "stage-1")
        scores = np.asarray(results[self._steering_metric()], dtype=np.float64)[:n1]
        scores = np.where(np.isnan(scores), -np.inf, scores)
        center = stage1[int(np.argmax(scores))]
        stage2 = ud_points(UD_TABLES[n2], low, high, stage=2, center=center)
        # Points stage 1 evaluated are not evaluated again: the centre, unless the box was
        # moved inside the search box, and (9-5 design) points on the search box's edge.
        seen = np.all(np.isclose(stage2[:, None, :], stage1[None, :, :]), axis=2).any(axis=1)
        stage2 = stage2[~seen]
        self._evaluate_stage(evaluate_candidates, stage2, search, "stage-2")
        if search is not None:
            search.call_on_fit_task_end(estimator=self)
        self._stages = [1] * n1 + [2] * len(stage2)
        self._log2_points = np.vstack([stage1, stage2])

    def _evaluate_stage(self, evaluate_candidates, points, search, name):
        """Cross-validate the candidates at ``points``, as the task ``name`` of ``search``.

        Each stage has a task of its own because GridSearchCV numbers the fits of one
        ``evaluate_candidates`` call from 0: two calls under one task would collide.
        """
        candidates = self._candidates(points)
        if search is None:
            return evaluate_candidates(candidates)
        stage = _begin_task(search, self, name, max_subtasks=len(candidates) * self.n_splits_,
                            sequential_subtasks=False)
        results = evaluate_candidates(candidates, callback_ctx=stage)
        stage.call_on_fit_task_end(estimator=self)
        return results


def _begin_task(parent, estimator, name, **kwargs):
    """The sub-task ``name`` of the callback context ``parent``, begun (None if no parent)."""
    if parent is None:
        return None
    return parent.subcontext(task_name=name, **kwargs).call_on_fit_task_begin(
        estimator=estimator)
