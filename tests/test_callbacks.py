"""scikit-learn callbacks (``set_callbacks``): the task tree every fit reports, its
propagation from the searches, and teardown on failure."""

import logging

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV

from sparsekernel import LowRankSVC, ReducedSVC
from sparsekernel.decomposition import ReducedKernelPCA
from sparsekernel.lssvm import LSSVC
from sparsekernel.model_selection import UniformDesignSearchCV
from sparsekernel.utils._progress import log_line

callback = pytest.importorskip("sklearn.callback")


class Recorder:
    """A FitCallback that records every hook call as (hook, estimator, task, id)."""

    def __init__(self):
        self.events = []

    def setup(self, estimator, context):
        self.events.append(("setup", type(estimator).__name__, context.task_name, None))

    def teardown(self, estimator, context):
        self.events.append(("teardown", type(estimator).__name__, context.task_name, None))

    def on_fit_task_begin(self, estimator, context):
        self.events.append(("begin", context.estimator_name, context.task_name, id(context)))

    def on_fit_task_end(self, estimator, context):
        self.events.append(("end", context.estimator_name, context.task_name, id(context)))

    def tasks(self, hook="begin"):
        return [task for h, _, task, _ in self.events if h == hook]


def _data(n_classes=2, n=120):
    return make_classification(n, 5, n_informative=3, n_redundant=0, n_classes=n_classes,
                               n_clusters_per_class=1, random_state=0)


def _assert_balanced(rec):
    """Setup first, teardown last, every task begun once and ended once, nested."""
    assert rec.events[0][0] == "setup" and rec.events[-1][0] == "teardown"
    open_tasks = []
    for hook, _, _, key in rec.events[1:-1]:
        if hook == "begin":
            open_tasks.append(key)
        else:
            assert hook == "end" and open_tasks.pop() == key
    assert not open_tasks


def _children(rec, parent):
    """Names of the tasks begun directly inside the first task named ``parent``."""
    depth, inside, names = 0, False, []
    for hook, _, task, _ in rec.events[1:-1]:
        if hook == "begin":
            if inside and depth == 1:
                names.append(task)
            if not inside and task == parent:
                inside, depth = True, 0
            depth += 1
        else:
            depth -= 1
            if inside and depth == 0:
                return names
    return names


@pytest.mark.parametrize("est", [ReducedSVC(n_basis=15, random_state=0),
                                 LowRankSVC(n_basis=15, random_state=0),
                                 LowRankSVC(n_basis=15, loss="hinge", random_state=0)],
                         ids=["ReducedSVC", "LowRankSVC", "LowRankSVC-hinge"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_iterative_fit_reports_basis_solve_and_one_subtask_per_class(est, n_classes):
    rec = Recorder()
    X, y = _data(n_classes)
    clone(est).set_callbacks(rec).fit(X, y)
    _assert_balanced(rec)
    assert rec.tasks()[0] == "fit"
    assert _children(rec, "fit") == ["basis-selection", "feature-map", "solve"]
    n_problems = 1 if n_classes == 2 else n_classes
    assert len(_children(rec, "solve")) == n_problems
    assert "iteration" in rec.tasks()


def test_per_class_subtasks_are_named_after_the_classes():
    rec = Recorder()
    X, y = _data(3)
    LowRankSVC(n_basis=15, loss="hinge", random_state=0).set_callbacks(rec).fit(X, y)
    assert _children(rec, "solve") == ["class-0", "class-1", "class-2"]


@pytest.mark.parametrize("n_basis", [None, 15])
def test_lssvc_reports_basis_and_solve(n_basis):
    rec = Recorder()
    LSSVC(n_basis=n_basis, random_state=0).set_callbacks(rec).fit(*_data(3))
    _assert_balanced(rec)
    assert "solve" in _children(rec, "fit")
    assert ("basis-selection" in rec.tasks()) == (n_basis is not None)


def test_decomposition_reports_basis_selection():
    rec = Recorder()
    X, _ = _data()
    ReducedKernelPCA(n_basis=15, n_components=2, random_state=0).set_callbacks(rec).fit(X)
    _assert_balanced(rec)
    assert "basis-selection" in _children(rec, "fit")


def test_fit_stream_reports_its_passes_and_chunks():
    rec = Recorder()
    X, y = _data(2, n=200)
    est = LowRankSVC(n_basis=15, n_passes=2, chunk_size=50, random_state=0)
    est.set_callbacks(rec).fit_stream((X, y))
    _assert_balanced(rec)
    assert rec.tasks()[0] == "fit_stream"
    assert len(_children(rec, "stream")) == 2  # one sub-task per pass
    assert rec.tasks().count("chunk") == 2 * 4  # one step per chunk of each pass


def test_partial_fit_is_one_task_per_call():
    rec = Recorder()
    X, y = _data(2, n=160)
    est = LSSVC(n_basis=10, random_state=0).set_callbacks(rec)
    est.partial_fit(X[:80], y[:80], classes=[0, 1]).partial_fit(X[80:], y[80:])
    assert [e[0] for e in rec.events].count("setup") == 2
    assert rec.tasks().count("partial_fit") == 2
    assert rec.tasks().count("basis-selection") == 1  # the first call fixes the basis
    assert rec.tasks("end").count("partial_fit") == 2


def test_callbacks_are_not_fitted_state_and_survive_clone():
    rec = Recorder()
    est = ReducedSVC(n_basis=10).set_callbacks(rec)
    assert clone(est)._skl_callbacks == [rec]  # by reference, as sklearn.base.clone does
    est.fit(*_data())
    assert est._skl_callbacks == [rec]
    assert not hasattr(est, "_callback_fit_ctx")  # the fit's context is gone after fit


class _Boom(Exception):
    pass


@pytest.mark.parametrize("error", [_Boom, KeyboardInterrupt])
def test_failed_fit_tears_callbacks_down_and_keeps_them(monkeypatch, error):
    """A fit that raises (here from the solver) is undone, and the callbacks still see
    their teardown: the setup/teardown pair is balanced, the estimator keeps them."""
    import sparsekernel.svm._base as svm_base

    def fail(*args, **kwargs):
        raise error("injected")

    monkeypatch.setattr(svm_base, "newton_ovr", fail)
    rec = Recorder()
    est = ReducedSVC(n_basis=10).set_callbacks(rec)
    with pytest.raises(error):
        est.fit(*_data())
    assert [e[0] for e in rec.events].count("setup") == 1
    assert rec.events[-1][0] == "teardown"
    assert not hasattr(est, "coef_") and not hasattr(est, "_callback_fit_ctx")
    assert est._skl_callbacks == [rec]


def test_progressbar_shows_progress(capsys):
    pytest.importorskip("rich")
    ReducedSVC(n_basis=10).set_callbacks(callback.ProgressBar()).fit(*_data(3))
    out = capsys.readouterr()
    assert "ReducedSVC - fit" in out.out + out.err
    assert "solve" in out.out + out.err


def test_grid_search_propagates_to_the_estimator():
    """A callback on the search reaches the candidates' fits and the refit (the search's
    own callbacks are set up once, on the search)."""
    pytest.importorskip("rich")
    X, y = _data()
    search = GridSearchCV(ReducedSVC(n_basis=10, random_state=0), {"C": [1.0, 10.0]}, cv=2)
    search.set_callbacks(callback.ProgressBar()).fit(X, y)
    # a non-propagated callback on the estimator sees each of its own fits, in the tree
    rec = Recorder()
    GridSearchCV(ReducedSVC(n_basis=10, random_state=0).set_callbacks(rec),
                 {"C": [1.0, 10.0]}, cv=2).fit(X, y)
    assert [e[0] for e in rec.events].count("setup") == 2 * 2 + 1
    assert rec.tasks().count("solve") == 2 * 2 + 1


class _Propagated(Recorder):
    max_propagation_depth = None  # an AutoPropagatedCallback


def test_uniform_design_search_propagates_through_both_stages():
    X, y = _data()
    rec = _Propagated()
    search = UniformDesignSearchCV(ReducedSVC(n_basis=10, random_state=0), cv=2,
                                   design="9-5")
    search.set_callbacks(rec).fit(X, y)
    _assert_balanced(rec)
    assert [e[0] for e in rec.events].count("setup") == 1  # once, on the search
    assert _children(rec, "search") == ["stage-1", "stage-2"]
    n_fits = len(search.cv_results_["params"]) * 2 + 1  # 9 + 4 (+ 1 when stage 2 shifts)
    assert n_fits in ((9 + 4) * 2 + 1, (9 + 5) * 2 + 1)
    begun = [e[1:3] for e in rec.events if e[0] == "begin"]
    assert begun.count(("ReducedSVC", "solve")) == n_fits


def test_uniform_design_search_with_progressbar_runs(capsys):
    pytest.importorskip("rich")
    search = UniformDesignSearchCV(ReducedSVC(n_basis=10, random_state=0), cv=2,
                                   design="9-5")
    search.set_callbacks(callback.ProgressBar()).fit(*_data())
    out = capsys.readouterr()
    assert "stage-2" in out.out + out.err


def test_verbose_lines_are_readable(caplog):
    """verbose=2 logs key=value pairs of scalars (NumPy ones too), never a raw dict."""
    with caplog.at_level(logging.INFO, logger="sparsekernel"):
        log_line(2, "Est", "iteration", {"n_iter": np.int64(3), "gap": np.float32(0.5),
                                         "done": np.bool_(True), "nested": {"a": 1},
                                         "objective": float("nan")})
        for est in (ReducedSVC(n_basis=10, verbose=2), LSSVC(n_basis=10, verbose=2),
                    LowRankSVC(n_basis=10, loss="hinge", verbose=2)):
            est.fit(*_data(3))
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "[Est] iteration n_iter=3 gap=0.5 done=True"
    assert len(lines) > 3
    assert not any("{" in line or "np." in line for line in lines)
