"""Rendering of the Mako kernel templates in ``kernels/``.

Templates are rendered with ``strict_undefined=True`` from a validated parameter dict
(:meth:`clalign.runtime.params.ParamSet.validate`), so a template that names a parameter the
family does not define fails loudly. Set ``CLALIGN_DUMP_KERNELS=DIR`` to write every rendered
kernel to DIR for debugging.

Rendered sources are kept in the program cache's folder (``rendered/``), keyed by the text of
every template in the search folders and the values, so a later process neither imports Mako
nor renders (the tuned SW kernel is ~3,800 lines: tens of milliseconds, and Mako's import ~0.1-0.2
s of a command's start-up); an entry is checked against its own SHA-256 before use.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from functools import lru_cache
from pathlib import Path

from ..errors import ClalignError, ParameterError

RENDERED = "rendered"           # sub-folder of the program cache
RENDERED_MAX = 512              # entries kept (the oldest half goes when this is passed)
_MAGIC = "// CLALIGN-SRC "


def kernel_dir() -> Path:
    """The folder holding the ``*.mako`` templates, installed or in a source checkout."""
    try:
        from importlib.resources import files

        import clalign.kernels as _k  # noqa: F401  (installed as package data)
        p = Path(str(files("clalign.kernels")))
        if (p / "simd.mako").exists():
            return p
    except ImportError:
        pass
    p = Path(__file__).resolve().parent.parent.parent / "kernels"
    if p.is_dir():
        return p
    raise FileNotFoundError("clalign kernel templates not found (expected clalign/kernels or ./kernels)")


@lru_cache(maxsize=8)
def _lookup(extra: tuple = ()):
    from mako.lookup import TemplateLookup

    return TemplateLookup(directories=[*extra, str(kernel_dir())], strict_undefined=True,
                          input_encoding="utf-8")


_DIGESTS: dict = {}
_DIGEST_LOCK = threading.Lock()


def _templates_digest(extra: tuple) -> str:
    """SHA-256 of every template a render may read (the ``*.mako`` of the search folders)."""
    with _DIGEST_LOCK:
        got = _DIGESTS.get(extra)
        if got is None:
            h = hashlib.sha256()
            for folder in (*extra, str(kernel_dir())):
                p = Path(folder)
                for f in (sorted(p.glob("*.mako")) if p.is_dir() else ()):
                    h.update(f"{folder}/{f.name}\0".encode())
                    h.update(f.read_bytes())
            got = _DIGESTS[extra] = h.hexdigest()
        return got


def _rendered_path(template: str, values: dict, extra: tuple):
    """Where the rendered source of (template, values) is kept, or None (cache off)."""
    from .. import __version__
    from .cache import get_cache

    cache = get_cache()
    if not cache.enabled:
        return None
    key = hashlib.sha256(json.dumps([__version__, _templates_digest(extra), template, sorted(values.items())],
                                    default=str).encode()).hexdigest()
    return Path(cache.root) / RENDERED / f"{key}.cl"


def _load_rendered(path):
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    head, _, src = text.partition("\n")
    if head != _MAGIC + hashlib.sha256(src.encode()).hexdigest():
        return None
    return src


def _store_rendered(path, src: str) -> None:
    from .cache import _write_atomic

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, (_MAGIC + hashlib.sha256(src.encode()).hexdigest() + "\n" + src).encode())
        files = list(path.parent.glob("*.cl"))
        if len(files) > RENDERED_MAX:
            files.sort(key=lambda f: f.stat().st_mtime if f.exists() else 0)
            for f in files[:len(files) // 2]:
                f.unlink(missing_ok=True)
    except OSError:
        pass        # a read-only cache folder: the next process renders again


def render(template: str, values: dict, extra_dirs: tuple = ()) -> str:
    """Render ``kernels/<template>`` with already-validated ``values`` (ints, bools, strings).

    ``extra_dirs`` are searched before ``kernels/`` (tests and tools with templates of their own).
    A source rendered by an earlier process with the same templates and values is read back
    instead (see the module docstring).
    """
    for k, v in values.items():
        if not isinstance(v, (bool, int, str)):
            raise ParameterError(f"{template}: parameter {k}={v!r} is not an int, bool or choice")
    extra = tuple(str(d) for d in extra_dirs)
    path = _rendered_path(template, values, extra)
    src = _load_rendered(path) if path is not None else None
    if src is None:
        try:
            tmpl = _lookup(extra).get_template(template)
        except Exception as exc:  # mako raises TopLevelLookupException etc.
            raise FileNotFoundError(f"kernel template {template!r} not found in {kernel_dir()}: {exc}") from None
        try:
            src = tmpl.render(**values)
        except NameError as exc:
            raise ParameterError(f"{template}: template uses an undefined parameter ({exc})") from None
        if path is not None:
            _store_rendered(path, src)
    dump = os.environ.get("CLALIGN_DUMP_KERNELS")
    if dump:
        dump_source(template, src, Path(dump))
    return src


def _safe_dump_folder(folder: Path) -> Path:
    """Create (mode 0700) or accept ``folder`` only if it is a real folder of ours that nobody
    else can write: never follow a symlink planted in a shared place such as /tmp."""
    folder = Path(os.path.abspath(folder))
    if not os.path.lexists(folder):
        os.makedirs(folder.parent, exist_ok=True)
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:       # raced: checked below like any existing folder
            pass
    st = os.lstat(folder)
    why = None
    if stat.S_ISLNK(st.st_mode):
        why = "is a symbolic link"
    elif not stat.S_ISDIR(st.st_mode):
        why = "is not a folder"
    elif st.st_uid != os.geteuid():
        why = f"is owned by uid {st.st_uid}, not by this user"
    elif st.st_mode & 0o002:
        why = "is writable by every user"
    if why:
        raise ClalignError(f"CLALIGN_DUMP_KERNELS={folder} {why}; refusing to write kernels there")
    return folder


def dump_source(template: str, src: str, folder: Path) -> Path:
    """Write ``src`` as ``<template>-<hash>.cl`` in ``folder`` (created safely, see above)."""
    folder = _safe_dump_folder(Path(folder))
    h = hashlib.sha1(src.encode()).hexdigest()[:12]
    path = folder / f"{Path(template).stem}-{h}.cl"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise ClalignError(f"CLALIGN_DUMP_KERNELS: cannot write {path}: {exc.strerror}") from None
    with os.fdopen(fd, "w") as fh:
        fh.write(src)
    return path
