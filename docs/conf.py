"""Sphinx configuration of the sparsekernel documentation.

Build from the repository root (what ``.ci/run`` runs, warnings as errors)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # the gallery draws into files, never a window

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))

import sparsekernel  # noqa: E402

project = "sparsekernel"
author = "the sparsekernel developers"
copyright = "2026, the sparsekernel developers"  # noqa: A001 - Sphinx's name
release = sparsekernel.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_design",
    "sphinx_gallery.gen_gallery",
    "performance",  # docs/_ext/performance.py: the performance page from benchmarks/results
    "gallery_figure",  # docs/_ext/gallery_figure.py: a gallery example's figure on a page
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.md5", "figures/README.md"]
templates_path = ["_templates"]

# The API reference: one page per public name, from its numpydoc docstring.
autosummary_generate = True
autodoc_default_options: dict[str, object] = {}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable/", None),
    "scipy": ("https://docs.scipy.org/doc/scipy/", None),
    "sklearn": ("https://scikit-learn.org/stable/", None),
    "dask": ("https://docs.dask.org/en/stable/", None),
}
# No network where the docs are built in CI: intersphinx inventories are optional.
if os.environ.get("SPARSEKERNEL_DOCS_OFFLINE", "1") == "1":
    intersphinx_mapping = {}

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "image_scrapers": ("matplotlib",),
    "show_memory": False,
    "min_reported_time": 1,
    "abort_on_example_error": True,
    "plot_gallery": os.environ.get("SPARSEKERNEL_DOCS_GALLERY", "True"),
}

html_theme = "pydata_sphinx_theme"
html_title = f"sparsekernel {release}"
html_theme_options = {
    "navbar_align": "left",
    # Every top-level page in the navbar (short titles in index.md's toctree), none in "More".
    "header_links_before_dropdown": 8,
    "navbar_persistent": ["search-button"],
    "navbar_end": ["theme-switcher"],
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": [],
}
# The left sidebar lists a section's pages: only the sections that have some (the user guide,
# the gallery, the API reference) show it; single pages use the whole width.
html_sidebars = {
    "index": [],
    "getting_started": [],
    "cli": [],
    "distributed": [],
    "plots": [],
    "performance": [],
    "search": [],
    "genindex": [],
}
html_static_path = ["_static"]
html_css_files = ["sparsekernel.css"]
html_show_sourcelink = False


def _skip_request_setters(app, what, name, obj, skip, options):
    """Leave out what scikit-learn defines (``get_params``, ``score``, the generated
    ``set_*_request`` methods of metadata routing): its API, documented there. The methods
    this package defines, inherited from its own mixins (``predict``,
    ``decision_function``, ...), are kept."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    target = getattr(obj, "fget", None) or getattr(obj, "__func__", obj)  # (properties)
    module = getattr(target, "__module__", "") or ""
    if what == "class" and module.startswith("sklearn."):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_request_setters)
