"""The README's promises: every Python block runs as written, and the demo it starts with runs.

A block whose first line is ``# not run: <reason>`` is skipped with that reason: it needs
something a test cannot have (a cluster, a large file), and the reason is visible to readers.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SKIP_MARKER = "# not run:"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _blocks():
    """(line number, code) of every ```python block of the README."""
    text = README.read_text(encoding="utf-8")
    return [(text.count("\n", 0, match.start()) + 1, match.group(1))
            for match in _BLOCK.finditer(text)]


BLOCKS = _blocks()


def test_readme_has_python_blocks():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("line, code", BLOCKS, ids=[f"line{line}" for line, _ in BLOCKS])
def test_readme_block_runs(line, code, tmp_path, monkeypatch):
    first = code.lstrip().splitlines()[0]
    if first.startswith(SKIP_MARKER):
        reason = first[len(SKIP_MARKER):].strip()
        assert reason, f"README.md line {line}: '{SKIP_MARKER}' needs a reason"
        pytest.skip(f"README.md line {line}: {reason}")
    # A fresh namespace per block, as a reader pasting it into a new interpreter; files the
    # block writes land in a temporary directory, not in the checkout.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    exec(compile(code, f"README.md line {line}", "exec"), {"__name__": "__main__"})


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
