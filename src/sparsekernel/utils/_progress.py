"""Progress of long fits: scikit-learn callbacks, a tqdm bar at ``verbose=1``, log lines from
``verbose=2``.

Callbacks (``est.set_callbacks(ProgressBar())``, scikit-learn's ``sklearn.callback``) see a
tree of tasks per fit. :func:`run_fit_task` opens its root around every fit entry
(``base._fit_entry``); :func:`fit_step` adds a named step under the innermost open task
(``basis-selection``, ``feature-map``, ``solve``); :class:`SolverProgress` adds a ``solve``
task with one sub-task per sub-problem (``class-<label>`` one-vs-rest, else ``problem``)
and an ``iteration`` leaf per solver report. The open task is held in a context variable,
so the helpers need no estimator argument and a fit without callbacks pays one lookup.

Log lines go to the ``sparsekernel`` logger (level INFO) when the application has configured
it, and to standard error otherwise: ``verbose`` is an explicit request for output, so it must
show without any logging set-up, as scikit-learn's and LIBLINEAR's ``verbose`` do.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import logging
import math
import numbers
import sys
import threading
from typing import NamedTuple

import numpy as np

from ._validation import plain

# sklearn.callback is newer than the minimum scikit-learn: without it, estimators have no
# ``set_callbacks`` (base.py) and fit without callbacks.
try:
    from sklearn.callback import with_callbacks
except ImportError:  # pragma: no cover - scikit-learn without sklearn.callback
    with_callbacks = None

__all__ = ["SolverProgress", "fit_note", "fit_step", "log_line", "run_fit_task"]

logger = logging.getLogger("sparsekernel")


class _Task(NamedTuple):
    """The open task of a fit: the estimator that reports, its callback context or None."""

    estimator: object
    context: object


#: The innermost open task of the running fit (None outside fits); a context variable, so
#: threads and nested estimators each see their own.
_CURRENT = contextvars.ContextVar("sparsekernel_fit_task", default=None)


def _format_value(value):
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = float(value)
        return None if math.isnan(value) else f"{value:.4g}"
    return value if isinstance(value, str) else None


def _format(info):
    """``key=value`` pairs of the scalars of ``info`` (NaN and non-scalars left out)."""
    parts = ((key, _format_value(value)) for key, value in info.items())
    return " ".join(f"{key}={text}" for key, text in parts if text is not None)


def log_line(verbose, owner, message, info=None, level=2):
    """Emit one progress line when ``verbose >= level``.

    Parameters
    ----------
    verbose : int or bool
        The estimator's ``verbose``.
    owner : str
        Who speaks (usually the estimator's class name).
    message : str
        What happened (``"solve"``, ``"iteration"``, ...).
    info : dict, optional
        Numbers to append as ``key=value`` (NaN and non-scalar entries are left out).
    level : int, default=2
        The least ``verbose`` that shows the line: 2 for per-iteration and per-solve lines,
        1 for what a fit decided once (:func:`fit_note`), shown beside the progress bar.
    """
    if int(verbose) < level:
        return
    text = _format(info) if info else ""
    line = f"[{owner}] {message}" + (f" {text}" if text else "")
    if logger.hasHandlers() and logger.isEnabledFor(logging.INFO):
        logger.info(line)
    else:
        print(line, file=sys.stderr, flush=True)


def fit_note(message, info=None):
    """One line, at ``verbose >= 1``, from inside the running fit: what it decided on its
    own (e.g. the m that ``n_basis='auto'`` chose). The running fit's estimator names the
    line and gives ``verbose``; outside a fit nothing is shown.

    Parameters
    ----------
    message : str
    info : dict, optional
        As :func:`log_line`'s.
    """
    current = _CURRENT.get()
    if current is None:
        return
    estimator = current.estimator
    log_line(getattr(estimator, "verbose", 0) or 0, type(estimator).__name__, message, info,
             level=1)


def _wants_callbacks(estimator):
    """Whether a fit of ``estimator`` has anyone to report to: its own callbacks, or a
    meta-estimator's task tree to join (sklearn sets ``_parent_callback_ctx`` for that)."""
    return with_callbacks is not None and hasattr(estimator, "_init_callback_context") and (
        bool(getattr(estimator, "_skl_callbacks", None))
        or hasattr(estimator, "_parent_callback_ctx"))


def _fit_arguments(signature, args, kwargs):
    """``X``, ``y`` and ``{'sample_weight': ...}`` of a fit call, for the callback hooks."""
    try:
        bound = signature.bind_partial(*args, **kwargs).arguments
    except TypeError:  # the fit itself will say what is wrong with its arguments
        return None, None, None
    sw = bound.get("sample_weight")
    return bound.get("X"), bound.get("y"), None if sw is None else {"sample_weight": sw}


def run_fit_task(estimator, method, call, args=(), kwargs=None):
    """Run ``call()``, the body of ``estimator.method(*args, **kwargs)``, as a fit task.

    With callbacks, the root callback context (named after the method) brackets the fit
    (``sklearn.callback.with_callbacks``); without, the fit is only marked as running. A fit
    entry reached again inside the same estimator's fit is part of that fit.

    Parameters
    ----------
    estimator : SparseKernelEstimator
    method : callable
        The undecorated fit method (its name and signature are used).
    call : callable
        Runs the fit; its return value is returned.
    args, kwargs
        The arguments of the fit call (``X``, ``y`` and ``sample_weight`` are shown to the
        callbacks).
    """
    current = _CURRENT.get()
    if current is not None and current.estimator is estimator:
        return call()
    if not _wants_callbacks(estimator):
        token = _CURRENT.set(_Task(estimator, None))
        try:
            return call()
        finally:
            _CURRENT.reset(token)
    X, y, metadata = _fit_arguments(inspect.signature(method), (estimator, *args),
                                    kwargs or {})
    return with_callbacks(_run_root_task)(estimator, method.__name__, call, X, y, metadata)


def _run_root_task(estimator, name, call, X, y, metadata):
    # Set up before the fit transaction starts, so that a failed fit restores the attributes
    # with_callbacks tears down.
    context = estimator._init_callback_context(task_name=name, max_subtasks=None)
    context.call_on_fit_task_begin(estimator=estimator, X=X, y=y, metadata=metadata)
    token = _CURRENT.set(_Task(estimator, context))
    try:
        result = call()
    finally:
        _CURRENT.reset(token)
    # The estimator is fitted now: a callback asking for a fitted estimator gets a copy.
    context.call_on_fit_task_end(estimator=estimator, X=X, y=y, metadata=metadata,
                                 reconstruction_attributes={})
    return result


@contextlib.contextmanager
def fit_step(name):
    """Report the enclosed block as the step ``name`` of the running fit to its callbacks.

    A no-op outside a fit with callbacks. The step is the parent of the tasks opened inside
    it; it ends (``on_fit_task_end``) only if the block succeeds, as scikit-learn's tasks do.

    Parameters
    ----------
    name : str
        The task name, e.g. ``"basis-selection"`` or ``"feature-map"``.
    """
    current = _CURRENT.get()
    if current is None or current.context is None:
        yield
        return
    context = current.context.subcontext(task_name=name, max_subtasks=None)
    context.call_on_fit_task_begin(estimator=current.estimator)
    token = _CURRENT.set(_Task(current.estimator, context))
    try:
        yield
    finally:
        _CURRENT.reset(token)
    context.call_on_fit_task_end(estimator=current.estimator)


class SolverProgress:
    """Context manager handing out solver callbacks that advance one progress display.

    Inside a fit with callbacks it is the task ``task`` of ``total`` sub-tasks, each with a
    ``step`` leaf per solver report.

    Parameters
    ----------
    verbose : int
        0: silent. 1: a tqdm bar over the sub-problems (e.g. one per class; a single
        problem's bar shows its iterations as they come). 2 and more: instead a line per
        solver iteration (:func:`log_line`).
    total : int
        Number of sub-problems.
    desc : str
        Bar label (the estimator's name).
    task : str, default="solve"
        Callback task name of the whole.
    unit : str, default="problem"
        Callback task name of a sub-problem with no class label (e.g. ``"pass"``).
    step : str, default="iteration"
        Callback task name of one solver report (e.g. ``"chunk"``).
    """

    def __init__(self, verbose, total, desc, *, task="solve", unit="problem",
                 step="iteration"):
        self.verbose, self.total, self.desc = int(verbose), total, desc
        self.task, self.unit, self.step = task, unit, step
        self._bar = None
        self.n_done = 0
        self._owner = _CURRENT.get()
        self._context = self._problem = None
        self._label, self._n_opened = None, 0
        # Solvers may report from worker threads; the task tree is not thread-safe.
        self._lock = threading.Lock()

    def __enter__(self):
        # One display per level: the bar at verbose=1; from 2 on, lines (a bar redrawn
        # between them would garble both on the same terminal).
        if self.verbose == 1 and self.total >= 1:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=self.total, desc=self.desc, unit="problem", leave=False)
        if self._owner is not None and self._owner.context is not None:
            self._context = self._owner.context.subcontext(task_name=self.task,
                                                           max_subtasks=self.total)
            self._context.call_on_fit_task_begin(estimator=self._owner.estimator)
        return self

    def __exit__(self, exc_type, *exc):
        if self._bar is not None:
            self._bar.close()
        if self._context is not None and exc_type is None:
            with self._lock:
                self._end_problem()
                self._context.call_on_fit_task_end(estimator=self._owner.estimator)
        return False

    def callback(self, label):
        """Return a per-iteration callback for the sub-problem named ``label`` (the next
        one), or None when nothing listens."""
        self._label = label
        if self.verbose <= 0 and self._context is None:
            return None
        where = "" if label is None else f" for class {plain(label)!r}"

        def report(info):
            self._iteration()
            if self._bar is not None:
                self._bar.set_postfix(it=info.get("n_iter"))
            log_line(self.verbose, self.desc, f"iteration{where}", info)

        return report

    def done(self):
        """Mark one sub-problem finished."""
        self.n_done += 1
        if self._bar is not None:
            self._bar.update(1)
        if self._context is not None:
            with self._lock:
                if self._problem is None:
                    self._open_problem()
                self._end_problem()

    def _open_problem(self):
        """Begin the next sub-problem's task (at most ``total``); None past ``total``."""
        if self._n_opened >= self.total:
            return None
        self._n_opened += 1
        name = self.unit if self._label is None else f"class-{plain(self._label)}"
        self._problem = self._context.subcontext(task_name=name, max_subtasks=None)
        self._problem.call_on_fit_task_begin(estimator=self._owner.estimator)
        return self._problem

    def _end_problem(self):
        if self._problem is not None:
            problem, self._problem = self._problem, None
            problem.call_on_fit_task_end(estimator=self._owner.estimator)

    def _iteration(self):
        if self._context is None:
            return
        with self._lock:
            problem = self._problem or self._open_problem()
            if problem is not None:
                leaf = problem.subcontext(task_name=self.step)
                leaf.call_on_fit_task_begin(estimator=self._owner.estimator)
                leaf.call_on_fit_task_end(estimator=self._owner.estimator)
