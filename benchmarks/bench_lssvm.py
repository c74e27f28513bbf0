"""LS-SVM family reproductions: the on-line pruning sine study, LR-LSSVM on Ripley and IDA
heart / ringnorm, and on-line LS-SVR throughput.

1. Sine study (Kim, Shim & Oh): f(x) = sin(x) + 0.5, x ~ U(-pi, pi), noise N(0, 0.3^2),
   1000 train / 1000 test, RBF exp(-||x - x'||^2 / sigma^2) with sigma = 1 (gamma = 1),
   C = 100, N_w = 200. Test MSE against the true f (and against the noisy test targets) for
   the full LS-SVM, batch pruning (20 % of the training rows held out for the stopping rule)
   and on-line pruning after 400 and 1000 points; scikit-learn's KernelRidge (alpha = 1/C,
   targets centred) in the same run. Figures 1-2 of the paper for the first seed.
2. LR-LSSVM on Ripley's synth (250 / 1000) for every criterion and basis function with
   M in {3, 4}; C chosen by 5-fold CV on the training set only. Full Gaussian LS-SVM and
   scikit-learn's SVC (gamma, C by the same CV) beside it.
3. IDA heart and ringnorm: 10 splits; LowRankLSSVC (M, C by 5-fold CV on split 1's training
   set), exact LSSVC and SVC; mean and std of the test error, model size.
4. On-line LS-SVR throughput: 100,000 streamed sine points with N_w = 200, in a fresh child.

BLAS is pinned to one thread (the machine is shared by several jobs; threaded BLAS on
200 x 200 updates was measured 10-100x slower under that load).
Run: ``python benchmarks/bench_lssvm.py`` (a few minutes) or ``--quick``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.kernel_ridge import KernelRidge  # noqa: E402
from sklearn.model_selection import GridSearchCV, StratifiedKFold  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from _harness import (  # noqa: E402
    RESULTS,
    environment,
    load_note,
    mark_baseline,
    run_isolated,
    timed,
)
from sparsekernel import LSSVC, LSSVR, LowRankLSSVC, OnlineLSSVR, PrunedLSSVR  # noqa: E402
from sparsekernel.datasets import find_shared_data, load_ida, load_ripley  # noqa: E402

GAMMA, C_SINE, NW = 1.0, 100.0, 200
SWEEP_NW = (300, 400, 500)  # why N_w = 200 is not within 10 % of the full fit against f


# ----------------------------------------------------------------------------- sine study
def sine_data(seed, n=1000):
    rng = np.random.RandomState(seed)

    def draw():
        x = rng.uniform(-np.pi, np.pi, (n, 1))
        f = np.sin(x[:, 0]) + 0.5
        return x, f + rng.normal(0.0, 0.3, n), f

    return draw(), draw()


def _note():
    return load_note() + "; BLAS pinned to 1 thread"


def sine_run(seed):
    (X, y, _), (Xt, yt, ft) = sine_data(seed)
    rows = {}

    def record(name, model, fit_s, pred=None):
        pred = model.predict(Xt) if pred is None else pred
        rows[name] = {"mse_vs_f": float(np.mean((pred - ft) ** 2)),
                      "mse_vs_y": float(np.mean((pred - yt) ** 2)),
                      "n_support": int(getattr(model, "n_support_", len(X))), "fit_s": fit_s}

    full, t = timed(LSSVR(gamma=GAMMA, C=C_SINE, n_basis=None).fit, X, y)
    record("full LS-SVM (LSSVR)", full, t)
    kr = KernelRidge(alpha=1.0 / C_SINE, kernel="rbf", gamma=GAMMA)
    _, t = timed(kr.fit, X, y - y.mean())
    record("scikit-learn KernelRidge (alpha=1/C, centred y)", kr, t, kr.predict(Xt) + y.mean())
    sub = np.random.RandomState(seed).choice(len(X), NW, replace=False)
    rand, t = timed(LSSVR(gamma=GAMMA, C=C_SINE, n_basis=None).fit, X[sub], y[sub])
    record(f"LS-SVM on a random {NW}-point subset (reference)", rand, t)
    pruned, t = timed(PrunedLSSVR(gamma=GAMMA, C=C_SINE, random_state=seed).fit, X, y)
    record("batch pruning (PrunedLSSVR, 5 %/round, tol 5 %)", pruned, t)
    online = OnlineLSSVR(gamma=GAMMA, C=C_SINE, n_basis=NW)
    _, t400 = timed(online.fit, X[:400], y[:400])
    record("online pruning after 400 points (OnlineLSSVR)", online, t400)
    snap400 = (online.basis_.copy(), online.predict(Xt))
    _, t = timed(online.partial_fit, X[400:], y[400:])
    record("online pruning after 1000 points (OnlineLSSVR)", online, t400 + t)
    for nw in SWEEP_NW:
        big, t = timed(OnlineLSSVR(gamma=GAMMA, C=C_SINE, n_basis=nw).fit, X, y)
        record(f"online pruning, N_w = {nw} (1000 points)", big, t)
    figures = {"X": X, "y": y, "Xt": Xt, "ft": ft, "svs400": snap400[0], "pred400": snap400[1],
               "svs1000": online.basis_.copy(), "pred1000": online.predict(Xt)}
    return rows, figures, pruned.pruning_path_


def sine_figures(fig, out, suffix):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for k, n in ((1, 400), (2, 1000)):
        svs = fig[f"svs{n}"]
        # Kept support vectors with their targets: look them up among the training rows.
        lookup = {float(x): float(t) for x, t in zip(fig["X"][:n, 0], fig["y"][:n],
                                                     strict=True)}
        sv_y = np.array([lookup[float(v)] for v in svs[:, 0]])
        f, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
        a.plot(fig["X"][:n, 0], fig["y"][:n], ".", ms=3, color="0.6", label=f"{n} training points")
        a.plot(svs[:, 0], sv_y, "o", mfc="none", color="C0", label=f"{len(svs)} kept SVs")
        a.set(xlabel="x", ylabel="y", title=f"Figure {k} (left): pruned SVs of {n} points")
        a.legend(loc="lower right", fontsize=8)
        order = np.argsort(fig["Xt"][:, 0])
        b.plot(fig["Xt"][order, 0], fig[f"pred{n}"][order], "-", color="C0",
               label="online LS-SVM (200 SVs)")
        b.plot(fig["Xt"][order, 0], fig["ft"][order], "--", color="k", label="true f")
        b.set(xlabel="x", ylabel="f(x)", title=f"Figure {k} (right): fit on 1000 test x")
        b.legend(loc="lower right", fontsize=8)
        f.tight_layout()
        path = out / f"lssvm_sine_figure{k}{suffix}.png"
        f.savefig(path, dpi=110)
        plt.close(f)
        paths.append(path.name)
    return paths


def sine_study(seeds, out, suffix):
    per_seed = [sine_run(s) for s in seeds]
    names = list(per_seed[0][0])
    rows = []
    for name in names:
        vals = {k: np.array([r[0][name][k] for r in per_seed]) for k in per_seed[0][0][name]}
        rows.append({"method": name, **{f"{k}_mean": float(v.mean()) for k, v in vals.items()},
                     **{f"{k}_std": float(v.std()) for k, v in vals.items()},
                     "seed0_mse_vs_f": per_seed[0][0][name]["mse_vs_f"]})
    ref = rows[0]
    for row in rows:
        row["ratio_vs_full_f"] = row["mse_vs_f_mean"] / ref["mse_vs_f_mean"]
        row["ratio_vs_full_y"] = row["mse_vs_y_mean"] / ref["mse_vs_y_mean"]
    online = "online pruning after 1000 points (OnlineLSSVR)"
    full = names[0]
    ratios = [r[0][online]["mse_vs_f"] / r[0][full]["mse_vs_f"] for r in per_seed]
    ratios_y = [r[0][online]["mse_vs_y"] / r[0][full]["mse_vs_y"] for r in per_seed]
    figs = sine_figures(per_seed[0][1], out, suffix)
    path = per_seed[0][2]
    return rows, figs, {"online1000_over_full_mse_f": ratios,
                        "online1000_over_full_mse_y": ratios_y,
                        "pruning_path_seed0": {k: v.tolist() for k, v in path.items()}}


# ----------------------------------------------------------------------------- classification
def cv_best(make, grid, X, y, seed=0):
    search = GridSearchCV(make(), grid, cv=StratifiedKFold(5, shuffle=True, random_state=seed),
                          n_jobs=1)
    search.fit(X, y)
    return search.best_params_


def ripley(quick):
    Xtr, ytr, Xte, yte = load_ripley()
    rows = []
    c_grid = [0.5, 1.0, 2.0, 4.0] if not quick else [1.0]
    crits = ("abs", "square", "target", "objective")
    for crit in crits:
        for bf in ("robust_rbf", "sbf"):
            for M in ((3, 4) if not quick else (4,)):
                # 'objective' (not a paper criterion) with 5 k-medoids restarts kept by the
                # training objective; the paper's three criteria as before (one seeding).
                n_init = 5 if crit == "objective" and not quick else 1
                make = LowRankLSSVC(n_basis=M, criterion=crit, basis_function=bf,
                                    n_init=n_init, random_state=0, max_iter=300)
                best = cv_best(lambda m=make: m, {"C": c_grid}, Xtr, ytr)
                model, t = timed(make.set_params(**best).fit, Xtr, ytr)
                rows.append({"data": "ripley",
                             "method": f"LowRankLSSVC {crit} {bf}"
                             + (f" n_init={n_init}" if n_init > 1 else ""),
                             "params": f"M={M}, C={best['C']:g}",
                             "test_error_pct": 100 * (1 - model.score(Xte, yte)),
                             "model_size": M, "fit_s": t})
    g_grid = {"gamma": [0.5, 1.0, 2.0, 4.0, 8.0], "C": [1.0, 10.0, 100.0]}
    exact = LSSVC(n_basis=None)
    for name, est in (("LSSVC exact (Gaussian)", exact), ("scikit-learn SVC", SVC())):
        best = cv_best(lambda e=est: e, g_grid if not quick else {"gamma": [2.0]}, Xtr, ytr)
        model, t = timed(est.set_params(**best).fit, Xtr, ytr)
        size = model.n_support_ if isinstance(model, LSSVC) else int(model.n_support_.sum())
        rows.append({"data": "ripley", "method": name,
                     "params": ", ".join(f"{k}={v:g}" for k, v in best.items()),
                     "test_error_pct": 100 * (1 - model.score(Xte, yte)), "model_size": size,
                     "fit_s": t})
    return rows


def ida(name, n_splits, quick):
    folder = find_shared_data(f"raetsch_{name}")
    if folder is None:
        return [{"data": name, "method": "skipped (data absent)"}]
    splits = [load_ida(folder, name, s) for s in range(1, n_splits + 1)]
    Xtr, ytr = splits[0][0], splits[0][1]
    d = Xtr.shape[1]
    lr_grid = {"n_basis": [2, 3, 5, 8], "C": [0.5, 2.0, 8.0]} if not quick else {"C": [1.0]}
    g = 1.0 / d
    k_grid = {"gamma": [g / 4, g, 4 * g], "C": [0.5, 2.0, 8.0]} if not quick else {"C": [1.0]}
    methods = [("LowRankLSSVC square robust_rbf",
                LowRankLSSVC(random_state=0, max_iter=200), lr_grid),
               ("LSSVC exact (Gaussian)", LSSVC(gamma=g, n_basis=None), k_grid),
               ("scikit-learn SVC", SVC(gamma=g), k_grid)]
    rows = []
    for label, est, grid in methods:
        best = cv_best(lambda e=est: e, grid, Xtr, ytr)
        errs, sizes, times = [], [], []
        for Xa, ya, Xb, yb in splits:
            model, t = timed(est.set_params(**best).fit, Xa, ya)
            errs.append(100 * (1 - model.score(Xb, yb)))
            n_sup = model.n_support_
            sizes.append(int(np.sum(n_sup)))
            times.append(t)
        params = ", ".join(f"{k}={v:g}" for k, v in best.items())
        rows.append({"data": name, "method": label, "params": params + " (CV on split 1)",
                     "test_error_pct": float(np.mean(errs)), "test_error_std": float(np.std(errs)),
                     "model_size": float(np.mean(sizes)), "fit_s": float(np.mean(times)),
                     "n_splits": len(splits)})
    return rows


# ----------------------------------------------------------------------------- throughput
def throughput(n_points):
    """Child process: stream n_points sine samples through OnlineLSSVR(N_w=200)."""
    rng = np.random.RandomState(123)
    X = rng.uniform(-np.pi, np.pi, (n_points, 1))
    y = np.sin(X[:, 0]) + 0.5 + rng.normal(0, 0.3, n_points)
    Xt = np.linspace(-np.pi, np.pi, 1000)[:, None]
    mark_baseline()
    model = OnlineLSSVR(gamma=GAMMA, C=C_SINE, n_basis=NW)
    _, t = timed(model.fit, X, y)
    mse = float(np.mean((model.predict(Xt) - (np.sin(Xt[:, 0]) + 0.5)) ** 2))
    return {"n_points": n_points, "n_basis": NW, "fit_s": t, "points_per_s": n_points / t,
            "us_per_point": 1e6 * t / n_points, "mse_vs_f": mse,
            "refactorizations": model._solver.n_refactor}


# ----------------------------------------------------------------------------- report
def _table(rows, cols):
    lines = ["| " + " | ".join(c for c, _ in cols) + " |", "|" + "---|" * len(cols)]
    for row in rows:
        cells = []
        for _, key in cols:
            v = row.get(key, "")
            cells.append(f"{v:.4g}" if isinstance(v, float) else str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def report(res, out, name):
    L = [f"# LS-SVM family reproductions{' [quick]' if 'quick' in name else ''}", "",
         f"- {_note()}.", ""]
    L += ["## 1. Sine study (Kim, Shim & Oh): C = 100, sigma = 1, N_w = 200", "",
          f"Mean (std) over seeds {res['sine_seeds']}; 1000 train / 1000 test points. "
          "`mse_vs_f` is against the true f, `mse_vs_y` against the noisy test targets.", ""]
    L += _table(res["sine"], [("method", "method"), ("MSE vs f", "mse_vs_f_mean"),
                              ("std", "mse_vs_f_std"), ("MSE vs noisy y", "mse_vs_y_mean"),
                              ("/ full (f)", "ratio_vs_full_f"), ("/ full (y)", "ratio_vs_full_y"),
                              ("support vectors", "n_support_mean"), ("fit s", "fit_s_mean")])
    extra = res["sine_extra"]
    L += ["", "Online (1000 points) / full LS-SVM test MSE per seed: vs f "
          + ", ".join(f"{r:.2f}" for r in extra["online1000_over_full_mse_f"]) + "; vs noisy y "
          + ", ".join(f"{r:.3f}" for r in extra["online1000_over_full_mse_y"]) + ".", "",
          "The paper (Kim, Shim & Oh) reports no test-MSE number: only Figures 1-2 (the fit "
          "on the 1000 test x against the true f) and \"almost same performance\" as the full "
          "LS-SVM. Its on-line algorithm is implemented as written (kept points keep their own "
          "targets; the point of smallest |alpha| among the N_w + 1 leaves; ordinary bias). "
          "Against the noisy test targets it is within 2 % of the full fit; against f it is "
          "about 2x, because 200 kept noisy points carry more noise into the fit than 1000 "
          "(a random 200-point subset: about 4x). The N_w sweep rows show the budget that "
          "brings the ratio against f to 1.1.", ""]
    L += [f"![Figure 1]({res['sine_figures'][0]})", f"![Figure 2]({res['sine_figures'][1]})", ""]
    L += ["## 2. LR-LSSVM on Ripley's synth (250 train / 1000 test)", "",
          "C (and gamma for the Gaussian models) by 5-fold CV on the training set only. "
          "Paper: 8.0-8.3 % with 3-4 bases, 9.2-11.4 % for the full Gaussian LS-SVM. The "
          "paper's numbers are single runs on Ripley's one split with hand-preset "
          "parameters (C, M, learning rate, iterations); it mentions no cross-validation. "
          "1000 test points: one standard error of an error rate near 9 % is 0.9 points.", ""]
    cols = [("method", "method"), ("params", "params"), ("test error %", "test_error_pct"),
            ("model size", "model_size"), ("fit s", "fit_s")]
    L += _table(res["ripley"], cols)
    L += ["", "## 3. IDA heart and ringnorm (mean, std over splits)", ""]
    L += _table(res["ida"], [("data", "data"), ("method", "method"), ("params", "params"),
                             ("test error %", "test_error_pct"), ("std", "test_error_std"),
                             ("model size", "model_size"), ("fit s", "fit_s"),
                             ("splits", "n_splits")])
    t = res["throughput"]
    L += ["", "## 4. On-line LS-SVR throughput", "",
          f"{t.get('n_points')} streamed sine points, N_w = {t.get('n_basis')}: "
          f"{t.get('fit_s', float('nan')):.1f} s ({t.get('us_per_point', float('nan')):.0f} us "
          f"per point, {t.get('refactorizations')} refactorizations), peak RSS "
          f"{t.get('peak_rss_mib')} MiB, final MSE vs f {t.get('mse_vs_f', float('nan')):.4f}.",
          ""]
    env = environment()
    L += ["Environment: " + ", ".join(f"{k} {v}" for k, v in env.items())]
    (out / f"{name}.md").write_text("\n".join(L) + "\n")
    (out / f"{name}.json").write_text(json.dumps({"environment": env, "note": _note(),
                                                  **res}, indent=2, default=float) + "\n")
    return out / f"{name}.md"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small smoke run")
    ap.add_argument("--out", default=None,
                    help="results folder (default benchmarks/results/lssvm)")
    args = ap.parse_args(argv)
    out = Path(args.out) if args.out else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    suffix = "_quick" if args.quick else ""
    seeds = [0, 1] if args.quick else list(range(10))
    t0 = time.perf_counter()
    sine_rows, figs, extra = sine_study(seeds, out, suffix)
    res = {"sine_seeds": seeds, "sine": sine_rows, "sine_figures": figs, "sine_extra": extra}
    res["ripley"] = ripley(args.quick)
    n_splits = 2 if args.quick else 10
    res["ida"] = ida("heart", n_splits, args.quick) + ida("ringnorm", n_splits, args.quick)
    res["throughput"] = run_isolated(throughput, 5000 if args.quick else 100_000)
    res["total_s"] = time.perf_counter() - t0
    print(report(res, out, "lssvm" + suffix).read_text())


if __name__ == "__main__":
    main()
