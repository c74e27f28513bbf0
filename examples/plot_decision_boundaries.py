"""
===========================================
Decision regions and their basis functions
===========================================

Every estimator in sparsekernel is a kernel machine on m basis functions: its decision
function is a weighted sum of m kernels K(x, z_j) centred on the basis points ``basis_``.
This example draws the decision regions of a few classifiers on two-dimensional data with
:func:`~sparsekernel.inspection.plot_decision_boundary`, which rings the basis points in
black, so that one sees how few of them a smooth boundary needs, and how a rougher one asks
for more.
"""

# %%
# Ripley's data: three ways of choosing the basis
# -----------------------------------------------
# Ripley's synthetic two-class problem (250 training rows, 1,000 test rows) ships with the
# package. We fit three classifiers with a handful of basis functions each:
#
# * :class:`~sparsekernel.ReducedSVC`, the reduced SVM, on 15 training rows drawn at random;
# * :class:`~sparsekernel.KernelLogisticRegression` on 15 k-means centres;
# * :class:`~sparsekernel.SparseMarginClassifier`, which *learns* 10 expansion vectors: they
#   need not be training points, and they move to where they help the margin most.
import matplotlib.pyplot as plt

from sparsekernel import KernelLogisticRegression, LowRankSVC, ReducedSVC, SparseMarginClassifier
from sparsekernel.datasets import load_ripley, make_checkerboard
from sparsekernel.inspection import plot_decision_boundary

X, y, X_test, y_test = load_ripley()

classifiers = {
    "ReducedSVC, 15 random rows": ReducedSVC(C=10.0, gamma=8.0, n_basis=15, random_state=0),
    "KernelLogisticRegression, 15 k-means centres": KernelLogisticRegression(
        C=10.0, gamma=8.0, n_basis=15, random_state=0),
    "SparseMarginClassifier, 10 learned vectors": SparseMarginClassifier(
        C=64.0, gamma=2.0, n_basis=10, random_state=0),
}

fig, axes = plt.subplots(1, 3, figsize=(15, 4.8), sharex=True, sharey=True)
for ax, (name, clf) in zip(axes, classifiers.items(), strict=True):
    clf.fit(X, y)
    plot_decision_boundary(clf, X, y, ax=ax)
    accuracy = clf.score(X_test, y_test)
    ax.set_title(f"{name}\ntest accuracy {accuracy:.3f}", fontsize=10)
    print(f"{name:46s} m = {clf.basis_.shape[0]:3d}  test accuracy {accuracy:.3f}")
fig.tight_layout()

# %%
# All three reach about the same test accuracy with 10 to 15 basis functions: Ripley's
# boundary is smooth, and a few kernels describe it. The learned vectors of the sparse large
# margin classifier are not training points (one even lies outside the data): they go
# wherever they help the margin most, while random rows and k-means centres follow the
# density of the data.
#
# A rougher boundary needs more basis functions
# ---------------------------------------------
# The 4 x 4 checkerboard has 16 cells and a boundary with many corners. With
# :class:`~sparsekernel.LowRankSVC` (Nystrom features on k-means landmarks) we let m grow:
# too few landmarks cannot tell the cells apart, and the regions fill in once there are a
# few per cell.
X, y = make_checkerboard(1000, random_state=0)
X_test, y_test = make_checkerboard(5000, random_state=1)
y, y_test = y.astype(int), y_test.astype(int)  # labels -1 and 1 (floats as generated)

fig, axes = plt.subplots(1, 3, figsize=(15, 4.8), sharex=True, sharey=True)
for ax, m in zip(axes, [8, 32, 128], strict=True):
    clf = LowRankSVC(C=100.0, gamma=8.0, n_basis=m, random_state=0).fit(X, y)
    plot_decision_boundary(clf, X, y, ax=ax)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.07), ncol=3, fontsize=8)
    accuracy = clf.score(X_test, y_test)
    ax.set_title(f"LowRankSVC, n_basis={m}: test accuracy {accuracy:.3f}", fontsize=10)
    print(f"n_basis={m:4d}  test accuracy {accuracy:.3f}")
fig.tight_layout()

# %%
# Eight landmarks are fewer than the cells, and the model merges them; with 32 (two per
# cell) most of the board is right, and 128 resolve every corner. The cost of a prediction
# grows with m, not with the number of training rows: see
# :ref:`sphx_glr_auto_examples_plot_n_basis_curve.py` for how to choose m.
