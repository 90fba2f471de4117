"""Bounded reading of an input file (plain or gzip) for the FASTA readers: a path argument
checked, at most :func:`max_input_bytes` read (a quarter of RAM unless ``MAX_INPUT_BYTES`` says
otherwise), read in chunks so a pipe, ``/dev/zero`` or a gzip bomb stops early, and a NUL byte
or text before the first ``>`` refused at once (errors name the file and line)."""
from __future__ import annotations

import gzip
import os
import stat
import zlib

from ..errors import InputError

_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 4 << 20
#: Largest input read into memory, in bytes (None: a quarter of the machine's RAM).
MAX_INPUT_BYTES = None
_BLANKS = b" \t\r\n\v\f"


def path_arg(value, name="path") -> str:
    """``value`` as a str path; TypeError naming the argument for anything that is not a path.

    An int is refused on purpose: ``open(2)`` would read (and then close) the process's stderr.
    """
    if isinstance(value, (str, bytes, os.PathLike)):
        return os.fsdecode(os.fspath(value))
    raise TypeError(f"{name} must be a file path (str or os.PathLike), not {type(value).__name__}")


def max_input_bytes() -> int:
    """The largest FASTA (after gunzip) read into memory: MAX_INPUT_BYTES, else a quarter of RAM."""
    if MAX_INPUT_BYTES is not None:
        return MAX_INPUT_BYTES
    try:
        ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        ram = 16 << 30
    return max(ram // 4, 64 << 20)


def _too_big(path, limit):
    return InputError(f"larger than {limit:,} bytes, the most this machine reads into memory "
                      f"(a quarter of its RAM): not a FASTA file, or split it", path)


def _check_start(path, data: bytes):
    """Early refusal of what cannot be FASTA (e.g. /dev/zero): a NUL byte, or text before any '>'."""
    nul = data.find(b"\0")
    if nul >= 0:
        raise InputError("NUL byte (a binary file, not FASTA?)", path, _line_of(data, nul))
    for i in range(0, len(data), 1 << 16):     # the first non-blank byte, without copying all
        piece = data[i:i + (1 << 16)]
        body = piece.lstrip(_BLANKS)
        if body:
            if body[:1] != b">":
                pos = i + len(piece) - len(body)
                raise InputError("sequence data before the first '>' header line (not FASTA?)", path,
                                 _line_of(data, pos))
            return


def _read(path, size=-1, check=False) -> bytes:
    """The first ``size`` bytes of the (gunzipped, when it starts with the gzip magic) file; all with -1.

    Reading all is bounded by :func:`max_input_bytes` and, with ``check``, stops at the first
    chunk that cannot be FASTA, so /dev/zero, a pipe or a gzip bomb never exhaust memory.
    """
    limit = max_input_bytes()
    with open(path, "rb") as fh:
        head = fh.peek(2)[:2]                  # no seek: pipes and FIFOs work too
        src = gzip.GzipFile(fileobj=fh) if head == _GZIP_MAGIC else fh
        with src:
            if size >= 0:
                return src.read(size)
            if src is fh and stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                if os.fstat(fh.fileno()).st_size > limit:
                    raise _too_big(path, limit)
                data = fh.read(limit + 1)       # a regular file: one allocation
                if len(data) > limit:
                    raise _too_big(path, limit)
                if check:
                    _check_start(path, data)
                return data
            parts, total = [], 0
            while True:
                chunk = src.read(min(_CHUNK, limit + 1 - total))
                if not chunk:
                    break
                if check and not parts:
                    _check_start(path, chunk)
                elif check and b"\0" in chunk:
                    _check_start(path, b"".join(parts) + chunk)
                parts.append(chunk)
                total += len(chunk)
                if total > limit:
                    raise _too_big(path, limit)
            return b"".join(parts)


def read_array(path, pieces: int, min_bytes: int):
    """A plain regular file of ``min_bytes`` or more (within :func:`max_input_bytes`) as a uint8
    array, read by ``pieces`` threads side by side (``os.preadv`` releases the interpreter lock,
    and each thread faults in its own pages), or None for anything else (gzip, a pipe, a small,
    huge or unreadable file): :func:`read_bytes` reads those and reports what is wrong. No
    content check here: the caller's scan must refuse a NUL byte and text before the first '>'."""
    import numpy as np
    from concurrent.futures import ThreadPoolExecutor

    path = path_arg(path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):     # never open a FIFO here: read_bytes reads it
            return None
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        size = st.st_size
        if not stat.S_ISREG(st.st_mode) or size < min_bytes or size > max_input_bytes() \
                or os.pread(fd, 2, 0) == _GZIP_MAGIC:
            return None
        arr = np.empty(size, dtype=np.uint8)
        cuts = [size * k // pieces for k in range(pieces + 1)]

        def part(k):
            pos, end = cuts[k], cuts[k + 1]
            while pos < end:
                got = os.preadv(fd, [memoryview(arr[pos:end])], pos)
                if got <= 0:
                    return False           # the file shrank meanwhile
                pos += got
            return True

        with ThreadPoolExecutor(max_workers=pieces) as pool:
            done = all(pool.map(part, range(pieces)))
        return arr if done and os.fstat(fd).st_size == size else None
    except OSError:
        return None
    finally:
        os.close(fd)


def read_bytes(path) -> bytes:
    """File contents, gunzipped when the file starts with the gzip magic bytes (bounded, see _read)."""
    path = path_arg(path)
    try:
        return _read(path, check=True)
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a FASTA file", path) from None
    except (OSError, EOFError, zlib.error) as exc:
        if isinstance(exc, PermissionError):
            raise InputError("permission denied", path) from None
        raise InputError(f"cannot read (corrupt gzip data?): {exc}", path) from None


def _line_of(data: bytes, pos: int) -> int:
    return data.count(b"\n", 0, pos) + 1
