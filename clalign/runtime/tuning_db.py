"""The user tuning database: what ``clalign tune`` found on this machine's devices.

One JSON file, ``tuning.json`` in ``CLALIGN_TUNING_DIR`` if set, else in the user data folder
(platformdirs' ``user_data_dir("clalign")``). Each entry holds one family's values for one
device, keyed by OpenCL platform, device name, driver version and clalign version (a new
driver or a new clalign, whose kernels may differ, starts from the built-in table again)::

    {"format": "clalign-tuning-1",
     "entries": [{"platform": ..., "device": ..., "driver": ..., "clalign": ...,
                  "family": "sw_intertask", "values": {"ROWS": 48, ...},
                  "source": "clalign tune 2026-11-23 ...", "results": [...]}]}

A damaged file (not JSON, wrong structure, a value outside its declared range) costs one
warning line on stderr and the built-in values; it never stops a search. Writes go through
:func:`clalign.outfile.atomic_output` (whole or not at all).
"""
from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

from ..errors import ClalignError, ParameterError

FORMAT = "clalign-tuning-1"
FILENAME = "tuning.json"
KEY_FIELDS = ("platform", "device", "driver", "clalign")

_lock = threading.Lock()
_cache: dict = {}          # path -> ((mtime_ns, size), entries)
_warned: set = set()


def db_dir() -> Path:
    env = os.environ.get("CLALIGN_TUNING_DIR")
    if env:
        return Path(env)
    try:
        from platformdirs import user_data_dir

        return Path(user_data_dir("clalign", appauthor=False))
    except ImportError:          # platformdirs is a dependency; keep working without it
        return Path.home() / ".local" / "share" / "clalign"


def db_path() -> Path:
    return db_dir() / FILENAME


def device_key(caps) -> dict:
    """The fields a user entry is keyed by, for a probed device."""
    from .. import __version__

    return {"platform": str(getattr(caps, "platform", "") or ""), "device": str(caps.name),
            "driver": str(getattr(caps, "driver", "") or ""), "clalign": __version__}


def _warn(path, why: str) -> None:
    msg = f"clalign: warning: tuning database {path} is damaged ({why}); using the built-in values"
    if msg not in _warned:
        _warned.add(msg)
        print(msg, file=sys.stderr, flush=True)


def _parse(path: Path, text: str) -> list:
    """The file's entries; raises ValueError naming what is wrong."""
    from . import tuning

    data = json.loads(text)
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), list):
        raise ValueError(f"not a {FORMAT} file")
    out = []
    for i, e in enumerate(data["entries"]):
        if not isinstance(e, dict) or not all(isinstance(e.get(k), str) for k in KEY_FIELDS + ("family",)) \
                or not isinstance(e.get("values"), dict):
            raise ValueError(f"entry {i + 1} lacks its key fields or values")
        try:
            values = tuning.paramset(e["family"]).check_partial(_untuple(e["values"]))
        except ParameterError as exc:
            raise ValueError(f"entry {i + 1}: {exc}") from None
        out.append({**e, "values": values})
    return out


def _untuple(values: dict) -> dict:
    """JSON has no tuples: ladders ([[limit, v], ...]) come back as lists of lists."""
    return {k: (tuple(tuple(s) for s in v) if isinstance(v, list) else v) for k, v in values.items()}


def read_entries(path: Path | None = None, strict: bool = False) -> list:
    """Entries of the database (``[]`` when absent). Damaged: a warning and ``[]``, or with
    ``strict`` a :class:`ClalignError` (before the tuner would replace the file)."""
    path = Path(path or db_path())
    try:
        st = path.stat()
    except OSError:
        return []
    stamp = (st.st_mtime_ns, st.st_size)
    with _lock:
        hit = _cache.get(str(path))
        if hit is not None and hit[0] == stamp and not strict:
            return hit[1]
    try:
        got = _parse(path, path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        if strict:
            raise ClalignError(f"tuning database {path} is damaged ({exc}); move it away or use --force") from None
        _warn(path, str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__)
        got = []
    with _lock:
        _cache[str(path)] = (stamp, got)
    return got


def user_values(family: str, caps) -> dict | None:
    """The user entry of ``family`` for this exact device key: ``{"values", "path", ...}``."""
    key = device_key(caps)
    path = db_path()
    for e in read_entries(path):
        if e["family"] == family and all(e[k] == key[k] for k in KEY_FIELDS):
            return {**e, "path": str(path)}
    return None


def store(caps, family: str, values: dict, source: str, results=None, force: bool = False) -> Path:
    """Put (or replace) this device's entry of ``family``; the file is rewritten atomically."""
    from ..outfile import atomic_output
    from . import tuning

    values = tuning.paramset(family).check_partial(values)
    path = db_path()
    try:
        old = read_entries(path, strict=True)
    except ClalignError:
        if not force:
            raise
        old = []
    key = device_key(caps)
    keep = [e for e in old if not (e["family"] == family and all(e[k] == key[k] for k in KEY_FIELDS))]
    new = {**key, "family": family, "values": values, "source": source}
    if results is not None:
        new["results"] = results
    doc = {"format": FORMAT, "entries": keep + [new]}
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(str(path), force=True) as fh:
        fh.write(json.dumps(doc, indent=1, default=str) + "\n")
    with _lock:
        _cache.pop(str(path), None)
    return path
