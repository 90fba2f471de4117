"""The interpreter's switch interval, shortened while a search's threads pass the GIL around.

A search's threads (database reader, device stage or device loop, bias-filter pool, traceback
workers) leave the GIL for every compiled call, numpy pass or OpenCL wait and take it back
after; while another thread runs Python, each of them waits up to the switch interval (Python's
default: 5 ms) to get it back. Used by ``clalign sw``'s reporting and by hmmsearch's search.

This module imports only the standard library.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager

#: The switch interval inside :func:`short_switch` (seconds); a longer one already set is kept
#: only if shorter.
SWITCH_INTERVAL = 2e-4


@contextmanager
def short_switch():
    """At most :data:`SWITCH_INTERVAL` as the switch interval inside (restored after)."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, SWITCH_INTERVAL))
    try:
        yield
    finally:
        sys.setswitchinterval(interval)
