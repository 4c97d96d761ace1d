"""How close a result is to what the memory system allows: bytes moved ÷ time, against a ceiling.

The bytes a pass must move come from the operation's bytesMoved rule (data in the record
format); the ceiling is the copy bandwidth the rerun measured on that GPU when the run
carries one (evidence.details.copyBandwidthGBs), else the vendor's nominal peak from
records/gpus.toml, labelled "nominal".
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.registry.config import Config
from sitegen.format.model.definitions import ELEMENT_BYTES
from sitegen.core import units
from sitegen.facts.runfacts import RunFacts

MEASURED = "measured copy bandwidth"
NOMINAL = "nominal peak"


@dataclass(frozen=True)
class Roofline:
    bytes: int
    achieved_gbs: float
    ceiling_gbs: float | None
    ceiling: str | None
    """MEASURED or NOMINAL."""
    share: float | None
    pass_note: str | None
    """What the implementation does in this pass: why a share can pass 100%."""

    @property
    def over(self) -> bool:
        return self.share is not None and self.share > 1

    def column(self) -> str:
        """The cohort table's "% of roofline" cell."""
        if self.share is None:
            return "—"
        if self.over:
            return "over 100%: see pass note" if self.pass_note else "over 100%: unexplained"
        return f"{self.share * 100:.0f}%" + (" (nominal)" if self.ceiling == NOMINAL else "")

    def sentence(self) -> str:
        """The record page's line."""
        text = f"{gbs_text(self.achieved_gbs)} achieved ({units.byte_size(self.bytes)} moved at the least)"
        if self.share is None:
            return text + "; no bandwidth ceiling is known for this GPU"
        ceiling = f"the {self.ceiling} ({gbs_text(self.ceiling_gbs)})"
        if self.over:
            # A figure above the ceiling only says the pass's work happened elsewhere: no number.
            floor = f"faster than {units.byte_size(self.bytes)} at {ceiling} allows"
            if self.pass_note:
                return f"not meaningful for this pass ({floor}): {self.pass_note}"
            return f"{floor}, and no pass note explains it"
        label = " — nominal, not measured" if self.ceiling == NOMINAL else ""
        return f"{text}; {self.share * 100:.0f}% of {ceiling}{label}"


def gbs_text(gbs: float) -> str:
    return f"{units.significant(gbs / 1000)} TB/s" if gbs >= 1000 else f"{units.significant(gbs)} GB/s"


def element_bytes(facts: RunFacts, element: str) -> int | None:
    if element != "dtype":
        return ELEMENT_BYTES.get(element)
    spec = facts.workload.model.spec
    dtype = spec.dtype
    if dtype is None:
        dtypes = {tensor.dtype for tensor in spec.tensors or []}
        dtype = dtypes.pop() if len(dtypes) == 1 else None
    return ELEMENT_BYTES.get(dtype) if dtype else None


def bytes_moved(facts: RunFacts) -> int | None:
    """The pass's bytes by the operation's rule, or None when the rule or an axis is missing."""
    rule = facts.operation.model.spec.bytesMoved
    terms = getattr(rule, facts.timed_pass, None) if rule else None
    if not terms:
        return None
    axes = facts.workload.model.spec.axes
    total = 0.0
    for term in terms:
        size = element_bytes(facts, term.perElementOf)
        if size is None:
            return None
        product = term.coefficient * size
        for axis in term.axes:
            value = axes.get(axis)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return None
            product *= value
        total += product
    return round(total)


def floor_ns(facts: RunFacts, config: Config) -> float | None:
    """The least time the run's pass could take: its bytes at the copy bandwidth measured with it.

    Only a measured ceiling draws a floor: a nominal peak is no time any kernel was shown to reach.
    """
    moved, copy = bytes_moved(facts), facts.details.get("copyBandwidthGBs")
    if moved is None or facts.unit != "ns" or isinstance(copy, bool) or not isinstance(copy, (int, float)) or copy <= 0:
        return None
    return moved / copy  # bytes / (GB/s) = ns


def roofline(facts: RunFacts, config: Config) -> Roofline | None:
    """The run's roofline figures; None unless it is a timed run of an operation with a bytes rule."""
    if facts.unit != "ns" or not facts.value:
        return None
    moved = bytes_moved(facts)
    if moved is None:
        return None
    achieved = moved / facts.value  # bytes per ns = GB/s
    copy = facts.details.get("copyBandwidthGBs")
    gpu = config.gpus.get(facts.product)
    if isinstance(copy, (int, float)) and not isinstance(copy, bool) and copy > 0:
        ceiling, kind = float(copy), MEASURED
    elif gpu is not None:
        ceiling, kind = gpu.nominal_memory_bandwidth_gbs, NOMINAL
    else:
        ceiling, kind = None, None
    notes = facts.implementation.model.spec.passNotes
    note = getattr(notes, facts.timed_pass, None) if notes and facts.timed_pass in ("forward", "backward", "full") else None
    return Roofline(moved, achieved, ceiling, kind, achieved / ceiling if ceiling else None, note)
