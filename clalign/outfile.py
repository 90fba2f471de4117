"""Output files that appear whole or not at all: the one output module of every command.

Use::

    plan_outputs({"-out": path or "-"}, inputs=[query, db], force=force)   # before the long work
    with atomic_output(path, force=force) as fh:                    # text; binary=True for bytes
        fh.write(text)

:func:`plan_outputs` checks every output of a command before any work starts (so a long search
never fails at its end for a reason known at its start): no two outputs name the same file, no
output names an input, an existing file is replaced only with ``force`` (the project rule:
nothing of the user's is overwritten without ``--force``), the folder exists and the name is
legal. :func:`atomic_output` writes to a hidden temporary sibling
``.<name>.clalign-<pid>-<random>.tmp``, flushes and fsyncs it, and renames it over the target only
when the ``with`` block ends without an exception; on an exception (a full disk, a bad input
found late, a signal turned into an exception by ``clalign.cli``) the temporary file is removed
and the target is untouched. Leftovers of a run killed with SIGKILL (whose process no longer
exists) are removed by the next run writing the same output.

``None`` or ``-`` is standard output (written directly). An existing character device or FIFO
(``/dev/null``, ``/dev/stdout``, a named pipe) is written directly too, without ``force``: it
cannot be replaced atomically and holds no data to lose. New files get the usual mode
(0666 minus the process umask), like any other tool's outputs.

Every failure is an :class:`OutputError` (a :class:`~clalign.errors.ClalignError`: one line,
exit status 2 through the CLI) naming the path.
"""
from __future__ import annotations

import errno
import os
import re
import secrets
import stat
import sys
from contextlib import contextmanager
from typing import Iterable, Mapping, Optional

from .errors import ClalignError

STDOUT = "-"
_TMP_RE = re.compile(r"(\d+)-[0-9a-f]{8}\.tmp")
#: errno values of a failed write (raised inside the ``with`` block by a large write).
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EPIPE}
#: Characters of the target's name kept in the temporary name (a legal 255-byte name plus our
#: suffix must still be legal).
_NAME_KEEP = 64


#: True while outputs are renamed into place; a termination signal then waits (see defer_signal).
_committing = False
_pending: list = []


def defer_signal(signum) -> bool:
    """For the CLI's signal handler: True (and the signal held) while outputs are being renamed
    into place, so that a signal cannot leave some outputs of a command renamed and others not;
    the signal is delivered again as soon as the last rename is done."""
    if _committing:
        _pending.append(signum)
        return True
    return False


class OutputError(ClalignError):
    """An output file cannot be written (or must not be, without ``--force``); names the path."""

    def __init__(self, message, path=None):
        self.path = None if path is None else str(path)
        self.reason = message
        super().__init__(f"{self.path}: {message}" if self.path is not None else message)


def is_stdout(path) -> bool:
    return path is None or (isinstance(path, str) and path == STDOUT)


def _special(path) -> bool:
    """True for an existing character device or FIFO (written in place, never replaced)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _why(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "no space left on device"
    if exc.errno == errno.ENAMETOOLONG:
        return "file name too long"
    return exc.strerror or str(exc)


def _identity(path):
    """(device, inode) of an existing file, else the normalised real path (for same-file tests)."""
    try:
        st = os.stat(path)
        return ("inode", st.st_dev, st.st_ino)
    except OSError:
        return ("path", os.path.realpath(path))


def check_output(path, force=False) -> None:
    """Refuse, with an :class:`OutputError`, an output that cannot or must not be written."""
    if is_stdout(path) or _special(path):
        return
    path = os.fspath(path)
    if path.endswith(os.sep) or os.path.isdir(path):
        raise OutputError("is a folder, not a file name", path)
    folder = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    if not os.path.isdir(folder):
        raise OutputError(f"folder {folder} does not exist" if not os.path.lexists(folder)
                          else f"{folder} is not a folder", path)
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    if len(os.fsencode(name)) > limit:
        raise OutputError(f"file name too long (the file system allows {limit} bytes)", path)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"permission denied: cannot create files in {folder}", path)
    if os.path.lexists(path) and not force:
        raise OutputError("file exists; use --force to overwrite it", path)


def plan_outputs(outputs: Mapping[str, Optional[str]], inputs: Iterable = (), force=False) -> dict:
    """Check a command's outputs together before any work; returns ``outputs`` unchanged.

    ``outputs`` maps an option name (for messages) to a path, ``-`` for standard output,
    ``None`` for an output not requested; ``inputs`` are the command's input paths (no output
    may name one or lie inside an input folder, even with ``force``).
    """
    seen = {}
    ins = {}
    folders = []
    for p in inputs:
        if p is not None and not is_stdout(p) and not hasattr(p, "residues"):
            ins[_identity(os.fspath(p))] = os.fspath(p)
            if os.path.isdir(p):            # a prepared database: nothing may be written inside it
                folders.append(os.path.realpath(p))
    for opt, path in outputs.items():
        if path is None:
            continue
        key = ("stdout",) if is_stdout(path) else _identity(os.fspath(path))
        if key in seen:
            other = seen[key]
            where = "standard output" if key == ("stdout",) else os.fspath(path)
            raise OutputError(f"{other} and {opt} both write to {where}; give each output its own file")
        seen[key] = opt
        if is_stdout(path) or _special(path):
            continue
        if key in ins:
            raise OutputError(f"{opt} names an input file; refusing to overwrite it", path)
        real = os.path.realpath(os.fspath(path))
        if any(os.path.commonpath([real, f]) == f for f in folders):
            raise OutputError(f"{opt} is inside an input folder; refusing to write there", path)
        check_output(path, force)
    return dict(outputs)


def _tmp_name(path) -> str:
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f".{name[:_NAME_KEEP]}.clalign-{os.getpid()}-{secrets.token_hex(4)}.tmp")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:     # exists, owned by someone else
        return True
    return True


def clean_leftovers(path) -> list:
    """Remove temporary siblings of ``path`` left by killed clalign runs (their process is gone,
    and the file is ours and a plain file); returns the removed paths."""
    folder, name = os.path.split(os.path.abspath(os.fspath(path)))
    prefix = f".{name[:_NAME_KEEP]}.clalign-"
    removed = []
    try:
        entries = os.listdir(folder)
    except OSError:
        return removed
    for entry in entries:
        m = _TMP_RE.fullmatch(entry[len(prefix):]) if entry.startswith(prefix) else None
        if m is None:
            continue
        pid = int(m.group(1))
        if pid == os.getpid() or _alive(pid):
            continue
        full = os.path.join(folder, entry)
        try:
            st = os.lstat(full)
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid():
                os.unlink(full)
                removed.append(full)
        except OSError:
            pass
    return removed


class _Direct:
    """Standard output or a device/FIFO, written in place."""

    def __init__(self, path, binary, encoding):
        self.label = "standard output" if is_stdout(path) else os.fspath(path)
        self.owned = not is_stdout(path)
        if self.owned:
            try:
                self.fh = open(path, "wb" if binary else "w", encoding=None if binary else encoding)
            except OSError as exc:
                raise OutputError(f"cannot write: {_why(exc)}", self.label) from None
        else:
            self.fh = sys.stdout.buffer if binary and hasattr(sys.stdout, "buffer") else sys.stdout

    def finish(self):
        self.fh.flush()

    def commit(self):
        self.abort()

    def abort(self):
        if self.owned:
            try:
                self.fh.close()
            except OSError:
                pass


class _Atomic:
    """A temporary sibling of ``path``: finish() flushes and fsyncs, commit() renames it into place."""

    def __init__(self, path, force, binary, encoding):
        self.path, self.force, self.label = path, force, path
        check_output(path, force)
        clean_leftovers(path)
        self.tmp = _tmp_name(path)
        try:
            # 0o666 and O_EXCL: the umask decides the mode, as for any tool's output; never reuse a name
            fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        except OSError as exc:
            raise OutputError(f"cannot write: {_why(exc)}", path) from None
        self.fh = os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else encoding)

    def finish(self):
        self.fh.flush()
        os.fsync(self.fh.fileno())
        self.fh.close()
        if not self.force and os.path.lexists(self.path):   # appeared while we worked
            raise OutputError("file exists; use --force to overwrite it", self.path)

    def commit(self):
        os.replace(self.tmp, self.path)
        self.tmp = None

    def abort(self):
        try:
            self.fh.close()
        except OSError:
            pass
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass


@contextmanager
def atomic_output(path, force=False, binary=False, encoding="utf-8"):
    """File object(s) replacing their paths only if the ``with`` block completes.

    ``path``: one path (yields one file object) or a list of paths (yields a list, all or none
    of them put in place: every file is written and fsynced before the first rename). See the
    module docstring. ``binary``: bytes file objects. ``force``: replace existing files.
    """
    paths = list(path) if isinstance(path, (list, tuple)) else [path]
    outs = []
    done = False
    current = None
    try:
        for p in paths:
            current = "standard output" if is_stdout(p) else os.fspath(p)
            outs.append(_Direct(p, binary, encoding) if is_stdout(p) or _special(p)
                        else _Atomic(os.fspath(p), force, binary, encoding))
        handles = [o.fh for o in outs]
        current = None
        try:
            yield handles if isinstance(path, (list, tuple)) else handles[0]
        except OSError as exc:
            if exc.errno not in _WRITE_ERRNOS:   # not a write failure: the caller's own error
                raise
            current = ", ".join(o.label for o in outs)
            raise
        for o in outs:
            current = o.label
            o.finish()
        global _committing
        _committing = True
        try:
            for o in outs:
                current = o.label
                o.commit()
        finally:
            _committing = False
        done = True
        if _pending:                       # a signal came during the renames: deliver it now
            os.kill(os.getpid(), _pending.pop())
            _pending.clear()
    except OSError as exc:
        if current is None:
            raise
        raise OutputError(f"cannot write: {_why(exc)}", current) from None
    finally:
        if not done:
            for o in outs:
                o.abort()


def write_text(path, text: str, force=False) -> None:
    """Write ``text`` to ``path`` (or standard output) through :func:`atomic_output`."""
    with atomic_output(path, force=force) as fh:
        fh.write(text)


__all__ = ["OutputError", "atomic_output", "plan_outputs", "check_output", "clean_leftovers", "write_text",
           "is_stdout", "STDOUT"]
