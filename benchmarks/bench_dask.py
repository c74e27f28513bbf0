"""LowRankSVC on a Dask cluster against the same model on one machine, and MapReduceSVC.

Two parts, each method in a fresh spawned process on a multi-process LocalCluster of this
machine (2 workers x 1 thread, the nanny holding BLAS to one thread per worker):

- Real data (a9a, ijcnn1, w8a; the suite's gamma, C = 10, a9a 1): ``LowRankSVC`` fitted in
  memory, the same estimator fitted on a dask array of the same rows (4 chunks), and
  ``MapReduceSVC`` with 4 parts and the same total basis size (its default per-part 'auto'
  otherwise). Test error on the official test rows, fit time.
- Worker-generated rows (``--rows``, default 10^6; ``--problem``: a noisy 4 x 4
  checkerboard, d = 2, or a HIGGS-like problem, d = 28; in chunks of 250,000 drawn by the
  workers, never held on the client): the Dask fit against the single-machine
  ``fit_stream`` (block minimization over the chunks) and ``fit`` (the rows in memory, the
  Dask fit's solver) of the same estimator on the same rows, generated chunk by chunk in
  their own process. Test error on 10^5 fresh rows, fit time, peak RSS of each worker.

- ``--workers 1,2,4``: the same Dask fit on 1, 2 and 4 one-thread workers (strong scaling;
  more workers than cores share them), and with ``--weak R`` also on R rows per worker
  (weak scaling); a figure of both (dask_scaling.png).
- ``--methods``: which fits of the generated rows to run (``--methods dask`` alone for
  10^8 rows); ``--budget``: the Dask fit's ``memory_budget`` (per worker).

Peak RSS is each worker's and the client process's (``ru_maxrss``): the workers hold the
rows, their features, labels and the squared-hinge solver's per-row state; the client the
landmark sample and the solver's (m + 1)-square systems, so its peak should not grow with
the rows (``--rows 1000000,4000000 --methods dask``).

Run: ``python benchmarks/bench_dask.py [--rows N[,N...]] [--problem higgs-like] [--sets a9a,ijcnn1]
[--workers 1,2,4] [--weak R] [--methods fit_stream,in memory,dask] [--budget 4GB]
[--quick]``. Writes
benchmarks/results/dask/dask{,_quick}.json/.md (``--out`` another folder).
"""

from __future__ import annotations

import argparse
import importlib
import resource
from pathlib import Path

import numpy as np

from _harness import RESULTS, load_note, mark_baseline, run_isolated, timed, write_results
from _suite_data import SETTINGS, load
from sparsekernel import LowRankSVC, MapReduceSVC
from sparsekernel.datasets import make_checkerboard

C = 10.0
#: Real data sets fitted at another C than C: a9a's customary C = 1 (its error rises at 10).
C_OF = {"a9a": 1.0}
CHUNK_ROWS = 250_000
NOISE = 0.05  # share of checkerboard labels flipped


def _cluster(n_workers=2):
    import distributed

    cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                       processes=True, dashboard_address=None)
    client = distributed.Client(cluster)  # the default client: LowRankSVC fits on it
    client.run(importlib.import_module, "sparsekernel.distributed._rows")
    return cluster, client


def _peaks(client):
    usage = client.run(resource.getrusage, resource.RUSAGE_SELF)
    return [round(u.ru_maxrss / 1024, 1) for u in usage.values()]


def _client_peak():
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def real_run(name, method):
    """Child process: one method on one suite data set."""
    import dask.array as da

    Xtr, ytr, Xte, yte = load(name)
    Xtr, Xte = _dense(Xtr), _dense(Xte)  # (the same rows for all three: a9a is CSR)
    mark_baseline()
    gamma, c = SETTINGS[name]["gamma"], C_OF.get(name, C)
    if method == "in memory":
        model, fit_s = timed(LowRankSVC(gamma=gamma, C=c, random_state=0).fit, Xtr, ytr)
        return {"fit_s": fit_s, "error_pct": 100 * np.mean(model.predict(Xte) != yte),
                "n_basis": model.basis_.shape[0]}
    cluster, client = _cluster()
    try:
        chunks = -(-len(ytr) // 4)
        Xd, yd = da.from_array(Xtr, chunks=(chunks, -1)), da.from_array(ytr, chunks=chunks)
        Xd, yd = client.persist([Xd, yd])  # the rows on the workers before the clock starts
        if method == "dask":
            model, fit_s = timed(LowRankSVC(gamma=gamma, C=c, random_state=0).fit, Xd, yd)
            m = model.basis_.shape[0]
        else:
            ref = LowRankSVC(gamma=gamma, C=c, random_state=0).fit(Xtr[:20000], ytr[:20000])
            m = ref.basis_.shape[0]  # (the total basis size the in-memory fit chooses)
            model, fit_s = timed(MapReduceSVC(n_parts=4, n_basis=m, gamma=gamma, C=c,
                                              client=client, random_state=0).fit, Xd, yd)
        error = 100 * np.mean(np.asarray(model.predict(Xte)) != yte)
        return {"fit_s": fit_s, "error_pct": error, "n_basis": m,
                "worker_peak_rss_mib": max(_peaks(client))}
    finally:
        client.close()
        cluster.close()


def _dense(X):
    return X.toarray() if hasattr(X, "toarray") else X


def generated_array(problem, n_rows, seed):
    """A lazy (X, y) of n_rows rows of ``problem``; each chunk drawn by a worker."""
    import dask
    import dask.array as da

    draw, d, _ = PROBLEMS[problem]
    Xs, ys = [], []
    for b, (_, rows) in enumerate(_chunks(n_rows)):
        X, y = dask.delayed(draw, nout=2)(rows, seed * 1_000_003 + b)
        Xs.append(da.from_delayed(X, shape=(rows, d), dtype=np.float64))
        ys.append(da.from_delayed(y, shape=(rows,), dtype=np.float64))
    return da.concatenate(Xs), da.concatenate(ys)


def _chunks(n_rows):
    return [(s, min(CHUNK_ROWS, n_rows - s)) for s in range(0, n_rows, CHUNK_ROWS)]


def _board(rows, seed):
    X, y = make_checkerboard(rows, 0.0, 4, random_state=seed)
    flip = np.random.default_rng(seed + 7).random(rows) < NOISE
    return X, np.where(flip, -y, y)


def _higgs_like(rows, seed):
    """28 standard normal features (HIGGS's width); the label is the sign of a fixed smooth
    function of them (a random one-hidden-layer network plus a product of two features),
    NOISE of the labels flipped."""
    W = np.random.default_rng(12345).standard_normal((28, 9))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, 28))
    score = np.tanh(X @ W[:, :8] / np.sqrt(7.0)) @ W[:8, 8] + X[:, 0] * X[:, 1]
    y = np.where(score > 0, 1.0, -1.0)
    return X, np.where(rng.random(rows) < NOISE, -y, y)


#: Generated problems: (draw(rows, seed) -> (X, y), n_features, LowRankSVC's parameters).
PROBLEMS = {"checkerboard": (_board, 2, dict(gamma=2.0, C=100.0)),
            "higgs-like": (_higgs_like, 28, dict(gamma="scale", C=10.0))}


def scaling_run(problem, n_workers, n_rows, n_basis, n_test, budget=None):
    """Child process: the Dask fit of worker-generated rows on ``n_workers`` workers."""
    mark_baseline()
    draw, _, params = PROBLEMS[problem]
    Xt, yt = draw(n_test, 99)
    cluster, client = _cluster(n_workers)
    try:
        X, y = generated_array(problem, n_rows, seed=1)
        model, fit_s = timed(LowRankSVC(n_basis=n_basis, random_state=0, memory_budget=budget,
                                        **params).fit, X, y)
        return {"fit_s": fit_s, "error_pct": 100 * np.mean(model.predict(Xt) != yt),
                "n_basis": model.basis_.shape[0], "worker_peak_rss_mib": max(_peaks(client)),
                "client_peak_rss_mib": _client_peak()}
    finally:
        client.close()
        cluster.close()


def generated_run(problem, method, n_rows, n_basis, n_test, budget=None):
    """Child process: the Dask fit on worker-generated rows, or fit_stream / fit of the same
    rows generated chunk by chunk here."""
    if method == "dask":
        return scaling_run(problem, 2, n_rows, n_basis, n_test, budget)
    mark_baseline()
    draw, _, params = PROBLEMS[problem]
    params = dict(n_basis=n_basis, random_state=0, **params)
    Xt, yt = draw(n_test, 99)
    chunks = [draw(rows, 1 * 1_000_003 + b) for b, (_, rows) in enumerate(_chunks(n_rows))]
    if method == "fit_stream":
        model, fit_s = timed(LowRankSVC(**params).fit_stream, chunks)
    else:
        X, y = np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks])
        del chunks
        model, fit_s = timed(LowRankSVC(**params).fit, X, y)
    return {"fit_s": fit_s, "error_pct": 100 * np.mean(model.predict(Xt) != yt),
            "n_basis": model.basis_.shape[0], "client_peak_rss_mib": _client_peak()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1000000",
                    help="generated rows; comma-separated for several sizes (each a fresh "
                         "client process: e.g. 1000000,4000000 for the client's memory)")
    ap.add_argument("--sets", default="a9a,ijcnn1,w8a")
    ap.add_argument("--n-basis", type=int, default=300)
    ap.add_argument("--problem", default="checkerboard", choices=sorted(PROBLEMS),
                    help="the generated rows")
    ap.add_argument("--workers", default="",
                    help="comma-separated worker counts: also the Dask fit of the generated "
                         "rows on each (strong scaling), e.g. 1,2,4")
    ap.add_argument("--weak", type=int, default=0,
                    help="with --workers: also this many rows per worker (weak scaling)")
    ap.add_argument("--repeats", type=int, default=1,
                    help="runs of each scaling point; the fastest is reported")
    ap.add_argument("--methods", default="fit_stream,in memory,dask",
                    help="fits of the generated rows to run")
    ap.add_argument("--budget", default=None, help="memory_budget of the Dask fits")
    ap.add_argument("--quick", action="store_true", help="100,000 rows, ijcnn1 only")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    sizes = [100_000] if args.quick else [int(r) for r in args.rows.split(",") if r]
    rows_n = sizes[0]
    sets = ["ijcnn1"] if args.quick else [s for s in args.sets.split(",") if s]
    load = load_note()
    rows = []
    for name in sets:
        for method in ("in memory", "dask", "MapReduceSVC"):
            out = run_isolated(real_run, name, method)
            rows.append({"data": name, "method": method, **out})
            print(rows[-1], flush=True)
    for n in sizes:
        for method in [m for m in args.methods.split(",") if m]:
            out = run_isolated(generated_run, args.problem, method, n, args.n_basis, 100_000,
                               args.budget)
            rows.append({"data": f"{args.problem} {n:,}", "method": method, **out})
            print(rows[-1], flush=True)
    scaling = []
    for workers in [int(w) for w in args.workers.split(",") if w]:
        for kind, n in (("strong", rows_n), ("weak", args.weak * workers)):
            if not n:
                continue
            runs = [run_isolated(scaling_run, args.problem, workers, n, args.n_basis, 100_000,
                                 args.budget) for _ in range(args.repeats)]
            out = min(runs, key=lambda r: r.get("fit_s", np.inf))  # (the least disturbed)
            out["fit_s_runs"] = [r.get("fit_s") for r in runs]
            scaling.append({"data": f"{args.problem} {n:,}", "scaling": kind, "workers": workers,
                            "method": f"dask, {workers} worker(s)", **out})
            print(scaling[-1], flush=True)
    rows += scaling
    payload = {
        "title": "LowRankSVC on a Dask cluster, on one machine, and MapReduceSVC",
        "notes": [load,
                  "cluster: multi-process LocalCluster, 2 workers x 1 thread; the in-memory "
                  "and fit_stream fits run in one process with the machine's threads",
                  f"real data: the suite's gamma, C = {C:g} (a9a: {C_OF['a9a']:g}); dask "
                  "input in 4 chunks, "
                  "persisted on the workers before the clock starts; MapReduceSVC: 4 parts, "
                  "n_basis = the in-memory fit's m on 20,000 rows",
                  f"checkerboard: 4 x 4, {NOISE:.0%} labels flipped, gamma=2, C=100; "
                  f"higgs-like: 28 normal features, a fixed smooth boundary, {NOISE:.0%} "
                  f"labels flipped, gamma='scale', C=10; n_basis={args.n_basis}; generated "
                  "rows drawn by the workers in chunks of "
                  f"{CHUNK_ROWS:,}; test error on 100,000 fresh rows; memory_budget of the "
                  f"Dask fits: {args.budget or 'default'}",
                  "peak MiB: the largest worker's peak RSS (dask runs) and the client "
                  "process's (the in-memory and fit_stream fits: their own process)"],
        "rows": rows,
    }
    cols = [("data", "data"), ("method", "method"), ("m", "n_basis"), ("fit s", "fit_s"),
            ("error %", "error_pct"), ("worker peak MiB", "worker_peak_rss_mib"),
            ("client peak MiB", "client_peak_rss_mib"), ("note", "error")]
    name = "dask_quick" if args.quick else "dask"
    print(write_results(name, payload, cols, args.out))
    if scaling:
        png = Path(args.out or RESULTS) / f"{name}_scaling.png"
        _plot_scaling(scaling, png)
        print(png)


def _plot_scaling(rows, png):
    """Fit time against workers: strong scaling (the same rows) and weak (rows per worker
    fixed), with the ideal of each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    for kind, style in (("strong", "o-"), ("weak", "s-")):
        pts = sorted((r["workers"], r["fit_s"]) for r in rows
                     if r["scaling"] == kind and "fit_s" in r)
        if not pts:
            continue
        w, t = map(np.array, zip(*pts, strict=True))
        label = dict(strong=f"strong ({rows[0]['data']})", weak="weak (rows per worker fixed)")
        line, = ax.plot(w, t, style, label=label[kind])
        ideal = t[0] / (w / w[0]) if kind == "strong" else np.full(len(w), t[0])
        ax.plot(w, ideal, ":", color=line.get_color(), label=f"{kind}: ideal")
    ax.set_xlabel("one-thread workers (a 2-core machine: beyond 2 they share cores)")
    ax.set_ylabel("fit time (s)")
    ax.set_xticks(sorted({r["workers"] for r in rows}))
    ax.legend(fontsize=8)
    fig.savefig(png, dpi=110, bbox_inches="tight")
    plt.close(fig)


if __name__ == "__main__":
    main()
