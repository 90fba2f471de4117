"""Tuning table: which template values a kernel family uses on a device, and where they came from.

Values of a family are merged from these sources, later ones winning:

1. the built-in defaults of its :class:`~clalign.runtime.params.ParamSet`;
2. the built-in table, level by level: ``default`` -> ``vendor`` -> ``architecture`` ->
   ``device``. Per level the **first** entry whose matcher fits the device applies (at most one
   entry per level and matcher; the table is declarative data, see :class:`Entry`);
3. the user tuning database (``clalign tune`` writes it; :mod:`clalign.runtime.tuning_db`),
   an entry keyed by platform, device name, driver version and clalign version;
4. the caller's explicit override (applied by :func:`clalign.runtime.params.choose`).

The built-in table is loaded explicitly, on first use, from the modules named in
:data:`PROVIDERS` (each has a ``TUNING`` dict ``family -> (ParamSet, [Entry, ...])``); every
entry is checked against its family's declared parameters when it is registered, so a typo in
an entry only one device would read fails on any machine (``tests/test_tune.py``).
Measurement history behind the entries lives in ``docs/perf/`` (each entry names its source).
"""
from __future__ import annotations

import contextvars
import importlib
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..errors import ParameterError

LEVELS = ("default", "vendor", "architecture", "device")

#: Matcher keys and the level they belong to. ``cc_min``: NVIDIA compute capability at least
#: (major, minor); ``name_contains``: case-insensitive part of the device name; ``vendor``: part
#: of the vendor string; the others compare a :class:`~clalign.runtime.probe.Capabilities` field.
MATCH_LEVEL = {"is_cpu": "vendor", "is_gpu": "vendor", "is_nvidia": "vendor", "vendor": "vendor",
               "cc_min": "architecture", "ptx": "architecture", "ptx_s16x2": "architecture",
               "ptx_shfl": "architecture", "clang_vectors": "architecture", "subgroups": "architecture",
               "name": "device", "name_contains": "device", "driver": "device", "platform": "device"}

#: Modules whose ``TUNING`` dict holds built-in entries (loaded by :func:`load_builtin`).
PROVIDERS = ("clalign.sw.params", "clalign.hmm.kernel_choice", "clalign.hmm.choice")


@dataclass(frozen=True)
class Entry:
    """One row of the table: ``values`` for devices matching ``match`` at ``level``.

    ``source`` says where the numbers come from (a docs/perf file and run, or a tuning run)."""

    level: str
    match: dict
    values: dict
    source: str = ""

    def __post_init__(self):
        if self.level not in LEVELS:
            raise ParameterError(f"tuning entry level {self.level!r} is not one of {LEVELS}")
        bad = [k for k in self.match if k not in MATCH_LEVEL]
        if bad:
            raise ParameterError(f"tuning entry matcher keys {bad} unknown; known: {sorted(MATCH_LEVEL)}")
        if self.level == "default" and self.match:
            raise ParameterError("a default-level tuning entry matches every device (empty matcher)")
        if self.level != "default" and not self.match:
            raise ParameterError(f"a {self.level}-level tuning entry needs a matcher")
        over = [k for k in self.match if LEVELS.index(MATCH_LEVEL[k]) > LEVELS.index(self.level)]
        if over:
            raise ParameterError(f"matcher keys {over} are more specific than level {self.level!r}")

    def matches(self, caps) -> bool:
        return _matches(self.match, caps)


@dataclass
class _Family:
    params: object = None                 # ParamSet, once declared
    entries: list = field(default_factory=list)


_FAMILIES: dict = {}
_lock = threading.RLock()
_loaded = False
#: family -> values of a candidate under trial (the tuner), above the user database.
_TRIAL: contextvars.ContextVar = contextvars.ContextVar("clalign_tuning_trial", default=None)


def _level_of(match: dict) -> str:
    levels = [MATCH_LEVEL.get(k, "device") for k in match]
    return max(levels, key=LEVELS.index) if levels else "default"


def _as_entry(item) -> Entry:
    if isinstance(item, Entry):
        return item
    match, values = item          # the older (matcher, values) form
    return Entry(_level_of(match), dict(match), dict(values))


def register(family: str, entries: list, params=None) -> None:
    """Add built-in entries of ``family`` (validated against ``params`` or the family's
    declared ParamSet). Entries are :class:`Entry` objects or ``(matcher, values)`` pairs
    (level taken from the matcher's keys; pairs with the same matcher are merged, later values
    winning, as they are with an entry registered by an earlier call). Two :class:`Entry`
    objects of one call with the same level and matcher are an error (one entry per level)."""
    declared = [(e.level, repr(sorted(e.match.items()))) for e in entries if isinstance(e, Entry)]
    if len(declared) != len(set(declared)):
        raise ParameterError(f"{family}: two entries with the same level and matcher")
    with _lock:
        fam = _FAMILIES.setdefault(family, _Family())
        if params is not None:
            fam.params = params
        for item in entries:
            e = _as_entry(item)
            if fam.params is not None:
                fam.params.check_partial(e.values)
            for i, old in enumerate(fam.entries):
                if old.level == e.level and old.match == e.match:
                    fam.entries[i] = Entry(old.level, old.match, {**old.values, **e.values},
                                           "; ".join(s for s in (old.source, e.source) if s))
                    break
            else:
                fam.entries.append(e)


def load_builtin() -> None:
    """Register the built-in entries of every provider module (once per process)."""
    global _loaded
    with _lock:
        if _loaded:
            return
        _loaded = True
        for mod in PROVIDERS:
            for family, (params, entries) in importlib.import_module(mod).TUNING.items():
                register(family, entries, params)
        for name, fam in _FAMILIES.items():       # entries registered before their ParamSet
            if fam.params is not None:
                for e in fam.entries:
                    fam.params.check_partial(e.values)


def families() -> dict:
    """family -> ParamSet of every family with declared parameters."""
    load_builtin()
    return {k: f.params for k, f in _FAMILIES.items() if f.params is not None}


def paramset(family: str):
    load_builtin()
    fam = _FAMILIES.get(family)
    if fam is None or fam.params is None:
        raise ParameterError(f"no tuning family {family!r}; known: {sorted(families())}")
    return fam.params


def entries(family: str) -> list:
    load_builtin()
    return list(_FAMILIES.get(family, _Family()).entries)


def _matches(match: dict, caps) -> bool:
    for k, v in match.items():
        got = getattr(caps, "compute_capability" if k == "cc_min" else k, None)
        if k == "cc_min":
            if got is None or tuple(got) < tuple(v):
                return False
        elif k == "name_contains":
            if v.lower() not in str(caps.name).lower():
                return False
        elif k == "vendor":
            if got is None or v.lower() not in str(got).lower():
                return False
        elif got != v:
            return False
    return True


def table_layers(family: str, caps) -> list:
    """The built-in entries that apply to ``caps``, general first: the first match per level."""
    out = []
    for level in LEVELS:
        for e in entries(family):
            if e.level == level and e.matches(caps):
                out.append(e)
                break
    return out


def sources(family: str, caps) -> dict:
    """name -> (value, where it came from) for ``family`` on ``caps``, without overrides."""
    from . import tuning_db

    load_builtin()
    out: dict = {}
    fam = _FAMILIES.get(family)
    if fam is not None and fam.params is not None:
        for p in fam.params.all():
            if p.default is not None:
                out[p.name] = (p.default, "built-in default")
    for e in table_layers(family, caps):
        where = f"built-in table, {e.level} {e.match}" if e.match else "built-in table, default level"
        for k, v in e.values.items():
            out[k] = (v, where)
    trial = (_TRIAL.get() or {}).get(family)
    user = tuning_db.user_values(family, caps) if trial is None else None
    if user:
        for k, v in user["values"].items():
            out[k] = (v, f"user database {user['path']}")
    for k, v in (trial or {}).items():
        out[k] = (v, "candidate under trial")
    return out


def lookup(family: str, caps) -> dict:
    """Tuned values of ``family`` on a device: built-in table, then user database (then a
    candidate under trial while the tuner measures it). Parameter defaults and the caller's
    override are applied by :func:`clalign.runtime.params.choose`."""
    from . import tuning_db

    out: dict = {}
    for e in table_layers(family, caps):
        out.update(e.values)
    trial = (_TRIAL.get() or {}).get(family)
    if trial is None:
        user = tuning_db.user_values(family, caps)
        if user:
            out.update(user["values"])
    else:
        out.update(trial)
    return out


def table_values(family: str, caps) -> dict:
    """Built-in parameter defaults and built-in table, without the user database."""
    out = {p.name: p.default for p in paramset(family).all() if p.default is not None}
    for e in table_layers(family, caps):
        out.update(e.values)
    return out


@contextmanager
def trial(family: str, values: dict):
    """Within the block, :func:`lookup` of ``family`` returns ``values`` over the built-in table
    (the user database is left out): the tuner runs a candidate through the same code path as a
    stored entry, compared with the table alone."""
    cur = dict(_TRIAL.get() or {})
    cur[family] = paramset(family).check_partial(values)
    token = _TRIAL.set(cur)
    try:
        yield
    finally:
        _TRIAL.reset(token)


def format_entry(e: Entry, family: str) -> str:
    """``e`` as a line of a provider's ``TUNING`` list (for ``clalign tune --export``)."""
    return (f"# family {family}\nEntry({e.level!r}, {e.match!r}, {e.values!r},\n"
            f"      source={e.source!r}),\n")
