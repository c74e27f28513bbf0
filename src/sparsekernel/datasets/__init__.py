"""Benchmark data: file loaders, shipped real data sets and synthetic problems.

Nothing here downloads: real benchmark files are read from disk (see
:func:`find_shared_data`), and two small sets (Ripley, banana) ship with the package.
"""

from ._ida import load_ida
from ._paths import find_shared_data
from ._shipped import load_banana, load_ripley
from ._shuttle import load_shuttle
from ._svmlight import SvmlightChunks, load_svmlight_path, load_svmlight_paths
from ._synthetic import make_checkerboard, make_sine_regression

__all__ = ["SvmlightChunks", "find_shared_data", "load_banana", "load_ida", "load_ripley",
           "load_shuttle", "load_svmlight_path", "load_svmlight_paths", "make_checkerboard",
           "make_sine_regression"]
