"""One measuring process: the clock and its windows, the timed passes (their statistics: sitegen.rules.stats), and the GPU's state as NVML sees it."""
