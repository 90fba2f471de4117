"""Per-length terms of HMMER's scores, tabulated once per process.

HMMER's null score and its N/J/C->B costs depend on the target length only, not on the model
(``scale_b`` is the same 3/ln 2 for every profile). A search asks for them per model, for the
database's ~3,000 distinct lengths and for each model's ~10,000 survivors; computed each time
(float32 logs, C rounding: ~10 numpy calls) from the device stage's 8 threads beside pyhmmer's,
they took ~40 thread-seconds of the 1,000-model run on the H100 host (py-spy). A table indexed
by length gives the very values the formula gives, with one gather.
"""
from __future__ import annotations

import threading

import numpy as np


class LengthTable:
    """``fn`` (elementwise over an int array of lengths) as a lookup table for lengths 0 to
    ``limit - 1``, grown on demand in powers of two; other inputs go to ``fn`` itself."""

    def __init__(self, fn, limit: int = 1 << 21, first: int = 1 << 16):
        self.fn, self.limit, self.first = fn, int(limit), int(first)
        self._tab = None
        self._lock = threading.Lock()

    def _table(self, top: int) -> np.ndarray:
        tab = self._tab
        if tab is None or top >= tab.size:
            with self._lock:
                tab = self._tab
                if tab is None or top >= tab.size:
                    n = max(self.first, 1 << int(top).bit_length())
                    with np.errstate(all="ignore"):
                        tab = np.asarray(self.fn(np.arange(n, dtype=np.int64)))
                    tab.setflags(write=False)
                    self._tab = tab
        return tab

    def __call__(self, L):
        L = np.asarray(L)
        if L.dtype.kind not in "iu" or not L.size:
            return self.fn(L)
        lo, hi = int(L.min()), int(L.max())
        if lo < 0 or hi >= self.limit:
            return self.fn(L)
        return self._table(hi)[L]
