"""A controllable clock for tests of the harness's timing logic (issue 30: no flaky timings).

sitegen.rerun.measure.clock's Clock reads the host clock on a CPU (time.perf_counter_ns), and
sitegen.rerun.measure.timing's sampling loop reads time.perf_counter and time.monotonic. VirtualTime
stands in for the `time` module in both, and in the test module: time passes only when
something calls sleep(), by exactly that much. A fake pass that "takes 1 ms" then takes
exactly 1 ms, whatever else the machine is doing, and each test asserts exact figures.
"""

from __future__ import annotations


class VirtualTime:
    def __init__(self) -> None:
        self.ns = 0

    def sleep(self, seconds: float) -> None:
        self.ns += round(seconds * 1e9)

    def perf_counter_ns(self) -> int:
        return self.ns

    def monotonic_ns(self) -> int:
        return self.ns

    def perf_counter(self) -> float:
        return self.ns / 1e9

    def monotonic(self) -> float:
        return self.ns / 1e9
