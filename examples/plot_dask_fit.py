"""
==========================
Fitting on a Dask cluster
==========================

:class:`~sparsekernel.LowRankSVC`, :class:`~sparsekernel.KernelLogisticRegression`,
:class:`~sparsekernel.ReducedSVC` and a few others fit a dask array as they fit a NumPy
array: the basis is chosen on a sample drawn from every chunk, each chunk's kernel
features are computed on the worker that holds it, and the solver's gradients and Hessians
are summed there, so a step sends m x m sums over the network, never rows. The model is
the one the same solver gives in memory. This example fits on a small local cluster and
compares the decisions with the in-memory model's.

It needs the ``distributed`` extra (``pip install 'sparsekernel[distributed]'``).
"""

# %%
# A local cluster and chunked data
# --------------------------------
# Two single-threaded workers in this process stand in for a cluster; with a real one,
# pass its address to :class:`distributed.Client` and nothing else changes. The 20,000
# rows are cut into 4 chunks of 5,000 rows, which Dask spreads over the workers.
#
# Even without a dashboard the scheduler serves HTTP on port 8787, and it warns when
# another process already holds that port (a cluster left running elsewhere), then takes
# another one; that warning says nothing about this example, so we silence it here.
import warnings

import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from distributed import Client, LocalCluster
from sklearn.datasets import make_classification

from sparsekernel import KernelLogisticRegression, LowRankSVC

X, y = make_classification(n_samples=20_000, n_features=10, n_informative=6,
                           random_state=0)
params = dict(n_basis=200, gamma=0.1, C=10.0, random_state=0)

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Port 8787 is already in use",
                            category=UserWarning)
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                           dashboard_address=None)
client = Client(cluster)
X_dask = da.from_array(X, chunks=(5_000, X.shape[1]))
y_dask = da.from_array(y, chunks=5_000)
print(f"{X_dask.numblocks[0]} chunks on {len(client.scheduler_info()['workers'])} workers")

# %%
# The same estimator, in memory and on the cluster
# ------------------------------------------------
# ``fit`` on dask input runs on the cluster (the default client, the one created above);
# ``decision_function`` and ``predict`` on dask input return lazy dask arrays, computed
# block by block where the chunks are.
models = {"LowRankSVC": LowRankSVC, "KernelLogisticRegression": KernelLogisticRegression}
decisions = {}
for name, Estimator in models.items():
    in_memory = Estimator(**params).fit(X, y)
    on_dask = Estimator(**params).fit(X_dask, y_dask)
    lazy = on_dask.decision_function(X_dask)
    decisions[name] = (in_memory.decision_function(X), lazy.compute())
    agree = np.mean(on_dask.predict(X_dask).compute() == in_memory.predict(X))
    gap = np.max(np.abs(decisions[name][0] - decisions[name][1]))
    print(f"{name:25s} predict on dask: {type(lazy).__name__} of {lazy.numblocks[0]} "
          f"blocks; same labels on {agree:.2%} of the rows, "
          f"largest decision gap {gap:.1e}")

client.close()
cluster.close()

# %%
# Each point below is one of 3,000 rows drawn at random: its decision value from the
# in-memory model against the one from the model fitted on the cluster, coloured by its
# true class. The title gives the largest gap over all the rows.
fig, axes = plt.subplots(1, 2, figsize=(11, 4.6))
rows = np.random.default_rng(0).choice(len(X), size=3000, replace=False)
for ax, (name, (memory, dask)) in zip(axes, decisions.items(), strict=True):
    ax.scatter(memory[rows], dask[rows], s=5, c=y[rows], cmap="coolwarm", alpha=0.6)
    lo, hi = memory.min(), memory.max()
    ax.plot([lo, hi], [lo, hi], color="0.3", linewidth=0.8, linestyle="--")
    ax.axhline(0, color="0.6", linewidth=0.6)
    ax.axvline(0, color="0.6", linewidth=0.6)
    gap = np.max(np.abs(memory - dask))
    ax.set(title=f"{name}: largest gap {gap:.1e}", xlabel="decision value, fitted in memory",
           ylabel="decision value, fitted on Dask")
fig.tight_layout()

# %%
# The distributed fit gives the in-memory model up to floating-point round-off (the sums
# are added in another order), and therefore the same labels. Only the sample the basis is
# chosen on and the solver's m x m sums travel, so the same code fits data that is spread
# over many machines and too large for any one of them.
