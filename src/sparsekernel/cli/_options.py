"""Argument parsing pieces shared by the subcommands."""

from __future__ import annotations

import argparse
import re

__all__ = ["ArgumentParser", "UsageError", "class_weight_value", "folds_value", "gamma_value",
           "libsvm_argv", "n_basis_value", "positive_int"]


class UsageError(Exception):
    """Bad command-line usage; ``main`` prints it as one line and exits with status 2."""


#: A negative decimal number, in exponent notation too, or -inf/-nan (refused by name by
#: the option's type), as an option argument may be (``-l -1e-3``, ``-y -1e1 1``);
#: argparse's own pattern takes ``-1e-3`` for an option.
_NEGATIVE_NUMBER = re.compile(
    r"^-(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|inf(inity)?|nan)$", re.IGNORECASE)


class ArgumentParser(argparse.ArgumentParser):
    """An ``argparse`` parser that raises :class:`UsageError` instead of exiting, and reads
    every negative number after an option as its value, as LIBSVM's tools do.

    This keeps error reporting in one place (``main``) and lets tests call ``main`` in-process.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # No option of these commands looks like a negative number, so argparse reads a
        # token this pattern matches as a value (its documented rule, with a wider pattern).
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')")


# Options whose value may start with '-' (grid.py's '-log2c -5,15,2'): argparse would read
# such a value as an option, so the value is attached with '='.
_ATTACHED = ("-log2c", "-log2g", "--log2c", "--log2g")


def libsvm_argv(argv):
    """Rewrite LIBSVM spellings argparse cannot read into equivalent long options.

    ``-wLABEL WEIGHT`` (``-w1 5``, ``-w-1 2``) becomes ``--class-weight=LABEL:WEIGHT``, and a
    value of ``-log2c``/``-log2g`` is attached with ``=`` so that it may start with '-'.

    Parameters
    ----------
    argv : list of str
        The arguments of one subcommand.

    Returns
    -------
    list of str
    """
    out, tokens = [], iter(argv)
    for token in tokens:
        weight = re.fullmatch(r"-w(.+)", token)
        if weight:
            out.append(f"--class-weight={weight[1]}:{next(tokens, '')}")
        elif token in _ATTACHED:
            out.append(f"{token}={next(tokens, '')}")
        else:
            out.append(token)
    return out


def class_weight_value(text):
    """``-wLABEL WEIGHT`` after :func:`libsvm_argv`: 'LABEL:WEIGHT' -> (label, weight)."""
    label, _, weight = text.rpartition(":")
    try:
        return float(label), float(weight)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected -wLABEL WEIGHT with numbers, e.g. -w1 5 or -w-1 0.5; got {text!r}"
        ) from None


def folds_value(text):
    """``-v``: the n of n-fold cross-validation, at least 2 as in LIBSVM."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 2:
        raise argparse.ArgumentTypeError(f"n-fold cross validation needs n >= 2, got {text!r}")
    return value


def gamma_value(text):
    """``-g``: a float, 'scale' or 'auto'."""
    if text in ("scale", "auto"):
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a float, 'scale' or 'auto', got {text!r}"
        ) from None


def n_basis_value(text):
    """``--n-basis``: 'auto', an int count or a float fraction such as 0.1."""
    if text == "auto":
        return text
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    raise argparse.ArgumentTypeError(
        f"expected an int count, a float fraction in (0, 1] or 'auto', got {text!r}"
    )


def positive_int(text):
    """An int >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an int >= 1, got {text!r}")
    return value
