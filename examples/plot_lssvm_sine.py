"""
============================================
Sparse least-squares SVMs on a noisy sine
============================================

The least-squares SVM (LS-SVM) replaces the SVM's hinge loss by the squared error, so its
fit is one linear system, but every training row becomes a support vector. This example
compares the ways sparsekernel offers to make it sparse, on the one-dimensional sine
regression of the LS-SVM pruning literature (``y = sin(x) + 0.5`` plus noise):

* :class:`~sparsekernel.LSSVR` with ``n_basis=None``, the exact LS-SVM on every row;
* :class:`~sparsekernel.LSSVR` with ``n_basis=m``, the reduced LS-SVM on m random rows;
* :class:`~sparsekernel.PrunedLSSVR`, batch pruning (Suykens et al.): refit without the
  smallest ``|alpha|`` until a validation error rises;
* :class:`~sparsekernel.OnlineLSSVR`, on-line pruning (Kim, Shim & Oh) on a fixed budget
  of support vectors, one arriving row at a time.
"""

# %%
# The data and four models
# ------------------------
# 1,000 noisy training points (noise standard deviation 0.3, as in the pruning papers) and
# one RBF kernel for every model. Each is scored by its mean squared error against the true
# function on a fine grid, which tells how well it recovered the sine under the noise.
import matplotlib.pyplot as plt
import numpy as np

from sparsekernel import LSSVR, OnlineLSSVR, PrunedLSSVR
from sparsekernel.datasets import make_sine_regression

X, y = make_sine_regression(n_samples=1000, noise=0.3, random_state=0)
X_grid = np.linspace(-np.pi, np.pi, 500).reshape(-1, 1)
f_grid = np.sin(X_grid[:, 0]) + 0.5
kernel = dict(gamma=1.0, C=100.0)

models = {
    "LSSVR, exact (n_basis=None)": LSSVR(**kernel, n_basis=None),
    "LSSVR, reduced (n_basis=20)": LSSVR(**kernel, n_basis=20, random_state=0),
    "PrunedLSSVR (batch pruning)": PrunedLSSVR(**kernel, random_state=0),
    "OnlineLSSVR (budget of 200)": OnlineLSSVR(**kernel, n_basis=200),
}
fig, axes = plt.subplots(2, 2, figsize=(12, 7.5), sharex=True, sharey=True)
for ax, (name, model) in zip(axes.ravel(), models.items(), strict=True):
    model.fit(X, y)
    mse = np.mean((model.predict(X_grid) - f_grid) ** 2)
    print(f"{name:30s} {model.n_support_:5d} support vectors  MSE to sin(x) + 0.5: {mse:.4f}")
    ax.scatter(X[:, 0], y, s=4, color="0.7", label="training rows")
    ax.plot(X_grid[:, 0], f_grid, "k--", linewidth=1, label="sin(x) + 0.5")
    ax.plot(X_grid[:, 0], model.predict(X_grid), color="C3", linewidth=2, label="model")
    if model.n_support_ < len(X):  # ring the kept rows, unless that is all of them
        Z = model.basis_[:, 0]
        ax.scatter(Z, model.predict(model.basis_), facecolors="none", edgecolors="black",
                   s=45, linewidths=1.0, zorder=3,
                   label=f"support vectors ({model.n_support_})")
    ax.set_title(f"{name}: MSE {mse:.4f}", fontsize=10)
    ax.legend(loc="lower right", fontsize=7)
for ax in axes[1]:
    ax.set_xlabel("x")
for ax in axes[:, 0]:
    ax.set_ylabel("y")
fig.tight_layout()

# %%
# The reduced LS-SVM with 20 random rows is as close to the sine as the exact one with
# 1,000: the function is smooth, and 20 kernels describe it. Batch pruning keeps a
# fraction of the rows at a small loss. On-line pruning, which sees each row once and never
# stores more than its budget, lands farther from the sine than the others. The rings mark
# each support vector at the model's value there.
#
# The batch pruning path
# ----------------------
# ``PrunedLSSVR`` drops 5 % of the support vectors per round and refits, watching the
# error on a held-out fifth of the rows. ``pruning_path_`` records each round; the model
# kept is the last one within ``prune_tol`` (5 %) of the unpruned model's error.
pruned = models["PrunedLSSVR (batch pruning)"]
path = pruned.pruning_path_
fig, ax = plt.subplots(figsize=(6.4, 4))
ax.plot(path["n_support"], path["validation_mse"], "o-", markersize=4)
ax.axhline((1 + pruned.prune_tol) * path["validation_mse"][0], color="0.5", linestyle=":",
           label="tolerance: 1.05 x the unpruned error")
ax.axvline(pruned.n_support_, color="C3", linestyle="--",
           label=f"kept: {pruned.n_support_} support vectors")
ax.invert_xaxis()
ax.set(xlabel="support vectors (pruning goes right)", ylabel="validation MSE",
       title="PrunedLSSVR.pruning_path_")
ax.legend(fontsize=8)
fig.tight_layout()
print(f"{len(path['n_support'])} pruning rounds, from {path['n_support'][0]} "
      f"to {pruned.n_support_} support vectors")

# %%
# The validation error moves by a few percent at most while hundreds of support vectors
# go, and passes the tolerance only near the end, once the remaining ones are too few to
# carry the shape of the sine.
#
# Streaming: on-line pruning or a reduced model's partial_fit
# -----------------------------------------------------------
# When the rows arrive in chunks, there are two ways to keep memory bounded with a budget
# of 50 support vectors: ``OnlineLSSVR`` prunes as rows arrive, and
# ``LSSVR(n_basis=50).partial_fit`` fixes its basis on the first chunk and then adds every
# chunk to an m x m summary, so that after each chunk it is the reduced LS-SVM of all the
# rows seen. We stream the 1,000 rows in 20 chunks and score both after each one.
online = OnlineLSSVR(**kernel, n_basis=50)
reduced = LSSVR(**kernel, n_basis=50, random_state=0)
seen, online_mse, reduced_mse = [], [], []
for X_chunk, y_chunk in zip(np.array_split(X, 20), np.array_split(y, 20), strict=True):
    online.partial_fit(X_chunk, y_chunk)
    reduced.partial_fit(X_chunk, y_chunk)
    seen.append(online.n_samples_seen_)
    online_mse.append(np.mean((online.predict(X_grid) - f_grid) ** 2))
    reduced_mse.append(np.mean((reduced.predict(X_grid) - f_grid) ** 2))
exact_mse = np.mean((models["LSSVR, exact (n_basis=None)"].predict(X_grid) - f_grid) ** 2)

fig, ax = plt.subplots(figsize=(6.4, 4))
ax.semilogy(seen, online_mse, "o-", label="OnlineLSSVR(n_basis=50).partial_fit")
ax.semilogy(seen, reduced_mse, "s-", label="LSSVR(n_basis=50).partial_fit")
ax.axhline(exact_mse, color="0.4", linestyle=":", label="exact LSSVR on all 1,000 rows")
ax.set(xlabel="rows seen", ylabel="MSE to sin(x) + 0.5", title="Streaming 20 chunks")
ax.legend(fontsize=8)
fig.tight_layout()

noise = np.abs(y - np.sin(X[:, 0]) - 0.5).mean()
kept = np.abs(online.support_targets_ - np.sin(online.basis_[:, 0]) - 0.5).mean()
print(f"after {seen[-1]} rows: OnlineLSSVR MSE {online_mse[-1]:.4f}, "
      f"LSSVR.partial_fit MSE {reduced_mse[-1]:.4f}, exact {exact_mse:.4f}")
print(f"mean |noise| of all rows {noise:.3f}, of the 50 rows OnlineLSSVR kept {kept:.3f}")

# %%
# The reduced model's error falls to the exact LS-SVM's as rows arrive, since it
# summarizes all of them. On-line pruning does not improve with more rows: its error
# wanders well above, from one chunk to the next. The last line shows why:
# on-line pruning drops the row of smallest ``|alpha|``, and an LS-SVM's alpha is proportional
# to its residual, so under noise the budget fills with the rows whose noise is largest.
# Use ``OnlineLSSVR`` when the model must forget old rows and keep a fixed set of actual
# training rows, and the reduced model's ``partial_fit`` when the rows need not be
# forgotten.
