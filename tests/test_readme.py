"""The README's promises: every Python block runs as written, and every output it quotes is
what the code prints.

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
"""

import contextlib
import io
import lzma
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from sparsekernel.datasets import find_shared_data

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SKIP_MARKER = "# not run:"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n?", re.MULTILINE | re.DOTALL)
# Files a quoted command may name: the shared data folder's compressed copies.
DATA_FILES = {"a9a": ("a9a", "a9a.xz"), "a9a.t": ("a9a", "a9a.t.xz")}


def _fences():
    """``(line number, language, body, end offset, start offset)`` of every fenced block."""
    text = README.read_text(encoding="utf-8")
    return text, [(text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2), m.end(),
                   m.start()) for m in _FENCE.finditer(text)]


def _blocks():
    """``(line number, code, quoted output or None)`` of every Python block."""
    text, fences = _fences()
    blocks = []
    for i, (line, lang, body, end, _) in enumerate(fences):
        if lang != "python":
            continue
        expected = None
        if i + 1 < len(fences):
            _, next_lang, next_body, _, next_start = fences[i + 1]
            if next_lang == "text" and not text[end:next_start].strip():
                expected = next_body
        blocks.append((line, body, expected))
    return blocks


def _console_blocks():
    """``(line number, [(command, quoted output lines)])`` of every console block."""
    _, fences = _fences()
    blocks = []
    for line, lang, body, _, _ in fences:
        if lang != "console":
            continue
        commands = []
        for row in body.splitlines():
            if row.startswith("$ "):
                commands.append((row[2:].split("#")[0].strip(), []))
            elif commands:
                commands[-1][1].append(row)
        blocks.append((line, commands))
    return blocks


BLOCKS = _blocks()
CONSOLE = _console_blocks()


def test_readme_has_python_blocks():
    assert len(BLOCKS) >= 5
    assert any(expected for _, _, expected in BLOCKS), "no Python block quotes its output"


def test_readme_quotes_no_output_in_prose():
    text = README.read_text(encoding="utf-8")
    quoted = re.findall(r"[Ii]t prints `[^`]+`", text)
    assert not quoted, f"output quoted in prose, move it into a checked block: {quoted}"


@pytest.mark.parametrize("line, code, expected", BLOCKS,
                         ids=[f"line{line}" for line, _, _ in BLOCKS])
def test_readme_block_runs(line, code, expected, tmp_path, monkeypatch):
    first = code.lstrip().splitlines()[0]
    if first.startswith(SKIP_MARKER):
        reason = first[len(SKIP_MARKER):].strip()
        assert reason, f"README.md line {line}: '{SKIP_MARKER}' needs a reason"
        pytest.skip(f"README.md line {line}: {reason}")
    # A fresh namespace per block, as a reader pasting it into a new interpreter; files the
    # block writes land in a temporary directory, not in the checkout.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"README.md line {line}", "exec"), {"__name__": "__main__"})
    if expected is not None:
        assert _lines(out.getvalue()) == _lines(expected), (
            f"README.md line {line} quotes an output the block does not print")


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


@pytest.mark.parametrize("line, commands", CONSOLE, ids=[f"line{line}" for line, _ in CONSOLE])
def test_readme_console_output(line, commands, tmp_path):
    checked = [(command, quoted) for command, quoted in commands if quoted]
    if not checked:
        pytest.skip(f"README.md line {line}: no command quotes its output")
    for command, quoted in checked:
        argv = shlex.split(command)
        assert argv[0] == "sparsekernel", f"README.md line {line}: {command!r}"
        for word in argv[1:]:
            if word in DATA_FILES:
                _data_file(word, tmp_path)
        result = subprocess.run([sys.executable, "-m", "sparsekernel.cli", *argv[1:]],
                                capture_output=True, text=True, timeout=600, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert _mask(_lines(result.stdout)) == _mask(quoted), (
            f"README.md line {line}: `{command}` printed\n{result.stdout}")


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
