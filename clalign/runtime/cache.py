"""Persistent cache of built OpenCL program binaries, shared by every engine.

A kernel is built from source once per machine and device; later processes load the binary
(``clCreateProgramWithBinary``) instead of compiling. Drivers have caches of their own, but
not all (pyopencl skips its cache on NVIDIA and PoCL, trusting theirs; NVIDIA's is off with
``CUDA_CACHE_DISABLE=1`` and bounded in size), so clalign keeps its own.

* Location: ``CLALIGN_CACHE_DIR`` if set, else the user cache folder (platformdirs) plus
  ``kernels``; one sub-folder per device (``device.json`` names it), one file per program.
* Key: SHA-256 of the rendered source, the build options, the platform's name and version,
  the device's name, version and driver version, clalign's version and this file's format.
* Entries are written to a temporary file and renamed into place, so readers never see a
  partial entry and concurrent processes filling the cache both succeed (the last rename
  wins; the two binaries are equivalent). A truncated, corrupt or mismatched entry (bad
  magic, wrong key, checksum mismatch, or a binary the driver refuses) is counted as
  ``rejected``, rebuilt from source and replaced, without a message.
* Bound: ``CLALIGN_CACHE_MAX_MB`` (default 1024; 0 = no bound); after a store the least
  recently used entries (hits refresh an entry's time) go until the cache is within 90 % of it.
* The device's compile probes (``probe.py``: does inline PTX build? Clang vectors?) are kept
  beside the entries (``probe.json``), so a later process builds no probe programs either.
* ``CLALIGN_NO_CACHE=1`` (or :func:`configure` ``(enabled=False)``) disables it.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyopencl as cl

from ..cachedir import default_root  # noqa: F401  (the cache's root, found without pyopencl)

FORMAT = 1
MAGIC = b"CLALIGN-PRG\x01"
SUFFIX = ".clbin"
PROBE_FILE = "probe.json"
DEFAULT_MAX_MB = 1024
_STALE_TMP_SECONDS = 3600


def _env_enabled() -> bool:
    return os.environ.get("CLALIGN_NO_CACHE", "").strip().lower() not in ("1", "true", "yes", "on")


def _env_max_bytes() -> int:
    raw = os.environ.get("CLALIGN_CACHE_MAX_MB", "")
    try:
        mb = float(raw) if raw.strip() else DEFAULT_MAX_MB
    except ValueError:
        mb = DEFAULT_MAX_MB
    return max(0, int(mb * (1 << 20)))


def device_identity(device) -> dict:
    """What a binary depends on besides its source and options."""
    from .. import __version__

    p = device.platform
    return {"platform": p.name.strip(), "platform_version": p.version.strip(),
            "device": device.name.strip(), "device_version": device.version.strip(),
            "driver": device.driver_version.strip(), "clalign": __version__, "format": FORMAT}


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


@dataclass
class Counters:
    """What the cache did in this process (tests and ``--verbose`` read these)."""

    hits: int = 0          # programs loaded from a binary
    misses: int = 0        # lookups that found no usable entry
    builds: int = 0        # programs built from source (cache on or off)
    stores: int = 0        # entries written
    rejected: int = 0      # entries found unusable (corrupt, truncated, mismatched, refused)
    evicted: int = 0       # entries removed to respect the size bound
    write_errors: int = 0  # entries that could not be written (read-only folder, full disk)
    probe_loads: int = 0   # device probes taken from probe.json instead of compiled
    load_seconds: float = 0.0
    build_seconds: float = 0.0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class ProgramCache:
    """One folder of program binaries; thread-safe, safe across processes."""

    root: Path
    enabled: bool = True
    max_bytes: int = DEFAULT_MAX_MB << 20
    counters: Counters = field(default_factory=Counters)

    def __post_init__(self):
        self.root = Path(self.root)
        self._lock = threading.Lock()
        self._dirs: dict = {}

    # -- paths and keys ----------------------------------------------------------------------
    def _device(self, device) -> tuple:
        """(identity, folder) of ``device``, worked out once per device."""
        got = self._dirs.get(device.int_ptr)
        if got is None:
            ident = device_identity(device)
            slug = re.sub(r"[^A-Za-z0-9]+", "-", ident["device"]).strip("-")[:40] or "device"
            got = self._dirs[device.int_ptr] = (ident, self.root / f"{slug}-{_digest(ident)[:12]}")
        return got

    def device_dir(self, device) -> Path:
        return self._device(device)[1]

    def key(self, src: str, options, device) -> str:
        return _digest({"source": hashlib.sha256(src.encode()).hexdigest(), "options": list(options),
                        "device": self._device(device)[0]})

    def path(self, key: str, device) -> Path:
        return self.device_dir(device) / f"{key}{SUFFIX}"

    # -- the two operations ------------------------------------------------------------------
    def load(self, ctx, device, key: str, options=()):
        """The built program of entry ``key``, or None (counted as a miss; a bad entry also as
        rejected and deleted)."""
        if not self.enabled:
            return None
        path = self.path(key, device)
        t0 = time.perf_counter()
        try:
            blob = path.read_bytes()
        except OSError:
            self.count(misses=1)
            return None
        binary = _unpack(blob, key)
        prg = None
        if binary is not None:
            try:
                prg = cl.Program(ctx, [device], [binary]).build(options=list(options))
            except (cl.Error, RuntimeError, ValueError):
                prg = None
        if prg is None:
            self.count(misses=1, rejected=1)
            _unlink(path)
            return None
        try:
            os.utime(path)            # most recently used
        except OSError:
            pass
        self.count(hits=1, load_seconds=time.perf_counter() - t0)
        return prg

    def store(self, device, key: str, prg, meta: dict) -> bool:
        """Write the binary of ``prg`` (built for ``device``) as entry ``key``, atomically."""
        if not self.enabled:
            return False
        try:
            binaries = prg.get_info(cl.program_info.BINARIES)
            devs = prg.get_info(cl.program_info.DEVICES)
            binary = bytes(binaries[[d.int_ptr for d in devs].index(device.int_ptr)])
        except (cl.Error, ValueError, IndexError):
            binary = b""
        if not binary:
            return False
        folder = self.device_dir(device)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            ident = folder / "device.json"
            if not ident.exists():
                _write_atomic(ident, json.dumps(device_identity(device), indent=1).encode())
            head = {**meta, "key": key, "size": len(binary), "sha256": hashlib.sha256(binary).hexdigest(),
                    "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            hb = json.dumps(head, sort_keys=True).encode()
            _write_atomic(folder / f"{key}{SUFFIX}", MAGIC + struct.pack("<I", len(hb)) + hb + binary)
        except OSError:
            self.count(write_errors=1)
            return False
        self.count(stores=1)
        if self.max_bytes:
            self.evict(self.max_bytes)
        return True

    # -- probe results -----------------------------------------------------------------------
    def load_probe(self, device):
        """The compile-probe results stored for ``device`` (a dict of bools), or None."""
        if not self.enabled:
            return None
        try:
            data = json.loads((self.device_dir(device) / PROBE_FILE).read_text())
        except (OSError, ValueError):
            return None
        res = data.get("results") if isinstance(data, dict) else None
        if data.get("device") != self._device(device)[0] or not isinstance(res, dict) \
                or not all(isinstance(v, bool) for v in res.values()):
            return None
        self.count(probe_loads=1)
        return res

    def store_probe(self, device, results: dict) -> None:
        """Keep the compile-probe results of ``device`` so later processes skip those builds."""
        if not self.enabled:
            return
        folder = self.device_dir(device)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            _write_atomic(folder / PROBE_FILE, json.dumps({"device": device_identity(device),
                                                           "results": results}, indent=1).encode())
        except OSError:
            self.count(write_errors=1)

    # -- maintenance -------------------------------------------------------------------------
    def entries(self) -> list:
        """[(path, size, mtime)] of every entry, oldest first."""
        out = []
        if not self.root.is_dir():
            return out
        for sub in self.root.iterdir():
            if not sub.is_dir():
                continue
            for f in sub.glob(f"*{SUFFIX}"):
                try:
                    st = f.stat()
                except OSError:
                    continue
                out.append((f, st.st_size, st.st_mtime))
        out.sort(key=lambda e: e[2])
        return out

    def evict(self, limit: int) -> int:
        """Remove least recently used entries until the total is within 90 % of ``limit``
        (nothing happens while it is within ``limit``); also stale temporary files."""
        ents = self.entries()
        total = sum(s for _, s, _ in ents)
        removed = 0
        if total > limit:
            for path, size, _ in ents:
                if total <= 0.9 * limit:
                    break
                if _unlink(path):
                    removed += 1
                total -= size
            self.count(evicted=removed)
        now = time.time()
        for sub in (self.root.iterdir() if self.root.is_dir() else ()):
            for tmp in (sub.glob(".tmp-*") if sub.is_dir() else ()):
                try:
                    if now - tmp.stat().st_mtime > _STALE_TMP_SECONDS:
                        tmp.unlink()
                except OSError:
                    pass
        return removed

    def info(self) -> dict:
        """Location, bound, and entries and bytes per device folder."""
        per = []
        if self.root.is_dir():
            for sub in sorted(p for p in self.root.iterdir() if p.is_dir()):
                files = list(sub.glob(f"*{SUFFIX}"))
                try:
                    ident = json.loads((sub / "device.json").read_text())
                except (OSError, ValueError):
                    ident = {}
                if not files and not ident:
                    continue             # not a device folder (other parts of clalign keep data here)
                per.append({"folder": sub.name, "entries": len(files),
                            "bytes": sum(_size(f) for f in files), **ident})
        return {"location": str(self.root), "enabled": self.enabled, "max_bytes": self.max_bytes,
                "entries": sum(d["entries"] for d in per), "bytes": sum(d["bytes"] for d in per),
                "devices": per}

    def clear(self) -> int:
        """Delete every entry, device file and stale temporary file clalign wrote here (nothing
        else), and the device folders left empty; returns the number of entries deleted."""
        n = 0
        if not self.root.is_dir():
            return 0
        for sub in self.root.iterdir():
            if not sub.is_dir():
                continue
            if sub.name == "rendered":          # kernel sources rendered by render.py
                for f in [*sub.glob("*.cl"), *sub.glob(".tmp-*")]:
                    _unlink(f)
                try:
                    sub.rmdir()
                except OSError:
                    pass
                continue
            for f in list(sub.glob(f"*{SUFFIX}")):
                n += _unlink(f)
            for f in [sub / "device.json", sub / PROBE_FILE, *sub.glob(".tmp-*")]:
                _unlink(f)
            try:
                sub.rmdir()
            except OSError:
                pass
        return n

    def count(self, **kw):
        """Add to the counters (thread-safe)."""
        with self._lock:
            for k, v in kw.items():
                setattr(self.counters, k, getattr(self.counters, k) + v)


def _unpack(blob: bytes, key: str):
    """The binary inside an entry, or None when it is not a whole entry for ``key``."""
    n = len(MAGIC)
    if len(blob) < n + 4 or blob[:n] != MAGIC:
        return None
    (hlen,) = struct.unpack_from("<I", blob, n)
    start = n + 4 + hlen
    if start > len(blob):
        return None
    try:
        head = json.loads(blob[n + 4:start])
    except ValueError:
        return None
    binary = blob[start:]
    if (not isinstance(head, dict) or head.get("key") != key or head.get("size") != len(binary)
            or head.get("sha256") != hashlib.sha256(binary).hexdigest()):
        return None
    return binary


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        _unlink(Path(tmp))
        raise


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:          # removed by another process meanwhile
        return 0


def _unlink(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except OSError:
        return False


_CACHE = None
_CACHE_LOCK = threading.Lock()


def get_cache() -> ProgramCache:
    """The process's cache, configured from the environment on first use."""
    global _CACHE
    with _CACHE_LOCK:
        if _CACHE is None:
            _CACHE = ProgramCache(default_root(), _env_enabled(), _env_max_bytes())
        return _CACHE


def configure(root=None, enabled=None, max_bytes=None) -> ProgramCache:
    """Replace the process's cache (API callers and tests): a folder, on/off, a size bound.
    Arguments left None keep the environment's choice. Counters start from zero."""
    global _CACHE
    with _CACHE_LOCK:
        _CACHE = ProgramCache(default_root() if root is None else Path(root),
                              _env_enabled() if enabled is None else bool(enabled),
                              _env_max_bytes() if max_bytes is None else int(max_bytes))
        return _CACHE


def summary() -> str:
    """One line for ``--verbose``: what the kernel cache did in this process."""
    c = get_cache()
    k = c.counters
    state = "" if c.enabled else " (disabled)"
    return (f"kernel cache{state}: {k.hits} loaded ({k.load_seconds:.2f} s), {k.builds} built "
            f"({k.build_seconds:.2f} s summed over threads), {k.stores} stored, {k.rejected} rejected"
            f"; {c.root}")
