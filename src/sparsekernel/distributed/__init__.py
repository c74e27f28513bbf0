"""MapReduce reduced SVM and block-wise prediction on Dask (optional extra).

Install with ``pip install 'sparsekernel[distributed]'``. Importing this module does not
import Dask; fitting or predicting on a cluster does.
"""

from ._mapreduce import MapReduceSVC
from ._predict import parallel_predict

__all__ = ["MapReduceSVC", "parallel_predict"]
