"""README badges: one SVG per implementation, a row per operation × GPU it ranks on, each row its best rank.

One SVG per operation × GPU was 7,144 files for the bundled registry (issue 49), 4.3 per
implementation. Each row of the SVG links the table that ranks it where the SVG is opened
itself; embedded with <img>, as README snippets embed it, links in it do nothing, so the snippet
links the implementation's page, which lists every row as a link to its table.

The rank is read from the index's run facts (``RunFacts.rank`` and ``cohort``), the same
data the operation pages rank by, so a change to the ranking rules reaches the badges too.
The full pass leads (it is the headline ranking of training operations), then the best
rank, then dtype and workload for a stable choice.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from sitegen.site.text.xmltext import attr as quoteattr
from sitegen.site.text.xmltext import text as escape

from sitegen.site.text import labels as L
from sitegen.site.pages.placement import cohort_href
from sitegen.facts.index import Index, RunFacts

LABEL = "sitegen"
_CHAR_PX = 6.6  # average advance of an 11 px sans-serif glyph; badges are estimates, as shields.io's are


@dataclass(frozen=True)
class Badge:
    path: str
    text: str
    cohort_url: str


def badge_path(implementation: str) -> str:
    return f"badges/{implementation}/badges.svg"


def _gpu_short(product: str) -> str:
    return product.removeprefix("NVIDIA ").removeprefix("GeForce ").strip() or product


def _choice(facts: RunFacts) -> tuple:
    axes = tuple(str(v) for v in facts.workload.model.spec.axes.values())
    return (facts.timed_pass != "full", facts.rank, L.dtype_label(facts.workload) or "", axes, facts.cohort)


def badges(index: Index) -> list[Badge]:
    best: dict[tuple[str, str, str], RunFacts] = {}
    grouped: dict[tuple[str, str, str], list[RunFacts]] = defaultdict(list)
    for f in index.runs:
        # Representatives only: a badge states its implementation's rank, never a second run's; and never
        # a rank that a faster run set aside (noisy or flagged) undercuts: a badge has no room to say so.
        if f.holds_rank and not f.faster_set_aside:
            grouped[(f.implementation.name, f.operation.name, f.gpu_slug)].append(f)
    for key, runs in grouped.items():
        # _choice's labels only for the runs that tie on its first fields: the same minimum,
        # without formatting a dtype and axes for each of 60,000 runs.
        lead = min((f.timed_pass != "full", f.rank) for f in runs)
        best[key] = min((f for f in runs if (f.timed_pass != "full", f.rank) == lead), key=_choice)
    base = index.config.site.base_url if index.config.site.base_url.endswith("/") else index.config.site.base_url + "/"
    out = []
    for (impl, op, slug), f in sorted(best.items()):
        dtype = L.dtype_label(f.workload)
        text = " · ".join([op, _gpu_short(f.product), f"#{f.rank_label.lstrip('#')} {f.timed_pass}" + (f" {dtype}" if dtype else "")])
        url = base + cohort_href(f, index)
        out.append(Badge(badge_path(impl), text, url))
    return out


def badge_svg(rows: list[Badge]) -> bytes:
    """One implementation's badges, one 20 px row each, in ``rows``' order, each row linking its table."""
    left = round(len(LABEL) * _CHAR_PX + 12)
    right = max(round(len(b.text) * _CHAR_PX + 12) for b in rows)
    width, height = left + right, 20 * len(rows)
    title = f"{LABEL} · " + "; ".join(b.text for b in rows)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" aria-label={quoteattr(title)}>',
             f"<title>{escape(title)}</title>",
             '<g fill="#fff" font-family="Verdana, DejaVu Sans, sans-serif" font-size="11">']
    for i, badge in enumerate(rows):
        y = 20 * i
        parts += [f"<a href={quoteattr(badge.cohort_url)}>",
                  f'<rect y="{y}" width="{left}" height="20" fill="#555"/><rect x="{left}" y="{y}" width="{right}" height="20" fill="#0072b2"/>',
                  f'<text x="6" y="{y + 14}">{LABEL}</text><text x="{left + 6}" y="{y + 14}">{escape(badge.text)}</text></a>']
    parts.append("</g></svg>\n")
    return "".join(parts).encode()
