"""Cohort rankings kept between builds, so a rebuild ranks again only the cohorts that changed.

Ranking every cohort (bootstrap intervals, representatives, neighbour tests) took 1.4 s
of the 4.8 s that indexing a 60,000-run registry took after a one-run edit.
ranking.rank_cohort reads, of each member, its run document, the protocol and the
implementation that document references by digest, its name (order and ties), its
evidence level and the reasons it holds no place; the members come in the order build_index
sorted them. So a ranking is named by a key over sitegen's code and each member's (digest,
name, level, reasons), in order:
the same key, the same ranks, intervals and reasons.

What a ranking sets on its members is kept by key in the build state's rankings
(sitegen.state.store); a build keeps only the keys it used. An entry that does not parse,
or names other members, is no cache: the cohort is ranked again. ``build --full`` neither
reads nor writes it.
"""

from __future__ import annotations

import hashlib
import json

from sitegen.state.store import BuildState
from sitegen.state.codeversion import code_version
from sitegen.facts.ranking import rank_cohort
from sitegen.facts.runfacts import Interval

def cohort_key(members) -> str:
    made = hashlib.sha256(code_version().encode())
    for f in members:
        # The reasons too: whether a run holds a place, and may count as set aside, follows from
        # them, and they change with the trust list where the level does not (a flagged rerun whose
        # key stops being trusted stays Reproducible).
        made.update(f"\0{f.digest}\0{f.name}\0{f.level}\0{chr(1).join(f.reasons)}".encode())
    return made.hexdigest()


def _outcome(f) -> list:
    """What rank_cohort set on ``f``, other runs by name."""
    interval = None if f.interval is None else [f.interval.low, f.interval.high, f.interval.method]
    return [interval, f.noisy, None if f.representative is None else f.representative.name, [o.name for o in f.also],
            f.rank, f.rank_label, f.interval_note, f.rank_reason, None if f.leader is None else f.leader.name,
            None if f.leader_ratio is None else list(f.leader_ratio), f.faster_set_aside]


def _apply(members, stored: str) -> bool:
    """Set each member's ranking from the ``stored`` outcomes; False (nothing set) when they do not fit these members."""
    by_name = {f.name: f for f in members}
    try:
        outcomes = json.loads(stored)
    except ValueError:
        return False
    if not isinstance(outcomes, dict) or outcomes.keys() != by_name.keys():
        return False
    try:
        parsed = []
        for f in members:
            interval, noisy, representative, also, rank, label, note, reason, leader, ratio, aside = outcomes[f.name]
            parsed.append((f, None if interval is None else Interval(float(interval[0]), float(interval[1]), str(interval[2])),
                           noisy, None if representative is None else by_name[representative], [by_name[o] for o in also],
                           rank, label, note, reason, None if leader is None else by_name[leader],
                           None if ratio is None else (float(ratio[0]), float(ratio[1]), str(ratio[2])), [str(a) for a in aside]))
    except (TypeError, ValueError, KeyError, IndexError):
        return False
    for f, interval, noisy, representative, also, rank, label, note, reason, leader, ratio, aside in parsed:
        f.interval, f.noisy, f.representative, f.also = interval, noisy, representative, also
        f.rank, f.rank_label, f.interval_note, f.rank_reason, f.leader, f.leader_ratio = rank, label, note, reason, leader, ratio
        f.faster_set_aside = aside
    return True


class Rankings:
    """rank_cohort, taking the outcome of a cohort whose key an earlier build ranked from the build state."""

    def __init__(self, state: BuildState):
        self.state = state if state.usable else None
        self.previous: dict[str, str] = {} if self.state is None else self.state.rankings()
        self.used: set[str] = set()
        self.changed: dict[str, str] = {}
        """Cohorts ranked in this build, which save stores: a damaged entry is ranked again under the
        key it had, so the keys alone would not show the change."""

    def rank(self, members) -> None:
        if self.state is None:
            rank_cohort(members)
            return
        key = cohort_key(members)
        self.used.add(key)
        known = self.previous.get(key)
        if known is None or not _apply(members, known):
            rank_cohort(members)
            self.changed[key] = json.dumps({f.name: _outcome(f) for f in members})

    def save(self) -> None:
        """Keep the outcomes of this build's cohorts; forget those of keys it no longer has."""
        if self.state is not None:
            self.state.put_rankings(self.changed, self.previous.keys() - self.used)
