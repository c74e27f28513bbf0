"""Progress reporting for long fits: a tqdm bar when ``verbose > 0``, nothing otherwise."""

from __future__ import annotations

import logging

__all__ = ["SolverProgress"]

logger = logging.getLogger("sparsekernel")


class SolverProgress:
    """Context manager handing out solver callbacks that advance one progress bar.

    Parameters
    ----------
    verbose : int
        0: silent. 1: a tqdm bar over the sub-problems (e.g. one per class). 2 and more:
        also a log line (logger ``sparsekernel``, level INFO) per solver iteration.
    total : int
        Number of sub-problems.
    desc : str
        Bar label.
    """

    def __init__(self, verbose, total, desc):
        self.verbose, self.total, self.desc = int(verbose), total, desc
        self._bar = None

    def __enter__(self):
        if self.verbose > 0:
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

        def report(info):
            fields = {} if label is None else {"problem": str(label)}
            self._bar.set_postfix(**fields, it=info["n_iter"], grad=f"{info['grad_norm']:.2e}")
            if self.verbose > 1:
                logger.info("%s %s: %s", self.desc, label, info)

        return report

    def done(self):
        """Mark one sub-problem finished."""
        if self._bar is not None:
            self._bar.update(1)
