"""``sparsekernel fit``: train on a LIBSVM/svmlight file and save the model."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import is_classifier

from ..datasets import SvmlightChunks, load_svmlight_path
from ..io import save
from ..kernels import KERNELS
from ..svm import LowRankSVC, ReducedSVC, ReducedSVR, SmoothSVC, SmoothSVR
from ._options import UsageError, gamma_value, n_basis_value, positive_int

__all__ = ["MODELS", "add_parser", "describe_size"]

#: ``--model`` name -> ``{task: estimator class}``; new model families are added here.
MODELS = {
    "reduced": {"classification": ReducedSVC, "regression": ReducedSVR},
    "smooth": {"classification": SmoothSVC, "regression": SmoothSVR},
    "lowrank": {"classification": LowRankSVC},
}
#: Models trained by streaming the file (bounded memory) instead of loading it.
STREAMED = ("lowrank",)
TASKS = ("classification", "regression")

# Estimator parameter -> its flags. Options left unset are not passed, so the estimator's
# own defaults (quoted in the help) always apply.
_ESTIMATOR_OPTIONS = {
    "kernel": "-k/--kernel", "gamma": "-g/--gamma", "C": "-c/--C", "degree": "-d/--degree",
    "coef0": "-r/--coef0", "epsilon": "-p/--epsilon", "n_basis": "-m/--n-basis",
    "basis": "-b/--basis", "memory_budget": "--memory-budget", "tol": "-e/--tol",
    "max_iter": "--max-iter", "random_state": "--random-state", "loss": "--loss",
    "n_passes": "--n-passes", "chunk_size": "--chunk-size",
}


def add_parser(subparsers):
    """Register the ``fit`` subcommand."""
    parser = subparsers.add_parser(
        "fit", help="train a model on a LIBSVM/svmlight file and save it",
        description="Train on TRAIN_FILE (LIBSVM/svmlight format, optionally .gz/.bz2/.xz) "
                    "and save the model to MODEL_FILE (sparsekernel model format, .skm).",
    )
    parser.add_argument("train_file", metavar="TRAIN_FILE")
    parser.add_argument("model_file", metavar="MODEL_FILE")
    parser.add_argument("-s", "--task", choices=TASKS, default="classification",
                        help="default: classification")
    parser.add_argument("--model", choices=sorted(MODELS), default="reduced",
                        help="reduced: m basis functions (RSVM); smooth: all n training "
                             "points (SSVM); lowrank: Nystrom features + linear SVM (LLSVM), "
                             "streams TRAIN_FILE in chunks with bounded memory. "
                             "default: reduced")
    _add_estimator_options(parser)
    parser.add_argument("--n-features", type=positive_int, metavar="N",
                        help="number of features (default: the largest index in the file)")
    add_verbosity_options(parser, with_verbose=True)
    parser.set_defaults(run=run)


def _add_estimator_options(parser):
    group = parser.add_argument_group("estimator options (LIBSVM letters where they exist)")
    add = group.add_argument
    add("-k", "--kernel", choices=KERNELS, metavar="KERNEL",
        help=f"{', '.join(KERNELS)}; default: rbf")
    add("-g", "--gamma", type=gamma_value, help="float, 'scale' or 'auto'; default: scale")
    add("-c", "--C", type=float, dest="C", help="loss weight; default: 1.0")
    add("-d", "--degree", type=int, help="polynomial degree; default: 3")
    add("-r", "--coef0", type=float, help="polynomial/sigmoid offset; default: 0.0")
    add("-p", "--epsilon", type=float, help="regression tube half-width; default: 0.1")
    add("-m", "--n-basis", type=n_basis_value, dest="n_basis", metavar="M",
        help="reduced model: int count, float fraction of n or 'auto'; default: auto")
    add("-b", "--basis", choices=("random", "kmeans"),
        help="reduced model: how to choose the basis points; default: random")
    add("--memory-budget", metavar="SIZE", help="kernel working memory, e.g. 512MB; "
        "default: 1GB")
    add("-e", "--tol", type=float, help="stopping tolerance; default: 1e-6")
    add("--max-iter", type=int, help="Newton iterations per problem; default: 100")
    add("--random-state", type=int, metavar="SEED", help="seed for basis selection")
    add("--loss", choices=("squared_hinge", "hinge"), help="lowrank model: default squared_hinge")
    add("--n-passes", type=positive_int, dest="n_passes", metavar="P",
        help="lowrank model: passes over the file; default: 1")
    add("--chunk-size", type=positive_int, dest="chunk_size", metavar="ROWS",
        help="lowrank model: rows read and optimised at a time; default: 20000")
    add("--float32", action="store_true",
        help="lowrank model: read the file in float32 (half the memory and time)")


def add_verbosity_options(parser, with_verbose=False):
    """``-q/--quiet`` (and ``-v/--verbose``), mutually exclusive."""
    group = parser.add_mutually_exclusive_group()
    if with_verbose:
        group.add_argument("-v", "--verbose", action="count", default=0,
                           help="show a progress bar (-vv: also log each iteration)")
    group.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")


def make_estimator(args):
    """Build the estimator the options describe; reject options it does not take."""
    if args.task not in MODELS[args.model]:
        raise UsageError(f"--model {args.model} supports only --task "
                         f"{', '.join(MODELS[args.model])}")
    cls = MODELS[args.model][args.task]
    accepted = cls().get_params()
    params = {name: getattr(args, name) for name in _ESTIMATOR_OPTIONS
              if getattr(args, name) is not None}
    for name in params:
        if name not in accepted:
            raise UsageError(
                f"option {_ESTIMATOR_OPTIONS[name]} does not apply to --model {args.model} "
                f"with --task {args.task} ({cls.__name__})"
            )
    return cls(**params, verbose=args.verbose)


def run(args):
    """Fit, save and print one summary line."""
    if args.float32 and args.model not in STREAMED:
        raise UsageError("--float32 applies to --model lowrank only")
    model = make_estimator(args)
    streamed, dtype = args.model in STREAMED, np.float32 if args.float32 else np.float64
    if streamed:  # the file is read chunk by chunk, to fit and again to score
        data = (SvmlightChunks(args.train_file, model.chunk_size, args.n_features, dtype),)
    else:
        data = load_svmlight_path(args.train_file, n_features=args.n_features)
    start = time.perf_counter()
    (model.fit_stream if streamed else model.fit)(*data)
    seconds = time.perf_counter() - start
    save(model, args.model_file)
    if not args.quiet:
        chunks = (SvmlightChunks(args.train_file, model.chunk_size, model.n_features_in_, dtype)
                  if streamed else [data])
        how = f" (streamed in chunks of {model.chunk_size} rows)" if streamed else ""
        print(f"{type(model).__name__}: {training_score(model, chunks)}, {describe_size(model)}, "
              f"fit {seconds:.3g} s{how}; saved to {args.model_file}")
    return 0


def training_score(model, chunks):
    """'training accuracy 0.9 (9/10)' or 'training RMSE 0.12' over ``(X, y)`` chunks."""
    total = n = 0
    for X, y in chunks:  # correct predictions, or squared errors
        predictions = model.predict(X)
        total += (int(np.sum(predictions == y)) if is_classifier(model)
                  else float(np.sum((predictions - y) ** 2)))
        n += len(y)
    if is_classifier(model):
        return f"training accuracy {total / n:.4f} ({total}/{n})"
    return f"training RMSE {np.sqrt(total / n):.4g}"


def describe_size(model):
    """How many basis functions the fitted model evaluates per prediction."""
    basis = getattr(model, "basis_", None)
    if basis is None:
        return f"linear in {model.n_features_in_} features (no basis functions)"
    return f"{basis.shape[0]} basis functions"
