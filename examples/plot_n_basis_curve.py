"""
=======================================
Choosing the number of basis functions
=======================================

The one number a reduced kernel machine asks for is m, the number of basis functions
(``n_basis``). A larger m approximates the full kernel machine more closely, but the fit
costs O(n m^2) and a prediction O(m). The test error typically falls quickly and then
flattens out, while the fit time keeps growing: the good m is where the error curve has
flattened. :class:`~sparsekernel.inspection.NBasisCurveDisplay` draws both curves in one
call.
"""

# %%
# A held-out test set
# -------------------
# The banana data set ships with the package. We train on 1,000 rows and score on the
# 4,300 others; every point of the curve is a clone of the estimator with
# ``n_basis=m, random_state=0`` fitted on the same rows.
import matplotlib.pyplot as plt

from sparsekernel import ReducedSVC
from sparsekernel.datasets import load_banana
from sparsekernel.inspection import NBasisCurveDisplay

X, y, X_test, y_test = load_banana(random_state=0, n_train=1000)

disp = NBasisCurveDisplay.from_estimator(
    ReducedSVC(C=100.0, gamma=1.0), X, y, n_basis=[2, 5, 10, 20, 50, 100, 200],
    X_test=X_test, y_test=y_test, random_state=0)
disp.ax_.set_title("ReducedSVC on banana (1,000 training rows)")
disp.figure_.tight_layout()

for m, error, seconds in zip(disp.n_basis, disp.error_mean, disp.fit_time_mean, strict=True):
    print(f"n_basis={m:4d}  test error {error:.3f}  fit {seconds * 1000:6.1f} ms")

# %%
# The error drops steeply over the first few basis functions and then stays level: a few
# dozen kernels, a small share of the 1,000 training rows, give the model all the accuracy
# it can have, while the fit time goes on rising with m.
#
# Cross-validated, in a pipeline
# ------------------------------
# Without a test set every point is cross-validated (the same folds for every m), and the
# plot shades one standard deviation of the error over the folds. Here the handwritten
# digits (64 pixel intensities, 10 classes) go through a ``MinMaxScaler`` (pixels share one
# unit, so they are scaled alike rather than standardized one by one) into a
# :class:`~sparsekernel.LowRankSVC`; the display finds the pipeline's nested
# ``lowranksvc__n_basis`` by itself. Values may be ints or, as here, fractions of the
# training rows.
from sklearn.datasets import load_digits
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler

from sparsekernel import LowRankSVC

X, y = load_digits(return_X_y=True)
pipe = make_pipeline(MinMaxScaler(), LowRankSVC(C=10.0))

fig, ax = plt.subplots(figsize=(6.4, 4.2))
disp = NBasisCurveDisplay.from_estimator(
    pipe, X, y, n_basis=[0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4], cv=3, random_state=0,
    ax=ax)
ax.set_title("LowRankSVC on digits, 3-fold cross-validation")
ax.set_xlabel("n_basis (fraction of the training rows)")
fig.tight_layout()

for m, error, spread in zip(disp.n_basis, disp.error_mean, disp.errors.std(axis=1),
                               strict=True):
    print(f"n_basis={m:5.3f}  CV error {error:.3f} +- {spread:.3f}")

# %%
# Ten classes need more basis functions than banana's two, but the shape is the same: the
# error levels off at a fraction of the rows. :func:`sparsekernel.inspection.n_basis_curve`
# gives the same numbers without drawing; ``n_basis='auto'`` (the default of most
# estimators) picks m from an estimate of the kernel's effective dimension instead.
