"""Save and load estimators without pickle.

>>> from sparsekernel.io import save, load                     # doctest: +SKIP
>>> save(model, "model.skm"); model = load("model.skm")        # doctest: +SKIP

The model file format (a public contract)
-----------------------------------------
A model file (suggested extension ``.skm``) is a zip archive holding

``metadata.json``
    A UTF-8 JSON object::

        {"format": "sparsekernel-model",   # identifies the file type
         "format_version": 1,              # FORMAT_VERSION of the writer
         "library_version": "0.1.0",       # sparsekernel.__version__ of the writer
         "class": "ReducedSVC",            # estimator class name
         "params": {name: value},          # estimator.get_params(deep=False)
         "attributes": {name: value},      # public fitted attributes
         "arrays": {key: {"dtype": "<f8", "shape": [20, 2]}}}   # index of array members

``<key>.npy``
    One member per entry of ``"arrays"``, written by ``numpy.save(..., allow_pickle=False)``
    (so never of object dtype). Keys are paths such as ``attributes/coef_`` or
    ``params/basis/centers``.

A ``value`` is JSON ``null``, a bool, a number, a string, a list of values, or an object
with exactly one tag:

- ``{"__float__": "inf" | "-inf" | "nan"}``: a non-finite Python float (JSON has none);
- ``{"__numpy__": "float32", "value": v}``: a numpy bool, integer or float scalar;
- ``{"__tuple__": [values]}``: a tuple (plain JSON lists are lists);
- ``{"__dict__": [[key, value], ...]}``: a dict; keys are values too, so ``{0: 1.0}`` keeps
  its int key;
- ``{"__array__": key}``: an array member. With ``"as_object": true`` it is a unicode array
  restored as an object array of str (string ``classes_``, ``feature_names_in_``); with
  ``"as_scalar": true`` a 0-d array restored as a numpy scalar (e.g. complex);
- ``{"__sparse__": "csr_matrix" | "csr_array", "shape": [m, n], "data": ..., "indices": ...,
  "indptr": ...}``: a scipy sparse matrix, the three parts being ``__array__`` nodes (other
  sparse formats are stored as CSR);
- ``{"__estimator__": "KMeansBasis", "params": {name: value}}``: a nested estimator such as
  a basis selector, rebuilt from its parameters.

What is saved: every constructor parameter and every attribute in ``vars(model)`` whose name
ends with ``_`` and does not start with ``_``. Private attributes are *not* saved, so an
estimator must be able to predict from its parameters and public fitted attributes alone
(rebuilding any cache lazily). A value the format cannot store (say a ``RandomState`` as
``random_state``) makes :func:`save` raise :class:`ModelFormatError` naming it; nothing is
dropped silently.

Safety: :func:`load` never executes code from the file. Arrays are read with
``allow_pickle=False``, metadata with :mod:`json`, and classes are resolved only through an
allow-list: the estimators exported by ``sparsekernel.__all__`` and ``sparsekernel.basis.__all__``.
Every array member must exist, match the dtype and shape listed in ``"arrays"`` and not be
of object dtype, and attribute names must be public names ending with ``_`` that the class
does not define; any other content raises :class:`ModelFormatError`.

Compatibility: a file whose ``format_version`` is newer than :data:`FORMAT_VERSION` raises
:class:`ModelFormatError` naming both versions. Parameters absent from a file take the
class default; a saved parameter the class no longer accepts is an error.
"""

from ._codec import ModelFormatError
from ._persistence import FORMAT_VERSION, load, save

__all__ = ["FORMAT_VERSION", "ModelFormatError", "load", "save"]
