"""
=================================================
Tuning C and gamma with a uniform-design search
=================================================

An RBF kernel machine has two parameters to tune, the penalty C and the kernel width gamma,
and a grid search over both costs one cross-validated fit per grid point: 225 for a 15 x 15
grid. :class:`~sparsekernel.model_selection.UniformDesignSearchCV` runs the nested two-stage
uniform design instead: about 13 points spread evenly over the (log2 C, log2 gamma) box,
then about 9 in a box half as wide around the best of them. It is a scikit-learn
``GridSearchCV`` in all else (``cv_results_``, ``best_params_``, ``refit``, ``n_jobs``), and
:func:`~sparsekernel.model_selection.plot_ud_search` draws where it looked.
"""

# %%
# The default search box
# ----------------------
# We tune a :class:`~sparsekernel.ReducedSVC` with 25 basis functions on Ripley's data by
# 5-fold cross-validation. The default box is C in [1, 1e6] for the reduced models, and
# gamma from 2^-5 to 2^5 times scikit-learn's ``gamma='scale'``.
#
# When the best point lies on an edge of the box, the optimum may lie outside it, and both
# the fit and :func:`~sparsekernel.model_selection.plot_ud_search` say so with a
# :class:`~sparsekernel.model_selection.SearchBoundaryWarning` naming the range to widen.
# We expect that here, so we record the warning and print it rather than let it pass.
import warnings

import matplotlib.pyplot as plt
import numpy as np

from sparsekernel import ReducedSVC
from sparsekernel.datasets import load_ripley
from sparsekernel.model_selection import (
    SearchBoundaryWarning,
    UniformDesignSearchCV,
    plot_ud_search,
)

X, y, X_test, y_test = load_ripley()
model = ReducedSVC(n_basis=25, random_state=0)

fig, ax = plt.subplots(figsize=(6.4, 5))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", SearchBoundaryWarning)
    search = UniformDesignSearchCV(model, cv=5, random_state=0).fit(X, y)
    plot_ud_search(search, ax=ax)
ax.set_title("Default box: the best C lies on its lower edge", fontsize=10)
fig.tight_layout()

print(f"{len(search.cv_results_['params'])} fits, best {search.best_params_}, "
      f"CV accuracy {search.best_score_:.3f}")
for message in sorted({str(w.message) for w in caught}):
    print(f"SearchBoundaryWarning: {message}")

# %%
# Stage-1 points are circles, stage-2 points triangles, the chosen point a star, and the
# dashed rectangle is the stage-2 box, over the CV error interpolated between the points.
# The best C sits on the lower edge: the box should reach lower.

# %%
# A wider box, and the grid it replaces
# -------------------------------------
# Following the warning, we widen the C range downward. To see how well 22 points find the
# optimum, we also run an 11 x 11 grid search over the same box (121 fits) and draw the UD
# points over the grid's error surface with ``surface=``.
from sklearn.model_selection import GridSearchCV

C_range, gamma_range = (1e-2, 1e3), (10 ** -1.5, 10**2)
search = UniformDesignSearchCV(model, C_range=C_range, gamma_range=gamma_range, cv=5,
                               random_state=0).fit(X, y)
grid = GridSearchCV(model, {"C": np.geomspace(*C_range, 11),
                            "gamma": np.geomspace(*gamma_range, 11)}, cv=5).fit(X, y)

fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharex=True, sharey=True)
plot_ud_search(search, ax=axes[0])
axes[0].set_title("Uniform design, surface interpolated from its 22 points", fontsize=10)
plot_ud_search(search, surface=grid, ax=axes[1])
axes[1].set_title("The same points over the 11 x 11 grid's CV error", fontsize=10)
fig.tight_layout()

for name, s in [("uniform design", search), ("11 x 11 grid", grid)]:
    print(f"{name:15s} {len(s.cv_results_['params']):4d} fits  "
          f"best C={s.best_params_['C']:8.3f} gamma={s.best_params_['gamma']:7.3f}  "
          f"CV accuracy {s.best_score_:.3f}  test accuracy {s.score(X_test, y_test):.3f}")

# %%
# The uniform design comes close to the grid's best CV accuracy, and matches its test
# accuracy, with a fifth of its fits. Ripley's error surface is a broad low plateau over a
# band of gammas, rising steeply where C and gamma are both small (an over-smoothed model),
# and the second stage lands on the plateau. Such a search costs 13 to 22 fits whatever the
# box, so widening the box when the search warns is cheap.
