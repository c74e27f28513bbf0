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

Composite models: the ``"skops"`` container
-------------------------------------------
A ``Pipeline`` (``make_pipeline``) of scikit-learn steps and sparsekernel estimators (for
instance a feature map such as :class:`~sparsekernel.NystromFeatures` followed by a
scikit-learn linear model), a ``ColumnTransformer``, a ``CalibratedClassifierCV``, or an
estimator holding a fitted scikit-learn ``SVC`` (the result of
:func:`~sparsekernel.compress_svc`) is written as a `skops <https://skops.readthedocs.io>`_
file (``schema.json`` plus ``<id>.npy`` and, for sparse matrices, ``<id>.npz`` members) with
our ``metadata.json`` added::

    {"format": "sparsekernel-model", "format_version": 1, "library_version": "0.1.0",
     "class": "Pipeline", "container": "skops", "skops_version": "0.16.0"}

A file without ``"container"`` has the native layout above. A ``"skops"`` file may hold
only sparsekernel estimators, plain values (numbers, strings, lists, tuples, dicts, slices,
numpy arrays, scalars and dtypes, CSR matrices) and these scikit-learn classes:

- composition: ``Pipeline``, ``ColumnTransformer`` (its passthrough columns are the
  identity ``FunctionTransformer``, the only one allowed: ``func=None``);
- preprocessing: ``StandardScaler``, ``MinMaxScaler``, ``MaxAbsScaler``, ``RobustScaler``,
  ``Normalizer``, ``Binarizer``, ``QuantileTransformer``, ``PowerTransformer``,
  ``KBinsDiscretizer``, ``OneHotEncoder``, ``OrdinalEncoder``, ``PolynomialFeatures``,
  ``SimpleImputer`` (without ``add_indicator``), ``VarianceThreshold``, ``PCA``,
  ``TruncatedSVD``, ``LabelEncoder``, ``LabelBinarizer``;
- linear models: ``LogisticRegression``, ``LinearSVC``, ``LinearSVR``, ``Ridge``,
  ``RidgeClassifier``, ``SGDClassifier`` and ``SGDRegressor`` (with their loss objects),
  ``LinearRegression``, ``Lasso``, ``ElasticNet``;
- ``SVC`` (not with a callable or precomputed kernel), ``CalibratedClassifierCV`` (and its
  internal calibrators, ``IsotonicRegression``).

:func:`save` refuses anything else (a ``FunctionTransformer`` with a function, a
``SplineTransformer``, whose B-splines hold a function and are evaluated by compiled code
that trusts their knots, an unknown estimator), naming where it sits, e.g.
``Pipeline.steps[0][1]``. Scikit-learn objects keep their private state (they predict from
it); sparsekernel estimators inside are stored as the native layout stores them (their
parameters, transient ones left out, and public fitted attributes; never private state)
and checked as there, so both containers hold the same estimators.

What the native layout stores: the parameters (``get_params(deep=False)``) and every
attribute in ``vars(model)`` whose name ends with ``_`` and does not start with ``_``.
Private attributes are *not* saved, so an estimator must be able to predict from its
parameters and public fitted attributes alone (rebuilding any cache lazily). A value the
format cannot store (say a ``RandomState`` as ``random_state``) makes :func:`save` raise
:class:`ModelFormatError` naming it; nothing is dropped silently. Two exceptions by design:
parameters an estimator declares transient (``MapReduceSVC.client``, where a fit runs) are
never written, and ignored in a file, so a model file cannot choose the cluster a later
``fit`` connects to; and :func:`save` refuses what :func:`load` would refuse (invalid
parameters, fitted attributes the class's ``fit`` does not set or with inconsistent
shapes).

Safety: model files are untrusted input. :func:`load` never executes code from the file:
arrays are read without pickle, metadata with :mod:`json`, and classes are resolved only
through an allow-list (the estimators exported by ``sparsekernel.__all__`` and
``sparsekernel.basis.__all__``). Before it returns, the whole model is checked:

- the zip directory, before anything is decompressed: no duplicate, unexpected, encrypted
  or oddly compressed member, no member name with a leading ``/``, a ``.`` or ``..`` part
  or a backslash; ``metadata.json`` at most 8 MiB and all members together
  within ``load(max_bytes=...)`` (4 GiB by default), decompressed;
- ``metadata.json``: UTF-8 JSON nested at most 64 levels, at most 500,000 values, no
  duplicate keys and no ``NaN``/``Infinity`` literals; every node a value of the grammar
  above, with no extra keys;
- the index ``"arrays"`` against the ``.npy`` members, one to one; each member's header
  (version 1.0 or 2.0, a dict literal of exactly ``descr``, ``fortran_order`` and ``shape``
  as ``numpy.save`` writes it; dtype bool, integer, float, complex or unicode, never
  objects or records) and the bytes
  its shape implies against the member's size, before the array is allocated; each array
  used exactly once; CSR parts consistent (``indptr`` rising from 0 to the number of
  values, every column index inside the shape);
- parameters, as ``fit`` checks them; attribute names (public names ending with ``_`` that
  the class does not define);
- the fitted state against what the class's ``fit`` produces: every attribute present, of
  the right type, float arrays float32/float64 and finite, labels sorted and unique, shapes
  consistent with one another (``n_features_in_``, ``classes_``, ``basis_``, ``coef_``,
  ``intercept_``, ...); then the model must compute finite values on one zero row.

For a ``"skops"`` file, before skops reads anything: the same zip directory and size checks
(members: ``metadata.json``, ``schema.json``, ``.npy``, ``.npz``; the arrays inside
``.npz`` members count against ``max_bytes`` with the members themselves), ``schema.json``
under the same JSON caps, every type it names in the allow-list above and built by the node
kind skops writes for it (an array only from an ``.npy`` member, never by a constructor
call; an estimator only from its attributes), every member it names present and of the
matching kind, every array member named by it, every ``.npy`` header (also inside ``.npz``
members, each of which must hold one CSR matrix) against its member's size. Any error skops
raises becomes :class:`ModelFormatError`. The loaded object is then walked: only allowed
types, arrays of the dtypes above, float arrays finite (NaN allowed only in ``categories_``
and ``statistics_``, infinite bin edges only in ``bin_edges_``, where honest models hold
them), CSR matrices consistent. Every scikit-learn object is then validated structurally,
innermost first and before any of its methods runs: its attributes exactly those its
class's ``fit`` sets (a file written by a scikit-learn version whose classes hold other
attributes is refused), its parameters as ``fit`` checks them, every fitted array of the
expected dtype, dimension and shape (consistent with ``n_features_in_``, the classes, the
support vectors, ...), integer counts and indices in range (e.g. ``SVC``'s ``_n_support``,
``support_`` and the shapes of the ``_dual_coef_`` and ``_intercept_`` that libsvm reads, a
``degree`` of at most 100, finite decision values on its first support vectors),
and state derived from other state equal to what scikit-learn derives from it (``SVC``'s
public ``intercept_`` and ``dual_coef_`` from the private ones predict reads,
``OneHotEncoder``'s output widths, ``PolynomialFeatures``' output size). Every sparsekernel
estimator inside holds its parameters and public fitted attributes only (transient
parameters are reset to their defaults), and is checked and probed as above, and a fitted
model must compute finite values on one probe row (zeros, or each encoded column's first
category). :func:`save` runs the same checks on the model in memory, so every file it
writes loads.

Anything else raises :class:`ModelFormatError`, whose message names the member at fault.
A native-layout load holds each array once; a ``"skops"`` load also holds each member's
bytes while skops builds the arrays from them.

Compatibility: a file whose ``format_version`` is newer than :data:`FORMAT_VERSION` raises
:class:`ModelFormatError` naming both versions. Parameters absent from a file take the
class default; a saved parameter the class no longer accepts is an error.
"""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["FORMAT_VERSION", "ModelFormatError", "load", "save"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._codec": ["ModelFormatError"],
    "._persistence": ["FORMAT_VERSION", "load", "save"],
})
