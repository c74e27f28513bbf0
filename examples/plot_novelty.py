"""
======================================
Novelty detection with a one-class SVM
======================================

:class:`~sparsekernel.LowRankOneClassSVM` learns the region of the training rows (all of
them normal) and flags new rows outside it. It is Schölkopf's one-class SVM on m Nystrom
features, so its fit grows linearly with the rows. This example fits it on three clusters in
two dimensions, draws its boundary and landmarks, and checks the share of training rows left
outside: at most ``nu``, plus the rows lying on the boundary itself (at most one more than
the landmarks), whose side rounding decides.
"""

# %%
# Fit on normal rows
# ------------------
# 3,000 training rows from three Gaussian clusters; the test rows are 1,000 more from the
# same clusters and 100 novelties drawn uniformly around them.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_blobs
from sklearn.metrics import roc_auc_score

from sparsekernel import LowRankOneClassSVM

X, _ = make_blobs(n_samples=4000, centers=[[-3, -2], [0, 3], [3, -1]], cluster_std=0.9,
                  random_state=0)
X_train, X_normal = X[:3000], X[3000:]
novel = np.random.default_rng(0).uniform(-7, 7, (100, 2))

detector = LowRankOneClassSVM(nu=0.05, gamma=0.5, random_state=0).fit(X_train)
outside = np.mean(detector.predict(X_train) == -1)
print(f"{detector.n_support_} landmarks; training rows outside: {outside:.3f} (nu = 0.05)")

# %%
# Score new rows
# --------------
# ``predict`` says +1 (normal) or -1 (novel); ``score_samples`` ranks the rows (higher: more
# normal), for a ROC curve or a threshold of one's own.
truth = np.r_[np.ones(len(X_normal)), np.zeros(len(novel))]
test = np.vstack([X_normal, novel])
print(f"normal test rows kept: {np.mean(detector.predict(X_normal) == 1):.3f}")
print(f"novelties flagged: {np.mean(detector.predict(novel) == -1):.3f}")
print(f"ROC AUC: {roc_auc_score(truth, detector.score_samples(test)):.3f}")

# %%
# The boundary
# ------------
# The decision function is zero on the boundary (black), positive inside. The landmarks
# (ringed) are k-means centres of the training rows.
xx, yy = np.meshgrid(np.linspace(-7, 7, 300), np.linspace(-7, 7, 300))
zz = detector.decision_function(np.c_[xx.ravel(), yy.ravel()]).reshape(xx.shape)

fig, ax = plt.subplots(figsize=(6, 5.5))
ax.contourf(xx, yy, zz, levels=np.linspace(zz.min(), 0, 7), cmap="Blues_r")
ax.contour(xx, yy, zz, levels=[0], colors="black", linewidths=2)
ax.scatter(X_train[:, 0], X_train[:, 1], s=4, c="tab:green", label="training rows")
ax.scatter(novel[:, 0], novel[:, 1], s=14, c="tab:red", marker="x", label="novelties")
ax.scatter(detector.basis_[:, 0], detector.basis_[:, 1], s=30, facecolors="none",
           edgecolors="black", linewidths=0.6, label="landmarks")
ax.set_title("LowRankOneClassSVM (nu = 0.05)")
ax.legend(loc="lower left", fontsize=8)
plt.show()
