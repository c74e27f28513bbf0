"""Entry point: build the parser, dispatch, and turn errors into one-line messages."""

from __future__ import annotations

import logging
import os
import sys

from .. import __version__
from . import INTERRUPTED, PROG, _demo, _export, _predict, _scale, _train, _tune
from ._files import StandardOutputError, committed, end_command, start_command
from ._options import ArgumentParser, UsageError, libsvm_argv

__all__ = ["run"]

COMMANDS = "train (or fit), predict, scale, tune, export or demo"
# Commands whose arguments may use LIBSVM spellings argparse cannot read (-w1 5).
_LIBSVM_SPELLINGS = ("train", "fit", "tune")
BROKEN_PIPE = 141  # 128 + SIGPIPE, the status of a C tool stopped by a closed pipe


def build_parser():
    """The ``sparsekernel`` parser with its subcommands."""
    parser = ArgumentParser(
        prog=PROG,
        description="LIBSVM's command-line tools on reduced and smooth kernel machines: "
                    "train (svm-train), predict (svm-predict), scale (svm-scale) and tune "
                    "(grid.py), with their flags, and export (a model as an ONNX graph). "
                    "Data files are in LIBSVM format; models are saved without pickle.",
        epilog="Start with 'sparsekernel demo'; see 'sparsekernel COMMAND --help'.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    for module in (_train, _predict, _scale, _tune, _export, _demo):
        module.add_parser(subparsers)
    return parser


def run(argv=None):
    """:func:`sparsekernel.cli.main` once the modules are loaded: dispatch, report errors.

    ``argv=None`` is the process's own command (the console script, ``python -m``): once its
    output file is in place, Ctrl-C stays ignored until the process exits. Called with
    ``argv``, from Python, it gives SIGINT its handler back before returning.
    """
    start_command()
    try:
        return _run(sys.argv[1:] if argv is None else list(argv))
    finally:
        if argv is not None:
            end_command()


def _run(argv):
    """Dispatch ``argv``; every error is one line on standard error and an exit status."""
    try:
        return _dispatch(argv)
    except SystemExit as exc:  # --help and --version exit through argparse
        return exc.code if isinstance(exc.code, int) else 0
    except UsageError as exc:
        return _fail(exc, status=2)
    except KeyboardInterrupt:  # it propagates from every fit
        if committed():  # the output file, written last, is in place: the work is done
            return 0
        print(f"{PROG}: interrupted", file=sys.stderr)  # nothing was saved
        return INTERRUPTED
    except BrokenPipeError:  # the reader went away ('sparsekernel scale data | head')
        _discard_stdout()
        return BROKEN_PIPE
    except StandardOutputError as exc:  # a full disk: nothing more can go out there
        _discard_stdout()
        return _fail(exc, status=1)
    except (OSError, ValueError) as exc:  # includes ModelFormatError and parameter errors
        return _fail(exc, status=1)
    except MemoryError as exc:  # what no plan foresaw: say so in one line
        detail = " ".join(str(exc).split()) or "the machine ran out of memory"
        return _fail(f"out of memory: {detail}; lower --memory-budget, --n-basis or "
                     "--chunk-size, or use a smaller file", status=1)


def _dispatch(argv):
    if argv and argv[0] in _LIBSVM_SPELLINGS:
        argv = [argv[0], *libsvm_argv(argv[1:])]
    args = build_parser().parse_args(argv)
    if args.command is None:
        raise UsageError(f"a command is required: {COMMANDS} (see '{PROG} --help')")
    if getattr(args, "verbose", 0) > 1:
        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    return args.run(args)


def _discard_stdout():
    """Point stdout at /dev/null, so that the flush at exit does not fail again."""
    if sys.stdout is None:  # closed from the start: nothing to flush
        return
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # a stdout without a file descriptor (tests)
        pass


def _fail(exc, status):
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        message = f"{exc.strerror}: {exc.filename!r}"
    else:
        message = " ".join(str(exc).split()) or type(exc).__name__
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return status
