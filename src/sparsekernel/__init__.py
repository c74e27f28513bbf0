"""sparsekernel: kernel machines on m << n basis functions, at linear-model cost."""

# Names are resolved on first use (PEP 562): importing one estimator must not pay for every
# family, numba or Dask. ``__all__`` stays a literal list so that ``import *``, the docs and
# the model format's allow-list (``sparsekernel.io``) keep seeing every public name.

from importlib import import_module as _import_module

__version__ = "0.1.0"

__all__ = [
    "FeatureScaleWarning",
    "FisherBasis",
    "KernelLogisticRegression",
    "LSSVC",
    "LSSVR",
    "LowRankLSSVC",
    "LowRankLSSVR",
    "LowRankOneClassSVM",
    "LowRankSVC",
    "MapReduceSVC",
    "NystromFeatures",
    "OnlineLSSVR",
    "PrunedLSSVC",
    "PrunedLSSVR",
    "ReducedFeatures",
    "ReducedKernelCCA",
    "ReducedKernelPCA",
    "ReducedKernelSIR",
    "ReducedSVC",
    "ReducedSVR",
    "ReducedSetSVC",
    "SmoothSVC",
    "SmoothSVR",
    "SparseFisherDiscriminant",
    "SparseMarginBasis",
    "SparseMarginClassifier",
    "compress_svc",
    "__version__",
]


def _lazy_exports(namespace, exports, submodules=()):
    """Build the PEP 562 ``__getattr__`` and ``__dir__`` of a package with lazy exports.

    Parameters
    ----------
    namespace : dict
        The package's ``globals()``.
    exports : dict of str to sequence of str
        ``{relative module: names it defines}``; a name's module is imported on its first
        access, and the value is then stored in ``namespace`` so later lookups are plain.
    submodules : sequence of str, default=()
        Submodules reachable as attributes (``package.svm``) without an explicit import.

    Returns
    -------
    getattr_ : callable
        The module-level ``__getattr__``.
    dir_ : callable
        The module-level ``__dir__``: the names already bound plus every lazy one.
    """
    package = namespace["__name__"]
    where = {name: module for module, names in exports.items() for name in names}
    submodules = frozenset(submodules)

    def getattr_(name):
        if name in where:
            value = getattr(_import_module(where[name], package), name)
        elif name in submodules:
            value = _import_module(f".{name}", package)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def dir_():
        return sorted(set(namespace) | set(where) | submodules)

    return getattr_, dir_


__getattr__, __dir__ = _lazy_exports(
    globals(),
    {
        ".decomposition": ["ReducedKernelCCA", "ReducedKernelPCA", "ReducedKernelSIR"],
        ".distributed": ["MapReduceSVC"],
        ".features": ["NystromFeatures", "ReducedFeatures"],
        ".kernels": ["FeatureScaleWarning"],
        ".lssvm": ["LSSVC", "LSSVR", "LowRankLSSVC", "LowRankLSSVR", "OnlineLSSVR",
                   "PrunedLSSVC", "PrunedLSSVR"],
        ".sparse_margin": ["FisherBasis", "ReducedSetSVC", "SparseFisherDiscriminant",
                           "SparseMarginBasis", "SparseMarginClassifier", "compress_svc"],
        ".svm": ["KernelLogisticRegression", "LowRankOneClassSVM", "LowRankSVC", "ReducedSVC",
                 "ReducedSVR", "SmoothSVC", "SmoothSVR"],
    },
    submodules=["base", "basis", "cli", "compute", "datasets", "decomposition", "distributed",
                "features", "inspection", "io", "kernels", "lssvm", "model_selection", "solvers",
                "sparse_margin", "svm", "utils"],
)
