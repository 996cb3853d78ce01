"""A bounded mapping for ``tapegrad.function``'s caches: least recently used entries go first.

A function called with ever new shapes (or Python values) would otherwise keep one traced,
optimised and compiled program per call signature for as long as it lives. The bound is
``tapegrad.config.function_cache_size()``, read at every insertion, so changing it applies
to the next new entry.
"""
from collections import OrderedDict

from tapegrad import config


class LRU(OrderedDict):
    """An ``OrderedDict`` that keeps at most ``bound()`` entries; ``get`` and assignment mark
    an entry as the most recently used, and ``on_evict(key, value)`` hears of each eviction.

    >>> from tapegrad.compile.lru import LRU
    >>> c = LRU(lambda: 2)
    >>> c["a"], c["b"] = 1, 2
    >>> _ = c.get("a"); c["c"] = 3
    >>> list(c)
    ['a', 'c']
    """

    def __init__(self, bound=config.function_cache_size, on_evict=None):
        super().__init__()
        self._limit, self._on_evict = bound, on_evict

    def get(self, key, default=None):
        try:
            value = self[key]
        except KeyError:
            return default
        self.move_to_end(key)
        return value

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self.move_to_end(key)
        limit = max(1, self._limit())
        while len(self) > limit:
            old, v = self.popitem(last=False)
            if self._on_evict is not None:
                self._on_evict(old, v)
