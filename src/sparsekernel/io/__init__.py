"""Save and load estimators without pickle (:func:`save`, :func:`load`,
:class:`ModelFormatError`, :data:`FORMAT_VERSION`), and export them to ONNX (:func:`to_onnx`,
which needs the ``onnx`` extra).

>>> from sparsekernel.io import save, load                     # doctest: +SKIP
>>> save(model, "model.skm"); model = load("model.skm")        # doctest: +SKIP

A model file is a zip of ``.npy`` arrays and JSON metadata (composite models: a skops
container), read as untrusted input. The format, a public contract, and the checks
:func:`load` makes are specified in the user guide, docs/user_guide/model_files.md.
"""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["FORMAT_VERSION", "ModelFormatError", "OnnxExportError", "load",
           "register_onnx_converters", "save", "to_onnx"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._codec": ["ModelFormatError"],
    "._persistence": ["FORMAT_VERSION", "load", "save"],
    # ONNX export needs the onnx extra; importing sparsekernel.io does not load it.
    "._onnx": ["OnnxExportError", "register_onnx_converters", "to_onnx"],
})
