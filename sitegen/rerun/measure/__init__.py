"""One measuring process: the clock and its windows, the timed passes, sample statistics, and the GPU's state as NVML sees it."""
