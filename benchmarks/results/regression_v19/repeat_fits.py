"""Six fits in one process, after a warm-up fit, of the suite fits that moved: the median
and the fastest, in seconds. Run it once per tree, alternating, with PYTHONPATH set to that
tree's ``src`` (from the repository root)::

    PYTHONPATH=/path/to/tree/src python benchmarks/results/regression_v19/repeat_fits.py
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/

import sparsekernel  # noqa: E402
from _suite_data import load  # noqa: E402
from sparsekernel import LSSVC, ReducedSVC  # noqa: E402

CASES = [("mnist_5k", ReducedSVC, 10.0), ("pendigits", LSSVC, 100.0), ("dna", LSSVC, 1.0),
         ("dna", ReducedSVC, 10.0)]

for name, cls, C in CASES:
    X, y, _, _ = load(name)
    gamma = 1.0 / (X.shape[1] * X.var())
    cls(C=C, gamma=gamma, random_state=0).fit(X, y)
    times = []
    for _ in range(6):
        start = time.perf_counter()
        cls(C=C, gamma=gamma, random_state=0).fit(X, y)
        times.append(time.perf_counter() - start)
    print(Path(sparsekernel.__file__).parents[2].name, name, cls.__name__,
          f"median {np.median(times):.3f} min {min(times):.3f}", flush=True)
