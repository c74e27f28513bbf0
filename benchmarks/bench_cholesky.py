"""Cholesky on one BLAS thread: NumPy's, SciPy's wrapper and SciPy's LAPACK without the GIL.

The one-vs-rest solvers factor one system per class, the classes side by side on Python
threads that each run one BLAS thread (``sparsekernel.compute._threads``). What matters is the
time of one factorization alone and of two side by side: a routine that holds the GIL runs
two calls one after the other. Three routines on the same SPD matrices (``I + G^T G / p``):

* ``numpy``: ``numpy.linalg.cholesky`` (releases the GIL; NumPy's own OpenBLAS build);
* ``scipy``: ``scipy.linalg.lapack.dpotrf`` (SciPy's Python wrapper: holds the GIL);
* ``sparsekernel``: ``compute._lapack.potrf_lower`` (SciPy's LAPACK through its Cython
  export, without the GIL) factoring the whole matrix in one ``potrf`` call.

Each figure is the median over ``--repeats`` rounds of: one call alone, and two calls on two
threads (time per call = wall time / 2). Also the sequence the solvers run on more BLAS
threads, a NumPy ``syrk`` followed by the factorization, on two BLAS threads: where the two
OpenBLAS builds meet.

Run: ``python benchmarks/bench_cholesky.py`` (about a minute) or ``--quick``. Writes
benchmarks/results/cholesky/cholesky{,_quick}.{json,md}.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.linalg.lapack import dpotrf
from threadpoolctl import threadpool_limits

from _harness import load_note, write_results
from sparsekernel.compute._lapack import potrf_lower

ROUTINES = {
    "numpy": np.linalg.cholesky,
    "scipy": lambda A: dpotrf(A, lower=1, clean=0),
    "sparsekernel": potrf_lower,
}


def _median_ms(fn, rounds):
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def _row(name, size, A, rounds, pool):
    factor = ROUTINES[name]
    alone = _median_ms(lambda: factor(A), rounds)
    pair = _median_ms(lambda: list(pool.map(factor, [A, A])), rounds) / 2
    return {"routine": name, "size": size, "alone_ms": alone, "side_by_side_ms": pair,
            "speedup_two_threads": alone / pair}


def _after_syrk(name, size, G, rounds):
    """ms of the factorization right after a NumPy syrk, both on two BLAS threads."""
    factor, times = ROUTINES[name], []
    with threadpool_limits(2):
        for _ in range(rounds):
            H = G.T @ G
            H[np.diag_indices(size)] += 1.0
            t0 = time.perf_counter()
            factor(H)
            times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, few rounds")
    ap.add_argument("--sizes", default=None, help="comma-separated system sizes")
    ap.add_argument("--repeats", type=int, default=None, help="rounds per figure")
    ap.add_argument("--out", default=None,
                    help="results folder (default benchmarks/results/cholesky)")
    args = ap.parse_args(argv)
    sizes = ([int(s) for s in args.sizes.split(",")] if args.sizes
             else [100, 1100] if args.quick else [268, 1000, 1225, 1600, 1800, 2000, 2923])
    rounds = args.repeats or (3 if args.quick else 9)
    note, rng, rows = load_note(), np.random.default_rng(0), []
    with ThreadPoolExecutor(2) as pool:
        for size in sizes:
            G = rng.standard_normal((2 * size, size))
            A = G.T @ G / size + np.eye(size)
            with threadpool_limits(1):
                for name in ROUTINES:
                    rows.append(_row(name, size, A, rounds, pool))
            for row in rows[-len(ROUTINES):]:
                row["after_syrk_two_blas_threads_ms"] = _after_syrk(row["routine"], size, G,
                                                                    rounds)
                print(row, flush=True)
    payload = {
        "title": "Cholesky on one BLAS thread: alone and two side by side (ms a call)",
        "notes": [note, f"float64 SPD matrices, median of {rounds} rounds a figure",
                  "side by side: two calls on two Python threads, wall time / 2",
                  "after syrk: a NumPy G^T G then the factorization, two BLAS threads"],
        "rows": rows,
    }
    columns = [("routine", "routine"), ("size", "size"), ("alone ms", "alone_ms"),
               ("side by side ms", "side_by_side_ms"),
               ("two-thread speed-up", "speedup_two_threads"),
               ("after syrk, 2 BLAS threads, ms", "after_syrk_two_blas_threads_ms")]
    name = "cholesky_quick" if args.quick else "cholesky"
    print(write_results(name, payload, columns, args.out).read_text())


if __name__ == "__main__":
    main()
