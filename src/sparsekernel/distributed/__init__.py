"""Fits and predictions on Dask (optional extra): the rows of a dask collection as a row
provider, LIBSVM files read by the workers, the MapReduce reduced SVM, block-wise prediction.

Install with ``pip install 'sparsekernel[distributed]'``. Importing this module does not
import Dask; fitting or predicting on a cluster does.
"""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["MapReduceSVC", "parallel_predict", "read_libsvm"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._mapreduce": ["MapReduceSVC"],
    "._predict": ["parallel_predict"],
    "._rows": ["read_libsvm"],
})
