"""The documentation's promises: the API reference lists every public name, the performance
page shows every stored benchmark result, ``benchmarks/results`` keeps the latest run of each
script only, and the README stays a newcomer's page; the Examples of the API pages run, and the
built API pages list only methods that exist and name no private module or function.

The built pages: the API reference alone is built into a temporary folder (docs/api.rst as
the root, docs/conf.py with its member filter, the class template, the basic theme, no
gallery: about half a minute on two cores), or, with ``SPARSEKERNEL_API_HTML`` set to a built
site (``.ci/run`` sets it to docs/_build/html after the full build), that site is read as it is.
"""

import doctest
import html
import importlib
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


# ----------------------------------------------------------------- Examples run
def _public_object(name):
    obj = importlib.import_module("sparsekernel")
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _doctests(name):
    """The doctests of a public name's docstring and, for a class, of its own methods'."""
    obj = _public_object(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(obj, name, module=inspect.getmodule(obj)) if t.examples]


_WITH_EXAMPLES = sorted(n for n in _autosummary_names() if _doctests(n))


def test_public_estimators_have_examples():
    estimators = {n for n in _autosummary_names()
                  if inspect.isclass(_public_object(n))
                  and hasattr(_public_object(n), "get_params")
                  and "fit" in dir(_public_object(n))}
    assert {"sparsekernel.LowRankSVC", "sparsekernel.NystromFeatures"} <= estimators
    assert estimators - set(_WITH_EXAMPLES) == set(), "estimators without an Examples section"


@pytest.mark.parametrize("name", _WITH_EXAMPLES)
def test_examples_in_docstrings_run(name):
    if name.startswith(("sparsekernel.MapReduceSVC", "sparsekernel.distributed.")):
        pytest.importorskip("distributed")  # the optional extra: its examples start a cluster
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    failures = []
    for test in _doctests(name):
        runner.run(test, out=failures.append)
    assert runner.failures == 0, "".join(failures)


# ----------------------------------------------------------------- the built API pages
#: ``sparsekernel.<pkg>._<module>`` (or a private name under a public module), and
#: ``_name()``, ``._name()``: a private function or method as a docstring would name it.
PRIVATE_PATH = re.compile(r"\bsparsekernel(?:\.[A-Za-z]\w*)*\._[A-Za-z]\w*")
PRIVATE_CALL = re.compile(r"(?<![\w])\.?_[A-Za-z]\w*\(\)")
#: Pointers to text that no page shows.
NOWHERE = re.compile(r"module docstring|Not available: see", re.IGNORECASE)
_METHOD = re.compile(r'<dl class="py method">\s*<dt class="sig sig-object py" id="([\w.]+)"')


def _build_api_reference(out):
    """Build docs/api.rst alone into ``out`` (a child process: Sphinx sets up docutils
    globally) and return the folder of its pages."""
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    src = out / "src"
    src.mkdir()
    shutil.copy(DOCS / "api.rst", src / "index.rst")
    shutil.copytree(DOCS / "_templates", src / "_templates")
    extensions = "sphinx.ext.autodoc,sphinx.ext.autosummary,sphinx.ext.mathjax,numpydoc"
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", "-c", str(DOCS),
         "-D", f"extensions={extensions}", "-D", "html_theme=basic", "-D", "root_doc=index",
         "-d", str(out / "doctrees"), str(src), str(out / "html")],
        check=True, cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "SPARSEKERNEL_DOCS_OFFLINE": "1"})
    return out / "html"


@pytest.fixture(scope="module")
def api_pages(tmp_path_factory):
    """``{page name: html}`` of every page of the API reference (``generated/``)."""
    built = os.environ.get("SPARSEKERNEL_API_HTML")
    site = Path(built) if built else _build_api_reference(tmp_path_factory.mktemp("api"))
    pages = {p.stem: p.read_text(encoding="utf-8") for p in (site / "generated").glob("*.html")}
    assert len(pages) >= len(_autosummary_names())
    return pages


def _body(page):
    """The page's markup without its scripts and styles (text, link targets and titles)."""
    return re.sub(r"<(script|style)\b.*?</\1>", "", page, flags=re.DOTALL)


def test_api_pages_list_only_methods_that_exist(api_pages):
    listed = [q for page in api_pages.values() for q in _METHOD.findall(page)]
    assert "sparsekernel.LowRankSVC.partial_fit" in listed  # the pattern still finds methods
    missing = []
    for page in api_pages.values():
        for qualname in _METHOD.findall(page):
            owner, _, method = qualname.rpartition(".")
            cls = _public_object(owner)
            if not hasattr(cls, method):
                missing.append(qualname)
                continue
            try:
                instance = cls()
            except TypeError:  # required arguments: the class's attribute is all we can check
                continue
            if not hasattr(instance, method):
                missing.append(qualname)
    assert missing == [], "methods listed that the class or its default instance lacks"


def test_api_pages_name_no_private_module_or_function(api_pages):
    found = {}
    for name, page in api_pages.items():
        body = _body(page)
        text = html.unescape(re.sub(r"<[^>]+>", "", body))
        hits = (set(PRIVATE_PATH.findall(body)) | set(PRIVATE_PATH.findall(text))
                | set(PRIVATE_CALL.findall(text)) | set(NOWHERE.findall(text)))
        if hits:
            found[name] = sorted(hits)
    assert found == {}
