"""MRSVM (Wu, Schoelkopf & Bakir 2006, section 4.2) is LowRankSVC with random landmarks."""

from __future__ import annotations

from ..svm import LowRankSVC

__all__ = ["modified_rsvm"]


def modified_rsvm(n_basis="auto", *, C=1.0, gamma="scale", random_state=None, **params):
    """The paper's modified RSVM: random expansion vectors, coefficients by eq. (45).

    Eq. (45) solves the linear SVM on the whitened empirical kernel map ``K(x, Z) T`` with
    ``T^T T = K_z^-1``; ``K(x, Z) U Lambda^-1/2`` (Nystrom features) is such a map, so MRSVM
    *is* :class:`sparsekernel.LowRankSVC` with ``basis='random'`` and the hinge loss (the
    exact RSVM of the LLSVM paper). This returns that configured, unfitted estimator; it is
    also :class:`SparseMarginClassifier` with ``max_iter=0`` (which factorizes K_z by
    Cholesky instead of an eigendecomposition with a floor).

    Parameters
    ----------
    n_basis : 'auto', int or float, default='auto'
    C : float, default=1.0
        SVM-family scaling (``C = 2 * C_libsvm``).
    gamma : 'scale', 'auto' or float, default='scale'
    random_state : int, RandomState or None, default=None
    **params : further LowRankSVC parameters (tol, max_iter, class_weight, ...)

    Returns
    -------
    LowRankSVC
    """
    return LowRankSVC(kernel="rbf", gamma=gamma, C=C, loss="hinge", n_basis=n_basis,
                      basis="random", random_state=random_state, **params)
