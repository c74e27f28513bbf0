"""The compute layer: threads, dense products and SPD factorizations, behind one API.

Everything in the package that decides threads or calls LAPACK/BLAS beyond NumPy's
operators goes through the names exported here; no other module imports this package's
private modules. Five groups:

* **The thread plan** (:func:`thread_plan`, :func:`planned_threads`, :func:`max_threads`,
  :func:`blas_threads`, :func:`blas_limit`, :func:`split_threads`). Every fit and predict
  runs inside one plan: the threads it may use are the CPUs of the process's affinity mask
  within the BLAS limit already in force (a joblib or Dask worker's, a caller's
  ``threadpoolctl`` limit), and BLAS runs on one thread while the library splits the work
  itself. The plan and the BLAS limit are context-local (:mod:`contextvars`) and follow
  the work onto the pool's threads.
* **Side-by-side work** (:func:`map_threads`, :func:`imap_threads`, :func:`map_balanced`,
  :func:`drain_queue`, :func:`row_slices`): one pool of Python threads for the process,
  each calling one-thread BLAS (which releases the GIL).
* **Products of tall arrays** (:func:`matmul`, :func:`rmatmul`, :func:`gram`,
  :func:`syrk_lower`, :func:`mirror_lower`, :func:`split_rows`): split by rows, run on the
  planned threads, sums added in slice order.
* **Array namespaces** (:class:`Backend`, :func:`backend_of`, :func:`model_to_numpy`,
  :func:`model_to_namespace`, :func:`copy_array`): NumPy, or under scikit-learn's
  ``array_api_dispatch`` the array-API namespace and device of the input (CuPy, PyTorch).
* **SPD systems** (:func:`spd_cholesky`, :func:`spd_solve`, :func:`cholesky_solve`,
  :func:`finite_factor`, :func:`symmetric_from_lower`, :func:`add_to_diagonal`,
  :func:`pivoted_cholesky`, :func:`symmetric_eigh`, :func:`triangular_inverse`): one
  jitter policy, on NumPy or on the device of a namespace's arrays.

With ``p`` threads planned, an n-row product is cut into row slices (:func:`split_rows`);
``k`` independent systems (one-vs-rest classes, regression targets) run side by side when
``k >= p``, else one after another with every thread for their row products
(:func:`split_threads`); a lone system of ``LONE_SOLVE_MIN`` or more unknowns is factored
on ``p`` BLAS threads.

Work is partitioned from :func:`max_threads` (the CPU count), never from the threads in
force, and sums over slices are added in slice order (:func:`imap_threads`), so a fixed
``random_state`` gives the same model, to the bit, at any thread count. The exception is a
lone system factored on BLAS's threads, whose rounding depends on their count.
"""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["NUMPY", "Backend", "JITTER_START", "JITTER_STOP", "LIKELY_CAUSES", "LONE_SOLVE_MIN",
           "NonFiniteError", "astype", "backend_of", "copy_array", "dtype_name",
           "holds_namespace_arrays", "model_to_namespace",
           "model_to_numpy", "namespace_of", "sign_columns", "to_numpy",
           "blas_limit", "blas_threads", "drain_queue", "finite_factor", "gram",
           "imap_threads", "map_balanced", "map_threads", "matmul", "max_threads",
           "mirror_lower", "planned_threads", "rmatmul", "row_slices", "spd_cholesky",
           "spd_solve", "split_rows",
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
    "._products": ["gram", "matmul", "mirror_lower", "rmatmul", "split_rows"],
    "._spd": ["JITTER_START", "JITTER_STOP", "add_to_diagonal", "cholesky_solve",
              "finite_factor", "pivoted_cholesky", "pivoted_cholesky_on", "spd_cholesky",
              "spd_solve", "symmetric_eigh", "symmetric_from_lower", "triangular_inverse"],
    "._threads": ["LONE_SOLVE_MIN", "blas_limit", "blas_threads", "drain_queue",
                  "imap_threads", "map_balanced", "map_threads", "max_threads", "planned_threads",
                  "row_slices", "split_threads", "thread_budget", "thread_plan"],
})
