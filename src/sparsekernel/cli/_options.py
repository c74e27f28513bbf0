"""Argument parsing pieces shared by the subcommands."""

from __future__ import annotations

import argparse

__all__ = ["ArgumentParser", "UsageError", "gamma_value", "n_basis_value", "positive_int"]


class UsageError(Exception):
    """Bad command-line usage; ``main`` prints it as one line and exits with status 2."""


class ArgumentParser(argparse.ArgumentParser):
    """An ``argparse`` parser that raises :class:`UsageError` instead of exiting.

    This keeps error reporting in one place (``main``) and lets tests call ``main`` in-process.
    """

    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')")


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
    """``-m``: 'auto', an int count or a float fraction such as 0.1."""
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
