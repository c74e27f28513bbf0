"""Uniform-design tables, the nested UD points and UniformDesignSearchCV."""

import math

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

from sparsekernel import ReducedSVC, SmoothSVC
from sparsekernel.model_selection import (
    UD_TABLES,
    UniformDesignSearchCV,
    centered_l2_discrepancy,
    gamma_search_range,
    min_squared_distance,
    plot_ud_search,
    ud_points,
)


@pytest.mark.parametrize("n, cd2", [(5, 0.105124), (9, 0.059857), (13, 0.041795)])
def test_ud_tables_centered_l2_discrepancy(n, cd2):
    t = UD_TABLES[n]
    assert centered_l2_discrepancy(t) == pytest.approx(cd2, abs=1e-6)
    for col in t.T:  # U-type: every level once per column
        np.testing.assert_array_equal(np.sort(col), np.arange(1, n + 1))
    np.testing.assert_array_equal(t[0], [(n + 1) // 2] * 2)  # centre run first


def test_discrepancy_ranks_a_bad_design_worse():
    diagonal = np.c_[np.arange(1, 10), np.arange(1, 10)]
    assert centered_l2_discrepancy(diagonal) > centered_l2_discrepancy(UD_TABLES[9]) + 0.05


def test_default_gamma_box_is_centred_on_scale():
    # 'auto' searches 2^-5 .. 2^5 times 1 / (d var X); the paper's rho-based box is opt-in.
    X = np.random.default_rng(0).normal(scale=3.0, size=(200, 4))
    centre = math.log2(1.0 / (4 * X.var()))
    np.testing.assert_allclose(gamma_search_range(X), [centre - 5, centre + 5], rtol=1e-12)
    search = UniformDesignSearchCV(ReducedSVC(n_basis=10, random_state=0), cv=2,
                                   design="9-5", random_state=0).fit(X, X[:, 0] > 0)
    np.testing.assert_allclose(search.search_box_[1], [centre - 5, centre + 5], rtol=1e-12)


def test_worked_example_of_formulas_2_3():
    # rho = 1: two points at distance 1 give the gamma box of the example exactly.
    g_box = gamma_search_range(np.array([[0.0, 0.0], [1.0, 0.0]]), mode="paper")
    np.testing.assert_allclose(g_box, [math.log2(-math.log(0.999)),
                                       math.log2(-math.log(0.150))], rtol=1e-12)
    np.testing.assert_allclose(g_box, [-9.965082, 0.923760], atol=6e-5)  # as printed
    low = np.array([math.log2(1e-2), g_box[0]])
    high = np.array([math.log2(1e4), g_box[1]])
    stage1 = ud_points(UD_TABLES[13], low, high, stage=1)
    np.testing.assert_allclose(stage1[0], (low + high) / 2, atol=1e-12)
    assert stage1[:, 0].min() == pytest.approx(low[0])
    assert stage1[:, 1].max() == pytest.approx(high[1])
    np.testing.assert_allclose(stage1[4], [6.643856, -1.798426], atol=3e-5)
    stage2 = ud_points(UD_TABLES[9], low, high, stage=2, center=stage1[4])
    expected = [(6.6439, -1.7984), (1.6610, -2.4790), (9.1353, 0.2433), (2.9067, -0.4373),
                (4.1524, -3.8401), (11.6267, -1.1179), (10.3810, -3.1595),
                (7.8896, -4.5206), (5.3981, 0.9238)]
    np.testing.assert_array_equal(np.round(stage2, 4), expected)


def test_min_squared_distance_skips_duplicates_and_subsamples(rng):
    X = np.array([[0.0, 0.0], [0.0, 0.0], [3.0, 0.0], [3.0, 0.5]])
    assert min_squared_distance(X) == (pytest.approx(0.25), 4)
    big = rng.normal(size=(500, 3))
    rho, used = min_squared_distance(big, max_samples=100, random_state=0)
    assert used == 100 and rho >= min_squared_distance(big)[0]
    with pytest.raises(ValueError, match="identical"):
        min_squared_distance(np.ones((5, 2)))


@pytest.fixture
def clf_data():
    return make_classification(150, 4, n_informative=3, n_redundant=0, random_state=0)


def test_search_follows_the_two_stages(clf_data):
    X, y = clf_data
    search = UniformDesignSearchCV(ReducedSVC(n_basis=15, random_state=0), cv=3)
    search.fit(X, y)
    res = search.cv_results_
    assert search.design_ == "13-9"
    box = search.search_box_
    np.testing.assert_allclose(box[0], np.log2([1.0, 1e6]))  # reduced kernel C range
    stage1 = ud_points(UD_TABLES[13], box[:, 0], box[:, 1])
    np.testing.assert_allclose(np.c_[res["log2_C"], res["log2_gamma"]][:13], stage1)
    np.testing.assert_allclose(np.log2(res["param_C"].astype(float)), res["log2_C"])
    scores = res["mean_test_score"]
    centre = stage1[int(np.argmax(scores[:13]))]
    stage2 = ud_points(UD_TABLES[9], box[:, 0], box[:, 1], stage=2, center=centre)
    # The centre is not evaluated twice; a stage-2 box shifted inside the search box has
    # nine new points.
    stage2 = stage2[~np.all(np.isclose(stage2, centre), axis=1)]
    assert len(stage2) in (8, 9) and len(res["params"]) == 13 + len(stage2)
    np.testing.assert_array_equal(res["stage"], [1] * 13 + [2] * len(stage2))
    np.testing.assert_allclose(np.c_[res["log2_C"], res["log2_gamma"]][13:], stage2)
    assert search.best_index_ == int(np.argmax(scores))  # first maximum on ties
    assert search.best_params_ == res["params"][search.best_index_]
    assert search.best_estimator_.C == search.best_params_["C"]


def test_search_ties_go_to_the_first_point(clf_data):
    X, y = clf_data
    search = UniformDesignSearchCV(ReducedSVC(n_basis=5, random_state=0), cv=2,
                                   scoring=lambda est, X_, y_: 0.5, design="9-5").fit(X, y)
    assert search.best_index_ == 0 and len(search.cv_results_["params"]) == 13
    # Stage 2 was centred on the first stage-1 point (the centre run).
    assert search.cv_results_["log2_C"][9:].mean() == pytest.approx(
        search.cv_results_["log2_C"][0], abs=1e-9)  # the design is centrally symmetric


def test_search_clone_refit_and_params(clf_data):
    X, y = clf_data
    search = UniformDesignSearchCV(SmoothSVC(), cv=2, refit=False, design="9-5",
                                   gamma_range=(0.01, 10.0))
    cloned = clone(search)
    assert cloned.get_params()["design"] == "9-5" and cloned is not search
    search.fit(X, y)
    assert not hasattr(search, "best_estimator_")
    np.testing.assert_allclose(search.search_box_,
                               np.log2([[1e-2, 1e4], [0.01, 10.0]]))  # full-kernel C range
    assert {"mean_test_score", "std_test_score", "rank_test_score", "params", "param_C",
            "param_gamma", "split0_test_score", "mean_fit_time"} <= set(search.cv_results_)


def test_search_pipeline_names_fixed_params_and_regression():
    X, y = make_regression(80, 3, noise=5.0, random_state=0)
    pipe = make_pipeline(StandardScaler(), SVR())
    search = UniformDesignSearchCV(pipe, param_names=("svr__C", "svr__gamma"),
                                   fixed_params={"svr__epsilon": 0.5}, C_range=(1e-2, 1e2),
                                   design="9-5", cv=2, n_jobs=2)
    with joblib.parallel_backend("threading"):  # n_jobs goes through joblib; threads start fast
        search.fit(X, y)
    assert search.best_params_["svr__epsilon"] == 0.5
    assert search.best_estimator_.named_steps["svr"].epsilon == 0.5
    assert set(search.cv_results_["param_svr__epsilon"]) == {0.5}
    assert search.predict(X).shape == (80,)


def test_search_multimetric_needs_named_refit(clf_data):
    X, y = clf_data
    est = ReducedSVC(n_basis=5, random_state=0)
    bad = UniformDesignSearchCV(est, scoring=["accuracy", "f1"], refit=False, cv=2)
    with pytest.raises(ValueError, match="refit must name"):
        bad.fit(X, y)
    good = UniformDesignSearchCV(est, scoring=["accuracy", "f1"], refit="f1", cv=2,
                                 design="9-5").fit(X, y)
    f1 = good.cv_results_["mean_test_f1"]
    assert good.best_index_ == int(np.argmax(f1))


@pytest.mark.parametrize("kwargs, match", [
    ({"design": "7-3"}, "design"),
    ({"C_range": (5.0, 1.0)}, "C_range"),
    ({"param_names": ("C",)}, "param_names"),
])
def test_search_rejects_bad_options(kwargs, match, clf_data):
    X, y = clf_data
    with pytest.raises(ValueError, match=match):
        UniformDesignSearchCV(ReducedSVC(n_basis=5), **kwargs).fit(X, y)


def test_search_matches_grid_search_on_the_same_points(clf_data):
    """The UD search is GridSearchCV on its own point list (same folds, same scores)."""
    X, y = clf_data
    est = ReducedSVC(n_basis=10, random_state=0)
    ud = UniformDesignSearchCV(est, cv=3, design="9-5").fit(X, y)
    grid = GridSearchCV(est, [{"C": [p["C"]], "gamma": [p["gamma"]]}
                              for p in ud.cv_results_["params"]], cv=3).fit(X, y)
    np.testing.assert_allclose(ud.cv_results_["mean_test_score"],
                               grid.cv_results_["mean_test_score"])


def test_plot_ud_search(clf_data, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    X, y = clf_data
    search = UniformDesignSearchCV(ReducedSVC(n_basis=5, random_state=0), cv=2,
                                   design="9-5").fit(X, y)
    ax = plot_ud_search(search)
    assert len(ax.collections) >= 3  # surface + two stages (+ best)
    ax.figure.savefig(tmp_path / "ud.png")
    assert (tmp_path / "ud.png").stat().st_size > 0


@pytest.mark.parametrize("at", [5, 27], ids=["in-stage-1", "in-the-refit"])
def test_interrupted_search_propagates_and_keeps_the_previous_search(at, clf_data,
                                                                     monkeypatch):
    """Ctrl-C in a candidate's fit (or in the refit, the 27th fit of a 9-5 design with 2
    folds) is never scored: it propagates and leaves the search as before its fit, unfitted
    (predict raises NotFittedError) or with its previous results."""
    from sklearn.exceptions import NotFittedError

    X, y = clf_data
    original, count = ReducedSVC._solve, {"fits": 0, "stop_at": at}

    def solve(self, *args, **kwargs):
        count["fits"] += 1
        if count["fits"] == count["stop_at"]:
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ReducedSVC, "_solve", solve)
    search = UniformDesignSearchCV(ReducedSVC(n_basis=5, random_state=0), cv=2, design="9-5")
    params = dict(vars(search))
    with pytest.raises(KeyboardInterrupt):
        search.fit(X, y)
    assert vars(search) == params and count["fits"] == at
    with pytest.raises(NotFittedError):
        search.predict(X)
    count.update(fits=0, stop_at=None)
    search.fit(X[:100], y[:100])
    assert count["fits"] == 2 * len(search.cv_results_["params"]) + 1  # 2 folds, refit
    assert len(search.cv_results_["params"]) in (13, 14)  # 9 + 4, or 9 + 5 when shifted
    before, pred = dict(vars(search)), search.predict(X)
    count.update(fits=0, stop_at=at)
    with pytest.raises(KeyboardInterrupt):
        search.fit(X, y)
    assert vars(search).keys() == before.keys()
    assert all(vars(search)[k] is v for k, v in before.items())
    np.testing.assert_array_equal(search.predict(X), pred)
