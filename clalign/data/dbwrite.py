"""Writing a prepared-database folder whole or not at all, and replacing one safely.

The folder is built in a hidden sibling ``.NAME~clalign-H-HOST-PID-RAND.tmp`` (every file
fsynced, ``header.json`` with the files' sizes and SHA-256 written last), then put in place:

- new OUT: one rename that never replaces anything (``renameat2(RENAME_NOREPLACE)``);
- existing OUT (``force``, and only a folder that :func:`is_database_folder` accepts):
  ``renameat2(RENAME_EXCHANGE)`` swaps the two folders in one step, so OUT is at every
  instant either the whole old or the whole new database; the old one (now in the sibling)
  is then removed. Where the kernel or file system cannot exchange, the old folder is first
  renamed to ``...old`` and the new one renamed in: a crash between the two leaves the old
  database under the ``.old`` name, and the next run puts it back.

Any error, Ctrl-C or SIGTERM (turned into SystemExit by the CLI) removes the sibling. A
SIGKILL cannot be caught: the next ``makedb`` for the same OUT (and a ``Database.open`` that
finds OUT missing) removes the leftovers of dead processes of this host and restores an
interrupted swap (:func:`recover`). OS errors (read-only folder, full disk, name too long)
become one :class:`InputError` naming OUT. Files get the process umask like any other tool's.
"""
from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import re
import shutil
import socket
import uuid

import numpy as np

from ..errors import InputError
from .dbfolder import HEADER, is_database_folder

_HOST = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:6]
_RENAME_NOREPLACE, _RENAME_EXCHANGE = 1, 2
_AT_FDCWD = -100
try:
    _renameat2_c = ctypes.CDLL(None, use_errno=True).renameat2
except (AttributeError, OSError):
    _renameat2_c = None


def _renameat2(src, dst, flags) -> bool:
    """renameat2(2); False when this system cannot do it (the caller falls back), OSError otherwise."""
    if _renameat2_c is None:
        return False
    if _renameat2_c(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), dst)


def _prefix(out):
    name = os.path.basename(out)
    short = os.fsencode(name)[:32].decode("utf-8", "ignore")
    return f".{short}~clalign-{hashlib.sha1(os.fsencode(name)).hexdigest()[:10]}-"


def _sibling(out, kind):
    return os.path.join(os.path.dirname(out), f"{_prefix(out)}{_HOST}-{os.getpid()}-{uuid.uuid4().hex[:8]}.{kind}")


def _alive(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def recover(out):
    """Clean up after a killed makedb of OUT: put back an old database an interrupted swap left
    aside (when OUT is missing), remove other leftovers of dead processes of this host."""
    out = os.path.abspath(os.fspath(out))
    parent, prefix = os.path.dirname(out), _prefix(out)
    pattern = re.compile(re.escape(prefix) + r"([0-9a-f]{6})-(\d+)-[0-9a-f]{8}\.(tmp|old)")
    try:
        names = sorted(n for n in os.listdir(parent) if n.startswith(prefix))
    except OSError:
        return
    for name in sorted(names, key=lambda n: not n.endswith(".old")):
        m = pattern.fullmatch(name)
        if not m or m[1] != _HOST or _alive(int(m[2])):
            continue
        p = os.path.join(parent, name)
        if os.path.islink(p) or not os.path.isdir(p):
            continue
        try:
            if m[3] == "old" and not os.path.lexists(out) and is_database_folder(p) is None:
                os.rename(p, out)
            else:
                shutil.rmtree(p, ignore_errors=True)
        except OSError:
            pass


def check_target(out, force):
    """Refuse early (before a long parse) what cannot or must not be written at ``out``."""
    parent, name = os.path.dirname(out), os.path.basename(out)
    if os.path.lexists(out):
        if not force:
            raise InputError("output already exists; use --force to replace it", out)
        why = is_database_folder(out)
        if why is not None:
            raise InputError(f"output exists and is not a clalign database ({why}); refusing to replace it "
                             f"even with --force", out)
    if not os.path.isdir(parent):
        raise InputError("parent folder does not exist", parent)
    try:
        limit = os.pathconf(parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    if len(os.fsencode(name)) > limit:
        raise InputError(f"name is longer than the file system allows ({limit} bytes)", out)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError("cannot write the database: permission denied (read-only folder?)", out)


class _Hashing:
    """A write-only file object that also hashes and counts what passes through."""

    def __init__(self, fh):
        self.fh, self.sha, self.size = fh, hashlib.sha256(), 0

    def write(self, data):
        self.fh.write(data)
        self.sha.update(data)
        self.size += memoryview(data).nbytes


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_npy(h, arr):
    """A .npy file (format 1.0), the data written from the array's own memory (no chunked copies)."""
    arr = np.ascontiguousarray(arr)
    np.lib.format.write_array_header_1_0(h, np.lib.format.header_data_from_array_1_0(arr))
    if arr.size:
        h.write(memoryview(arr.reshape(-1)).cast("B"))


def _write_file(folder, name, writer):
    with open(os.path.join(folder, name), "wb") as fh:
        h = _Hashing(fh)
        writer(h)
        fh.flush()
        os.fsync(fh.fileno())
    return {"bytes": h.size, "sha256": h.sha.hexdigest()}


def write_folder(arrays, header, out, force):
    """Write ``arrays`` (name -> 1-D array) and ``header`` as the database folder ``out``."""
    out = os.path.abspath(os.fspath(out))
    check_target(out, force)
    recover(out)
    tmp = _sibling(out, "tmp")
    aside = None
    try:
        try:
            os.mkdir(tmp)
            files = {}
            for name, arr in arrays.items():
                files[name + ".npy"] = _write_file(tmp, name + ".npy", lambda h, a=arr: _write_npy(h, a))
            text = json.dumps(dict(header, files=files), indent=1).encode("utf-8") + b"\n"
            _write_file(tmp, HEADER, lambda h: h.write(text))
            _fsync_dir(tmp)
            if os.path.lexists(out):
                check_target(out, force)   # once more, just before replacing it
                if _renameat2(tmp, out, _RENAME_EXCHANGE):
                    aside = tmp
                else:
                    aside = _sibling(out, "old")
                    os.rename(out, aside)
                    try:
                        os.rename(tmp, out)
                    except BaseException:
                        os.rename(aside, out)  # put the old one back
                        aside = None
                        raise
            elif not _renameat2(tmp, out, _RENAME_NOREPLACE):
                os.rename(tmp, out)
        except OSError as exc:
            raise InputError(f"cannot write the database: {exc.strerror or exc}", out) from None
    except BaseException:
        if os.path.lexists(tmp) and aside != tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_dir(os.path.dirname(out))
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)
    return out
