"""Keeping NumPy's and SciPy's BLAS builds from fighting over the cores.

PyPI wheels of NumPy and SciPy each bundle their own OpenBLAS. OpenBLAS worker threads spin
for a while after every call, so when code alternates between NumPy products and a SciPy-only
BLAS routine (``trsm`` has no NumPy equivalent), the idle library's spinning threads take the
cores the busy one needs: on 2 cores a triangular solve ran at half speed. Where a loop's
heavy work is SciPy's, NumPy's BLAS is held to one thread for its duration. With a single
shared BLAS (conda, system packages) there is nothing to do.
"""

from __future__ import annotations

from contextlib import nullcontext

__all__ = ["numpy_blas_single_threaded"]

_CONTROLLER = []


def numpy_blas_single_threaded():
    """Context manager: NumPy's own BLAS on one thread, if it is separate from SciPy's."""
    if not _CONTROLLER:
        # Imported on first use, not with the package. SciPy's BLAS must be loaded before the
        # controller looks for libraries, or it would not be found.
        import scipy.linalg.blas  # noqa: F401
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    blas = _CONTROLLER[0].select(user_api="blas")
    own = [lib.filepath for lib in blas.lib_controllers if "numpy" in lib.filepath]
    if len(blas.lib_controllers) < 2 or not own:
        return nullcontext()
    return blas.select(filepath=own).limit(limits=1)
