"""hmmsearch's thresholds and settings: declared once (defaults, ranges, meaning), validated once.

:class:`SearchOptions` is what :func:`clalign.hmm.search.hmmsearch`, the CLI and the report
share; the CLI's click types (:data:`CLICK_TYPES`) apply the same rules while parsing, so a bad
value is a one-line usage error naming the option (exit 2) before any file is read.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields
from typing import Optional

import click

from ..errors import ParameterError

#: option -> (CLI spelling, rule in words, test). Values must be real numbers (no NaN).
_RULES = {
    "E": ("-E", "a finite number > 0", lambda v: math.isfinite(v) and v > 0),
    "domE": ("--domE", "a finite number > 0", lambda v: math.isfinite(v) and v > 0),
    "incE": ("--incE", "a finite number > 0", lambda v: math.isfinite(v) and v > 0),
    "incdomE": ("--incdomE", "a finite number > 0", lambda v: math.isfinite(v) and v > 0),
    "F1": ("--F1", "in (0, 1]", lambda v: 0.0 < v <= 1.0),
    "Z": ("-Z", "a finite number > 0", lambda v: math.isfinite(v) and v > 0),
    "cpus": ("--cpu", "an integer >= 0 (0: all cores)", lambda v: v >= 0),
}


def problem(name: str, value) -> Optional[str]:
    """``"must be <rule>, not <value>"`` when ``value`` breaks option ``name``'s rule, else None."""
    _, rule, ok = _RULES[name]
    try:
        good = bool(ok(value))
    except TypeError:
        good = False
    return None if good else f"must be {rule}, not {value}"


def check(name: str, value) -> None:
    """Raise :class:`ParameterError` (one line, naming the option) unless ``value`` obeys its rule."""
    why = problem(name, value)
    if why:
        raise ParameterError(f"{_RULES[name][0]} {why}")


@dataclass(frozen=True)
class SearchOptions:
    """hmmsearch's reporting/inclusion thresholds (HMMER's defaults), the MSV filter threshold,
    the search space and the worker count. ``Z`` None: the number of database sequences;
    ``cpus`` 0: every core of this machine."""

    E: float = 10.0
    domE: float = 10.0
    incE: float = 0.01
    incdomE: float = 0.01
    F1: float = 0.02
    Z: Optional[float] = None
    cpus: int = 0

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if v is not None:
                check(f.name, v)

    @property
    def threads(self) -> int:
        """Worker threads to use: ``cpus``, or every core when it is 0."""
        return self.cpus or (os.cpu_count() or 1)

    def changed(self) -> dict:
        """The options that differ from HMMER's defaults (the report lists those)."""
        base = SearchOptions()
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name != "cpus" and getattr(self, f.name) != getattr(base, f.name)}


class _Checked(click.ParamType):
    """A click type that parses a number and applies the option's rule from :data:`_RULES`."""

    def __init__(self, name: str, kind: type):
        self.option, self.kind = name, kind
        self.name = "integer" if kind is int else "float"

    def convert(self, value, param, ctx):
        if isinstance(value, self.kind) and not isinstance(value, bool):
            v = value
        else:
            try:
                v = self.kind(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not a valid {self.name}", param, ctx)
        why = problem(self.option, v)
        if why:
            self.fail(why, param, ctx)
        return v


#: click types of the CLI options, keyed as the SearchOptions fields.
CLICK_TYPES = {name: _Checked(name, int if name == "cpus" else float) for name in _RULES}
DEFAULTS = SearchOptions()
