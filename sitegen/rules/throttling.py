"""Which of NVML's clock-event reasons count as throttling: a run that saw one is judged throttled."""

from __future__ import annotations

from typing import Any

# NVML clock-event reason bits (nvml.h). Idle and the application-clock setting are the
# normal state of a GPU at rest and not throttling, so they are never reported.
REASONS = {
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
# Reasons that lower clocks below what the protocol assumes: a run that saw one is throttled.
THROTTLING = {"sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"}


def throttled(states: list[dict[str, Any] | None]) -> list[str]:
    """Throttling reasons seen in any of the states, sorted."""
    seen = {r for s in states if s for r in s.get("throttleReasons", [])}
    return sorted(seen & THROTTLING)
