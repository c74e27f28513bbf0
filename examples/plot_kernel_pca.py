"""
===============================
Kernel PCA on m basis functions
===============================

Kernel PCA finds nonlinear directions of variance by an eigendecomposition of the n x n
kernel matrix: O(n^2) memory and O(n^3) time, so scikit-learn's
:class:`~sklearn.decomposition.KernelPCA` is used on a few thousand rows at most.
:class:`~sparsekernel.ReducedKernelPCA` accumulates an m x m covariance of the kernel
columns of m basis points in one pass over the rows and solves a small eigenproblem: it is
kernel PCA on the Nystrom approximation of the kernel, equal to ``KernelPCA`` at m = n and
close to it for a modest m. This example compares the two embeddings and shows how they
converge as m grows.
"""

# %%
# Two circles that no linear projection separates
# ------------------------------------------------
# 20,000 points on two noisy concentric circles. scikit-learn's ``KernelPCA`` is fitted on a
# subsample of 1,500 rows (the n x n matrix of all rows would take 3.2 GB) and then
# projects every row; ``ReducedKernelPCA`` with 100 random basis points is fitted on all
# 20,000 rows. Both use the same RBF kernel.
import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_circles
from sklearn.decomposition import KernelPCA

from sparsekernel import ReducedKernelPCA

X, y = make_circles(n_samples=20_000, factor=0.3, noise=0.05, random_state=0)
rng = np.random.default_rng(0)
subsample = rng.choice(len(X), size=1500, replace=False)
gamma = 2.0

start = time.perf_counter()
exact = KernelPCA(n_components=2, kernel="rbf", gamma=gamma).fit(X[subsample])
exact_fit = time.perf_counter() - start

start = time.perf_counter()
reduced = ReducedKernelPCA(n_components=2, gamma=gamma, n_basis=100, random_state=0).fit(X)
reduced_fit = time.perf_counter() - start

Z_exact, Z_reduced = exact.transform(X), reduced.transform(X)
# A component is defined up to its sign: align the reduced one with the exact one.
Z_reduced *= np.sign(np.sum(Z_exact * Z_reduced, axis=0))
print(f"KernelPCA on 1,500 rows:         fit {exact_fit:.3f} s")
print(f"ReducedKernelPCA on 20,000 rows: fit {reduced_fit:.3f} s (m = 100)")

shown = rng.choice(len(X), size=2000, replace=False)  # the plot needs fewer points
fig, axes = plt.subplots(1, 3, figsize=(14, 4.3))
panels = [(X, "input space", "x1", "x2"),
          (Z_exact, "KernelPCA (fitted on 1,500 rows)", "component 1", "component 2"),
          (Z_reduced, "ReducedKernelPCA, m = 100 (all 20,000 rows)",
           "component 1", "component 2")]
for ax, (Z, title, xlabel, ylabel) in zip(axes, panels, strict=True):
    for label, color, name in [(0, "C0", "outer circle"), (1, "C1", "inner circle")]:
        sel = shown[y[shown] == label]
        ax.scatter(Z[sel, 0], Z[sel, 1], s=6, color=color, alpha=0.6, label=name)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
axes[0].set_aspect("equal")
axes[0].legend(loc="upper right", fontsize=8, markerscale=2)
fig.tight_layout()

# %%
# In both embeddings the first component separates the circles, which no linear projection
# of the input can do. The two embeddings nearly coincide: 100 basis points describe this
# smooth kernel well, and the reduced model saw every row for a fraction of the cost.
#
# How the reduced components approach the exact ones
# --------------------------------------------------
# On the 1,500 rows of the subsample, where the exact kernel PCA is available, we let m
# grow and compare the first two components of ``ReducedKernelPCA`` with
# ``KernelPCA``'s: by the absolute correlation of their scores on the rows, and by their
# variance (``explained_variance_`` is ``KernelPCA.eigenvalues_ / n``).
X_sub = X[subsample]
Z_exact_sub = exact.transform(X_sub)
exact_variance = exact.eigenvalues_ / len(X_sub)

sizes = [5, 10, 20, 40, 80, 160, 320]
correlations, variance_ratios = [], []
for m in sizes:
    model = ReducedKernelPCA(n_components=2, gamma=gamma, n_basis=m, random_state=0)
    Z = model.fit_transform(X_sub)
    correlations.append([abs(np.corrcoef(Z[:, k], Z_exact_sub[:, k])[0, 1]) for k in (0, 1)])
    variance_ratios.append(model.explained_variance_ / exact_variance)
    print(f"m={m:4d}  |corr| with KernelPCA: {correlations[-1][0]:.4f} "
          f"{correlations[-1][1]:.4f}  variance / exact: {variance_ratios[-1].round(4)}")
correlations, variance_ratios = np.array(correlations), np.array(variance_ratios)

fig, (ax_corr, ax_var) = plt.subplots(1, 2, figsize=(11, 4))
for k in (0, 1):
    ax_corr.semilogx(sizes, correlations[:, k], "o-", label=f"component {k + 1}")
    ax_var.semilogx(sizes, variance_ratios[:, k], "o-", label=f"component {k + 1}")
ax_corr.set(xlabel="n_basis m", ylabel="|correlation| with KernelPCA's scores",
            title="Scores on the 1,500 rows")
ax_var.axhline(1.0, color="0.5", linestyle=":")
ax_var.set(xlabel="n_basis m", ylabel="variance / KernelPCA's",
           title="Variance of each component")
for ax in (ax_corr, ax_var):
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
fig.tight_layout()

# %%
# With a handful of basis points the components are rough approximations; from a few
# dozen on, the scores correlate almost perfectly with the exact ones and the variances
# approach the exact eigenvalues from below (the Nystrom kernel never exceeds the true
# one). The cost of the reduced fit grows as n m^2, linear in the rows, which is what let
# it use all 20,000 rows above.
