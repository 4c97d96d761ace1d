"""A page per measurement protocol: every field of it, and its long texts ("What is timed") in sentences.

A record page lists its protocol's short fields; a text over LONG characters (the bundled
rerun protocol's is 796 words) would be one wall of a table cell there, so the record
page links here instead, where it reads as paragraphs, one per sentence, and a sentence
that is a list of clauses ("forward = …; backward = …") as a list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sitegen.site.text import field_labels as F
from sitegen.facts.index import Index
from sitegen.site.text.labels import Row

LONG = 300
"""Characters of text a record page's table cell shows; a longer text goes to the protocol page."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


@dataclass(frozen=True)
class Paragraph:
    lead: str
    """The sentence, or its part before a list of clauses."""
    items: list[str]
    """The clauses of a sentence made of three or more parts separated by semicolons."""


@dataclass(frozen=True)
class LongText:
    label: str
    paragraphs: list[Paragraph]


@dataclass(frozen=True)
class ProtocolPage:
    path: str
    title: str
    name: str
    rows: list[Row]
    texts: list[LongText]


def protocol_path(name: str) -> str:
    return f"protocols/{name}/index.html"


def is_long(value) -> bool:
    return isinstance(value, str) and len(value) > LONG


def _clauses(sentence: str) -> list[str]:
    """The sentence split at "; " outside parentheses (a clause inside them belongs to its aside)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(sentence):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(char, 0)
        if char == ";" and depth == 0 and sentence[i + 1:i + 2] == " ":
            parts.append(sentence[start:i].strip())
            start = i + 2
    return parts + [sentence[start:].strip()]


def _paragraph(sentence: str) -> Paragraph:
    parts = _clauses(sentence)
    if len(parts) < 3:
        return Paragraph(sentence, [])
    head, colon, first = parts[0].partition(": ")
    if colon and len(head) < 40:
        return Paragraph(head + ":", [first, *parts[1:]])
    return Paragraph("", parts)


def sentences(text: str) -> list[Paragraph]:
    """The text as paragraphs of one sentence each; a sentence of 3+ clauses as a list."""
    return [_paragraph(s.strip()) for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def protocol_pages(index: Index) -> list[ProtocolPage]:
    pages = []
    for record in sorted(index.registry.of_kind("BenchmarkProtocol"), key=lambda r: r.name):
        rows, texts = [], []
        for key, value in F.leaves(record.raw["spec"]):
            if is_long(value):
                texts.append(LongText(F.label(key), sentences(value)))
            else:
                rows.append(Row(F.label(key), F.value(key, value)))
        harness = record.model.spec.harness.name
        pages.append(ProtocolPage(protocol_path(record.name), f"Protocol {record.name} ({harness})", record.name, rows, texts))
    return pages
