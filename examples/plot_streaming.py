"""
===============================================
Learning from a file larger than memory
===============================================

A kernel machine on m basis functions maps each row to m features, and a fit that keeps
all of them in memory needs n x m numbers: more than the data itself once m exceeds the
number of columns. :meth:`LowRankSVC.fit_stream <sparsekernel.LowRankSVC.fit_stream>`
reads the rows chunk by chunk instead (a LIBSVM file through
:class:`~sparsekernel.datasets.SvmlightChunks`, or any iterable of ``(X, y)`` chunks), maps
each chunk and solves on it with a cache of the rows nearest the margin, so its memory
depends on the chunk size, not on the number of rows.
:meth:`~sparsekernel.LowRankSVC.partial_fit` does one such step on a chunk you hand it.
"""

# %%
# LIBSVM files of growing size
# ----------------------------
# We write the first 25,000, 50,000 and 100,000 rows of a noisy 4 x 4 checkerboard to
# LIBSVM files in a temporary folder, and fit :class:`~sparsekernel.LowRankSVC` with 200
# landmarks on each, twice: by loading the file and calling ``fit``, and by
# ``fit_stream`` on chunks of 10,000 rows. Python's :mod:`tracemalloc` records the peak
# memory each one allocates (NumPy reports its arrays to it). A small fit of each kind
# first compiles the solvers, so that no timing below includes it.
import tempfile
import time
import tracemalloc
from pathlib import Path

import matplotlib.pyplot as plt
from sklearn.datasets import dump_svmlight_file

from sparsekernel import LowRankSVC
from sparsekernel.datasets import SvmlightChunks, load_svmlight_path, make_checkerboard

X, y = make_checkerboard(100_000, noise=0.05, random_state=0)
X_test, y_test = make_checkerboard(20_000, noise=0.05, random_state=1)
params = dict(gamma=2.0, C=1.0, n_basis=200, random_state=0)
workdir = tempfile.TemporaryDirectory()  # removed at the end
folder = Path(workdir.name)

LowRankSVC(**params).fit(X[:2000], y[:2000])  # warm-up: compile the solvers
LowRankSVC(**params).fit_stream([(X[:2000], y[:2000]), (X[2000:4000], y[2000:4000])])

sizes = [25_000, 50_000, 100_000]
paths = [folder / f"checkerboard_{n}.libsvm" for n in sizes]
for n, path in zip(sizes, paths, strict=True):
    dump_svmlight_file(X[:n], y[:n], str(path), zero_based=False)

peaks = {"load + fit": [], "fit_stream": []}
tracemalloc.start()
for n, path in zip(sizes, paths, strict=True):
    tracemalloc.reset_peak()
    start = time.perf_counter()
    X_file, y_file = load_svmlight_path(path)[:2]
    in_memory = LowRankSVC(**params).fit(X_file, y_file)
    seconds = time.perf_counter() - start
    peaks["load + fit"].append(tracemalloc.get_traced_memory()[1] / 2**20)
    del X_file, y_file
    print(f"n={n:7,d}  load + fit: {seconds:5.2f} s, peak {peaks['load + fit'][-1]:6.1f} MiB,"
          f" test accuracy {in_memory.score(X_test, y_test):.4f}")

    tracemalloc.reset_peak()
    start = time.perf_counter()
    streamed = LowRankSVC(**params).fit_stream(SvmlightChunks(path, chunk_size=10_000))
    seconds = time.perf_counter() - start
    peaks["fit_stream"].append(tracemalloc.get_traced_memory()[1] / 2**20)
    print(f"n={n:7,d}  fit_stream: {seconds:5.2f} s, peak {peaks['fit_stream'][-1]:6.1f} MiB,"
          f" test accuracy {streamed.score(X_test, y_test):.4f}")
tracemalloc.stop()

fig, ax = plt.subplots(figsize=(6.4, 4.2))
for (name, peak), marker in zip(peaks.items(), "os", strict=True):
    ax.plot(sizes, peak, marker + "-", label=name)
ax.set(xlabel="rows in the file", ylabel="peak allocated memory (MiB)",
       title="LowRankSVC, 200 landmarks", ylim=(0, None))
ax.ticklabel_format(axis="x", style="plain")
ax.legend()
ax.grid(True, alpha=0.3)
fig.tight_layout()

# %%
# The fit in memory grows with the file, by about n x m features in float64. The streamed
# fit's peak stays nearly level, set by the chunk size and m rather than by the file, and
# it reaches the same test accuracy: the file may be larger than memory.
#
# Feeding the chunks yourself
# ---------------------------
# ``partial_fit`` takes one chunk at a time: the first call chooses the landmarks on its
# chunk (pass ``classes`` unless that chunk holds every class), and each later call
# continues the block minimization. That suits rows that arrive over time, or a source
# that is not a file. We score the model after every chunk of 5,000 rows of the largest
# file.
model = LowRankSVC(**params)
seen, accuracy = [], []
for X_chunk, y_chunk in SvmlightChunks(path, chunk_size=5000):
    model.partial_fit(X_chunk, y_chunk, classes=[-1, 1])
    seen.append((seen[-1] if seen else 0) + len(y_chunk))
    accuracy.append(model.score(X_test, y_test))
print(f"partial_fit after {seen[0]:,} rows: test accuracy {accuracy[0]:.4f}; "
      f"after {seen[-1]:,}: {accuracy[-1]:.4f}")

fig, ax = plt.subplots(figsize=(6.4, 4.2))
ax.plot(seen, accuracy, "o-", markersize=4, label="partial_fit, chunks of 5,000 rows")
ax.axhline(streamed.score(X_test, y_test), color="C1", linestyle="--",
           label="fit_stream on the whole file")
ax.set(xlabel="rows seen", ylabel="test accuracy (20,000 rows)",
       title="LowRankSVC.partial_fit")
ax.ticklabel_format(axis="x", style="plain")
ax.legend(loc="lower right")
ax.grid(True, alpha=0.3)
fig.tight_layout()
workdir.cleanup()

# %%
# Accuracy climbs as chunks arrive and settles near the streamed fit's. Each chunk moves
# the model by one step of the block solver; ``fit_stream`` with ``n_passes=2`` goes over
# a file twice when one pass does not suffice.
