"""Systematic sampling of the reduced set (Chien, Chang & Lee 2010; review Algorithm 2)."""

from __future__ import annotations

import math

import numpy as np
from sklearn.utils import check_random_state

# basis -> solvers is the one dependency on a later layer of the data flow: the scheme must
# fit reduced SVMs while it selects. It uses only the pure solver layer on explicit arrays
# K(X, Z), never the svm/ estimators, so there is no import cycle.
from ..solvers import newton_ovr
from ._base import BasisResult, BasisSelector, default_kernel, row_bytes, rows_within

__all__ = ["SystematicBasis"]


def _split(y, fraction, max_rows, rng, max_val=None):
    """Stratified (fit rows, validation rows), the fit part capped at ``max_rows``, the
    validation part at ``max_val``."""
    fit, val = [], []
    for c in np.unique(y):
        rows = rng.permutation(np.flatnonzero(y == c))
        k = int(round(fraction * len(rows))) if len(rows) > 1 else 0
        val.append(rows[:k])
        fit.append(rows[k:])
    fit, val = np.concatenate(fit), np.concatenate(val)
    if max_rows is not None and len(fit) > max_rows:
        fit = rng.choice(fit, size=max_rows, replace=False)
    if max_val is not None and len(val) > max_val:
        val = rng.choice(val, size=max_val, replace=False)
    return np.sort(fit), np.sort(val)


def _strata_sample(order, k, rng):
    """One random element from each of k (roughly) equal consecutive slices of ``order``."""
    parts = np.array_split(order, min(k, len(order)))
    return [int(p[rng.randint(len(p))]) for p in parts if len(p)]


class SystematicBasis(BasisSelector):
    """Grow the reduced set from the misclassified training points, stratified by score.

    Starting from ``n_init`` random points per class, repeat: fit a reduced SVM (the SSVM
    objective of :mod:`sparsekernel.svm`, squared hinge, solved by
    :func:`sparsekernel.solvers.newton_ovr` on K(X_fit, Z)); per class, sort the
    misclassified training points by their decision value, split them into k strata and draw
    one point from each; add them to Z. Stop when the accuracy on a held-out validation part
    reaches ``accuracy_threshold`` or Z reaches ``n_basis`` (the size limit; the last round
    is truncated to hit it exactly).

    Multiclass labels use one-vs-rest fits and the margin ``score(true class) - max score
    (other classes)``; for two classes this is the paper's ``y h(x)``. When no training
    point is misclassified the candidates are the margin violators (``y h(x) < 1``), then any
    unused points.

    Parameters
    ----------
    n_init : int, default=2
        Initial random points per class.
    n_strata : int or 'auto', default='auto'
        k, the strata (new points) per class and round. 'auto' grows the set by about half
        per round: k = ceil(m / (2 n_classes)), at least 2.
    C : float, default=10.0
        C of the inner fits (the SVM family's C; see :class:`sparsekernel.ReducedSVC`). The
        estimator's own C is not visible to the selector: pass ``SystematicBasis(C=...)`` to
        match it.
    accuracy_threshold : float or None, default=None
        Validation accuracy in (0, 1] that ends the selection early; None runs to the size
        limit.
    validation_fraction : float, default=0.2
        Stratified fraction of the rows held out to measure the accuracy.
    max_rows : int or None, default=20000
        Rows the inner fits use (a random subset of the non-validation rows).
    tol : float, default=1e-3
        Newton tolerance of the inner fits (warm-started from the previous round).
    max_iter : int, default=30
        Newton iterations per inner fit.

    Notes
    -----
    With n_f fit rows and rounds growing Z geometrically, the kernel columns cost O(n_f m d)
    in total and each round's Newton steps O(n_f m^2), so the selection costs a small
    multiple of one reduced fit at the final size. Needs class labels (classifiers only).

    See Also
    --------
    IncrementalBasis : Rows whose kernel columns are far from the span of those taken.
    RandomBasis : Random rows, as in the original RSVM.

    References
    ----------
    .. [1] Y.-R. Yeh, S.-Y. Huang, H.-K. Pao and Y.-J. Lee, "A review of reduced kernel
       trick in machine learning", Journal of the Chinese Statistical Association 52,
       85-114, 2014 (section 3).
    """

    def __init__(self, *, n_init=2, n_strata="auto", C=10.0, accuracy_threshold=None,
                 validation_fraction=0.2, max_rows=20000, tol=1e-3, max_iter=30):
        self.n_init = n_init
        self.n_strata = n_strata
        self.C = C
        self.accuracy_threshold = accuracy_threshold
        self.validation_fraction = validation_fraction
        self.max_rows = max_rows
        self.tol = tol
        self.max_iter = max_iter

    def _check(self, y):
        if y is None:
            raise ValueError("SystematicBasis needs class labels: it is for classifiers "
                             "(regressors pass y=None).")
        if not 0 < self.validation_fraction < 1:
            raise ValueError("SystematicBasis: validation_fraction must be in (0, 1). Got "
                             f"{self.validation_fraction!r}.")
        if self.n_strata != "auto" and int(self.n_strata) < 1:
            raise ValueError("SystematicBasis: n_strata must be 'auto' or a positive int. Got "
                             f"{self.n_strata!r}.")
        thr = self.accuracy_threshold
        if thr is not None and not 0 < thr <= 1:
            raise ValueError(f"SystematicBasis: accuracy_threshold must be in (0, 1] or None. "
                             f"Got {thr!r}.")

    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        self._check(y)
        rng = check_random_state(random_state)
        kernel = kernel if kernel is not None else default_kernel(X)
        classes, y_enc = np.unique(y, return_inverse=True)
        # A fit row holds its features K(x, Z) (and the solver's copy of them) and the row
        # itself, a validation row its features and the row: together within the budget's
        # share, validation rows in proportion.
        per_row = 2 * 8.0 * n_basis + row_bytes(X)
        ratio = self.validation_fraction / max(1.0 - self.validation_fraction, 1e-3)
        budget_rows = rows_within(kernel, per_row * (1.0 + ratio / 2), None)
        max_val = None if budget_rows is None else max(1, math.ceil(ratio * budget_rows))
        max_rows = (self.max_rows if budget_rows is None else budget_rows
                    if self.max_rows is None else min(self.max_rows, budget_rows))
        fit, val = _split(y_enc, self.validation_fraction, max_rows, rng, max_val)
        n_basis = min(n_basis, len(fit))  # centres come from the fit rows only
        state = _State(kernel, X, y_enc[fit], fit, val, y_enc[val], n_basis, len(classes))
        init = self._initial(y_enc[fit], n_basis, rng)
        state.add(fit[init])
        history = []
        while True:
            acc = self._fit_round(state)
            history.append((state.m, acc))
            done = (self.accuracy_threshold is not None and acc >= self.accuracy_threshold)
            if done or state.m >= n_basis:
                break
            new = self._candidates(state, rng)
            if not len(new):
                break
            state.add(fit[new[: n_basis - state.m]])
        idx = np.asarray(state.chosen, dtype=np.intp)
        info = {"rounds": len(history), "validation_accuracy": history,
                "n_fit_rows": len(fit), "n_validation_rows": len(val)}
        return BasisResult(centers=X[idx], indices=idx, info=info)

    def _initial(self, y_fit, n_basis, rng):
        """``n_init`` random fit positions per class (fewer if the class or n_basis is small)."""
        parts = [rng.permutation(np.flatnonzero(y_fit == c))[: self.n_init]
                 for c in np.unique(y_fit)]
        # Interleave the classes so that truncating to n_basis keeps every class possible.
        order = [p[i] for i in range(self.n_init) for p in parts if i < len(p)]
        return np.asarray(order[:n_basis], dtype=np.intp)

    def _fit_round(self, state):
        """Refit every one-vs-rest problem warm; return the validation accuracy."""
        F = state.F[:, : state.m]
        x0 = np.zeros((state.m + 1, len(state.targets)))
        for k, old in enumerate(state.coef):  # (the new basis functions start at 0)
            x0[: len(old) - 1, k], x0[-1, k] = old[:-1], old[-1]
        results = newton_ovr(F, np.column_stack(state.targets), C=self.C, tol=self.tol,
                             max_iter=self.max_iter, x0=x0)
        for k, res in enumerate(results):
            state.coef[k] = np.r_[res.coef, res.intercept]
        if not len(state.val):
            return 0.0
        pred = state.predict(state.F_val[:, : state.m])
        return float(np.mean(pred == state.y_val))

    def _candidates(self, state, rng):
        """Positions (in the fit rows) of the next points, k strata per class."""
        margin, score = state.margins()
        free = np.ones(len(margin), dtype=bool)
        free[state.chosen_pos] = False
        for pool in (margin < 0, margin < 1, np.ones_like(free)):
            picks = []
            for c in range(state.n_classes):
                cand = np.flatnonzero(pool & free & (state.y_fit == c))
                if not len(cand):
                    continue
                order = cand[np.argsort(score[cand], kind="stable")]
                picks += _strata_sample(order, self._k(state), rng)
            if picks:
                return rng.permutation(np.asarray(picks, dtype=np.intp))
        return np.empty(0, dtype=np.intp)

    def _k(self, state):
        if self.n_strata == "auto":
            return max(2, math.ceil(state.m / (2 * state.n_classes)))
        return int(self.n_strata)


class _State:
    """Growing K(X_fit, Z), K(X_val, Z) and the one-vs-rest solutions of one selection."""

    def __init__(self, kernel, X, y_fit, fit, val, y_val, n_basis, n_classes):
        self.kernel, self.X, self.y_fit, self.val, self.y_val = kernel, X, y_fit, val, y_val
        self.X_fit, self.X_val = X[fit], X[val]
        self.fit_pos = {int(r): i for i, r in enumerate(fit)}
        self.n_classes = n_classes
        cap = min(n_basis, len(fit))
        self.F = np.empty((len(fit), cap))
        self.F_val = np.empty((len(val), cap))
        self.chosen, self.chosen_pos, self.m = [], [], 0
        positives = [1] if n_classes == 2 else range(n_classes)  # one problem for two classes
        self.targets = [np.where(y_fit == c, 1.0, -1.0) for c in positives]
        self.coef = [np.zeros(1) for _ in self.targets]

    def add(self, rows):
        Z = self.X[rows]
        k = len(rows)
        self.F[:, self.m:self.m + k] = self.kernel(self.X_fit, Z)
        if len(self.val):
            self.F_val[:, self.m:self.m + k] = self.kernel(self.X_val, Z)
        self.chosen += [int(r) for r in rows]
        self.chosen_pos += [self.fit_pos[int(r)] for r in rows]
        self.m += k

    def scores(self, F):
        W = np.stack(self.coef)
        return F @ W[:, :-1].T + W[:, -1]

    def predict(self, F):
        s = self.scores(F)
        return (s[:, 0] > 0).astype(int) if self.n_classes == 2 else s.argmax(axis=1)

    def margins(self):
        """Per fit row: the margin (negative = misclassified) and the score to sort by."""
        s = self.scores(self.F[:, : self.m])
        if self.n_classes == 2:
            return self.targets[0] * s[:, 0], s[:, 0]
        true = s[np.arange(len(s)), self.y_fit]
        s_other = s.copy()
        s_other[np.arange(len(s)), self.y_fit] = -np.inf
        margin = true - s_other.max(axis=1)
        return margin, margin
