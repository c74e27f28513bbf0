"""The performance page's directives, read from ``benchmarks/results`` at every build.

``benchmark``: one results JSON file on a page::

    .. benchmark:: suite/search_small/suite.json
       :columns: data, method, best_C, fit_s, error_pct, fit_ratio
       :figures: suite.png

It renders the result's title, the command that made it and when and on what it ran (one
line), its notes (in a folded box, and only the notes not already shown earlier on the
page), a table of its rows (the listed columns, or every scalar column) and its figures
(PNG files next to it, at their own size or the column's width, linked to the full image).
A row that was skipped or failed says so, with the reason the file gives. ``:collapsed:``
folds the tables (long tables of secondary results); ``:brief:`` leaves the notes out.

``benchmark-summary``: one table, a row per data set, of a method against its peers (test
error and fit time), from the results files listed in its content (``file | label``: the
label of the section holding the details)::

    .. benchmark-summary::
       :method: LowRankSVC
       :peers: SVC = SVC (scikit-learn), sklearnex.SVC = oneDAL SVC

       suite/search_small/suite.json | perf-suite

A rerun benchmark thereby updates the page without editing it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.errors import ExtensionError

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"

# Row keys that describe the run rather than the result: left out of the default columns.
_SKIP = {"date", "load_1min", "warnings", "warning_messages", "wall_s", "library", "task",
         "n_test", "extra_rss_mib", "error", "skipped"}
_LABELS = {"fit_s": "fit (s)", "predict_s": "predict (s)", "error_pct": "error %",
           "peak_rss_mib": "peak RSS (MiB)", "extra_rss_mib": "added RSS (MiB)",
           "fit_ratio": "fit / SVC's", "predict_ratio": "predict / SVC's",
           "fit_ratio_onedal": "fit / oneDAL's", "gap_points": "error - SVC's (points)",
           "best_C": "C", "n_train": "rows", "data": "data set", "dataset": "data set"}
_DASH = "\u2013"  # a value the run did not produce


def _label(key):
    if key in _LABELS:
        return _LABELS[key]
    for suffix, unit in (("_s", " (s)"), ("_pct", " %"), ("_mib", " (MiB)"), ("_ms", " (ms)")):
        if key.endswith(suffix):
            return key[: -len(suffix)].replace("_", " ") + unit
    return key.replace("_", " ")


def _cell(value):
    if value is None:
        return _DASH
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value).replace("\n", " ")


def _default_columns(rows):
    columns = []
    for row in rows:
        for key, value in row.items():
            if key in _SKIP or key in columns or isinstance(value, (dict, list)):
                continue
            columns.append(key)
    return columns


def _not_run(row):
    """``'skipped: reason'`` or ``'failed: reason'`` for a row without results, else None."""
    if row.get("skipped"):
        reason = row["skipped"]
        return "skipped" + (f": {reason}" if isinstance(reason, str) else "")
    if row.get("error"):
        return f"failed: {row['error']}"
    return None


def _read(path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ExtensionError(f"benchmark: cannot read {path}: {exc}") from exc


# -- tables as docutils nodes ------------------------------------------------------------


def _entry(content, *, morecols=0, morerows=0, classes=()):
    entry = nodes.entry(classes=list(classes))
    if morecols:
        entry["morecols"] = morecols
    if morerows:
        entry["morerows"] = morerows
    if isinstance(content, nodes.Node):
        entry += content
    else:
        entry += nodes.paragraph(text=str(content))
    return entry


def _table(header_rows, body_rows, ncols, classes, title=None):
    table = nodes.table(classes=["benchmark-table", *classes])
    if title:
        table += nodes.title(text=title)
    group = nodes.tgroup(cols=ncols)
    table += group
    group.extend(nodes.colspec(colwidth=1) for _ in range(ncols))
    head = nodes.thead()
    for cells in header_rows:
        head += nodes.row("", *cells)
    body = nodes.tbody()
    for cells in body_rows:
        body += nodes.row("", *cells)
    group += head
    group += body
    return table


def _result_rows(rows, columns):
    """The body rows: one cell per column; a row without results says why in one cell
    spanning the result columns."""
    out = []
    for row in rows:
        reason = _not_run(row)
        cells = []
        for i, column in enumerate(columns):
            if reason and row.get(column) is None:
                cells.append(_entry(reason, morecols=len(columns) - i - 1,
                                    classes=["bench-skipped"]))
                break
            cells.append(_entry(_cell(row.get(column))))
        out.append(cells)
    return out


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


def _shown_notes(document):
    """The notes already rendered on this page (each is shown once)."""
    if not hasattr(document, "_benchmark_notes"):
        document._benchmark_notes = set()
    return document._benchmark_notes


class BenchmarkDirective(Directive):
    """Render one results JSON file: title, run, notes, tables, figures."""

    required_arguments = 1
    has_content = False
    option_spec = {"columns": directives.unchanged, "figures": directives.unchanged,
                   "title": directives.unchanged, "rows": directives.unchanged,
                   "key": directives.unchanged, "brief": directives.flag,
                   "collapsed": directives.flag}

    def run(self):
        rel = self.arguments[0]
        path = RESULTS / rel
        env = self.state.document.settings.env
        env.note_dependency(str(path))
        data = _read(path)
        container = nodes.container(classes=["benchmark"])
        title = self.options.get("title", data.get("title", rel))
        container += nodes.paragraph("", "", nodes.strong(text=title))
        container += self._run_line(data.get("environment", {}), rel)
        if "brief" not in self.options:
            container.extend(self._notes(data))
        tables = [self._table(caption, rows, path)
                  for caption, rows in _tables(data, self.options.get("key", "rows"), path)]
        if "collapsed" in self.options:
            n_rows = sum(len(t.traverse(nodes.row)) - 1 for t in tables)
            self._parse(container, [f".. dropdown:: The table{'s' if len(tables) > 1 else ''}"
                                    f" ({n_rows} rows)", "   :icon: table", ""])
            container.children[-1].extend(tables)
        else:
            container.extend(tables)
        self._figures(container, path, env)
        return [container]

    def _parse(self, parent, lines):
        self.state.nested_parse(StringList(lines, source=self.arguments[0]),
                                self.content_offset, parent)

    def _run_line(self, run_env, rel):
        """One line: the command, when, with which versions and on how many CPUs."""
        para = nodes.paragraph(classes=["benchmark-run"])
        if run_env.get("command"):
            para += nodes.literal(text=run_env["command"])
            para += nodes.Text("; ")
        versions = ", ".join(f"{k} {run_env[k]}" for k in ("sparsekernel", "numpy",
                                                           "scikit-learn") if k in run_env)
        when = f"run {run_env['date']}" if "date" in run_env else "run"
        cpus = f" on {run_env['cpus']} CPUs" if "cpus" in run_env else ""
        para += nodes.Text(f"{when}{cpus} ({versions}); results in ")
        para += nodes.literal(text=f"benchmarks/results/{rel}")
        para += nodes.Text(".")
        return para

    def _notes(self, data):
        notes = data.get("notes") or ([data["note"]] if isinstance(data.get("note"), str)
                                      else [])
        shown = _shown_notes(self.state.document)
        new = [note for note in notes if note not in shown]
        shown.update(new)
        if not new:
            return []
        holder = nodes.container()
        label = "How it was measured" if len(new) == len(notes) else "Further notes"
        self._parse(holder, [f".. dropdown:: {label}", "   :icon: info", ""])
        items = nodes.bullet_list()
        for note in new:
            items += nodes.list_item("", nodes.paragraph(text=note))
        holder.children[-1] += items
        return holder.children

    def _table(self, caption, rows, path):
        if "rows" in self.options:  # a filter: key=value[,value...]
            key, _, values = self.options["rows"].partition("=")
            wanted = {v.strip() for v in values.split(",")}
            rows = [r for r in rows if str(r.get(key.strip())) in wanted]
        columns = ([c.strip() for c in self.options["columns"].split(",")]
                   if "columns" in self.options else _default_columns(rows))
        missing = [c for c in columns if not any(c in r for r in rows)]
        if missing:
            raise ExtensionError(f"benchmark: {path} has no column {missing}")
        header = [[_entry(_label(c)) for c in columns]]
        return _table(header, _result_rows(rows, columns), len(columns), [],
                      title=caption or None)

    def _figures(self, container, path, env):
        figures = [f.strip() for f in self.options.get("figures", "").split(",") if f.strip()]
        docdir = Path(env.doc2path(env.docname)).parent
        lines = []
        for fig in figures:
            png = path.parent / fig
            if not png.is_file():
                raise ExtensionError(f"benchmark: no figure {png}")
            env.note_dependency(str(png))
            # its own width (at most the column's), linked to the full-size image
            lines += [f".. image:: {Path(os.path.relpath(png, docdir)).as_posix()}",
                      f"   :alt: {fig}", f"   :width: {_png_width(png)}px",
                      "   :class: benchmark-figure", ""]
        if lines:
            self._parse(container, lines)


def _png_width(png):
    """Width in pixels from a PNG's header."""
    with open(png, "rb") as fh:
        head = fh.read(24)
    return int.from_bytes(head[16:20], "big")


# -- the summary table --------------------------------------------------------------------


class BenchmarkSummaryDirective(Directive):
    """A row per data set: test error and fit time of ``:method:`` and each peer."""

    has_content = True
    option_spec = {"method": directives.unchanged, "peers": directives.unchanged,
                   "auto": directives.unchanged}

    def run(self):
        env = self.state.document.settings.env
        method = self.options.get("method", "LowRankSVC")
        methods = [(method, method)] + self._peers()
        by_set = self._rows_by_set(env)
        header = [
            [_entry("data set", morerows=1), _entry("training rows", morerows=1),
             _entry("C", morerows=1),
             _entry("test error %", morecols=len(methods) - 1, classes=["head"]),
             _entry("fit time (s)", morecols=len(methods) - 1, classes=["head"]),
             _entry("", morerows=1)],
            [_entry(label) for _, label in methods] * 2,
        ]
        body = [self._row(env, name, entry, methods) for name, entry in by_set.items()]
        ncols = 4 + 2 * len(methods)
        out = [_table(header, body, ncols, ["benchmark-summary"])]
        if "auto" in self.options:
            out.append(self._auto(env, method))
        return out

    def _peers(self):
        """``[(key, label), ...]`` of the ``:peers:`` option (``key = label, ...``)."""
        peers = []
        for item in self.options.get("peers", "SVC = SVC").split(","):
            key, _, label = item.partition("=")
            peers.append((key.strip(), label.strip() or key.strip()))
        return peers

    def _rows_by_set(self, env):
        """data set -> {"rows": n, "protocol": str, "label": str, method: row}; the first
        file naming a set gives its row."""
        by_set = {}
        for line in self.content:
            if not line.strip():
                continue
            rel, _, label = (part.strip() for part in line.partition("|"))
            path = RESULTS / rel
            env.note_dependency(str(path))
            data = _read(path)
            protocol = _protocol(data)
            for row in data["rows"]:
                entry = by_set.setdefault(row["data"], {"label": label,
                                                        "protocol": protocol,
                                                        "source": rel})
                if entry["source"] != rel:
                    continue
                entry.setdefault("rows", row.get("n_train"))
                entry[row["method"]] = row
        return by_set

    @staticmethod
    def _row(env, name, entry, methods):
        """One data set's cells: error and time of each method, and its details link."""
        cells = [_entry(name), _entry(_cell(entry.get("rows"))), _entry(entry["protocol"])]
        for column in ("error_pct", "fit_s"):
            for key, _ in methods:
                row = entry.get(key)
                if row is None:
                    cells.append(_entry("not run", classes=["bench-skipped"]))
                elif _not_run(row):
                    cells.append(_entry(_not_run(row), classes=["bench-skipped"]))
                else:
                    cells.append(_entry(_summary_cell(row.get(column), column)))
        ref = addnodes.pending_xref("", refdomain="std", reftype="ref",
                                    reftarget=entry["label"], refexplicit=True,
                                    refwarn=True, refdoc=env.docname)
        ref += nodes.inline(text="details")
        cells.append(_entry(nodes.paragraph("", "", ref)))
        return cells

    def _auto(self, env, method):
        """A sentence on the sets the defaults were not chosen on (``bench_auto.py``)."""
        rel, _, label = (part.strip() for part in self.options["auto"].partition("|"))
        path = RESULTS / rel
        env.note_dependency(str(path))
        summary = _read(path)["summary"]
        para = nodes.paragraph()
        para += nodes.Text(
            f"On {summary['sets']} further data sets that the defaults were not chosen on, "
            f"{method} at its defaults is within half a point of the test error of a tuned "
            f"SVC on {summary['within_half_point']} (mean difference "
            f"{summary['mean_gap_points']:+.2f} points, largest "
            f"{summary['max_gap_points']:+.2f} on {summary['max_gap_set']}): ")
        ref = addnodes.pending_xref("", refdomain="std", reftype="ref", reftarget=label,
                                    refexplicit=True, refwarn=True, refdoc=env.docname)
        ref += nodes.inline(text="details")
        para += ref
        para += nodes.Text(".")
        return para


def _summary_cell(value, column):
    """Errors to two decimals, times to three significant digits."""
    if not isinstance(value, (int, float)):
        return _cell(value)
    if column == "error_pct":
        return f"{value:.2f}"
    return f"{value:.3g}" if value < 100 else f"{value:,.0f}"


def _protocol(data):
    protocol = data.get("protocol", {})
    if protocol.get("search"):
        return f"{protocol.get('cv_folds')}-fold CV"
    grid = protocol.get("C_grid") or []
    return f"{grid[0]:g}" if len(grid) == 1 else _DASH


def setup(app):
    app.add_directive("benchmark", BenchmarkDirective)
    app.add_directive("benchmark-summary", BenchmarkSummaryDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "2"}
