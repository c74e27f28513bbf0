"""The ``benchmark`` directive: one benchmark result of ``benchmarks/results`` on a page.

Usage, in a MyST page::

    ```{benchmark} suite/search_small/suite.json
    :columns: data, method, best_C, fit_s, error_pct, fit_ratio
    :figures: suite.png
    ```

It reads the JSON file that the benchmark script wrote and renders its title, the command
that made it, when and on what it ran, its notes, a table of its rows (the listed columns, or
every scalar column) and its figures (PNG files next to it). The performance page is thereby
regenerated from the results at every build: a rerun benchmark updates it without editing.
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from docutils.statemachine import StringList
from sphinx.errors import ExtensionError

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"

# Row keys that describe the run rather than the result: left out of the default columns.
_SKIP = {"date", "load_1min", "warnings", "warning_messages", "wall_s", "library", "task",
         "n_test", "extra_rss_mib", "error"}
_LABELS = {"fit_s": "fit (s)", "predict_s": "predict (s)", "error_pct": "error %",
           "peak_rss_mib": "peak RSS (MiB)", "extra_rss_mib": "added RSS (MiB)",
           "fit_ratio": "fit / SVC's", "predict_ratio": "predict / SVC's",
           "gap_points": "error - SVC's (points)", "best_C": "C", "n_train": "rows"}


def _label(key):
    if key in _LABELS:
        return _LABELS[key]
    for suffix, unit in (("_s", " (s)"), ("_pct", " %"), ("_mib", " (MiB)")):
        if key.endswith(suffix):
            return key[: -len(suffix)].replace("_", " ") + unit
    return key.replace("_", " ")


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value).replace("|", "/").replace("\n", " ")


def _default_columns(rows):
    columns = []
    for row in rows:
        for key, value in row.items():
            if key in _SKIP or key in columns or isinstance(value, (dict, list)):
                continue
            columns.append(key)
    return columns


def _escape(text):
    """Text as RST literal prose: the characters RST would read as markup, escaped."""
    out = str(text).replace("\\", "\\\\")
    for ch in "*`|_[]":
        out = out.replace(ch, "\\" + ch)
    return out


class BenchmarkDirective(Directive):
    """Render one results JSON file: command, environment, notes, table, figures."""

    required_arguments = 1
    has_content = False
    option_spec = {"columns": directives.unchanged, "figures": directives.unchanged,
                   "title": directives.unchanged, "rows": directives.unchanged,
                   "key": directives.unchanged, "brief": directives.flag}

    def run(self):
        rel = self.arguments[0]
        path = RESULTS / rel
        env = self.state.document.settings.env
        env.note_dependency(str(path))
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ExtensionError(f"benchmark: cannot read {path}: {exc}") from exc
        tables = _tables(data, self.options.get("key", "rows"), path)
        run_env = data.get("environment", {})
        title = self.options.get("title", data.get("title", rel))
        lines = [f"**{_escape(title)}**", ""]
        if run_env.get("command"):
            lines += [f"``{run_env['command']}``", ""]
        measured = ", ".join(f"{k} {run_env[k]}" for k in
                             ("date", "sparsekernel", "numpy", "scikit-learn", "cpus")
                             if k in run_env)
        lines += [f"Measured {measured} (results file ``benchmarks/results/{rel}``).", ""]
        notes = data.get("notes") or ([data["note"]] if isinstance(data.get("note"), str)
                                      else [])
        if "brief" not in self.options:
            lines += [f"- {_escape(note)}" for note in notes] + [""]
        for caption, rows in tables:
            if "rows" in self.options:  # a filter: key=value[,value...]
                key, _, values = self.options["rows"].partition("=")
                wanted = {v.strip() for v in values.split(",")}
                rows = [r for r in rows if str(r.get(key.strip())) in wanted]
            columns = ([c.strip() for c in self.options["columns"].split(",")]
                       if "columns" in self.options else _default_columns(rows))
            missing = [c for c in columns if not any(c in r for r in rows)]
            if missing:
                raise ExtensionError(f"benchmark: {path} has no column {missing}")
            lines += [".. list-table::" + (f" {_escape(caption)}" if caption else ""),
                      "   :header-rows: 1", "   :class: benchmark-table", ""]
            for cells in [[_label(c) for c in columns]] + [
                    [_escape(_cell(row.get(c))) or "\\ " for c in columns] for row in rows]:
                lines += ["   * - " + cells[0]] + [f"     - {cell}" for cell in cells[1:]]
            lines.append("")
        figures = [f.strip() for f in self.options.get("figures", "").split(",") if f.strip()]
        for fig in figures:
            png = path.parent / fig
            if not png.is_file():
                raise ExtensionError(f"benchmark: no figure {png}")
            env.note_dependency(str(png))
            docdir = Path(env.doc2path(env.docname)).parent
            lines += [f".. image:: {Path(_relpath(png, docdir)).as_posix()}",
                      f"   :alt: {fig}", ""]
        container = nodes.container(classes=["benchmark"])
        self.state.nested_parse(StringList(lines, source=str(path)), self.content_offset,
                                container)
        return [container]


def _tables(data, key, path):
    """``[(caption, rows)]`` at the dotted ``key``: a list of row dicts, a dict of such
    lists (one table each) or one dict of scalars (a one-row table)."""
    value = data
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            raise ExtensionError(f"benchmark: {path} has no {key!r}")
        value = value[part]
    if isinstance(value, list):
        return [("", value)]
    if isinstance(value, dict) and all(isinstance(v, list) for v in value.values()):
        return list(value.items())
    if isinstance(value, dict):
        return [("", [{k: v for k, v in value.items() if not isinstance(v, (dict, list))}])]
    raise ExtensionError(f"benchmark: {path}: {key!r} is not a table")


def _relpath(target, start):
    import os

    return os.path.relpath(target, start)


def setup(app):
    app.add_directive("benchmark", BenchmarkDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
