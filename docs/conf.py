"""Sphinx configuration of the batchviz documentation site.

Build it with ``make docs``, which runs::

    python -m sphinx -W --keep-going -n -b html docs docs/_build/html

``-W`` turns every warning into an error and ``-n`` (nitpicky) reports every cross-reference
that points nowhere, so a broken link, a bad docstring or a failing example fails the build.

The concept pages are MyST Markdown notebooks: their code cells run at every build
(``nb_execution_mode = "force"``), so each number and picture on them comes from the
batchviz of this checkout. The tutorials and notebooks live outside ``docs/``;
``_ext/collect_sources.py`` brings them in (see that file).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
# the pages' cells run the Python source (what a student reads), compiled or not
os.environ.setdefault("BATCHVIZ_PURE_PYTHON", "1")

import batchviz  # noqa: E402  (after the path set-up, and so that autodoc fails early)

# --- project -----------------------------------------------------------------------------
project = "batchviz"
author = "the batchviz authors"
copyright = "2025, the batchviz authors"
release = version = batchviz.__version__

# --- extensions --------------------------------------------------------------------------
extensions = [
    "myst_nb",               # MyST Markdown + executed notebooks
    "sphinx.ext.autodoc",    # the API reference, from docstrings
    "collect_sources",       # docs/_ext: tutorials/*/README.md and notebooks/*.ipynb
    "mathml",                # docs/_ext: math as MathML, written at build time
]

# tutorials/_overview.md is included by tutorials.md, not a page of its own
exclude_patterns = ["_build", "_ext", "**/.ipynb_checkpoints", ".gitignore",
                    "tutorials/_overview.md"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

# --- MyST and notebook execution ---------------------------------------------------------
myst_enable_extensions = ["colon_fence", "dollarmath", "deflist"]
myst_heading_anchors = 3           # [text](page.md#a-heading) links are checked too

nb_execution_mode = "force"        # run every code cell of the concept pages, every build
nb_execution_raise_on_error = True # a failing example fails the build
nb_execution_timeout = 120         # seconds per cell; the pages use small graphs
# (the failing cell and its traceback are in the crash log Sphinx names; `-T` prints them)
# notebooks/ are executed by their own tests (nbclient) and are stored without outputs;
# they are rendered as they are, unless BATCHVIZ_DOCS_RUN_NOTEBOOKS=1 asks to run them here.
nb_execution_excludepatterns = (
    [] if os.environ.get("BATCHVIZ_DOCS_RUN_NOTEBOOKS") == "1" else ["notebooks/*"]
)
nb_merge_streams = True            # one block per cell for what it prints

# --- autodoc -----------------------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True   # show strategy="agenda", not a repr of the value
# Types from NumPy's own documentation: without network access (no intersphinx) there is
# no page to link them to. Nothing of batchviz's own may be listed here.
nitpick_ignore = [("py:class", "numpy.ndarray"), ("py:class", "numpy.dtype"),
                  ("py:class", "np.ndarray")]

# --- HTML --------------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = f"batchviz {release}"
html_theme_options = {
    "show_toc_level": 2,
    "home_page_in_toc": True,
}
# Math is MathML written into the page (docs/_ext/mathml.py), not MathJax from a CDN: the
# site reads the same offline. Nothing on it loads a script from the network.
html_math_renderer = "mathml"
html_static_path = ["_static"]
html_css_files = ["batchviz.css"]


# --- every build shows the batchviz of this checkout -------------------------------------
def pages_with_code_cells(app, env, added, changed, removed):
    """Re-read every page with code cells on every build, even an incremental one.

    Sphinx re-reads a page only when its own source changed, but these pages' outputs
    depend on batchviz and on ``concepts/pictures.py``: with ``nb_execution_mode = "force"``
    they must be executed again whenever the site is built."""
    return [doc for doc in env.found_docs
            if doc not in added and doc not in changed
            and "{code-cell}" in Path(env.doc2path(doc)).read_text(encoding="utf-8")]


def setup(app):
    app.connect("env-get-outdated", pages_with_code_cells)
