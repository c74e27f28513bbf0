"""The public contract, run over every public estimator: scikit-learn's checks and ours.

Ours is the table in CONTRIBUTING.md: one meaning of ``n_basis``/``basis``/``basis_``, selectors
receive the estimator's own kernel, one ``random_state`` policy, ``verbose`` wired wherever a
fit iterates, transactional fits.
"""

import importlib.util
import inspect
import os
import pickle
import sys

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.datasets import make_classification
from sklearn.utils.estimator_checks import parametrize_with_checks

import sparsekernel
from sparsekernel import (
    LSSVC,
    LSSVR,
    KernelLogisticRegression,
    LowRankLSSVC,
    LowRankLSSVR,
    LowRankOneClassSVM,
    LowRankSVC,
    NystromFeatures,
    OnlineLSSVR,
    PrunedLSSVC,
    PrunedLSSVR,
    ReducedFeatures,
    ReducedKernelCCA,
    ReducedKernelPCA,
    ReducedKernelSIR,
    ReducedSetSVC,
    ReducedSVC,
    ReducedSVR,
    SmoothSVC,
    SmoothSVR,
    SparseFisherDiscriminant,
    SparseMarginClassifier,
)
from sparsekernel.basis import BasisSelector, RandomBasis

ESTIMATORS = [
    SmoothSVC(),
    SmoothSVR(),
    ReducedSVC(random_state=0),
    ReducedSVR(random_state=0),
    ReducedFeatures(random_state=0),
    LSSVR(gamma=0.5, n_basis=None),  # the exact LS-SVM
    LSSVC(gamma=0.5, n_basis=None),
    LSSVR(n_basis=0.5, random_state=0),
    LSSVC(n_basis=0.5, random_state=0),
    LSSVR(random_state=0),  # defaults: 'auto', and partial_fit after fit
    LSSVC(random_state=0),
    PrunedLSSVR(random_state=0),
    PrunedLSSVC(random_state=0),
    OnlineLSSVR(n_basis=20),
    LowRankLSSVR(n_basis=3, max_iter=20, random_state=0),
    LowRankLSSVC(n_basis=3, max_iter=20, random_state=0),
    ReducedKernelPCA(random_state=0),
    ReducedKernelSIR(random_state=0),
    # Two views: check_estimator passes the target as the second view y (fit(X, y) as
    # scikit-learn's CCA); fit_transform returns x_scores only, so no check needs an exception.
    ReducedKernelCCA(random_state=0),
    NystromFeatures(random_state=0),
    LowRankSVC(random_state=0),
    LowRankOneClassSVM(random_state=0),
    KernelLogisticRegression(random_state=0),
    # Few L-BFGS iterations keep the ~50 contract checks fast; the contract does not depend
    # on how far the expansion vectors move.
    SparseMarginClassifier(n_basis=5, max_iter=3, random_state=0),
    SparseFisherDiscriminant(n_basis=5, max_iter=3, random_state=0),
    ReducedSetSVC(random_state=0),
    ReducedSVC(basis="incremental", random_state=0),
    ReducedSVC(basis="systematic", random_state=0),
    ReducedSVC(basis="clustering", random_state=0),
    ReducedSVR(basis="clustering", random_state=0),
]

if importlib.util.find_spec("dask") is not None and importlib.util.find_spec("distributed"):
    from sparsekernel import MapReduceSVC

    # n_parts=2: the checks' smallest data sets have 3 samples per class, and every class
    # must be dealt into every part. Each fit starts its own in-process Dask cluster.
    ESTIMATORS.append(MapReduceSVC(n_parts=2, random_state=0))
else:  # the distributed extra is optional; without Dask the class cannot fit
    MapReduceSVC = type("MapReduceSVC", (), {})

# Every expected failure carries its reason.
_BASIS_FROM_ROWS = (
    "The basis functions are drawn from (or are) the training rows, so repeating a row or "
    "giving it zero weight changes the basis itself, not only the loss weights."
)

_GREEDY_REDUCED_SET = (
    "LIBSVM's solutions with repeated rows and with integer weights agree only to its "
    "tolerance, and the greedy reduced-set selection (argmax starts, fixed-point iteration) "
    "is discontinuous in them."
)


_PRUNED_SET = (
    "Pruning ranks training rows by |alpha| and holds out a random validation share of the "
    "rows, so a repeated row (or a zero-weight one) changes which rows are pruned or held out."
)
_ONLINE_SET = (
    "The fixed-budget working set keeps or drops each arriving row on its own, so a repeated "
    "row can occupy two slots of the budget; a weight of 2 occupies one."
)
_LEARNED_BASES = (
    "The k-medoids initialisation and the input standardisation see rows, not weights, so "
    "repeating a row moves the initial centres and scales."
)


def _weight_failures(reason):
    return {
        "check_sample_weight_equivalence_on_dense_data": reason,
        "check_sample_weight_equivalence_on_sparse_data": reason,
    }


def _expected_failed_checks(estimator):
    basis_from_rows = (SmoothSVC, SmoothSVR, ReducedSVC, ReducedSVR, MapReduceSVC, LowRankSVC,
                       LowRankOneClassSVM, KernelLogisticRegression,
                       ReducedKernelPCA, ReducedKernelSIR, SparseMarginClassifier,
                       SparseFisherDiscriminant)
    if isinstance(estimator, basis_from_rows):
        return _weight_failures(_BASIS_FROM_ROWS)
    if isinstance(estimator, LSSVR | LSSVC) and estimator.n_basis is not None:
        return _weight_failures(_BASIS_FROM_ROWS)
    reasons = {PrunedLSSVR: _PRUNED_SET, PrunedLSSVC: _PRUNED_SET, OnlineLSSVR: _ONLINE_SET,
               LowRankLSSVR: _LEARNED_BASES, LowRankLSSVC: _LEARNED_BASES,
               ReducedSetSVC: _GREEDY_REDUCED_SET}
    reason = reasons.get(type(estimator))
    return _weight_failures(reason) if reason else {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_estimator_contract(estimator, check):
    check(estimator)


#: Parameters taken by position, as scikit-learn's meta-estimators and decompositions take
#: theirs: the wrapped model, the number of components, a fixed basis's centres, the
#: searched estimator; every other parameter is keyword-only.
_POSITIONAL = {"ReducedSetSVC": ["svc"], "ReducedKernelPCA": ["n_components"],
               "ReducedKernelCCA": ["n_components"], "ReducedKernelSIR": ["n_components"],
               "FixedBasis": ["centers"], "UniformDesignSearchCV": ["estimator"]}


def _public_classes():
    """Every public estimator class, basis selector and search of the package."""
    names = [n for n in dir(sparsekernel) if n[:1].isupper()]
    for name in sorted(set(names) | set(sparsekernel.__all__)):
        obj = getattr(sparsekernel, name, None)
        if isinstance(obj, type) and issubclass(obj, sparsekernel.base.BaseEstimator):
            yield obj
    for name in sparsekernel.basis.__all__:
        obj = getattr(sparsekernel.basis, name)
        if isinstance(obj, type) and issubclass(obj, BasisSelector) and obj is not BasisSelector:
            yield obj


@pytest.mark.parametrize("cls", sorted(set(_public_classes()), key=lambda c: c.__name__),
                         ids=lambda c: c.__name__)
def test_parameters_are_keyword_only(cls):
    """As in scikit-learn, a constructor takes its parameters by keyword (``LSSVC(C=10)``,
    never ``LSSVC("rbf", 0.5)``), save the few of ``_POSITIONAL``."""
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    by_position = [p.name for p in params if p.kind is not p.KEYWORD_ONLY]
    assert by_position == _POSITIONAL.get(cls.__name__, [])


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_docstring_documents_every_parameter(estimator):
    """Every constructor parameter has its numpydoc entry, and no shared-parameter
    placeholder is left unfilled (a class that lost its ``fill_doc``)."""
    import inspect
    import re

    from sparsekernel._docs import _PLACEHOLDER

    doc = type(estimator).__doc__
    assert not _PLACEHOLDER.findall(doc)
    params = [p for p in inspect.signature(type(estimator).__init__).parameters if p != "self"]
    assert [p for p in params if not re.search(rf"^ *{p} :", doc, re.MULTILINE)] == []


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_fit_leaves_params_unchanged(estimator):
    """Pitfall 2 of the house style: fit must not mutate constructor arguments."""
    from sklearn.base import clone
    from sklearn.datasets import make_classification

    X, y = make_classification(60, 4, random_state=0)
    est = clone(estimator)
    before = est.get_params(deep=False)
    est.fit(X, y)
    after = est.get_params(deep=False)
    assert before.keys() == after.keys()
    for key, value in before.items():
        assert after[key] is value, key


# ----------------------------------------------------------------- our contract
def _ids(est):
    return type(est).__name__


def _params(est):
    return est.get_params(deep=False)


def _data(est, n=80):
    X, y = make_classification(n, 4, n_informative=3, n_redundant=0, random_state=0)
    if type(est).__name__ == "ReducedKernelCCA":
        y = np.c_[X[:, :2] ** 2, y]  # a second view with two columns
    elif not is_classifier(est) and "Regressor" not in type(est).__name__:
        y = y.astype(float)
    return X, y


def _one_of_each():
    seen, out = set(), []
    for est in ESTIMATORS:
        if type(est) not in seen:
            seen.add(type(est))
            out.append(est)
    return out


#: Kernels handed to the recording selector, recorded at module level: MapReduceSVC's Dask
#: tasks run on pickled copies of the selector (in-process workers share this module).
_SEEN_KERNELS = []


class _RecordingBasis(BasisSelector):
    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        _SEEN_KERNELS.append(kernel)
        return RandomBasis().select(X, y, n_basis=n_basis, random_state=random_state)


def _try_set(est, **params):
    """Set params the estimator accepts (validation decides); skip the others."""
    for key, value in params.items():
        if key not in _params(est):
            continue
        old = _params(est)[key]
        est.set_params(**{key: value})
        try:
            est._validate_params()
        except ValueError:
            est.set_params(**{key: old})


# LowRankLSSVC/SVR learn robust-RBF / SBF units instead of evaluating a kernel: their `basis`
# (the starting centres, 'kmedoids' or an array) has no kernel to hand over.
_TAKES_BASIS = [e for e in _one_of_each() if "basis" in _params(e) and "kernel" in _params(e)]


@pytest.mark.parametrize("estimator", _TAKES_BASIS, ids=_ids)
def test_selector_receives_the_estimators_own_kernel(estimator):
    """A selector passed as basis= is handed the kernel the model will use (kind and gamma)."""
    from sparsekernel.kernels import Kernel

    est = clone(estimator).set_params(basis=_RecordingBasis())
    _try_set(est, n_basis=10, gamma=0.3, kernel="laplacian")
    X, y = _data(est)
    _SEEN_KERNELS.clear()
    est.fit(X, y)
    assert _SEEN_KERNELS, f"{type(est).__name__} never called the selector"
    kernel = _SEEN_KERNELS[0]
    assert kernel is not None, f"{type(est).__name__} did not pass its kernel"
    assert kernel.name == Kernel(_params(est).get("kernel", "rbf")).name
    assert np.allclose(kernel.gamma, 0.3)


_WITH_RANDOM_STATE = [e for e in _one_of_each() if "random_state" in _params(e)]


@pytest.mark.parametrize("estimator", _WITH_RANDOM_STATE, ids=_ids)
def test_generator_random_state_is_rejected_at_validation(estimator):
    """One policy everywhere: a numpy Generator is refused with a message naming it."""
    est = clone(estimator).set_params(random_state=np.random.default_rng(0))
    X, y = _data(est)
    with pytest.raises(ValueError, match="'random_state' parameter.*Generator"):
        est.fit(X, y)


#: Estimators that fit in closed form (one pass of moments and a small eigenproblem, or a
#: selection): nothing iterates, so they take no ``verbose``.
_NO_ITERATION = {"ReducedFeatures", "NystromFeatures", "ReducedKernelPCA", "ReducedKernelSIR",
                 "ReducedKernelCCA"}


@pytest.mark.parametrize("estimator", _one_of_each(), ids=_ids)
def test_verbose_is_a_parameter_exactly_where_a_fit_iterates(estimator):
    assert ("verbose" in _params(estimator)) != (type(estimator).__name__ in _NO_ITERATION)


_VERBOSE = [e for e in _one_of_each() if "verbose" in _params(e)]


@pytest.mark.parametrize("estimator", _VERBOSE, ids=_ids)
def test_verbose_2_prints_a_line_per_solve(estimator, capfd):
    est = clone(estimator).set_params(verbose=2)
    X, y = _data(est)
    est.fit(X, y)
    err = capfd.readouterr().err
    assert f"[{type(est).__name__}]" in err


@pytest.mark.parametrize("estimator", [e for e in _one_of_each() if "n_basis" in _params(e)],
                         ids=_ids)
def test_n_basis_counts_the_basis_functions_of_the_fitted_model(estimator):
    """n_basis=m gives a model evaluating at most m basis functions, stored in basis_."""
    est = clone(estimator).set_params(n_basis=6)
    X, y = _data(est)
    est.fit(X, y)
    assert 1 <= est.basis_.shape[0] <= 6


@pytest.mark.parametrize("estimator", _one_of_each(), ids=_ids)
def test_failed_fit_leaves_the_fitted_model_as_it_was(estimator):
    """Fitting is a transaction: a fit that raises changes no fitted attribute."""
    est = clone(estimator)
    X, y = _data(est)
    est.fit(X, y)
    before = {k: v for k, v in vars(est).items() if k.endswith("_")}
    X_bad = X.copy()
    X_bad[3, 1] = np.nan
    with pytest.raises(ValueError):
        est.fit(X_bad, y)
    after = {k: v for k, v in vars(est).items() if k.endswith("_")}
    assert after.keys() == before.keys()
    for key, value in before.items():
        assert after[key] is value, key


@pytest.mark.parametrize("estimator", _one_of_each(), ids=_ids)
def test_dense_and_csr_input_give_the_same_model(estimator, container, global_dtype):
    """Known answer: the container does not change the model (same rows, same seed)."""
    est = clone(estimator)
    X, y = _data(est)
    X = X.astype(global_dtype)
    ref = clone(est).fit(X, y)
    got = clone(est).fit(container(X), y)
    method = "transform" if hasattr(ref, "transform") else (
        "decision_function" if hasattr(ref, "decision_function") else "predict")
    a = getattr(ref, method)(X)
    b = getattr(got, method)(container(X))
    a = a[0] if isinstance(a, tuple) else a
    b = b[0] if isinstance(b, tuple) else b
    assert np.asarray(b).dtype == np.asarray(a).dtype
    tol = 2e-3 if global_dtype == np.float32 else 1e-6
    np.testing.assert_allclose(b, a, rtol=tol, atol=tol)


def _targets_for(est, X, y):
    """Class labels as ``est`` takes them: two-view targets for ReducedKernelCCA, floats for
    a regressor or transformer."""
    if type(est).__name__ == "ReducedKernelCCA":
        return np.c_[X[:, :2] ** 2, y]
    if not is_classifier(est) and "Regressor" not in type(est).__name__:
        return y.astype(float)
    return y


def _other_data(est):
    """Data unlike ``_data``'s for a second fit: more rows, five features, three classes."""
    X, y = make_classification(96, 5, n_informative=3, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, random_state=1)
    return X, _targets_for(est, X, y)


def _package_calls(fit, stop_at=None):
    """Run ``fit()`` counting the calls of the package's Python functions; with ``stop_at``,
    raise KeyboardInterrupt at that call instead: a Ctrl-C at an arbitrary point of a fit.

    Generator frames are not counted: they are also resumed to be closed when collected,
    where an exception is ignored, not raised. Nor is the thread plan's own bookkeeping
    (``compute/_threads.py``): a Ctrl-C there would leave the process's BLAS thread limit behind.
    """
    root = os.path.dirname(sparsekernel.__file__) + os.sep
    skip = os.path.join(root, "utils", "_threads.py")
    count, resumable = 0, inspect.CO_GENERATOR | inspect.CO_COROUTINE
    resumable |= inspect.CO_ASYNC_GENERATOR

    def tracer(frame, event, arg):
        nonlocal count
        code = frame.f_code
        name = code.co_filename
        if (event == "call" and name.startswith(root) and name != skip
                and not code.co_flags & resumable):
            count += 1
            if count == stop_at:  # raised into the called frame; the tracer is then unset
                raise KeyboardInterrupt
        return None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        fit()
    finally:
        sys.settrace(previous)
    return count


def _state(est):
    """Every attribute by value (pickled now), to catch state mutated in place as well."""
    return {k: pickle.dumps(v) for k, v in vars(est).items()}


#: Where the interrupting tests stop a fit: fractions of its calls of package functions.
_STOPS = (0.2, 0.4, 0.6, 0.8, 0.95)


def _interrupt_everywhere(est, fit, n_calls):
    """Interrupt ``fit()`` at every stop of _STOPS; each time, assert that KeyboardInterrupt
    propagated and that ``est`` has the same attributes, objects and values as before."""
    before, state = dict(vars(est)), _state(est)
    for stop in _STOPS:
        with pytest.raises(KeyboardInterrupt):
            _package_calls(fit, stop_at=max(1, int(stop * n_calls)))
        assert vars(est).keys() == before.keys(), stop
        for key, value in before.items():
            assert vars(est)[key] is value, (stop, key)
        assert _state(est) == state, stop


@pytest.mark.parametrize("estimator", _one_of_each(), ids=_ids)
def test_interrupted_fit_propagates_and_changes_nothing(estimator):
    """Fitting is a transaction: Ctrl-C at any point of a fit (here at several points, counted
    in calls of the package's functions) propagates, and leaves an unfitted estimator
    unfitted and a fitted one with every attribute as it was, same objects, same values."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    X2, y2 = _other_data(estimator)
    n_calls = _package_calls(lambda: clone(estimator).fit(X2, y2))
    assert n_calls > 10, n_calls
    est = clone(estimator)
    _interrupt_everywhere(est, lambda: est.fit(X2, y2), n_calls)
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    est.fit(*_data(est))
    _interrupt_everywhere(est, lambda: est.fit(X2, y2), n_calls)


_PARTIAL_FIT = [e for e in _one_of_each() if hasattr(e, "partial_fit")]


@pytest.mark.parametrize("estimator", _PARTIAL_FIT, ids=_ids)
def test_interrupted_partial_fit_step_changes_nothing(estimator):
    """A ``partial_fit`` step is a transaction too, down to the state it continues (a block
    solver, a working set, copied on write): after Ctrl-C at any of several points of the
    second step every attribute holds its old value, and taking the step again gives the
    model of an uninterrupted run."""
    X, y = _data(estimator, n=160)
    first, second = slice(0, 80), slice(80, 160)
    ref = clone(estimator).partial_fit(X[first], y[first])
    n_calls = _package_calls(lambda: ref.partial_fit(X[second], y[second]))
    est = clone(estimator).partial_fit(X[first], y[first])
    _interrupt_everywhere(est, lambda: est.partial_fit(X[second], y[second]), n_calls)
    est.partial_fit(X[second], y[second])
    assert _state(est) == _state(ref)


@pytest.mark.parametrize("params", [{}, {"n_basis": 10}], ids=["all_rows", "nystrom"])
def test_interrupted_partial_fit_after_fit_changes_nothing(params):
    """LowRankSVC's partial_fit after a fit in memory (the exact machine on every row, put
    on its Nystrom map by the step, or a Nystrom model) builds its block solver from the
    fitted weights and changes the model only once the step has succeeded: Ctrl-C at any
    of several points leaves every attribute as it was, and the step taken again gives the
    model of an uninterrupted run."""
    estimator = LowRankSVC(random_state=0, **params)
    X, y = _data(estimator, n=160)
    first, second = slice(0, 80), slice(80, 160)
    ref = clone(estimator).fit(X[first], y[first])
    assert (ref.normalization_ is None) == (not params)
    n_calls = _package_calls(lambda: ref.partial_fit(X[second], y[second]))
    est = clone(estimator).fit(X[first], y[first])
    _interrupt_everywhere(est, lambda: est.partial_fit(X[second], y[second]), n_calls)
    est.partial_fit(X[second], y[second])
    assert _state(est) == _state(ref)


# ----------------------------------------------------------------- memory budget
def _budget_data(est):
    """200 rows: a fit holds at least its float64 targets and weights (or a selection's row
    indices), 1.6 KiB or more, so 1 KB cannot hold any fit, whatever m it would take."""
    X, y = make_classification(200, 4, n_informative=3, n_redundant=0, random_state=0)
    return X, _targets_for(est, X, y)


_WITH_MEMORY_BUDGET = [e for e in ESTIMATORS if "memory_budget" in _params(e)]


@pytest.mark.parametrize("budget", [1, "1KB"])
@pytest.mark.parametrize("estimator", _WITH_MEMORY_BUDGET,
                         ids=lambda e: f"{type(e).__name__}-{_params(e).get('n_basis')}")
def test_a_budget_that_cannot_hold_the_fit_is_refused(estimator, budget):
    """One rule for every estimator taking memory_budget: a fit plans before it allocates,
    and a budget its plan does not fit is refused with the estimate and the knob, leaving
    the estimator unfitted."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    from sparsekernel.utils import MemoryBudgetError

    est = clone(estimator).set_params(memory_budget=budget)
    with pytest.raises(MemoryBudgetError, match=r"needs about .* above memory_budget=1 (B|KiB)"
                                                r".*memory_budget"):
        est.fit(*_budget_data(est))
    with pytest.raises(NotFittedError):
        check_is_fitted(est)


# ----------------------------------------------------------------- thread count
def _thread_data(est):
    X, y = make_classification(600, 6, n_informative=4, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, random_state=0)
    return X, _targets_for(est, X, y)


def _outputs(est, X):
    method = "transform" if hasattr(est, "transform") else (
        "decision_function" if hasattr(est, "decision_function") else "predict")
    out = getattr(est, method)(X)
    return np.asarray(out[0] if isinstance(out, tuple) else out, dtype=np.float64)


@pytest.mark.parametrize("estimator", _one_of_each(), ids=_ids)
def test_a_seed_gives_the_same_model_on_one_and_two_threads(estimator):
    """The thread count changes only who computes which piece: the pieces (kernel row
    blocks, k-means blocks, row slices of products, memory plans) are planned from the
    CPUs and sums over them added in one order, so a fixed seed gives the same model to
    the bit."""
    from threadpoolctl import threadpool_limits

    X, y = _thread_data(estimator)
    outputs = []
    for n_threads in (1, 2):
        with threadpool_limits(n_threads):
            outputs.append(_outputs(clone(estimator).fit(X, y), X))
    np.testing.assert_array_equal(outputs[1], outputs[0])


# ----------------------------------------------------------------- parameter ranges
def _open_ended_real(constraints):
    """Whether every constraint is a real Interval whose right end is open at infinity."""
    from sparsekernel.utils import Interval

    intervals = [c for c in constraints if isinstance(c, Interval)]
    return bool(intervals) and all(
        c.kind == "real" and c.right is None and c.closed in ("left", "neither")
        for c in intervals)


_OPEN_ENDED = [(e, name) for e in _one_of_each()
               for name, allowed in type(e)._parameter_constraints.items()
               if name in _params(e) and _open_ended_real(allowed)]


@pytest.mark.parametrize(("estimator", "name"), _OPEN_ENDED,
                         ids=[f"{type(e).__name__}-{n}" for e, n in _OPEN_ENDED])
def test_infinity_is_outside_every_open_ended_range(estimator, name):
    """A range printed as '(0, inf)' refuses inf (C=inf, gamma=inf, tol=inf, ...) at
    validation with the usual message, before any arithmetic meets it."""
    from sparsekernel.utils import InvalidParameterError

    est = clone(estimator).set_params(**{name: float("inf")})
    with pytest.raises(InvalidParameterError,
                       match=rf"The '{name}' parameter of {type(est).__name__} must be .*"
                             r"inf\). Got inf instead"):
        est.fit(*_data(est))


# ----------------------------------------------------------------- probabilities
_CLASSIFIERS = [e for e in _one_of_each() if is_classifier(e)]


@pytest.mark.parametrize("estimator", _CLASSIFIERS, ids=_ids)
def test_predict_proba_exists_only_with_probabilities_and_says_where_they_are(estimator):
    est = clone(estimator).fit(*_data(estimator))
    if isinstance(est, KernelLogisticRegression):
        assert hasattr(est, "predict_proba") and hasattr(est, "predict_log_proba")
        return
    assert not hasattr(est, "predict_proba") and not hasattr(est, "predict_log_proba")
    with pytest.raises(AttributeError) as info:
        est.predict_proba  # noqa: B018
    reason = str(info.value.__cause__)
    assert "KernelLogisticRegression" in reason and "CalibratedClassifierCV" in reason


def test_cross_val_predict_of_probabilities_names_the_alternatives():
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.model_selection import cross_val_predict

    X, y = _data(LowRankSVC())
    with pytest.raises(AttributeError) as info:
        cross_val_predict(LowRankSVC(random_state=0), X, y, method="predict_proba", cv=3)
    assert "sklearn.calibration.CalibratedClassifierCV" in str(info.value.__cause__)
    calibrated = CalibratedClassifierCV(LowRankSVC(random_state=0), cv=3)
    proba = cross_val_predict(calibrated, X, y, method="predict_proba", cv=3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


# ----------------------------------------------------------------- verbose
_AUTO_VERBOSE = [e for e in _one_of_each()
                 if _params(e).get("n_basis") == "auto" and "verbose" in _params(e)]


@pytest.mark.parametrize("estimator", _AUTO_VERBOSE, ids=_ids)
def test_verbose_1_reports_the_m_auto_chose(estimator, capfd):
    est = clone(estimator).set_params(verbose=1)
    X, y = _thread_data(est)
    est.fit(X, y)
    err = capfd.readouterr().err
    assert f"[{type(est).__name__}] n_basis='auto' chose m=" in err
    assert "n_samples=600" in err
    clone(estimator).fit(X, y)  # verbose=0 stays silent
    assert capfd.readouterr().err == ""


# ----------------------------------------------------------------- feature scales
_SCALE_GAMMA = [e for e in _one_of_each() if _params(e).get("gamma") == "scale"
                or isinstance(e, ReducedSetSVC)]  # (its SVC's gamma='scale')


@pytest.mark.parametrize("estimator", _SCALE_GAMMA, ids=_ids)
def test_gamma_scale_warns_once_when_feature_scales_differ_by_orders(estimator):
    import warnings

    from sparsekernel import FeatureScaleWarning

    X, y = _data(estimator)
    wide = X * np.array([1e4, 1.0, 1.0, 1.0])
    with pytest.warns(FeatureScaleWarning, match=r"differ by a factor of more than 10\^4"):
        clone(estimator).fit(wide, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FeatureScaleWarning)
        clone(estimator).fit(X, y)  # comparable scales: no warning
