"""The ``gallery-figure`` directive: a gallery example's figure on another page.

Usage, in a MyST page::

    ```{gallery-figure} plot_lssvm_sine
    :number: 1
    :alt: The four models on the noisy sine

    The exact LS-SVM and its sparse versions on a noisy sine.
    ```

It shows the image that sphinx-gallery drew when it ran ``examples/plot_lssvm_sine.py``
(``auto_examples/images/sphx_glr_plot_lssvm_sine_001.png``, made at every build, never
committed) with the caption and a link to the example. When the gallery was not run
(``-D plot_gallery=0``) and no earlier image is there, the caption and the link stand alone.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from sphinx import addnodes


class GalleryFigure(Directive):
    required_arguments = 1
    has_content = True
    option_spec = {"number": directives.positive_int, "alt": directives.unchanged,
                   "width": directives.unchanged}

    def run(self):
        env = self.state.document.settings.env
        example = self.arguments[0]
        number = self.options.get("number", 1)
        rel = f"auto_examples/images/sphx_glr_{example}_{number:03d}.png"
        figure = nodes.figure(classes=["guide-figure"])
        if (Path(env.srcdir) / rel).is_file():
            image = nodes.image(uri="/" + rel, alt=self.options.get("alt", example))
            if "width" in self.options:
                image["width"] = self.options["width"]
            figure += image
        caption = nodes.caption()
        self.state.nested_parse(self.content, self.content_offset, caption)
        text = caption.children[0].children if caption.children else []
        caption.children = []
        caption.extend(text)
        ref = addnodes.pending_xref("", refdomain="std", reftype="ref",
                                    reftarget=f"sphx_glr_auto_examples_{example}.py",
                                    refexplicit=True, refwarn=True, refdoc=env.docname)
        ref += nodes.inline(text="gallery example")
        caption += [nodes.Text(" (" if text else ""), ref, nodes.Text(")" if text else "")]
        figure += caption
        return [figure]


def setup(app):
    app.add_directive("gallery-figure", GalleryFigure)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
