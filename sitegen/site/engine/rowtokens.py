"""A short digest of each run's row in the listing tables, kept between builds per page group.

A listing page (an implementation's or a GPU's runs, 250 to a page) is rendered again
only when its key changes (sitegen.site.engine.rendermemo), and the key covers each row by its
token: sha256 over the row as the page's JSON twin holds it and the exact value the
table's value columns are made from (sitegen.site.pages.value_columns). Making every run's row
only to learn that the page had not changed was most of the listing pages' time after a
one-run edit. A row shows a part of what its run's record page shows, so it is a
function of the run's group key (sitegen.site.engine.reuse), like the page: the token of a run
whose group key is unchanged is the one the previous build computed.

Tokens are kept in the build state's row_tokens (sitegen.state.store), by group key; a
build forgets the groups it no longer has. ``build --full`` neither reads nor writes them
and computes every token, which gives the very same keys.
"""

from __future__ import annotations

import hashlib

from sitegen.state.store import BuildState
from sitegen.site.text.jsonout import to_json
from sitegen.site.engine.reuse import group_of


def row_token(facts, row) -> str:
    """What a listing page shows of ``facts``: its row (``row(facts)``), and the value its value-column cell is made from."""
    made = hashlib.sha256(to_json(row(facts)))
    made.update(repr((facts.metric, facts.statistic, facts.unit, facts.value)).encode())
    return made.hexdigest()[:32]


class RowTokens:
    """Each run's row token: from the previous build where the run's group key is unchanged, else made.

    ``row``: the listing row of a run (sitegen.site.pages.listings.run_row), handed in so that the
    engine never imports the page models above it."""

    def __init__(self, state: BuildState, keys: dict[str, str], row):
        self.keys = keys
        self.row = row
        self.state = state if state.usable else None
        self.stored: dict[str, dict[str, str]] = {} if self.state is None else self.state.row_tokens()
        self.previous = {key: self.stored.get(key, {}) for key in set(keys.values())}
        self.known: dict[str, dict[str, str]] = {key: {} for key in keys.values()}
        self.made: set[str] = set()
        self._tokens: dict[str, str] = {}

    def token(self, facts) -> str:
        name = facts.name
        found = self._tokens.get(name)
        if found is not None:
            return found
        group = group_of(self.keys, facts.operation.name)
        key = None if group is None else self.keys[group]
        found = None if key is None else self.previous.get(key, {}).get(name)
        if found is None:
            found = row_token(facts, self.row)
            if key is not None:
                self.made.add(key)
        if key is not None:
            self.known[key][name] = found
        self._tokens[name] = found
        return found

    def save(self) -> None:
        """Keep the tokens of this build's groups; forget those of groups it no longer has."""
        if self.state is not None:
            self.state.put_row_tokens({key: {**self.previous.get(key, {}), **self.known[key]} for key in self.made},
                                      self.stored.keys() - set(self.keys.values()))
