"""The README's and the documentation's promises: every Python block runs as written, and
every output it quotes is what the code prints.

The pages checked are README.md and every hand-written Markdown page of the Sphinx site
(``docs/**/*.md``, except the build output ``docs/_build``, the API pages ``docs/generated``
and the example gallery ``docs/auto_examples``, which sphinx-gallery runs itself). The same
rules hold on every page; each block is a test named by its page and line.

Two kinds of quoted output are checked:

- a ```` ```text ```` block right after a ```` ```python ```` block (only blank lines between)
  is that block's standard output, compared exactly;
- a ```` ```console ```` block holds commands (lines starting with ``$ ``), each followed by the
  lines it prints. Each command that quotes output is run in one temporary directory, in
  order (so ``train`` writes the model ``predict`` reads), with the data files it names taken
  from the shared data folder; commands without quoted output are shown, not run. Durations
  (``15.9 s``, a table's ``fit (s)`` and ``predict (s)`` columns) and the figures computed
  from them are masked: they are measured, never reproducible.

A Python block whose first line is ``# not run: <reason>`` is skipped with that reason: it
needs something a test cannot have (a cluster, a large file), and the reason is visible to
readers. A prose sentence never quotes an output ("It prints `...`"): quoted output goes in a
checked block.

Fences are read line by line, as MyST reads them: a fence opens with three or more backticks
(or tildes) and an info string, whose first word is the language, and closes with at least as
many of the same character, so MyST directives (```` ```{toctree} ````) and longer fences pair
up correctly and never shift the blocks after them.
"""

import contextlib
import functools
import io
import lzma
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

import pytest

from sparsekernel.datasets import find_shared_data

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# Not hand-written pages: the build output, autosummary's API pages, sphinx-gallery's pages,
# and the folders of Sphinx's own files (_templates, _ext, _static).
NOT_PAGES = ("_build", "generated", "auto_examples")
SKIP_MARKER = "# not run:"
_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
# Files a quoted command may name: the shared data folder's compressed copies.
DATA_FILES = {"a9a": ("a9a", "a9a.xz"), "a9a.t": ("a9a", "a9a.t.xz")}


def _pages():
    """README.md, then the hand-written pages of docs/ in path order."""
    pages = [README]
    for path in sorted(DOCS.rglob("*.md")):
        first = path.relative_to(DOCS).parts[0]
        if first in NOT_PAGES or first.startswith((".", "_")) or path.name == "README.md":
            continue  # docs/figures/README.md and the like describe files, not pages
        pages.append(path)
    return pages


PAGES = _pages()


def _name(page):
    return page.relative_to(ROOT).as_posix()


class Fence(NamedTuple):
    line: int  # 1-based line of the opening fence
    lang: str  # first word of the info string ('' for none)
    body: str
    first: int  # 0-based index of the opening line
    last: int  # 0-based index of the closing line


def _fences(page):
    """``(lines, [Fence])`` of ``page``: every fenced block, nested directives included."""
    lines = page.read_text(encoding="utf-8").splitlines()
    fences, i = [], 0
    while i < len(lines):
        opened = _OPEN.match(lines[i])
        if opened is None or (opened.group(2)[0] == "`" and "`" in opened.group(3)):
            i += 1
            continue
        indent, fence, info = opened.groups()
        close = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        body = "".join(row[len(indent):] + "\n" if row.startswith(indent) else row + "\n"
                       for row in lines[i + 1:j])
        lang = info.split()[0] if info.split() else ""
        fences.append(Fence(i + 1, lang, body, i, j))
        i = j + 1
    return lines, fences


def _blocks(page):
    """``(page, line number, code, quoted output or None)`` of every Python block."""
    lines, fences = _fences(page)
    blocks = []
    for i, fence in enumerate(fences):
        if fence.lang != "python":
            continue
        expected = None
        if i + 1 < len(fences) and fences[i + 1].lang == "text":
            between = lines[fence.last + 1:fences[i + 1].first]
            if not any(row.strip() for row in between):
                expected = fences[i + 1].body
        blocks.append((page, fence.line, fence.body, expected))
    return blocks


def _console_blocks(page):
    """``(page, line number, [(command, quoted output lines)])`` of every console block."""
    blocks = []
    for fence in _fences(page)[1]:
        if fence.lang != "console":
            continue
        commands = []
        for row in fence.body.splitlines():
            if row.startswith("$ "):
                commands.append((row[2:].split("#")[0].strip(), []))
            elif commands:
                commands[-1][1].append(row)
        blocks.append((page, fence.line, commands))
    return blocks


BLOCKS = [block for page in PAGES for block in _blocks(page)]
CONSOLE = [block for page in PAGES for block in _console_blocks(page)]


def test_pages_have_checked_python_blocks():
    # The README keeps a first model with its output; the examples live in the docs pages.
    readme = [block for block in BLOCKS if block[0] == README]
    docs = [block for block in BLOCKS if block[0] != README]
    assert any(expected for _, _, _, expected in readme), "no README block quotes its output"
    assert len(docs) >= 10
    assert sum(expected is not None for _, _, _, expected in docs) >= 10


def test_docs_pages_are_checked():
    # The glob must keep finding the hand-written pages (and only those).
    names = {_name(page) for page in PAGES}
    assert "docs/getting_started.md" in names and "docs/user_guide/concepts.md" in names
    assert not any(name.startswith(("docs/_build/", "docs/generated/",
                                     "docs/auto_examples/")) for name in names)


def test_fences_pair_across_directives(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# T\n\n```{toctree}\na\n```\n\n````markdown\n```python\nx\n```\n````\n\n"
                    "```python\nprint(1)\n```\n\n```text\n1\n```\n", encoding="utf-8")
    assert [(fence.line, fence.lang) for fence in _fences(page)[1]] == [
        (3, "{toctree}"), (7, "markdown"), (13, "python"), (17, "text")]
    assert _blocks(page) == [(page, 13, "print(1)\n", "1\n")]


@pytest.mark.parametrize("page", PAGES, ids=[_name(page) for page in PAGES])
def test_no_output_quoted_in_prose(page):
    text = page.read_text(encoding="utf-8")
    quoted = re.findall(r"[Ii]t prints `[^`]+`", text)
    assert not quoted, (
        f"{_name(page)}: output quoted in prose, move it into a checked block: {quoted}")


@pytest.mark.parametrize("page, line, code, expected", BLOCKS,
                         ids=[f"{_name(page)}:{line}" for page, line, _, _ in BLOCKS])
def test_python_block_runs(page, line, code, expected, tmp_path, monkeypatch):
    where = f"{_name(page)} line {line}"
    first = code.lstrip().splitlines()[0]
    if first.startswith(SKIP_MARKER):
        reason = first[len(SKIP_MARKER):].strip()
        assert reason, f"{where}: '{SKIP_MARKER}' needs a reason"
        pytest.skip(f"{where}: {reason}")
    # A fresh namespace per block, as a reader pasting it into a new interpreter; files the
    # block writes land in a temporary directory, not in the checkout.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, where, "exec"), {"__name__": "__main__"})
    if expected is not None:
        assert _lines(out.getvalue()) == _lines(expected), (
            f"{where} quotes an output the block does not print:\n{out.getvalue()}")


def _lines(text):
    return [row.rstrip() for row in text.strip("\n").splitlines()]


# Measured figures: durations and what is computed from them.
_MEASURED = [
    (re.compile(r"\b\d[\d,]*(?:\.\d+)? s\b"), "<t> s"),
    (re.compile(r"(?m)^(\S+(?: \S+)?\s+[\d,]+\s+)\d+(?:\.\d+)?(\s+)\d+(?:\.\d+)?"),
     r"\1<t>\2<t>"),  # a table row: rows used, then the fit and predict columns
    (re.compile(r"predicted [\d,.]+x faster"), "predicted <r>x faster"),
    (re.compile(r"rows\^[\d.]+"), "rows^<r>"),
]


def _mask(lines):
    text = "\n".join(lines)
    for pattern, replacement in _MEASURED:
        text = pattern.sub(replacement, text)
    return [re.sub(r"\s+", " ", row).strip() for row in text.splitlines()]


def test_mask_hides_only_measured_figures():
    quoted = ["model  rows used  fit (s) predict (s) test accuracy  model size",
              "LowRankSVC  200,000  0.65  0.01  0.9982  104 basis functions",
              "fit 15.9 s; predicted 192.5x faster, rows^1.8, about 59 s, 85.56% (27818/32561)"]
    run = ["model  rows used  fit (s) predict (s) test accuracy  model size",
           "LowRankSVC  200,000  0.71  0.02  0.9982  104 basis functions",
           "fit 12.0 s; predicted 180.0x faster, rows^1.7, about 61 s, 85.56% (27818/32561)"]
    assert _mask(quoted) == _mask(run)
    for old, new in [("0.9982", "0.9981"), ("104 basis", "105 basis"), ("85.56%", "85.55%"),
                     ("27818", "27817"), ("200,000", "199,000")]:
        other = [row.replace(old, new) for row in run]
        assert other != run and _mask(quoted) != _mask(other), old


def _data_file(name, directory):
    folder, compressed = DATA_FILES[name]
    source = find_shared_data(folder, compressed)
    if source is None:
        pytest.skip(f"shared data file {folder}/{compressed} not found (set SPARSEKERNEL_DATA)")
    target = directory / name
    if not target.exists():
        with lzma.open(source) as src:
            target.write_bytes(src.read())


@functools.cache
def _run_commands(commands):
    """``[(command, CompletedProcess)]`` of ``commands`` run in order in one fresh directory.

    Cached: pages that quote the same commands (the README and docs/cli.md) run them once.
    """
    results = []
    with tempfile.TemporaryDirectory() as directory:
        for command in commands:
            argv = shlex.split(command)
            for word in argv[1:]:
                if word in DATA_FILES:
                    _data_file(word, Path(directory))
            results.append((command, subprocess.run(
                [sys.executable, "-m", "sparsekernel.cli", *argv[1:]],
                capture_output=True, text=True, timeout=600, cwd=directory)))
    return results


@pytest.mark.parametrize("page, line, commands", CONSOLE,
                         ids=[f"{_name(page)}:{line}" for page, line, _ in CONSOLE])
def test_console_output(page, line, commands):
    where = f"{_name(page)} line {line}"
    checked = [(command, quoted) for command, quoted in commands if quoted]
    if not checked:
        pytest.skip(f"{where}: no command quotes its output")
    for command, _ in checked:
        assert shlex.split(command)[0] == "sparsekernel", f"{where}: {command!r}"
    results = _run_commands(tuple(command for command, _ in checked))
    for (command, quoted), (_, result) in zip(checked, results, strict=True):
        assert result.returncode == 0, result.stderr
        assert _mask(_lines(result.stdout)) == _mask(quoted), (
            f"{where}: `{command}` printed\n{result.stdout}")


def test_readme_keeps_the_ci_test_command():
    # .ci/run runs the README's test command verbatim; the two must not drift apart.
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = 'python -m pip install ".[test]" && python -m pytest'
    assert command in ci
    assert f"```\n{command}\n```" in README.read_text(encoding="utf-8")


def test_demo_runs_small():
    command = [sys.executable, "-m", "sparsekernel.cli", "demo", "--rows", "20000",
               "--svc-rows", "2000"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert re.search(r"^model +rows used +fit \(s\) +predict \(s\) +test accuracy +model size$",
                     result.stdout, re.MULTILINE), result.stdout


def test_license_is_declared_and_shipped():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'license = "BSD-3-Clause"' in text and 'license-files = ["LICENSE"]' in text
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("BSD 3-Clause License")
