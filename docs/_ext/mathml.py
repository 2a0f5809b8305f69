"""Math written into the pages as MathML when the site is built: no script, no network.

Sphinx's default math renderer, MathJax, is a script that the reader's browser loads from
a CDN and that typesets the TeX on the page; opened without a network (a laptop on a
train, a course machine behind a firewall) the page shows raw TeX instead. Browsers draw
MathML themselves (Chromium and Edge since 109, Firefox, Safari), so this extension
converts each formula's TeX to MathML at build time with ``latex2mathml`` and the page
needs nothing else. ``conf.py`` selects it with ``html_math_renderer = "mathml"``.

A formula that ``latex2mathml`` cannot convert is a build warning (an error under ``-W``)
naming the formula, and the page shows its TeX as code.
"""
from __future__ import annotations

from html import escape

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.util import logging

logger = logging.getLogger(__name__)


def to_mathml(node, latex: str, display: str) -> str:
    """``latex`` as a ``<math>`` element, or as code after a warning if it cannot be."""
    try:
        return convert(latex, display=display)
    except Exception as error:  # latex2mathml raises its own types and plain ones
        logger.warning("cannot write this formula as MathML: %r (%s)", latex, error,
                       location=node)
        return f'<code class="math-tex">{escape(latex)}</code>'


def visit_inline_math(self, node) -> None:
    self.body.append(to_mathml(node, node.astext(), "inline"))
    raise nodes.SkipNode


def visit_display_math(self, node) -> None:
    """A display formula in a ``div.math``; a numbered one gets its number, as Sphinx's
    other renderers give it."""
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node.get("number"):
        self.body.append(f'<span class="eqno">({node["number"]})</span>')
    self.body.append(to_mathml(node, node.astext(), "block"))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", inline_renderers=(visit_inline_math, None),
                               block_renderers=(visit_display_math, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
