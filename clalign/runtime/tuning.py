"""Tuning table: per kernel family, values looked up vendor -> architecture -> device -> default.

Entries hold only parameters that measurements justified; each carries where the numbers came
from (see docs/PERFORMANCE.md). Engines call :func:`lookup` between the device-derived values
and the user's override (:func:`clalign.runtime.params.choose`).
"""
from __future__ import annotations

# family -> list of (matcher, values). The first matching entry per level wins and entries
# are merged from the general to the specific: default, vendor, architecture, device name.
# A matcher is a dict of Capabilities fields that must be equal (``cc_min`` compares the
# NVIDIA compute capability).
TABLE: dict = {}


def register(family: str, entries: list) -> None:
    """Add a family's entries (called by each engine's module at import time)."""
    TABLE.setdefault(family, []).extend(entries)


def _matches(match: dict, caps) -> bool:
    for k, v in match.items():
        if k == "cc_min":
            if caps.compute_capability is None or tuple(caps.compute_capability) < tuple(v):
                return False
        elif k == "name_contains":
            if v.lower() not in caps.name.lower():
                return False
        elif getattr(caps, k) != v:
            return False
    return True


def lookup(family: str, caps) -> dict:
    """Merged tuned values for ``family`` on a device; entries later in the list win."""
    out: dict = {}
    for match, values in TABLE.get(family, []):
        if _matches(match, caps):
            out.update(values)
    return out
