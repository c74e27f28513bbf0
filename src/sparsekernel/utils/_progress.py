"""Progress reporting for long fits: a tqdm bar at ``verbose=1``, log lines from ``verbose=2``.

Log lines go to the ``sparsekernel`` logger (level INFO) when the application has configured
it, and to standard error otherwise: ``verbose`` is an explicit request for output, so it must
show without any logging set-up, as scikit-learn's and LIBLINEAR's ``verbose`` do.
"""

from __future__ import annotations

import logging
import math
import sys

__all__ = ["SolverProgress", "log_line"]

logger = logging.getLogger("sparsekernel")


def _format(info):
    parts = []
    for key, value in info.items():
        if isinstance(value, float) and not math.isnan(value):
            parts.append(f"{key}={value:.4g}")
        elif isinstance(value, int | str):
            parts.append(f"{key}={value}")
    return " ".join(parts)


def log_line(verbose, owner, message, info=None):
    """Emit one progress line when ``verbose >= 2``.

    Parameters
    ----------
    verbose : int or bool
        The estimator's ``verbose``.
    owner : str
        Who speaks (usually the estimator's class name).
    message : str
        What happened (``"solve"``, ``"iteration"``, ...).
    info : dict, optional
        Numbers to append as ``key=value`` (NaN entries are left out).
    """
    if int(verbose) < 2:
        return
    line = f"[{owner}] {message}" + (f" {_format(info)}" if info else "")
    if logger.hasHandlers() and logger.isEnabledFor(logging.INFO):
        logger.info(line)
    else:
        print(line, file=sys.stderr, flush=True)


class SolverProgress:
    """Context manager handing out solver callbacks that advance one progress bar.

    Parameters
    ----------
    verbose : int
        0: silent. 1: a tqdm bar over the sub-problems (e.g. one per class). 2 and more:
        also a line per solver iteration (:func:`log_line`).
    total : int
        Number of sub-problems.
    desc : str
        Bar label (the estimator's name).
    """

    def __init__(self, verbose, total, desc):
        self.verbose, self.total, self.desc = int(verbose), total, desc
        self._bar = None
        self.n_done = 0

    def __enter__(self):
        if self.verbose > 0 and self.total > 1:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=self.total, desc=self.desc, unit="problem", leave=False)
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.close()
        return False

    def callback(self, label):
        """Return a per-iteration callback for the sub-problem named ``label``."""
        if self.verbose <= 0:
            return None
        where = "" if label is None else f" {label}"

        def report(info):
            if self._bar is not None:
                self._bar.set_postfix(it=info.get("n_iter"))
            log_line(self.verbose, self.desc, f"iteration{where}", info)

        return report

    def done(self):
        """Mark one sub-problem finished."""
        self.n_done += 1
        if self._bar is not None:
            self._bar.update(1)
