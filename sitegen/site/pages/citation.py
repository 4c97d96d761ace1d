"""How to cite a record (plain text, BibTeX, CSL-JSON) and the site (CITATION.cff).

The access date is the reader's, not the build's: pages print ACCESS_PLACEHOLDER and the
page script replaces it with the reader's date when they copy the citation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from sitegen.site.text.labels import run_short_id

ACCESS_PLACEHOLDER = "[access date]"


@dataclass(frozen=True)
class Citation:
    """The three citation forms of one record."""

    text: str
    bibtex: str
    csl_json: str


# BibTeX counts braces even after a backslash, so "\\}" would still close the field: braces
# become commands whose own braces balance.
_BIBTEX = {
    "\\": r"\textbackslash{}", "{": r"\textbraceleft{}", "}": r"\textbraceright{}", "%": r"\%", "&": r"\&", "$": r"\$",
    "#": r"\#", "_": r"\_", "^": r"\^{}", "~": r"\~{}",
}


# Control characters (a line break, a NUL) have no meaning in a BibTeX value.
_BIBTEX_TABLE = str.maketrans({**{chr(c): " " for c in (*range(32), 127)}, **_BIBTEX})
_URL_TABLE = str.maketrans({char: f"%{ord(char):02X}" for char in ("{", "}", "\\", " ", *map(chr, (*range(32), 127)))})


def _bibtex_escape(text: str) -> str:
    return text.translate(_BIBTEX_TABLE)


def _bibtex_url(url: str) -> str:
    """A URL for ``\\url{…}``: braces, backslashes, spaces and control characters percent-encoded.

    An unbalanced brace would end the field early and let the rest of the URL add fields of
    its own; encoded, the URL still leads to the same place.
    """
    return url.translate(_URL_TABLE)


def cite_run(*, title: str, site_title: str, publisher: str, permalink: str, digest: str, observed: str) -> Citation:
    """Citations of one run; ``observed`` is its YYYY-MM-DD date."""
    year, month, day = (int(part) for part in observed.split("-"))
    # The registry named once when it is also the publisher (its own reruns).
    container = "" if publisher == site_title else f" In {site_title}."
    text = f"{title}. {publisher}, {observed}.{container} {permalink} ({digest}). Accessed {ACCESS_PLACEHOLDER}."
    key = "sitegen-" + run_short_id(digest)
    bibtex = "\n".join([
        f"@misc{{{key},",
        f"  title = {{{_bibtex_escape(title)}}},",
        f"  author = {{{{{_bibtex_escape(publisher)}}}}},",
        f"  year = {{{year}}},",
        f"  howpublished = {{\\url{{{_bibtex_url(permalink)}}}}},",
        f"  note = {{{_bibtex_escape(site_title)}; run digest {digest}; accessed {ACCESS_PLACEHOLDER}}},",
        "}",
    ])
    csl = [{
        "id": key,
        "type": "dataset",
        "title": title,
        "author": [{"literal": publisher}],
        "publisher": site_title,
        "issued": {"date-parts": [[year, month, day]]},
        "URL": permalink,
        "note": f"run digest {digest}",
    }]
    # One line: indented, with each quote escaped for HTML, it was 1.9 KB of every record page (issue 49).
    return Citation(text, bibtex, json.dumps(csl, ensure_ascii=False))


def citation_cff(*, title: str, base_url: str, repository_url: str, license: str, released: str) -> bytes:
    """A CITATION.cff (Citation File Format 1.2.0) for the whole registry, written by a YAML emitter."""
    import yaml

    document = {
        "cff-version": "1.2.0",
        "message": "If you use these benchmark records, please cite the registry and each record's source.",
        "type": "dataset",
        "title": title,
        "authors": [{"name": title + " contributors"}],
        "url": base_url,
        "repository": repository_url,
        "license": license,
        "date-released": released,
    }
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=1 << 20).encode()
