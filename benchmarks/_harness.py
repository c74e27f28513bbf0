"""Shared benchmark machinery: isolated runs, peak memory, JSON + Markdown output.

Every method runs in a fresh child process started by the benchmark process (``spawn``: a
forked child of a process whose OpenBLAS threads are running can deadlock). The child loads
the data itself, calls :func:`mark_baseline`, then fits and predicts; its peak resident
memory (``VmHWM``, reset after loading) is reported in full and above that baseline. All
methods of one benchmark run on the same machine state, data and library versions.
Benchmarks are never tests: they record numbers, they do not assert on them.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import platform
import resource
import shlex
import sys
import time
from pathlib import Path

import numpy as np

RESULTS_ROOT = Path(__file__).resolve().parent / "results"


def _script_results():
    """The default results folder of the running script: ``results/<name>`` for
    ``bench_<name>.py``, so that each benchmark keeps its latest run in one place (git keeps
    the earlier ones)."""
    main = Path(getattr(sys.modules.get("__main__"), "__file__", "") or "").stem
    return RESULTS_ROOT / main[len("bench_"):] if main.startswith("bench_") else RESULTS_ROOT


RESULTS = _script_results()


def command_line():
    """The command that is running, as one would type it from the repository root."""
    script = Path(sys.argv[0]).resolve()
    try:
        script = script.relative_to(RESULTS_ROOT.parent.parent)
    except ValueError:
        pass
    return shlex.join(["python", str(script), *sys.argv[1:]])


def _status_kib(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


_BASELINE = {"kib": 0}


def mark_baseline():
    """Reset the peak-RSS counter once the data are loaded (Linux ``clear_refs``), so the
    reported peak covers fitting and predicting only; record the RSS at that point."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:  # not Linux: the peak then includes loading
        pass
    _BASELINE["kib"] = _status_kib("VmRSS")


def _child(conn, fn, args):
    try:
        out = fn(*args)
        peak = _status_kib("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out["peak_rss_mib"] = round(peak / 1024, 1)
        out["extra_rss_mib"] = round((peak - _BASELINE["kib"]) / 1024, 1)
        conn.send(out)
    except BaseException as exc:  # report, never hang the parent
        conn.send({"error": f"{type(exc).__name__}: {exc}"})
    finally:
        conn.close()


def run_isolated(fn, *args):
    """Run ``fn(*args) -> dict`` in a spawned child; return its dict plus peak RSS figures.

    ``fn`` must be a module-level function (it is imported by the child).
    """
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args))
    proc.start()
    child.close()
    result = parent.recv()
    proc.join()
    return result


def timed(fn, *args, **kwargs):
    """Return (result, seconds) for one call."""
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def load_note():
    """The machine's load when the run started: absolute times depend on it, same-run ratios
    much less (busy BLAS threads spin-wait on a shared machine)."""
    one, five, _ = os.getloadavg()
    return (f"load average {one:.1f} (1 min) / {five:.1f} (5 min) on {os.cpu_count()} cores "
            "when the run started; absolute times are noisy under load, the ratios come from "
            "the same run")


def environment():
    import scipy
    import sklearn

    import sparsekernel

    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "sparsekernel": sparsekernel.__version__,
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "command": command_line(),
    }


def write_results(name, payload, columns, out_dir=None):
    """Write NAME.json and NAME.md (a table of payload['rows']) into ``out_dir``."""
    out = Path(out_dir) if out_dir else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    payload = {"environment": environment(), **payload}
    (out / f"{name}.json").write_text(json.dumps(payload, indent=2, default=float) + "\n")
    lines = [f"# {payload.get('title', name)}", ""]
    for note in payload.get("notes", []):
        lines.append(f"- {note}")
    lines += ["", "| " + " | ".join(c for c, _ in columns) + " |",
              "|" + "---|" * len(columns)]
    for row in payload["rows"]:
        cells = []
        for _, key in columns:
            v = row.get(key, "")
            cells.append(f"{v:.4g}" if isinstance(v, float) else str(v))
        lines.append("| " + " | ".join(cells) + " |")
    env = payload["environment"]
    lines += ["", "Environment: " + ", ".join(f"{k} {v}" for k, v in env.items())]
    (out / f"{name}.md").write_text("\n".join(lines) + "\n")
    return out / f"{name}.md"
