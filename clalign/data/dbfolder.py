"""The prepared-database folder on disk: its files, what is checked when, and ``--verify``.

Every rule a database must satisfy is written once here and applied at three places:

- :func:`check_arrays` (when a folder opens, and for arrays handed to :class:`Database`):
  dtypes and shapes; offsets start at 0, never decrease and end at the residue count;
  lengths are their differences; ``order`` is a permutation sorting the lengths; id and
  description offsets likewise end at their blob's size; every residue code is inside the
  alphabet; trailing stops at most ``MAX_STOPS`` (2^20) each and a length plus its stops
  within ``MAX_SEQUENCE_LENGTH``. Vectorised, one
  pass over each index array (O(sequences)) and one ``max`` over the residue codes.
- :func:`load_folder` (open): ``header.json`` (format key, version, field types), each
  ``.npy`` header read before anything is mapped (dtype, 1-D shape, file size exactly the
  header's promise, so a truncated or padded file and an absurd shape are refused before any
  memory is spent), the file sizes recorded in ``header.json``, then :func:`check_arrays`.
- :func:`verify_folder` (``clalign makedb --verify``): all of the above, the SHA-256 of every
  file recorded in ``header.json`` (``files``: name -> bytes, sha256; ``sha256sum`` computes
  the same), the header's summary fields, and ties of ``order`` kept in input order. (Ids and
  descriptions are the FASTA header's bytes, UTF-8 or not: read with replacement characters.)

Errors are :class:`InputError` naming the folder's file; for arrays passed to the API they
are ValueError naming the argument.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat

import numpy as np

from ..errors import InputError
from .alphabet import alphabet_by_name
from .fasta import MAX_SEQUENCE_LENGTH, MAX_STOPS

FORMAT = "clalign-db"
FORMAT_VERSION = 1
HEADER = "header.json"
#: The arrays of a database: name -> dtype. ``stops`` is optional in version 1 (see database.py).
DTYPES = {
    "residues": np.dtype("<u1"), "offsets": np.dtype("<i8"), "lengths": np.dtype("<i4"),
    "order": np.dtype("<i8"), "ids": np.dtype("<u1"), "id_offsets": np.dtype("<i8"),
    "descs": np.dtype("<u1"), "desc_offsets": np.dtype("<i8"), "stops": np.dtype("<u4"),
}
#: Files other clalign modules may add beside the arrays (the 2-bit nucleotide form).
DERIVED = re.compile(r"nt_[a-z0-9_]+\.npy")
_MAX_NPY_HEADER = 10000
_SHA_CHUNK = 8 << 20


class Damaged(ValueError):
    """One broken rule; ``field`` is the array (file stem) or header key it concerns."""

    def __init__(self, field, message):
        self.field = field
        super().__init__(f"{field}: {message}")


def open_regular(path):
    """A binary file object for ``path``, refusing (OSError ENXIO-like) anything but a regular
    file without blocking: a FIFO planted in a folder would otherwise hang the open."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _int_field(header, key, hpath, optional=False):
    if key not in header and optional:
        return None
    v = header.get(key)
    if type(v) is not int or v < 0:
        raise InputError(f"field {key!r} must be a non-negative integer, not {v!r}", hpath)
    return v


def read_header(path) -> dict:
    """``header.json`` of the folder, its fields type-checked (InputError naming the file)."""
    hpath = os.path.join(path, HEADER)
    try:
        with open_regular(hpath) as fh:
            raw = fh.read(1 << 20)
        header = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise InputError(f"not a prepared database (no {HEADER})", path) from None
    except (OSError, ValueError, RecursionError) as exc:   # RecursionError: "[[[[..." nested too deep
        raise InputError(f"unreadable database header: {str(exc) or type(exc).__name__}", hpath) from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise InputError("not a clalign database header", hpath)
    if header.get("format_version") != FORMAT_VERSION:
        raise InputError(f"database format version {header.get('format_version')!r} is not supported "
                         f"(this clalign reads version {FORMAT_VERSION}); rebuild it with clalign makedb", hpath)
    try:
        alphabet_by_name(header.get("alphabet"))
    except InputError:
        raise InputError(f"unknown alphabet {header.get('alphabet')!r}", hpath) from None
    for key in ("sequences", "total_residues", "max_length"):
        _int_field(header, key, hpath)
    _int_field(header, "trailing_stops", hpath, optional=True)
    files = header.get("files", {})
    ok = isinstance(files, dict) and all(
        isinstance(k, str) and (k[:-4] in DTYPES and k.endswith(".npy") or DERIVED.fullmatch(k))
        and isinstance(v, dict) and type(v.get("bytes")) is int and v["bytes"] >= 0
        and isinstance(v.get("sha256"), str) and re.fullmatch(r"[0-9a-f]{64}", v["sha256"])
        for k, v in files.items())
    if not ok:
        raise InputError("field 'files' must map file names to their bytes and sha256", hpath)
    return header


def _npy(path, name, dtype, shape, mmap):
    """Array ``name``.npy of the folder, its dtype, shape and exact size checked before reading."""
    f = os.path.join(path, name + ".npy")
    try:
        fh = open_regular(f)
    except FileNotFoundError:
        raise InputError(f"database file {name}.npy is missing", path) from None
    except OSError as exc:
        raise InputError(f"database file is unreadable: {exc.strerror}", f) from None
    with fh:
        try:
            version = np.lib.format.read_magic(fh)
            reader = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
            if version not in reader:
                raise ValueError(f"unsupported .npy version {version}")
            got_shape, _, got_dtype = reader[version](fh, max_header_size=_MAX_NPY_HEADER)
            start = fh.tell()
            size = os.fstat(fh.fileno()).st_size
        except Exception as exc:  # numpy parses the header with ast/tokenize: any of their errors means damage
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise InputError(f"not a valid .npy file ({why})", f) from None
        if got_dtype != dtype:
            raise InputError(f"dtype {got_dtype} where {dtype} is expected", f)
        if len(got_shape) != 1 or (shape is not None and got_shape != shape):
            want = "a 1-D array" if shape is None else f"shape {shape}"
            raise InputError(f"shape {got_shape} where {want} is expected (header.json: "
                             f"damaged or mismatched copy?)", f)
        n = got_shape[0]
        if size != start + n * dtype.itemsize:
            raise InputError(f"file is {size} bytes, its .npy header promises {start + n * dtype.itemsize} "
                             f"(truncated or padded copy?)", f)
        if n == 0:
            return np.zeros(0, dtype=dtype)
        try:
            if mmap:
                return np.memmap(f, dtype=dtype, mode="r", offset=start, shape=(n,))
            return np.fromfile(fh, dtype=dtype, count=n)
        except (OSError, ValueError) as exc:
            raise InputError(f"database file is unreadable: {exc}", f) from None


def _offsets_rules(off, end, field):
    if off.size == 0 or int(off[0]) != 0 or int(off[-1]) != end:
        raise Damaged(field, f"must run from 0 to {end}")
    if off.size > 1 and int(np.diff(off).min()) < 0:
        raise Damaged(field, "decreases (offsets must never decrease)")


#: Arrays of at least this many bytes have their largest value found in threads (the open-time
#: pass over a memory-mapped database's residues reads every page: ~0.2 s of one core for
#: 206 MB on the H200 host, on the path to a search's first launch).
PARALLEL_MAX_BYTES = 32 << 20


def _largest(a) -> int:
    """``int(a.max())`` of a non-empty 1-D array, in up to 8 threads for a large one."""
    threads = min(8, os.cpu_count() or 1)
    if a.nbytes < PARALLEL_MAX_BYTES or threads < 2:
        return int(a.max())
    from concurrent.futures import ThreadPoolExecutor

    cuts = np.linspace(0, a.size, threads + 1).astype(np.int64)
    with ThreadPoolExecutor(threads, thread_name_prefix="clalign-check") as ex:
        return max(ex.map(lambda i: int(a[cuts[i]:cuts[i + 1]].max()), range(threads)))


def check_arrays(residues, offsets, lengths, order, ids, id_offsets, descs, desc_offsets, stops, alphabet):
    """Every cheap consistency rule (see module doc); raises :class:`Damaged` on the first broken one."""
    arrays = dict(residues=residues, offsets=offsets, lengths=lengths, order=order, ids=ids,
                  id_offsets=id_offsets, descs=descs, desc_offsets=desc_offsets, stops=stops)
    for name, a in arrays.items():
        if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype.kind not in "ui":
            raise Damaged(name, f"must be a 1-D integer numpy array, not {type(a).__name__} "
                          f"{getattr(a, 'dtype', '')}{getattr(a, 'shape', '')}")
    n = lengths.size
    for name in ("order", "stops"):
        if arrays[name].size != n:
            raise Damaged(name, f"has {arrays[name].size} entries for {n} sequences")
    for name in ("offsets", "id_offsets", "desc_offsets"):
        if arrays[name].size != n + 1:
            raise Damaged(name, f"has {arrays[name].size} entries for {n} sequences (n+1 expected)")
    _offsets_rules(offsets, residues.size, "offsets")
    if n and not np.array_equal(np.diff(offsets), lengths):
        raise Damaged("lengths", "differ from the differences of offsets")
    if n:
        o = order
        if int(o.min()) < 0 or int(o.max()) >= n:
            raise Damaged("order", "is not a permutation of the sequences")
        seen = np.zeros(n, dtype=bool)
        seen[o] = True
        if not seen.all():
            raise Damaged("order", "is not a permutation of the sequences")
        ls = lengths[o]
        if not (ls[1:] >= ls[:-1]).all():
            raise Damaged("order", "does not sort the sequences by length")
        if int(stops.min()) < 0 or int(stops.max()) > MAX_STOPS:
            raise Damaged("stops", f"counts must lie in 0..{MAX_STOPS}")
        top = int(lengths.max()) + int(stops.max())
        if (top > MAX_SEQUENCE_LENGTH
                                    and int((lengths.astype(np.int64) + stops).max()) > MAX_SEQUENCE_LENGTH):
            raise Damaged("stops", f"a length plus its trailing stops exceeds {MAX_SEQUENCE_LENGTH}")
    _offsets_rules(id_offsets, ids.size, "id_offsets")
    _offsets_rules(desc_offsets, descs.size, "desc_offsets")
    for name in ("residues", "ids", "descs"):
        a = arrays[name]
        if a.dtype != np.uint8 and a.size and (int(a.min()) < 0 or int(a.max()) > 255):
            raise Damaged(name, "values must be bytes (0..255)")
    if residues.size:
        top = _largest(residues)
        if top >= alphabet.size:
            raise Damaged("residues", f"code {top} is outside the {alphabet.name} alphabet (0..{alphabet.size - 1})")


def load_folder(path, mmap=True):
    """(header, arrays) of a prepared-database folder, every open-time check passed."""
    header = read_header(path)
    hpath = os.path.join(path, HEADER)
    for name, meta in header.get("files", {}).items():
        f = os.path.join(path, name)
        try:
            st = os.stat(f)
            size = st.st_size if stat.S_ISREG(st.st_mode) else -1
        except FileNotFoundError:
            raise InputError(f"database file {name} is missing", path) from None
        except OSError as exc:
            raise InputError(f"database file is unreadable: {exc.strerror}", f) from None
        if size != meta["bytes"]:
            raise InputError(f"file is {size} bytes, header.json records {meta['bytes']} "
                             f"(truncated or modified copy?)", f)
    n, total = header["sequences"], header["total_residues"]
    a = {}
    a["offsets"] = np.asarray(_npy(path, "offsets", DTYPES["offsets"], (n + 1,), mmap))
    a["lengths"] = np.asarray(_npy(path, "lengths", DTYPES["lengths"], (n,), mmap))
    a["order"] = np.asarray(_npy(path, "order", DTYPES["order"], (n,), mmap))
    a["residues"] = _npy(path, "residues", DTYPES["residues"], (total,), mmap)
    for blob, off in (("ids", "id_offsets"), ("descs", "desc_offsets")):
        a[off] = np.asarray(_npy(path, off, DTYPES[off], (n + 1,), mmap))
        a[blob] = _npy(path, blob, DTYPES[blob], None, mmap)
    if os.path.lexists(os.path.join(path, "stops.npy")) or "trailing_stops" in header:
        a["stops"] = np.asarray(_npy(path, "stops", DTYPES["stops"], (n,), mmap))
    else:  # written before the counts were kept (still format version 1)
        a["stops"] = np.zeros(n, dtype=DTYPES["stops"])
    try:
        check_arrays(alphabet=alphabet_by_name(header["alphabet"]), **a)
    except Damaged as exc:
        raise InputError(str(exc).split(": ", 1)[1], os.path.join(path, exc.field + ".npy")) from None
    if n and int(a["lengths"].max()) != header["max_length"]:
        raise InputError(f"max_length {header['max_length']} differs from the lengths' {int(a['lengths'].max())}",
                         hpath)
    if "trailing_stops" in header and int(a["stops"].sum(dtype=np.int64)) != header["trailing_stops"]:
        raise InputError("trailing_stops differs from the sum of stops.npy", hpath)
    return header, a


def sha256_file(path) -> str:
    h = hashlib.sha256()
    with open_regular(path) as fh:
        while True:
            chunk = fh.read(_SHA_CHUNK)
            if not chunk:
                return h.hexdigest()
            h.update(chunk)


def verify_folder(path) -> str:
    """The full check (see module doc); returns a one-line summary, raises InputError naming the problem."""
    header, a = load_folder(path, mmap=True)
    files = header.get("files", {})
    for name, meta in sorted(files.items()):
        f = os.path.join(path, name)
        try:
            digest = sha256_file(f)
        except OSError as exc:
            raise InputError(f"database file is unreadable: {exc.strerror}", f) from None
        if digest != meta["sha256"]:
            raise InputError("checksum (sha256) differs from header.json: the file is damaged or was modified", f)
    o = a["order"]
    if o.size > 1:
        ties = np.diff(a["lengths"][o]) == 0
        if ties.any() and int(np.diff(o)[ties].min()) < 0:
            raise InputError("ties of equal length are not in input order", os.path.join(path, "order.npy"))
    sums = "no checksums recorded (written by an older clalign)" if not files else \
        f"{len(files)} files match their sha256"
    return (f"{path}: OK ({header['sequences']} sequences, {header['total_residues']} residues, "
            f"{header['alphabet']}; {sums})")


def is_database_folder(path) -> str | None:
    """None when ``path`` is provably a clalign database (a real folder holding a valid header and
    nothing but the database's own files), else the reason it is not."""
    if os.path.islink(path) or not os.path.isdir(path):
        return "not a folder" if not os.path.islink(path) else "a symbolic link"
    try:
        header = read_header(path)
    except InputError as exc:
        return exc.reason
    own = {HEADER, *(k + ".npy" for k in DTYPES)}
    try:
        entries = list(os.scandir(path))
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    for e in entries:
        if not (e.name in own or DERIVED.fullmatch(e.name)):
            return f"it holds {e.name!r}, which is not a database file"
        if not e.is_file(follow_symlinks=False):
            return f"{e.name!r} is not a regular file"
    return None
