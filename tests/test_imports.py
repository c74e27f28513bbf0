"""The package loads lazily: importing an estimator pulls in no optional heavy dependency."""

import subprocess
import sys

import pytest

import sparsekernel

_FRESH_IMPORT = (
    "import sys, sparsekernel; from sparsekernel import LowRankSVC, ReducedSVC; "
    "from sparsekernel.io import load, save; "
    "print(sorted(m for m in ('numba', 'dask', 'matplotlib', 'distributed', 'onnx', "
    "'skl2onnx', 'onnxruntime') if m in sys.modules))"
)

_FAMILIES = ["basis", "cli", "compute", "datasets", "decomposition", "distributed", "features",
             "inspection", "io", "kernels", "lssvm", "model_selection", "solvers",
             "sparse_margin", "svm", "utils"]


def test_estimator_import_loads_no_heavy_dependency():
    # A fresh interpreter: this test process has long since imported everything.
    out = subprocess.run([sys.executable, "-c", _FRESH_IMPORT], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_estimator_import_loads_neither_every_solver_nor_every_selector():
    # ~25 ms of a fresh import (the budget is 0.1 s over scikit-learn's own): the
    # solvers and basis selectors load on first use, at the first fit.
    code = ("import sys; from sparsekernel import LowRankSVC; print(sorted(m for m in "
            "('sparsekernel.solvers.eigen', 'sparsekernel.solvers.least_squares', "
            "'sparsekernel.solvers.logistic', 'sparsekernel.basis._registry', "
            "'sparsekernel.basis._systematic') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_every_public_name_resolves_and_is_listed():
    listed = dir(sparsekernel)
    for name in sparsekernel.__all__:
        assert getattr(sparsekernel, name) is not None
        assert name in listed


def test_star_import_binds_all():
    namespace = {}
    exec("from sparsekernel import *", namespace)
    assert set(sparsekernel.__all__) <= set(namespace)


@pytest.mark.parametrize("family", _FAMILIES)
def test_family_exports_resolve(family):
    module = getattr(sparsekernel, family)  # reachable without an explicit import
    for name in module.__all__:
        assert getattr(module, name) is not None
        assert name in dir(module)


def test_unknown_name_raises_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        sparsekernel.no_such_name  # noqa: B018


def _import_graph():
    """``{module: modules it imports}`` over the package's source, lazy imports included
    (every ``import`` statement anywhere in a module), edges into a module's own parent
    packages left out (a package's ``__init__`` importing its modules is no cycle)."""
    import ast
    from pathlib import Path

    root = Path(sparsekernel.__file__).parent
    modules = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = (package.split(".")[:len(package.split(".")) - node.level + 1]
                        if node.level else [])
                target = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    targets.add(full if full in modules else target)
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
        graph[name] = {t for t in targets
                       if t in modules and t != name and not name.startswith(t + ".")}
    return graph


def test_no_import_cycle():
    """No module imports, directly or through others, one that imports it back (lazy
    imports inside functions count: they hide a cycle, they do not remove it)."""
    graph = _import_graph()
    assert len(graph) > 100
    done, cycles = set(), []

    def visit(node, path):
        if node in path:
            cycles.append(path[path.index(node):] + [node])
            return
        if node in done:
            return
        for nxt in sorted(graph[node]):
            visit(nxt, path + [node])
        done.add(node)

    for node in sorted(graph):
        visit(node, [])
    assert cycles == []


def test_the_compute_layer_is_entered_through_its_public_names_only():
    """Threads, LAPACK calls and SPD factorizations live in ``sparsekernel.compute``: no
    module outside it imports one of its private modules, and it imports nothing of the
    package above it (it is the ground floor, beside ``utils``)."""
    graph = _import_graph()
    assert "sparsekernel.compute._lapack" in graph
    inside = {name for name in graph if name.startswith("sparsekernel.compute")}
    for name, targets in graph.items():
        if name not in inside:
            private = {t for t in targets if t.startswith("sparsekernel.compute._")}
            assert not private, (name, private)
    for name in inside:
        assert graph[name] <= inside | {"sparsekernel"}, (name, graph[name] - inside)
