"""The checks' secret draws (gate seeds, the timed check's picks and projections), through the
operating system's generator as it was when this module was imported, before any implementation:
an implementation that replaces secrets.randbits, random's _urandom or SystemRandom changes
nothing drawn here (issue 43), and the guard sees the replacement (clock_intact)."""

from __future__ import annotations

import os


def randbits(k: int, _urandom=os.urandom) -> int:
    """k secret random bits, as secrets.randbits."""
    n = (k + 7) // 8
    return int.from_bytes(_urandom(n), "big") >> (8 * n - k)


def uniform(_randbits=randbits) -> float:
    """A secret float in [0, 1), as random.SystemRandom().random()."""
    return _randbits(53) * 2.0 ** -53
