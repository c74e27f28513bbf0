"""
=======================================================
Fit time against the number of rows: SVC and LowRankSVC
=======================================================

An exact kernel SVM such as scikit-learn's :class:`~sklearn.svm.SVC` (LIBSVM) needs a time
that grows about quadratically with the number of training rows n, and it predicts at a
cost proportional to its support vectors, whose number grows with n too. A kernel machine on
m fixed basis functions, such as :class:`~sparsekernel.LowRankSVC`, costs O(n m^2) to fit:
linear in n. This example times both on growing samples of the same problem and draws the
fit times on a log-log plot, where a power law n^k is a straight line of slope k.
"""

# %%
# The problem and the timings
# ---------------------------
# The 4 x 4 checkerboard in two features, with 5 % of the labels flipped, and one RBF
# kernel (gamma = 2, C = 1) for both models. SVC is fitted on up to 8,000 rows, which keeps
# this example fast; LowRankSVC with 200 k-means landmarks goes on to 128,000. Both are
# scored on the same 20,000 held-out rows. One untimed fit first compiles LowRankSVC's
# solver, so that the first point is not charged with it.
import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.svm import SVC

from sparsekernel import LowRankSVC
from sparsekernel.datasets import make_checkerboard

X_all, y_all = make_checkerboard(128_000, noise=0.05, random_state=0)
X_test, y_test = make_checkerboard(20_000, noise=0.05, random_state=1)
params = dict(kernel="rbf", gamma=2.0, C=1.0)

models = {
    "sklearn SVC": (lambda: SVC(**params), [1000, 2000, 4000, 8000]),
    "LowRankSVC (m = 200)": (lambda: LowRankSVC(**params, n_basis=200, random_state=0),
                             [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000]),
}
LowRankSVC(**params, n_basis=200, random_state=0).fit(X_all[:2000], y_all[:2000])  # warm-up

results = {}
for name, (make_model, sizes) in models.items():
    times, accuracies = [], []
    for n in sizes:
        model = make_model()
        start = time.perf_counter()
        model.fit(X_all[:n], y_all[:n])
        times.append(time.perf_counter() - start)
        accuracies.append(model.score(X_test, y_test))
        print(f"{name:22s} n={n:7,d}  fit {times[-1]:7.3f} s  "
              f"test accuracy {accuracies[-1]:.4f}")
    results[name] = (np.array(sizes), np.array(times), np.array(accuracies))

# %%
# Fit time and accuracy against n
# -------------------------------
# The slope of each line, fitted over all its sizes, estimates the exponent k of its n^k;
# the printed output gives the numbers.
fig, (ax_time, ax_acc) = plt.subplots(1, 2, figsize=(12, 4.5))
for (name, (sizes, times, accuracies)), marker in zip(results.items(), ["o", "s"], strict=True):
    slope = np.polyfit(np.log(sizes), np.log(times), 1)[0]
    print(f"{name:22s} fit time grows as n^{slope:.2f} "
          f"from {sizes[0]:,} to {sizes[-1]:,} rows")
    ax_time.loglog(sizes, times, marker + "-", label=f"{name}: slope {slope:.2f}")
    ax_acc.semilogx(sizes, accuracies, marker + "-", label=name)
ax_time.set_xlabel("training rows n")
ax_time.set_ylabel("fit time (s)")
ax_time.set_title("Fit time (log-log)")
ax_time.legend()
ax_time.grid(True, which="both", alpha=0.3)
ax_acc.set_xlabel("training rows n")
ax_acc.set_ylabel("accuracy on 20,000 held-out rows")
ax_acc.set_title("Test accuracy")
ax_acc.legend()
ax_acc.grid(True, which="both", alpha=0.3)
fig.tight_layout()

# %%
# SVC's line is steeper: its fit time grows faster than linearly in n, as the number of
# support vectors (each one a kernel column the solver must touch) grows with the rows.
# LowRankSVC's slope is at most 1 (below it where fixed costs such as choosing the
# landmarks weigh on the small fits), so in the time SVC takes on a few
# thousand rows it fits many times more, and more rows buy accuracy that a subsample
# cannot. Timings depend on the machine and its load; the slopes are what carries over.
