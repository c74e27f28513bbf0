"""The compute layer: threads, dense products and SPD factorizations, behind one API.

Everything in the package that decides threads or calls LAPACK/BLAS beyond NumPy's
operators goes through the names exported here; no other module imports this package's
private modules. Four groups:

* **The thread plan** (:func:`thread_plan`, :func:`planned_threads`, :func:`max_threads`,
  :func:`blas_threads`, :func:`blas_limit`, :func:`split_threads`). Every fit and predict
  runs inside one plan (``base.py``): the threads it may use are the CPUs of the process's
  affinity mask within the BLAS limit already in force (a joblib worker's, a Dask
  worker's, a caller's ``threadpoolctl`` limit), and BLAS runs on one thread while the
  library splits the work itself. The plan and the BLAS limit a block of code set are
  context-local (:mod:`contextvars`) and follow the work onto the pool's threads.
* **Side-by-side work** (:func:`map_threads`, :func:`imap_threads`, :func:`map_balanced`,
  :func:`drain_queue`, :func:`row_slices`): one pool of Python threads for the process,
  each calling one-thread BLAS (which releases the GIL).
* **Products of tall arrays** (:func:`matmul`, :func:`rmatmul`, :func:`gram`,
  :func:`syrk_lower`, :func:`split_rows`): split by rows into slices planned from the
  CPUs, run on the planned threads, sums added in slice order.
* **Array namespaces** (:class:`Backend`, :func:`backend_of`, :func:`model_to_numpy`,
  :func:`model_to_namespace`, :func:`copy_array`): NumPy, or under scikit-learn's
  ``array_api_dispatch`` the array-API namespace and device of the input (CuPy,
  PyTorch), where the code written against a :class:`Backend` computes.
* **SPD systems** (:func:`spd_cholesky`, :func:`spd_solve`, :func:`cholesky_solve`,
  :func:`finite_factor`, :func:`symmetric_from_lower`, :func:`add_to_diagonal`,
  :func:`pivoted_cholesky`, :func:`symmetric_eigh`, :func:`triangular_inverse`): one
  jitter policy, on NumPy or on the device of a namespace's arrays; on NumPy with one
  BLAS thread, LAPACK's ``potrf`` called without the GIL through SciPy's exported Cython
  LAPACK, checked against its stated C signature, with SciPy's public wrappers as the
  fallback (an ILP64 or otherwise different build).

How the plan uses more cores. With ``p`` threads planned:

* an n-row product (margins, gradients, a Hessian's Gram sum, kernel row blocks, k-means
  distances) is cut into ``p`` row slices; beyond two, each at least as tall as the product
  is wide (:func:`split_rows`), so on many cores a Gram sum's per-thread squares never take
  more memory than the rows they sum;
* ``k`` independent systems (one-vs-rest classes, regression targets) run side by side on
  ``min(k, p)`` threads of one-thread BLAS when ``k >= p``; fewer systems than threads run
  one after another, each with every thread for its row products and, from a size where
  BLAS's own threads pay, its factorization (:func:`split_threads`);
* a lone system (binary classification, a regression, the first system one-vs-rest
  shares) sums its rows on ``p`` threads and, from ``LONE_SOLVE_MIN`` unknowns, is
  factored on ``p`` BLAS threads.

Kernel row blocks, k-means blocks, the row slices of products and the memory plans' shares
are *partitioned* from :func:`max_threads` (the CPU count), never from the threads in force,
and a sum over slices is added in slice order (:func:`imap_threads`), so a fixed
``random_state`` gives the same model, to the bit, at any thread count (where a greedy step
would otherwise turn a rounding difference into another model). One exception: a Newton
system of ``LONE_SOLVE_MIN`` or more unknowns solved alone is factored on BLAS's threads,
whose blocking rounds differently for each count; such models agree to the rounding of
their features' precision as the solver propagates it, not to the bit.
"""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["NUMPY", "Backend", "JITTER_START", "JITTER_STOP", "LIKELY_CAUSES", "LONE_SOLVE_MIN",
           "NonFiniteError", "astype", "backend_of", "copy_array", "dtype_name",
           "holds_namespace_arrays", "model_to_namespace",
           "model_to_numpy", "namespace_of", "sign_columns", "to_numpy",
           "blas_limit", "blas_threads", "drain_queue", "finite_factor", "gram",
           "imap_threads", "map_balanced", "map_threads", "matmul", "max_threads",
           "planned_threads", "rmatmul", "row_slices", "spd_cholesky", "spd_solve", "split_rows",
           "split_threads", "syrk_lower", "thread_budget", "thread_plan",
           "add_to_diagonal", "cholesky_solve", "pivoted_cholesky", "pivoted_cholesky_on",
           "symmetric_eigh", "symmetric_from_lower", "triangular_inverse"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._errors": ["LIKELY_CAUSES", "NonFiniteError"],
    "._lapack": ["syrk_lower"],
    "._namespace": ["NUMPY", "Backend", "astype", "backend_of", "copy_array", "dtype_name",
                    "holds_namespace_arrays",
                    "model_to_namespace", "model_to_numpy", "namespace_of", "sign_columns",
                    "to_numpy"],
    "._products": ["gram", "matmul", "rmatmul", "split_rows"],
    "._spd": ["JITTER_START", "JITTER_STOP", "add_to_diagonal", "cholesky_solve",
              "finite_factor", "pivoted_cholesky", "pivoted_cholesky_on", "spd_cholesky",
              "spd_solve", "symmetric_eigh", "symmetric_from_lower", "triangular_inverse"],
    "._threads": ["LONE_SOLVE_MIN", "blas_limit", "blas_threads", "drain_queue",
                  "imap_threads", "map_balanced", "map_threads", "max_threads", "planned_threads",
                  "row_slices", "split_threads", "thread_budget", "thread_plan"],
})
