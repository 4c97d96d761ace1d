"""How to cite a record (plain text, BibTeX, CSL-JSON) and the site (CITATION.cff).

The access date is the reader's, not the build's: pages print ACCESS_PLACEHOLDER and the
page script replaces it with the reader's date when they copy the citation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from sitegen.site.labels import run_short_id

ACCESS_PLACEHOLDER = "[access date]"


@dataclass(frozen=True)
class Citation:
    """The three citation forms of one record."""

    text: str
    bibtex: str
    csl_json: str


_BIBTEX = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "%": r"\%", "&": r"\&", "$": r"\$",
    "#": r"\#", "_": r"\_", "^": r"\^{}", "~": r"\~{}",
}


def _bibtex_escape(text: str) -> str:
    return "".join(_BIBTEX.get(char, char) for char in text)


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
        f"  howpublished = {{\\url{{{permalink}}}}},",
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
    return Citation(text, bibtex, json.dumps(csl, indent=2, ensure_ascii=False))


def _yaml_string(text: str) -> str:
    # JSON strings are valid YAML double-quoted scalars.
    return json.dumps(text, ensure_ascii=False)


def citation_cff(*, title: str, base_url: str, repository_url: str, license: str, released: str) -> bytes:
    """A CITATION.cff (Citation File Format 1.2.0) for the whole registry."""
    lines = [
        "cff-version: 1.2.0",
        "message: If you use these benchmark records, please cite the registry and each record's source.",
        "type: dataset",
        f"title: {_yaml_string(title)}",
        "authors:",
        f"  - name: {_yaml_string(title + ' contributors')}",
        f"url: {_yaml_string(base_url)}",
        f"repository: {_yaml_string(repository_url)}",
        f"license: {_yaml_string(license)}",
        f"date-released: {_yaml_string(released)}",
    ]
    return ("\n".join(lines) + "\n").encode()
