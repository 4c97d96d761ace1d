"""Markdown written by people (notes, site pages, operation descriptions) → safe HTML.

Markdown goes through Python-Markdown (the renderer the design names; it passes raw HTML
and javascript: links through), then nh3 (an allow-list sanitizer) removes every tag and
attribute not listed below and every link whose scheme is not http or https. Sanitizing
the final HTML, rather than trusting the Markdown renderer, also catches links and tags
spelled as raw HTML.
"""

from __future__ import annotations

import re

ALLOWED_TAGS = {
    "p", "br", "hr", "a", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li",
    "h2", "h3", "h4", "table", "thead", "tbody", "tr", "th", "td",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "th": {"scope"}, "ol": {"start"}}


def render_markdown(text: str, *, top_heading: int = 4) -> str:
    """Markdown → sanitized HTML: safe tags only, links only http/https.

    Headings shift so the source's first level becomes ``top_heading`` (never past h4):
    a note's own title is an h3 under the page's h2 "Replications and notes", and a site
    page's title is its h1, and heading levels must not skip.
    """
    import markdown
    import nh3

    # "tables" and "fenced_code": the GitHub-style Markdown people write in notes.
    html = markdown.markdown(text, extensions=["tables", "fenced_code"], output_format="html")
    html = re.sub(r"<(/?)h([1-6])\b", lambda m: f"<{m.group(1)}h{min(int(m.group(2)) + top_heading - 1, 4)}", html)
    clean = nh3.clean(
        html, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, url_schemes={"http", "https"},
        link_rel="nofollow noopener noreferrer",
    )
    # A link whose target nh3 removed (javascript:, data:) is left as its plain text.
    return re.sub(r'<a rel="nofollow noopener noreferrer">(.*?)</a>', r"\1", clean, flags=re.S).strip()
