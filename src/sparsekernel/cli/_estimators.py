"""Which estimator a training command builds, from LIBSVM's flags and our long options."""

from __future__ import annotations

import argparse

from sklearn.base import BaseEstimator, is_classifier, is_outlier_detector, is_regressor

from ..basis import BASIS_SELECTORS
from ..basis._base import AUTO_MIN
from ..kernels import KERNELS
from ..svm import LowRankOneClassSVM, LowRankSVC, ReducedSVC, ReducedSVR, SmoothSVC, SmoothSVR
from ..utils import DEFAULT_MEMORY_BUDGET, format_bytes
from ._options import (
    UsageError,
    class_weight_value,
    folds_value,
    gamma_value,
    n_basis_value,
    positive_int,
)

__all__ = ["FAMILIES", "add_estimator_options", "add_quiet_option", "estimator_classes",
           "make_estimator"]

TASKS = ("classification", "regression", "novelty")
#: ``--model`` name -> ``{task: estimator class}``.
FAMILIES = {
    "reduced": {"classification": ReducedSVC, "regression": ReducedSVR},
    "smooth": {"classification": SmoothSVC, "regression": SmoothSVR},
    "lowrank": {"classification": LowRankSVC, "novelty": LowRankOneClassSVM},
}
#: LIBSVM's ``-s`` values that exist here.
SVM_TYPES = {0: "classification", 2: "novelty", 3: "regression"}
#: The ``--model`` family of a task that only one family has (-s 2: lowrank).
_ONLY_FAMILY = {"novelty": "lowrank"}
_REFUSED_SVM_TYPES = {
    1: "1 (nu-SVC) is not available: every classifier here is a C-SVM; use -s 0 and choose "
       "-c (for instance with 'sparsekernel tune')",
    4: "4 (nu-SVR) is not available: use -s 3 (epsilon-SVR) and set the tube width with -p",
}
#: LIBSVM's ``-t`` numbers; kernel names are accepted too (laplacian has no number).
LIBSVM_KERNELS = {"0": "linear", "1": "polynomial", "2": "rbf", "3": "sigmoid"}

# Estimator parameter -> the flag that sets it. Unset flags are not passed, so the
# estimator's own defaults apply, except CLI_DEFAULTS.
_PARAMETER_FLAGS = {
    "kernel": "-t", "gamma": "-g", "C": "-c", "degree": "-d", "coef0": "-r",
    "epsilon": "-p", "tol": "-e", "class_weight": "-wLABEL", "n_basis": "--n-basis",
    "basis": "--basis", "memory_budget": "--memory-budget", "max_iter": "--max-iter",
    "random_state": "--random-state", "loss": "--loss", "n_passes": "--n-passes",
    "chunk_size": "--chunk-size", "nu": "-n",
}
# Runs repeat exactly, as LIBSVM's do (applied where the estimator has the parameter).
CLI_DEFAULTS = {"random_state": 0}

C_HELP = ("cost C (default 1), passed to the estimator's C unchanged. It is not LIBSVM's C: "
          "the loss here is the squared hinge weighted C/2 with a penalized bias (see above; "
          "other --estimator families state their objective in their docstring)")


def svm_type_value(text):
    """``-s``: 0 (C-SVC), 2 (one-class SVM) or 3 (epsilon-SVR); LIBSVM's other types are
    refused by name."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value in _REFUSED_SVM_TYPES:
        raise argparse.ArgumentTypeError(_REFUSED_SVM_TYPES[value])
    if value not in SVM_TYPES:
        raise argparse.ArgumentTypeError(
            f"expected 0 (C-SVC), 2 (one-class SVM) or 3 (epsilon-SVR), got {text!r}")
    return value


def kernel_value(text):
    """``-t``: LIBSVM's kernel number 0-3 or a kernel name."""
    if text == "4":
        raise argparse.ArgumentTypeError(
            "4 (precomputed kernel) is not available: kernels are computed from the "
            "features, block by block")
    kernel = LIBSVM_KERNELS.get(text, text)
    if kernel not in KERNELS:
        raise argparse.ArgumentTypeError(
            f"expected 0 (linear), 1 (polynomial), 2 (rbf), 3 (sigmoid) or one of "
            f"{', '.join(KERNELS)}; got {text!r}")
    return kernel


def estimator_classes():
    """``{name: class}`` of the classifiers, regressors and novelty detectors
    ``sparsekernel`` exports."""
    import sparsekernel

    classes = {}
    for name in sparsekernel.__all__:
        obj = getattr(sparsekernel, name)
        if isinstance(obj, type) and issubclass(obj, BaseEstimator):
            instance = obj()
            if (is_classifier(instance) or is_regressor(instance)
                    or is_outlier_detector(instance)):
                classes[name] = obj
    return classes


def add_estimator_options(parser, exclude=()):
    """LIBSVM's training flags and our long options; ``exclude`` drops LIBSVM letters."""
    libsvm = parser.add_argument_group("LIBSVM options (svm-train's letters and meanings)")
    for flags, kwargs in _libsvm_options():
        if flags[0] not in exclude:
            libsvm.add_argument(*flags, **kwargs)
    ours = parser.add_argument_group("sparsekernel options")
    _add_model_choice(ours)
    add = ours.add_argument
    add("--n-basis", type=n_basis_value, dest="n_basis", metavar="M",
        help="number of basis functions: int count, float fraction of n or 'auto' "
             "(twice the fit's effective dimension at -c, from the kernel's eigenvalues on a "
             f"sample of rows; from {AUTO_MIN} (or every row, if fewer) to a cost cap, "
             "lowered to what --memory-budget holds); default: auto")
    add("--basis", help=f"how the basis points are chosen: {', '.join(BASIS_SELECTORS)}; "
        f"default: {_family_default('basis')}")
    add("--memory-budget", metavar="SIZE", help="cap on the memory the data read into "
        "memory and the fit each take, e.g. 512MB; default: the library's "
        f"{format_bytes(DEFAULT_MEMORY_BUDGET)} (LIBSVM's -m cache size is ignored)")
    add("--max-iter", type=int,
        help=f"solver iterations per problem; default: {_family_default('max_iter')}")
    add("--random-state", type=int, metavar="SEED",
        help="seed of the basis selection and the cross-validation folds; default: 0")
    add("--loss", choices=("squared_hinge", "hinge"), help="lowrank model: default "
        "squared_hinge")
    add("--n-passes", type=positive_int, dest="n_passes", metavar="P",
        help="lowrank model: passes over the file; default: 1")
    add("--chunk-size", type=positive_int, dest="chunk_size", metavar="ROWS",
        help="lowrank model: rows read and optimised at a time (its memory grows "
        "with them); default: 20000")
    add("--float32", action="store_true",
        help="lowrank model: read the file in float32 (half the memory and time)")
    add("--n-features", type=positive_int, metavar="N",
        help="number of features; default: the largest index in the file (a streamed model "
             "reads the file once first to find it, and the labels)")


def _family_default(name):
    """The default of parameter ``name`` in ``--model reduced``, with the ``--model``
    families whose default differs: '100 (1000 for --model lowrank)'."""
    def default(family):
        return FAMILIES[family]["classification"]().get_params().get(name)

    others = [f"{default(family)} for --model {family}" for family in FAMILIES
              if default(family) not in (None, default("reduced"))]
    return default("reduced") if not others else f"{default('reduced')} ({'; '.join(others)})"


def _libsvm_options():
    return [
        (("-s",), dict(type=svm_type_value, dest="svm_type", metavar="svm_type",
                       help="0 C-SVC (default), 2 one-class SVM (novelty detection: "
                            "LowRankOneClassSVM, labels ignored; predict writes +1 inside, -1 "
                            "outside), 3 epsilon-SVR; 1 nu-SVC and 4 nu-SVR are not "
                            "available")),
        (("-t",), dict(type=kernel_value, dest="kernel", metavar="kernel_type",
                       help="0 linear, 1 polynomial (gamma*u'v + coef0)^degree, 2 rbf "
                            "exp(-gamma*|u-v|^2) (default), 3 sigmoid tanh(gamma*u'v + "
                            "coef0); or a name: " + ", ".join(KERNELS))),
        (("-d",), dict(type=int, dest="degree", metavar="degree",
                       help="polynomial degree (default 3)")),
        (("-g",), dict(type=gamma_value, dest="gamma", metavar="gamma",
                       help="kernel gamma: a float, 'scale' or 'auto' (= LIBSVM's default "
                            "1/num_features); default: scale = 1/(num_features * X.var())")),
        (("-r",), dict(type=float, dest="coef0", metavar="coef0",
                       help="coef0 of the polynomial and sigmoid kernels (default 0)")),
        (("-c",), dict(type=float, dest="C", metavar="cost", help=C_HELP)),
        (("-n",), dict(type=float, dest="nu", metavar="nu",
                       help="nu of the one-class SVM (-s 2, default 0.5): at most that "
                            "share of the training rows outside the boundary")),
        (("-p",), dict(type=float, dest="epsilon", metavar="epsilon",
                       help="epsilon of the epsilon-insensitive loss of -s 3 (default 0.1)")),
        (("-m",), dict(type=float, dest="cache_size", metavar="cachesize",
                       help="LIBSVM's kernel cache in MB: accepted and ignored (kernel "
                            "memory is --memory-budget)")),
        (("-e",), dict(type=float, dest="tol", metavar="epsilon",
                       help="stopping tolerance, passed to the estimator's tol (here a "
                            "relative gradient norm; default 0.001, LIBSVM's default, where it "
                            "bounds a KKT violation)")),
        (("-h",), dict(type=int, choices=(0, 1), dest="shrinking", metavar="shrinking",
                       help="LIBSVM's shrinking heuristics: accepted and ignored")),
        (("-b",), dict(type=int, choices=(0, 1), dest="probability", default=0,
                       metavar="probability_estimates",
                       help="1: also fit Platt's sigmoid on 5-fold cross-validated decision "
                            "values, saved with the model for 'predict -b 1' (default 0)")),
        (("--class-weight",), dict(type=class_weight_value, action="append",
                                   metavar="LABEL:WEIGHT",
                                   help="written -wLABEL WEIGHT as in LIBSVM (-w1 5 -w-1 2): "
                                        "C of class LABEL times WEIGHT (default 1)")),
        (("-v",), dict(type=folds_value, dest="folds", metavar="n",
                       help="n-fold cross-validation: print the accuracy (or mean squared "
                            "error and squared correlation) and save no model")),
        (("-q",), dict(action="store_true", dest="quiet", help="quiet mode (no outputs)")),
    ]


def _add_model_choice(group):
    choice = group.add_mutually_exclusive_group()
    choice.add_argument("--model", choices=sorted(FAMILIES),
                        help="reduced: m basis functions (RSVM, default); smooth: every "
                             "training row (SSVM); lowrank: Nystrom features + linear SVM "
                             "(LLSVM), streams TRAIN_FILE in chunks: its memory grows with "
                             "--chunk-size and m, not with the file")
    choice.add_argument("--estimator", metavar="NAME",
                        help="any sparsekernel classifier (-s 0), novelty detector (-s 2) or "
                             "regressor (-s 3) by class name, e.g. LSSVC, "
                             "SparseMarginClassifier, LSSVR; the options left "
                             "out keep its own defaults (the defaults below are --model's)")
    group.add_argument("--verbose", action="count", default=0,
                       help="show a progress bar (twice: also log each solve)")


def add_quiet_option(parser):
    """svm-predict's ``-q``: print nothing on success."""
    parser.add_argument("-q", action="store_true", dest="quiet", help="quiet mode (no outputs)")


def make_estimator(args):
    """Build the estimator the options describe; reject options it does not take.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``train`` or ``tune`` arguments.

    Returns
    -------
    estimator : unfitted estimator
    task : {'classification', 'regression', 'novelty'}
    """
    cls, task = _estimator_class(args)
    if args.nu is not None and "nu" not in cls().get_params():
        raise UsageError("-n (nu) applies to the one-class SVM (-s 2) here; nu-SVC and "
                         "nu-SVR (-s 1, -s 4) are not available: use -c")
    accepted = cls().get_params()
    params = {name: getattr(args, name, None) for name in _PARAMETER_FLAGS}
    params = {name: value for name, value in params.items() if value is not None}
    for name in params:
        if name not in accepted:
            raise UsageError(f"option {_PARAMETER_FLAGS[name]} does not apply to "
                             f"{cls.__name__}")
    if "class_weight" in params:
        params["class_weight"] = dict(params["class_weight"])
    defaults = {k: v for k, v in CLI_DEFAULTS.items() if k in accepted and k not in params}
    if "verbose" in accepted:
        params["verbose"] = args.verbose
    return cls(**defaults, **params), task


def _estimator_class(args):
    """(class, task) from ``--estimator`` or ``--model`` and ``-s``."""
    if args.estimator is None:
        task = SVM_TYPES[args.svm_type or 0]
        family = FAMILIES[args.model or _ONLY_FAMILY.get(task, "reduced")]
        if task not in family:
            types = " and ".join(f"{t} (-s {s})" for s, t in SVM_TYPES.items() if t in family)
            raise UsageError(f"--model {args.model} supports only {types}")
        return family[task], task
    classes = estimator_classes()
    if args.estimator not in classes:
        raise UsageError(f"--estimator {args.estimator!r} is not a sparsekernel classifier, "
                         f"regressor or novelty detector; choose one of {', '.join(classes)}")
    cls = classes[args.estimator]
    task = ("classification" if is_classifier(cls()) else
            "novelty" if is_outlier_detector(cls()) else "regression")
    if args.svm_type is not None and SVM_TYPES[args.svm_type] != task:
        raise UsageError(f"--estimator {cls.__name__} does {task}, but -s {args.svm_type} "
                         f"asks for {SVM_TYPES[args.svm_type]}")
    return cls, task
