"""Text and attribute values for every XML output: Atom feeds, sitemaps, SVG charts and badges.

XML 1.0 forbids most C0 control characters (all but tab, line feed and carriage return),
lone surrogates and U+FFFE/U+FFFF, even escaped: one in a GPU product or a site title
makes a whole feed unreadable to every feed reader. They are replaced here with U+FFFD
rather than refused when records are validated: a Reported record keeps its source's
text exactly as published (its JSON twin and catalog still carry it), the characters are
harmless in HTML and JSON, and one place for every XML writer is a rule that no new output
can forget, where a check at validation would have to cover every string field of every
model and of sitegen.toml.
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
REPLACEMENT = "\ufffd"


def allowed(value: str) -> str:
    """``value`` with every character XML 1.0 forbids replaced by U+FFFD."""
    return _FORBIDDEN.sub(REPLACEMENT, value)


_QUOTES = {'"': "&quot;", "'": "&#x27;"}


def text(value: str, *, quotes: bool = False) -> str:
    """Character data: allowed characters, with &, < and > escaped (and quotes, as html.escape does,
    for SVG inlined in a page, escaped like the page's other text)."""
    return escape(allowed(value), _QUOTES if quotes else {})


def attr(value: str) -> str:
    """A quoted attribute value, quotes included."""
    return quoteattr(allowed(value))
