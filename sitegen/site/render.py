"""Page models → HTML with one Jinja environment (autoescape on, undefined names are errors).

Templates ship as package data of ``sitegen.templates``, so an installed sitegen finds
them anywhere; they are read once per build.
"""

from __future__ import annotations

import hashlib
from importlib import resources

from jinja2 import DictLoader, Environment, StrictUndefined
from markupsafe import Markup, escape

from sitegen.site.pages.value_columns import value_columns

PACKAGE = "sitegen.templates"
STATIC = ("style.css", "site.js", "favicon.svg", "compare-rules.js", "compare.js", "compare-picker.js")


def _read_templates() -> dict[str, str]:
    folder = resources.files(PACKAGE)
    return {
        item.name: item.read_text(encoding="utf-8")
        for item in folder.iterdir() if item.name.endswith(".html")
    }


_OPTIONS = dict(autoescape=True, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def _compiled():
    """Templates compiled once per machine, not per build (a quarter of a second of every build that renders):
    Jinja's own cache of compiled templates, in the user's cache folder, keyed by each template's source."""
    from jinja2 import FileSystemBytecodeCache

    from sitegen.state.store import cache_base

    # The source is the key Jinja checks; the options it compiles with are in the folder's name.
    folder = cache_base() / "templates" / hashlib.sha256(repr(_OPTIONS).encode()).hexdigest()[:16]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return FileSystemBytecodeCache(str(folder))


def static_files() -> dict[str, bytes]:
    """The stylesheet and the page script, copied verbatim into the site."""
    folder = resources.files(PACKAGE)
    return {name: (folder / name).read_bytes() for name in STATIC}


def runs_count(count: int) -> str:
    """``1 run``, ``2 runs``: a count of runs as a page writes it."""
    return f"{count:,} run" if count == 1 else f"{count:,} runs"


def break_after_underscores(text: str) -> Markup:
    """``text`` escaped, with a line-break opportunity after each underscore of a check name
    (``repeated_<wbr>input``), so a narrow cell breaks there and never inside a word."""
    return Markup(str(escape(text)).replace("_", "_<wbr>"))


def text_node(text: str) -> Markup:
    """``text`` escaped for an element's content only (&, <, >): quotes need no escape there, and
    JSON's every quote as &#34; was a third of a record's CSL-JSON block."""
    return Markup(str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


class Renderer:
    """Renders page models; ``root`` turns site-root-relative hrefs into relative ones."""

    def __init__(self, site_title: str, nav: list[tuple[str, str]] = (), search: bool = False, runs_by_path=None):
        self.env = Environment(loader=DictLoader(_read_templates()), undefined=StrictUndefined, bytecode_cache=_compiled(),
                               **_OPTIONS)
        self.site_title = site_title
        self.nav = list(nav)
        """(text, site path) of the registry's own pages (About, How ranks work), linked from every page."""
        self.search = search
        """Whether Pagefind runs on this build: only then do pages load its search box."""
        runs_by_path = runs_by_path or {}
        # Run tables look their rows' runs up by page path, to give each metric a column
        # in one unit (sitegen.site.pages.value_columns); the row models carry display text only.
        self.env.globals["value_columns"] = lambda rows: value_columns([runs_by_path.get(r.run.href) for r in rows])
        self.env.filters["runs"] = runs_count
        self.env.filters["break_after_underscores"] = break_after_underscores
        self.env.filters["text_node"] = text_node

    def render(self, template: str, page, **extra) -> bytes:
        """``extra``: more template names, e.g. charts drawn beside a page model it does not hold."""
        root = "../" * page.path.count("/")

        def url(href: str) -> str:
            if href.startswith(("http://", "https://", "#")):
                return href
            return root + href

        html = self.env.get_template(template).render(
            page=page, root=root, url=url, site_title=self.site_title, nav_pages=self.nav, search=self.search,
            **{"feed": None, "description": None, "sweep_charts": [], "where": None, **extra},
        )
        return html.encode("utf-8")
