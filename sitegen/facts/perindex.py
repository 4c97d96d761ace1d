"""A value computed once from an Index and kept exactly as long as that Index lives."""

from __future__ import annotations

import functools
import weakref
from typing import Callable, TypeVar

T = TypeVar("T")


def per_index(make: Callable) -> Callable:
    """``make(index)``, memoised by the index's identity and dropped when the index is collected
    (an Index is a mutable dataclass, so it cannot key a WeakKeyDictionary)."""
    cache: dict[int, object] = {}

    @functools.wraps(make)
    def get(index):
        found = cache.get(id(index))
        if found is None:
            found = cache[id(index)] = make(index)
            weakref.finalize(index, cache.pop, id(index), None)
        return found

    get.cache = cache  # what is held, by index id: tests check that no index outlives its build
    return get
