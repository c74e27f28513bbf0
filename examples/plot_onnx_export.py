"""
=========================
Exporting a model to ONNX
=========================

:func:`sparsekernel.io.to_onnx` writes a fitted model, or a pipeline holding one, as an ONNX
graph that `onnxruntime <https://onnxruntime.ai>`_ runs without sparsekernel. The graph
computes :math:`K(x, Z)\\,W + b` on the model's m basis vectors, so it is as small as the
model. This example exports a :class:`~sparsekernel.LowRankSVC` pipeline, runs it with
onnxruntime, compares its labels and scores with the model's own, and draws the decision
boundary from the ONNX scores. It needs the ``onnx`` extra and onnxruntime
(``pip install "sparsekernel[onnx]" onnxruntime``).
"""

# %%
# Fit and export
# --------------
# Two noisy half-moons: 2,000 training rows and 2,000 test rows. The pipeline scales the
# features and fits a ``LowRankSVC`` (its number of basis functions chosen by
# ``n_basis='auto'``). ``to_onnx`` takes a sample row: its width and dtype (here float32)
# fix the graph's input.
import matplotlib.pyplot as plt
import numpy as np
import onnxruntime as ort
from sklearn.datasets import make_moons
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sparsekernel import LowRankSVC
from sparsekernel.io import to_onnx

X, y = make_moons(n_samples=4000, noise=0.3, random_state=0)
X_train, y_train, X_test, y_test = X[:2000], y[:2000], X[2000:], y[2000:]
pipe = make_pipeline(StandardScaler(), LowRankSVC(random_state=0)).fit(X_train, y_train)

onx = to_onnx(pipe, X_train[:1].astype(np.float32))
payload = onx.SerializeToString()  # the bytes of a .onnx file
print(f"{pipe[-1].basis_.shape[0]} basis functions, ONNX graph of {len(payload):,} bytes")
print("operators:", sorted({node.op_type for node in onx.graph.node}))

# %%
# Run with onnxruntime
# --------------------
# The session reads the serialized graph (a file name works too). A classifier's outputs
# follow skl2onnx: ``label``, then ``probabilities``, which for ``LowRankSVC`` are its
# decision scores, one column for two classes.
session = ort.InferenceSession(payload, providers=["CPUExecutionProvider"])
print("inputs:", [i.name for i in session.get_inputs()],
      "outputs:", [o.name for o in session.get_outputs()])
labels, scores = session.run(None, {"X": X_test.astype(np.float32)})

same = np.mean(labels == pipe.predict(X_test))
gap = np.abs(scores[:, 0] - pipe.decision_function(X_test)).max()
print(f"equal labels: {same:.4f}; largest score difference: {gap:.2e}")
print(f"test accuracy, ONNX: {np.mean(labels == y_test):.4f}, "
      f"model: {pipe.score(X_test, y_test):.4f}")

# %%
# The scores differ by float32 rounding only: the graph computes the kernel in float64, as
# the model does, and returns float32 because its input is float32. A float64 sample gives
# a float64 graph.
onx64 = to_onnx(pipe, X_train[:1])
session64 = ort.InferenceSession(onx64.SerializeToString(), providers=["CPUExecutionProvider"])
scores64 = session64.run(None, {"X": X_test})[1]
gap64 = np.abs(scores64[:, 0] - pipe.decision_function(X_test)).max()
print(f"float64 graph: {scores64.dtype} scores, largest difference {gap64:.2e}")

# %%
# The decision boundary from the ONNX scores
# ------------------------------------------
# The ONNX session's scores over a grid of the plane: the filled contours, with the zero
# level (the boundary) in black. The model's own boundary, from ``decision_function``, is
# drawn dashed over it.
low, high = X.min(axis=0) - 0.3, X.max(axis=0) + 0.3
xx, yy = np.meshgrid(np.linspace(low[0], high[0], 250), np.linspace(low[1], high[1], 250))
grid = np.c_[xx.ravel(), yy.ravel()]
onnx_surface = session.run(None, {"X": grid.astype(np.float32)})[1].reshape(xx.shape)
model_surface = pipe.decision_function(grid).reshape(xx.shape)

fig, ax = plt.subplots(figsize=(7, 5))
bound = np.ceil(2 * np.abs(onnx_surface).max()) / 2  # a round colour scale
filled = ax.contourf(xx, yy, onnx_surface, levels=np.linspace(-bound, bound, 21),
                     cmap="RdBu_r", alpha=0.8)
fig.colorbar(filled, ax=ax, label="ONNX decision score")
ax.contour(xx, yy, onnx_surface, levels=[0], colors="black", linewidths=2)
ax.contour(xx, yy, model_surface, levels=[0], colors="yellow", linewidths=1,
           linestyles="--")
shown = slice(0, 400)
for label, color in [(0, "navy"), (1, "darkred")]:
    sel = y_test[shown] == label
    ax.scatter(X_test[shown][sel, 0], X_test[shown][sel, 1], color=color, s=8,
               edgecolors="white", linewidths=0.3, label=f"class {label}")
ax.plot([], [], color="black", linewidth=2, label="boundary, onnxruntime")
ax.plot([], [], color="yellow", linewidth=1, linestyle="--",
        label="boundary, decision_function")
ax.set(title="LowRankSVC pipeline run by onnxruntime", xlabel="x1", ylabel="x2")
ax.legend(loc="lower left", fontsize=8)
fig.tight_layout()
print(f"largest score difference on the grid: "
      f"{np.abs(onnx_surface - model_surface).max():.2e}")

# %%
# The two boundaries coincide. To deploy, write ``payload`` to a file; the runtime needs
# neither scikit-learn nor sparsekernel. Pipelines with other scikit-learn steps, the
# outputs of the other estimators, the precision rules and what cannot be exported are
# described on the user guide's page :doc:`/user_guide/onnx`.
