"""Sequence databases: in memory (from FASTA) or prepared on disk by ``makedb`` (memory-mapped).

A prepared database is a folder of ``.npy`` files plus ``header.json``:

================  =======  ==========================================================
file              dtype    content
================  =======  ==========================================================
residues.npy      uint8    all sequences' codes, concatenated in input order
offsets.npy       int64    n+1 offsets; sequence i = residues[offsets[i]:offsets[i+1]]
lengths.npy       int32    n lengths
order.npy         int64    indices sorted by length, ascending (stable: input order on ties)
ids.npy           uint8    UTF-8 identifiers, concatenated;  id_offsets.npy int64 (n+1)
descs.npy         uint8    UTF-8 descriptions, concatenated; desc_offsets.npy int64 (n+1)
stops.npy         uint32   n counts of trailing '*' the FASTA reader stripped (see below)
header.json                format, format_version, alphabet, sequences, total_residues,
                           max_length, trailing_stops (sum of stops.npy), created_by, source
================  =======  ==========================================================

``stops.npy`` came later than the other files and is optional within format version 1: a
database written without it (older clalign) opens with all counts zero, the value they had
then; an older clalign opening a newer database ignores the file, as it did every extra
file. The ``trailing_stops`` header key says the file was written, so once the key is there a
missing ``stops.npy`` is an error (a truncated copy), not zeros.

No pickles: everything opens with ``np.load(mmap_mode="r")`` and nothing is read until used.

``makedb`` writes atomically: into a hidden temporary sibling folder, then one rename; on any
failure (bad FASTA, Ctrl-C, SIGTERM through the CLI) the temporary folder is removed and
nothing is left. An existing OUT is refused unless ``force=True``, and even then only a
prepared database is replaced (never an arbitrary file or folder). BLAST's makeblastdb
silently overwrites; we prefer not to destroy anything by surprise.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
import uuid
from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from .alphabet import DNA, PROTEIN, Alphabet, alphabet_by_name
from .fasta import is_fasta_file, parse_fasta

FORMAT = "clalign-db"
FORMAT_VERSION = 1
HEADER = "header.json"
_FILES = ("residues", "offsets", "lengths", "order", "ids", "id_offsets", "descs", "desc_offsets")


def _version():
    try:
        from .. import __version__
        return __version__
    except Exception:  # pragma: no cover - only during partial installs
        return "unknown"


class StringTable(Sequence):
    """Read-only sequence of str stored as one UTF-8 blob (uint8 array) plus int64 offsets."""

    def __init__(self, blob, offsets):
        self.blob = np.asarray(blob, dtype=np.uint8) if not isinstance(blob, np.ndarray) else blob
        self.offsets = offsets

    @classmethod
    def from_bytes(cls, items):
        items = list(items)
        lens = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
        offsets = np.zeros(len(items) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        return cls(np.frombuffer(b"".join(items), dtype=np.uint8), offsets)

    def __len__(self):
        return len(self.offsets) - 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        i = int(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("index out of range")
        return self.blob[self.offsets[i]:self.offsets[i + 1]].tobytes().decode("utf-8", "replace")

    def __iter__(self):
        text = self.blob.tobytes()
        off = self.offsets.tolist()
        for a, b in zip(off[:-1], off[1:]):
            yield text[a:b].decode("utf-8", "replace")

    def __eq__(self, other):
        return list(self) == list(other)

    def __repr__(self):
        return f"<StringTable of {len(self)}>"

    def tolist(self):
        return list(self)

    def subset(self, indices):
        idx = np.asarray(indices, dtype=np.int64)
        off = self.offsets
        parts = [self.blob[a:b] for a, b in zip(off[idx].tolist(), off[idx + 1].tolist())]
        lens = off[idx + 1] - off[idx]
        new = np.zeros(idx.size + 1, dtype=np.int64)
        np.cumsum(lens, out=new[1:])
        blob = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)
        return StringTable(blob, new)


class Database:
    """Sequences as one residue-code array with offsets, lengths, ids, descriptions and a
    length-sorted order. Build with :meth:`open`, :meth:`from_fasta`, :meth:`from_sequences`
    or :func:`as_database`.

    ``stops`` (uint32, one per sequence, in the order of ``lengths``): how many ``*`` (stop)
    characters the FASTA reader stripped from the end of each sequence; they are not in
    ``residues`` nor in ``lengths``. Kept because HMMER reads a trailing ``*`` as a residue
    and counts it in the target length L (null model, MSV length model, E-values), so
    ``hmmsearch`` needs ``lengths + stops`` to reproduce HMMER on such files. Zeros when
    unknown: :meth:`from_sequences`, and databases prepared before the counts were saved.
    """

    def __init__(self, residues, offsets, ids, descriptions, alphabet, lengths=None, order=None,
                 path=None, source=None, stops=None):
        self.residues = residues
        self.offsets = offsets
        self.lengths = lengths if lengths is not None else np.diff(offsets).astype(np.int32)
        self.stops = stops if stops is not None else np.zeros(len(self.lengths), dtype=np.uint32)
        if len(self.stops) != len(self.lengths):
            raise ValueError("stops must have one entry per sequence")
        self.ids = ids if isinstance(ids, StringTable) else StringTable.from_bytes(
            x.encode("utf-8") if isinstance(x, str) else bytes(x) for x in ids)
        self.descriptions = descriptions if isinstance(descriptions, StringTable) else StringTable.from_bytes(
            x.encode("utf-8") if isinstance(x, str) else bytes(x) for x in descriptions)
        self.alphabet = alphabet_by_name(alphabet)
        self.order = order if order is not None else np.argsort(self.lengths, kind="stable").astype(np.int64)
        self.path = path
        self.source = source

    # --- construction -------------------------------------------------------------------
    @classmethod
    def from_fasta(cls, path, alphabet="auto"):
        """Parse a FASTA file (plain or gzip) into an in-memory database."""
        from .inputs import as_path

        p = parse_fasta(as_path(path, "path"), alphabet)   # never an int (a file descriptor)
        return cls._from_parsed(p, source=os.path.basename(os.fspath(path)))

    @classmethod
    def _from_parsed(cls, p, source=None):
        offsets = np.zeros(p.lengths.size + 1, dtype=np.int64)
        np.cumsum(p.lengths, out=offsets[1:])
        return cls(p.residues, offsets, StringTable.from_bytes(p.ids), StringTable.from_bytes(p.descriptions),
                   p.alphabet, lengths=p.lengths.astype(np.int32), source=source,
                   stops=np.asarray(p.stops, dtype=np.uint32))

    @classmethod
    def from_sequences(cls, sequences, ids=None, descriptions=None, alphabet="protein"):
        """An in-memory database from strings (or code arrays); ids default to ``seq1, seq2...``."""
        alpha = alphabet_by_name(alphabet)
        codes = [alpha.encode(s) if isinstance(s, (str, bytes)) else np.asarray(s, dtype=np.uint8)
                 for s in sequences]
        n = len(codes)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([c.size for c in codes], out=offsets[1:])
        residues = np.concatenate(codes) if codes else np.zeros(0, dtype=np.uint8)
        ids = list(ids) if ids is not None else [f"seq{i + 1}" for i in range(n)]
        descriptions = list(descriptions) if descriptions is not None else [""] * n
        if len(ids) != n or len(descriptions) != n:
            raise ValueError("ids/descriptions must have one entry per sequence")
        return cls(residues, offsets, ids, descriptions, alpha)

    @classmethod
    def open(cls, path, mmap=True):
        """Open a prepared database folder (``clalign makedb``), memory-mapped by default."""
        path = os.fspath(path)
        hpath = os.path.join(path, HEADER)
        if not os.path.isdir(path):
            raise InputError("no such prepared database folder", path)
        try:
            with open(hpath, "r", encoding="utf-8") as fh:
                header = json.load(fh)
        except FileNotFoundError:
            raise InputError(f"not a prepared database (no {HEADER})", path) from None
        except (OSError, ValueError) as exc:
            raise InputError(f"unreadable database header: {exc}", hpath) from None
        if header.get("format") != FORMAT:
            raise InputError("not a clalign database header", hpath)
        if header.get("format_version") != FORMAT_VERSION:
            raise InputError(f"database format version {header.get('format_version')} is not supported "
                             f"(this clalign reads version {FORMAT_VERSION}); rebuild it with clalign makedb", hpath)
        arrays = {}
        for name in _FILES:
            f = os.path.join(path, name + ".npy")
            try:
                arrays[name] = np.load(f, mmap_mode="r" if mmap else None, allow_pickle=False)
            except FileNotFoundError:
                raise InputError(f"database file {name}.npy is missing", path) from None
            except (OSError, ValueError) as exc:
                raise InputError(f"database file {name}.npy is unreadable: {exc}", path) from None
        n = int(header["sequences"])
        stops = None
        f = os.path.join(path, "stops.npy")
        try:
            stops = np.load(f, mmap_mode="r" if mmap else None, allow_pickle=False)
        except FileNotFoundError:
            if "trailing_stops" in header:
                raise InputError("database file stops.npy is missing", path) from None
        except (OSError, ValueError) as exc:
            raise InputError(f"database file stops.npy is unreadable: {exc}", path) from None
        if stops is None:  # written before the counts were kept (still format version 1)
            stops = np.zeros(n, dtype=np.uint32)
        ok = (stops.shape == (n,) and stops.dtype.kind in "ui"
              and arrays["offsets"].shape == (n + 1,) and arrays["lengths"].shape == (n,)
              and arrays["order"].shape == (n,) and arrays["residues"].shape == (int(header["total_residues"]),)
              and arrays["id_offsets"].shape == (n + 1,) and arrays["desc_offsets"].shape == (n + 1,))
        if not ok:
            raise InputError("database files are inconsistent with header.json (truncated copy?)", path)
        # Small index arrays are read into memory; the residue stream and blobs stay mapped.
        return cls(arrays["residues"], np.asarray(arrays["offsets"]),
                   StringTable(arrays["ids"], np.asarray(arrays["id_offsets"])),
                   StringTable(arrays["descs"], np.asarray(arrays["desc_offsets"])),
                   header["alphabet"], lengths=np.asarray(arrays["lengths"]), order=np.asarray(arrays["order"]),
                   path=path, source=header.get("source"), stops=np.asarray(stops))

    # --- access --------------------------------------------------------------------------
    def __len__(self):
        return len(self.lengths)

    def __repr__(self):
        where = f" at {self.path}" if self.path else ""
        return f"<Database {self.alphabet.name}: {len(self)} sequences, {self.total_residues} residues{where}>"

    @property
    def total_residues(self) -> int:
        return int(self.offsets[-1]) if len(self.offsets) else 0

    @property
    def max_length(self) -> int:
        return int(self.lengths.max()) if len(self) else 0

    def sequence(self, i) -> np.ndarray:
        """Codes (np.uint8) of sequence ``i``."""
        i = int(i)
        if i < 0:
            i += len(self)
        return self.residues[self.offsets[i]:self.offsets[i + 1]]

    def sequence_str(self, i) -> str:
        """Letters of sequence ``i``."""
        return self.alphabet.decode(self.sequence(i))

    def subset(self, indices) -> "Database":
        """A new in-memory database of the sequences ``indices``, in that order."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < -len(self) or idx.max() >= len(self)):
            raise IndexError("subset index out of range")
        idx = np.where(idx < 0, idx + len(self), idx)
        starts = self.offsets[idx].tolist()
        ends = self.offsets[idx + 1].tolist()
        res = self.residues
        parts = [res[a:b] for a, b in zip(starts, ends)]
        residues = np.concatenate(parts).astype(np.uint8, copy=False) if parts else np.zeros(0, dtype=np.uint8)
        lengths = np.asarray(self.lengths[idx], dtype=np.int32)
        offsets = np.zeros(idx.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return Database(residues, offsets, self.ids.subset(idx), self.descriptions.subset(idx), self.alphabet,
                        lengths=lengths, source=self.source, stops=np.asarray(self.stops[idx], dtype=np.uint32))

    # --- writing -------------------------------------------------------------------------
    def save(self, out_dir, force=False, source=None):
        """Write this database as a prepared-database folder (atomically; see module doc)."""
        return _write_atomic(self, out_dir, force, source or self.source)


def _header(db, source):
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "alphabet": db.alphabet.name,
        "sequences": len(db),
        "total_residues": db.total_residues,
        "max_length": db.max_length,
        "trailing_stops": int(np.sum(db.stops, dtype=np.int64)),
        "created_by": f"clalign {_version()}",
        "source": source,
    }


def _check_target(out_dir, force):
    if os.path.lexists(out_dir):
        is_db = os.path.isdir(out_dir) and os.path.isfile(os.path.join(out_dir, HEADER))
        if not force:
            raise InputError("output already exists; use --force to replace it", out_dir)
        if not is_db:
            raise InputError("output exists and is not a clalign database; refusing to replace it even with --force",
                             out_dir)


def _write_atomic(db, out_dir, force, source):
    out_dir = os.path.abspath(os.fspath(out_dir))
    _check_target(out_dir, force)
    parent = os.path.dirname(out_dir)
    if not os.path.isdir(parent):
        raise InputError("parent folder does not exist", parent)
    tmp = os.path.join(parent, f".{os.path.basename(out_dir)}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    os.mkdir(tmp)
    try:
        arrays = {
            "residues": np.asarray(db.residues, dtype=np.uint8),
            "offsets": np.asarray(db.offsets, dtype=np.int64),
            "lengths": np.asarray(db.lengths, dtype=np.int32),
            "order": np.asarray(db.order, dtype=np.int64),
            "ids": np.asarray(db.ids.blob, dtype=np.uint8),
            "id_offsets": np.asarray(db.ids.offsets, dtype=np.int64),
            "descs": np.asarray(db.descriptions.blob, dtype=np.uint8),
            "desc_offsets": np.asarray(db.descriptions.offsets, dtype=np.int64),
            "stops": np.asarray(db.stops, dtype=np.uint32),
        }
        for name, arr in arrays.items():
            np.save(os.path.join(tmp, name + ".npy"), arr, allow_pickle=False)
        with open(os.path.join(tmp, HEADER), "w", encoding="utf-8") as fh:
            json.dump(_header(db, source), fh, indent=1)
            fh.write("\n")
        old = None
        if os.path.lexists(out_dir):  # force=True and a database: move it aside, then swap
            _check_target(out_dir, force)
            old = tmp + ".old"
            os.rename(out_dir, old)
        os.rename(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return out_dir


def makedb(fasta, out_dir, alphabet="auto", force=False, quiet=False, progress=None):
    """Prepare a database folder from a FASTA file (plain or gzip); returns the opened Database.

    ``alphabet``: "auto", "protein"/"prot" or "dna"/"nucl". Prints a one-line summary to
    stderr unless ``quiet``. The output appears whole or not at all.
    """
    t0 = time.perf_counter()
    out_dir = os.fspath(out_dir)
    _check_target(os.path.abspath(out_dir), force)  # fail before the (long) parse
    p = parse_fasta(fasta, alphabet, progress=progress)
    if p.lengths.size == 0:
        raise InputError("no FASTA records (empty file?)", os.fspath(fasta))
    db = Database._from_parsed(p, source=os.path.basename(os.fspath(fasta)))
    _write_atomic(db, out_dir, force, db.source)
    dt = time.perf_counter() - t0
    if not quiet:
        print(f"makedb: {len(db)} sequences, {db.total_residues} residues ({db.alphabet.name}, "
              f"max length {db.max_length}) in {dt:.1f} s -> {out_dir}", file=sys.stderr)
    return Database.open(out_dir)


def as_database(x, alphabet="auto") -> Database:
    """A Database from a Database, a prepared-database folder or a FASTA file (plain or gzip)."""
    if isinstance(x, Database):
        return x
    if not isinstance(x, (str, os.PathLike)):
        raise TypeError(f"expected a Database or a path, got {type(x).__name__}")
    path = os.fspath(x)
    if os.path.isdir(path):
        return Database.open(path)
    if not os.path.exists(path):
        raise InputError("no such file or prepared database", path)
    if is_fasta_file(path):
        return Database.from_fasta(path, alphabet)
    raise InputError("neither a prepared database folder nor a FASTA file", path)


__all__ = ["Database", "StringTable", "makedb", "as_database", "PROTEIN", "DNA", "Alphabet"]
