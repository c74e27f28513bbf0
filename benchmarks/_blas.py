"""Single-threaded BLAS for benchmarks on a small shared machine.

With more runnable threads than free cores, multi-threaded OpenBLAS spins and collapses:
a 241 x 241 Cholesky measured 0.4 s with default threads on this 2-core machine under a
load of 9, and 2 ms with one thread. Parallelism comes from processes (``n_jobs``) instead.
"""

from __future__ import annotations

import os

__all__ = ["single_thread_blas"]


def single_thread_blas():
    """Limit BLAS/OpenMP to one thread here and in processes started from here."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
