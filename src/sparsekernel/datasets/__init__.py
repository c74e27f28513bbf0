"""Benchmark data: file loaders, shipped real data sets and synthetic problems.

Nothing here downloads: real benchmark files are read from disk (see
:func:`find_shared_data`), and two small sets (Ripley, banana) ship with the package.
"""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["SvmlightChunks", "find_shared_data", "load_banana", "load_ida", "load_ripley",
           "load_shuttle", "load_svmlight_path", "load_svmlight_paths", "make_checkerboard",
           "make_sine_regression"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._ida": ["load_ida"],
    "._paths": ["find_shared_data"],
    "._shipped": ["load_banana", "load_ripley"],
    "._shuttle": ["load_shuttle"],
    "._svmlight": ["SvmlightChunks", "load_svmlight_path", "load_svmlight_paths"],
    "._synthetic": ["make_checkerboard", "make_sine_regression"],
})
