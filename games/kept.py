"""A bounded map of things worked out once and kept in this process (a drawn board, a
log's lines, an event's sentence, a rendered form): the one home of the keeping, so that
each cache says only what it keeps and by which key.

The least recently used entry goes first when `size` is passed. Safe across threads (a
web process may serve requests on several): a thing is made outside the lock, so two
threads may make the same one at once, and the second simply stores it again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, ValuesView
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Kept(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The thing kept by `key`, or `make()`'s, then kept."""
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found
        made = make()
        with self._lock:
            self._items[key] = made
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return made

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)

    def values(self) -> ValuesView[V]:
        return self._items.values()
