"""Entry point: build the parser, dispatch, and turn errors into one-line messages."""

from __future__ import annotations

import logging
import sys

from .. import __version__
from . import _demo, _fit, _predict
from ._options import ArgumentParser, UsageError

__all__ = ["main"]

PROG = "sparsekernel"


def build_parser():
    """The ``sparsekernel`` parser with its ``fit``, ``predict`` and ``demo`` subcommands."""
    parser = ArgumentParser(
        prog=PROG,
        description="Reduced and smooth kernel machines from the command line. Data files "
                    "are in LIBSVM/svmlight format; models are saved without pickle.",
        epilog="Start with 'sparsekernel demo'; see 'sparsekernel COMMAND --help'.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    for module in (_fit, _predict, _demo):
        module.add_parser(subparsers)
    return parser


def main(argv=None):
    """Run the ``sparsekernel`` command.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; ``None`` reads ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status: 0 on success, 1 when the command fails (missing or malformed file,
        invalid parameter value), 2 for command-line usage errors, 130 when interrupted.
    """
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            raise UsageError(f"a command is required: fit, predict or demo (see '{PROG} --help')")
        if getattr(args, "verbose", 0) > 1:
            logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
        return args.run(args)
    except SystemExit as exc:  # --help and --version exit through argparse
        return exc.code if isinstance(exc.code, int) else 0
    except UsageError as exc:
        return _fail(exc, status=2)
    except (OSError, ValueError) as exc:  # includes ModelFormatError and parameter errors
        return _fail(exc, status=1)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


def _fail(exc, status):
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        message = f"{exc.strerror}: {exc.filename!r}"
    else:
        message = " ".join(str(exc).split()) or type(exc).__name__
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return status
