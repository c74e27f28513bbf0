"""The documentation's promises that need no Sphinx build: the API reference lists every public
name, the performance page shows every stored benchmark result, ``benchmarks/results`` keeps
the latest run of each script only, and the README stays a newcomer's page."""

import json
import re
from pathlib import Path

import sparsekernel

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RESULTS = ROOT / "benchmarks" / "results"
SCRIPTS = sorted(p.stem[len("bench_"):] for p in (ROOT / "benchmarks").glob("bench_*.py"))


def _autosummary_names():
    """``{qualified name}`` of every entry of docs/api.rst's autosummary tables."""
    names, module = set(), "sparsekernel"
    in_table = False
    for line in (DOCS / "api.rst").read_text(encoding="utf-8").splitlines():
        if line.startswith(".. currentmodule::"):
            module = line.split("::", 1)[1].strip()
        elif line.startswith(".. autosummary::"):
            in_table = True
        elif in_table and line.startswith("   ") and not line.strip().startswith(":"):
            if line.strip():
                names.add(f"{module}.{line.strip()}")
        elif line.strip() and not line.startswith(" "):
            in_table = False
    return names


def test_api_reference_lists_every_public_name():
    listed = _autosummary_names()
    public = {f"sparsekernel.{n}" for n in sparsekernel.__all__ if n != "__version__"}
    assert public - listed == set(), "missing from docs/api.rst"
    for name in listed:  # and every entry names something that exists
        module, _, attr = name.rpartition(".")
        obj = sparsekernel
        for part in name.split(".")[1:]:
            obj = getattr(obj, part)
        assert obj is not None, (module, attr)


def _script_of(entry):
    """The benchmark script an entry of benchmarks/results belongs to: its name, or the
    longest script name it starts with followed by an underscore."""
    if entry in SCRIPTS:
        return entry
    owners = [s for s in SCRIPTS if entry.startswith(s + "_")]
    return max(owners, key=len) if owners else None


def test_results_keep_at_most_two_entries_per_script():
    per_script = {}
    for entry in sorted(p.name for p in RESULTS.iterdir()):
        script = _script_of(entry)
        assert script is not None, f"benchmarks/results/{entry} belongs to no bench_*.py"
        per_script.setdefault(script, []).append(entry)
    crowded = {s: e for s, e in per_script.items() if len(e) > 2}
    assert crowded == {}


def test_every_result_says_its_command_and_is_on_the_performance_page():
    page = (DOCS / "performance.rst").read_text(encoding="utf-8")
    shown = set(re.findall(r"^\.\. benchmark:: (\S+)$", page, re.MULTILINE))
    stored = {p.relative_to(RESULTS).as_posix() for p in RESULTS.rglob("*.json")}
    assert stored - shown == set(), "results not on docs/performance.rst"
    assert shown - stored == set(), "docs/performance.rst names missing results"
    for rel in stored:
        env = json.loads((RESULTS / rel).read_text(encoding="utf-8"))["environment"]
        assert env["command"].startswith("python benchmarks/bench_"), rel


def test_readme_is_a_newcomers_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200
    head = "\n".join(lines[:40])
    assert "pip install" in head
    assert "```python" in head  # a runnable example (tests/test_readme.py runs it)
    assert "docs/" in head  # a link into the documentation
