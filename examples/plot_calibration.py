"""
=====================================
Probability estimates and calibration
=====================================

An SVM outputs a decision value, not a probability. Its classifiers (scikit-learn's
:class:`~sklearn.svm.SVC`, and every classifier of sparsekernel but one) have no
``predict_proba`` of their own: the usual route is to calibrate their decision values
with :class:`~sklearn.calibration.CalibratedClassifierCV`, which fits the model again on
each of its folds. :class:`~sparsekernel.KernelLogisticRegression` minimizes the logistic
loss on m kernel features, so its ``predict_proba`` estimates the class probabilities
directly, from one fit. This example compares their probabilities on held-out rows with
reliability diagrams, the log-loss and the Brier score.
"""

# %%
# Data and models
# ---------------
# Two interleaved half-moons with heavy noise, so that many rows have a true class
# probability far from 0 and 1: 4,000 training rows and 10,000 test rows. We compare
#
# * ``KernelLogisticRegression`` with 100 k-means basis functions;
# * scikit-learn's ``SVC`` calibrated by Platt's sigmoid on 3 folds;
# * :class:`~sparsekernel.LowRankSVC` calibrated the same way.
import time

import matplotlib.pyplot as plt
from sklearn.calibration import CalibratedClassifierCV, CalibrationDisplay
from sklearn.datasets import make_moons
from sklearn.metrics import brier_score_loss, log_loss
from sklearn.svm import SVC

from sparsekernel import KernelLogisticRegression, LowRankSVC

X, y = make_moons(n_samples=14_000, noise=0.45, random_state=0)
X_train, y_train, X_test, y_test = X[:4000], y[:4000], X[4000:], y[4000:]

models = {
    "KernelLogisticRegression": KernelLogisticRegression(
        gamma=2.0, C=1.0, n_basis=100, random_state=0),
    "SVC + CalibratedClassifierCV": CalibratedClassifierCV(
        SVC(gamma=2.0, C=1.0), method="sigmoid", cv=3),
    "LowRankSVC + CalibratedClassifierCV": CalibratedClassifierCV(
        LowRankSVC(gamma=2.0, C=1.0, n_basis=100, random_state=0), method="sigmoid", cv=3),
}
probabilities = {}
for name, model in models.items():
    start = time.perf_counter()
    model.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    proba = model.predict_proba(X_test)[:, 1]
    probabilities[name] = proba
    print(f"{name:36s} fit {seconds:6.3f} s  log-loss {log_loss(y_test, proba):.4f}  "
          f"Brier {brier_score_loss(y_test, proba):.4f}  "
          f"accuracy {model.score(X_test, y_test):.4f}")

# %%
# Reliability diagrams
# --------------------
# The test rows are binned by predicted probability; a calibrated model's curve follows
# the diagonal (of the rows given probability 0.7, about 70 % are positive). Below it, the
# histogram of the predicted probabilities shows how confident each model is.
fig = plt.figure(figsize=(10, 8))
grid = fig.add_gridspec(3, 3, height_ratios=[2, 1, 0.05])
ax_curve = fig.add_subplot(grid[0, :])
for i, (name, proba) in enumerate(probabilities.items()):
    CalibrationDisplay.from_predictions(y_test, proba, n_bins=10, name=name, ax=ax_curve,
                                        marker="os^"[i], color=f"C{i}")
    ax_hist = fig.add_subplot(grid[1, i])
    ax_hist.hist(proba, bins=20, range=(0, 1), color=f"C{i}")
    ax_hist.set(title=name, xlabel="predicted probability of class 1", ylabel="rows")
    ax_hist.title.set_fontsize(9)
ax_curve.set_title("Reliability diagram on 10,000 test rows")
ax_curve.legend(loc="upper left", fontsize=9)
fig.tight_layout()

# %%
# The kernel logistic regression follows the diagonal most closely, and the log-loss and
# Brier score printed above agree. The calibrated SVC bends away from it, and its
# histogram shows why: the hinge loss pushes the decision values of many rows onto the
# margins at -1 and +1, so Platt's sigmoid maps them to two spikes of probability, while
# the logistic loss spreads its estimates over the whole range. The cost differs too:
# ``KernelLogisticRegression`` gets its probabilities from a single fit, while
# ``CalibratedClassifierCV`` fits its model once per fold and then the sigmoid, and
# predicts with every fold's model. For an exact SVC, whose fit grows about quadratically
# with the rows, that is where calibration gets expensive.
#
# The probability surface
# -----------------------
# ``predict_proba`` of the kernel logistic regression over the plane: it moves smoothly
# from one class to the other where the moons overlap, rather than jumping at the
# boundary.
import numpy as np

klr = models["KernelLogisticRegression"]
shown = slice(0, 400)
corners = np.vstack([X_train[shown], klr.basis_])
low, high = corners.min(axis=0) - 0.2, corners.max(axis=0) + 0.2
xx, yy = np.meshgrid(np.linspace(low[0], high[0], 200), np.linspace(low[1], high[1], 200))
surface = klr.predict_proba(np.c_[xx.ravel(), yy.ravel()])[:, 1].reshape(xx.shape)

fig, ax = plt.subplots(figsize=(7, 5))
contour = ax.contourf(xx, yy, surface, levels=np.linspace(0, 1, 11), cmap="RdBu_r",
                      alpha=0.8)
fig.colorbar(contour, ax=ax, label="P(class 1)")
ax.contour(xx, yy, surface, levels=[0.5], colors="black", linewidths=1)
for label, color in [(0, "navy"), (1, "darkred")]:
    sel = y_train[shown] == label
    ax.scatter(X_train[shown][sel, 0], X_train[shown][sel, 1], color=color, s=10,
               edgecolors="white", linewidths=0.4, label=f"class {label}")
ax.scatter(klr.basis_[:, 0], klr.basis_[:, 1], facecolors="none", edgecolors="black",
           s=60, linewidths=1.2, label=f"basis points (m = {klr.basis_.shape[0]})")
ax.set(title="KernelLogisticRegression.predict_proba", xlabel="x1", ylabel="x2")
ax.legend(loc="lower left", fontsize=8)
fig.tight_layout()
