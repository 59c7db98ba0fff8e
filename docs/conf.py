"""Sphinx configuration of the temporal_xmodal documentation.

Build (warnings are errors)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The Markdown user guide is read by MyST; the API reference (``api.rst``) uses
explicit autodoc directives, so the build writes nothing into ``docs/`` except
under ``docs/_build``.
"""

import os
import re
import sys

# Document the checkout even when the package is not installed.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

import temporal_xmodal  # noqa: E402

project = "temporal_xmodal"
author = "temporal_xmodal developers"
copyright = "temporal_xmodal developers"  # noqa: A001
version = release = temporal_xmodal.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx.ext.mathjax",
    "matplotlib.sphinxext.plot_directive",
]
# figures drawn at build time (docs/pipelines.md) are rendered once, as PNG only
plot_formats = [("png", 100)]
plot_html_show_formats = False
plot_html_show_source_link = False

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = []

# -- MyST (Markdown pages) ----------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "deflist"]
# GitHub-style anchors for headings down to ###, so that [text](page.md#section) works.
myst_heading_anchors = 3

# -- autodoc / autosummary ----------------------------------------------------
# The API page lists objects with autosummary tables *without* :toctree:, so no
# stub files are generated; every object is documented by an explicit autodoc
# directive on the same page.
autosummary_generate = False
autodoc_default_options = {
    "members": True,
    "member-order": "bysource",
    "show-inheritance": True,
}
autodoc_typehints = "none"
autodoc_inherit_docstrings = True
autoclass_content = "class"

# -- numpydoc (NumPy-style docstrings) -----------------------------------------
# No per-class member tables (autodoc documents the members) and no
# cross-referencing of parameter types (that would need intersphinx).
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- HTML ---------------------------------------------------------------------
html_theme = "alabaster"
html_title = f"temporal_xmodal {release}"
html_static_path = []
html_theme_options = {
    "description": "Cross-modal image + text embeddings over time",
    "page_width": "1200px",
    "sidebar_width": "240px",
}

# No intersphinx: the build must work offline.


def _skip_foreign_inherited(app, what, name, obj, skip, options):
    """Skip members that a class inherits from outside this package.

    The estimators document their inherited ``fit`` / ``transform`` / ...
    (from :class:`temporal_xmodal.CrossModalEmbedder`), but not scikit-learn's
    ``get_params`` / ``set_output`` / metadata-routing helpers, whose docstrings
    refer to labels of the scikit-learn site.
    """
    if what != "class" or skip:
        return None
    target = getattr(obj, "fget", obj)  # properties
    target = getattr(target, "__func__", target)  # class/static methods
    module = getattr(target, "__module__", None)
    if isinstance(module, str) and not module.startswith("temporal_xmodal"):
        return True
    return None


# A numpydoc parameter line once rendered: ``**name** : type``.
_PARAM_LINE = re.compile(r"^(\s*\*\*.+?\*\* : )(.*)$")
# A trailing underscore closing a word: ``n_features_in_)``.  reST reads
# ``word_`` as a hyperlink reference, so escape it.
_TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?=[\s,)\]}]|$)")


def _escape_type_underscores(app, what, name, obj, options, lines):
    """Escape fitted-attribute names in parameter types.

    Types such as ``ndarray of shape (n_samples, n_features_in_)`` are emitted
    verbatim by numpydoc; runs after numpydoc (priority 600).
    """
    for i, line in enumerate(lines):
        match = _PARAM_LINE.match(line)
        if match:
            lines[i] = match.group(1) + _TRAILING_UNDERSCORE.sub(r"\\_", match.group(2))


#: Placeholders of ``api.rst`` that the registry of estimators fills in, so that registering
#: an estimator documents it (docs/adding_an_estimator.md): a line of each autosummary table
#: per estimator, and one ``autoclass`` directive each.
REGISTERED_SUMMARY = "   {registered estimators}\n"
REGISTERED_SUMMARY_TOP = "   {registered estimators, from the top level}\n"
REGISTERED_CLASSES = "{autoclass of each registered estimator}\n"


def expand_registered_estimators(text):
    """``api.rst`` with its placeholders replaced by the registered estimators."""
    from temporal_xmodal.estimators import all_estimators

    names = [entry.estimator.__name__ for entry in all_estimators()]
    text = text.replace(REGISTERED_SUMMARY_TOP, "".join(f"   ~estimators.{n}\n" for n in names))
    text = text.replace(REGISTERED_SUMMARY, "".join(f"   {n}\n" for n in names))
    return text.replace(REGISTERED_CLASSES, "".join(
        f".. autoclass:: {n}\n   :inherited-members: BaseEstimator, TransformerMixin\n\n"
        for n in names))


def _expand_api_page(app, docname, source):
    if docname == "api":
        source[0] = expand_registered_estimators(source[0])


def _compile_numpydoc_template_once():
    """numpydoc builds a jinja2 environment and compiles its docstring template anew for
    every docstring and signature it renders (``docscrape_sphinx.get_doc_object``, about a
    thousand calls here, a tenth of the build); keep each compiled template, by name and
    search path, for the calls after the first.  The rendered docstrings are the same."""
    from numpydoc import docscrape_sphinx

    environment = docscrape_sphinx.SandboxedEnvironment
    if getattr(environment, "compiles_once", False):  # a second build in this process
        return
    compiled = {}

    class CompiledOnce(environment):
        compiles_once = True

        def get_template(self, name, *args, **kwargs):
            paths = (getattr(self.loader, "pathchain", None)
                     or getattr(self.loader, "searchpath", None))
            if paths is None or args or kwargs:
                return super().get_template(name, *args, **kwargs)
            key = (type(self.loader), name, tuple(map(str, paths)))
            if key not in compiled:
                compiled[key] = super().get_template(name)
            return compiled[key]

    docscrape_sphinx.SandboxedEnvironment = CompiledOnce


def setup(app):
    _compile_numpydoc_template_once()
    app.connect("source-read", _expand_api_page)
    app.connect("autodoc-skip-member", _skip_foreign_inherited)
    app.connect("autodoc-process-docstring", _escape_type_underscores, priority=600)
