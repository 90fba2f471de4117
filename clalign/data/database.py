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
                           max_length, trailing_stops (sum of stops.npy), created_by, source,
                           files (each file's bytes and sha256; absent in older databases)
================  =======  ==========================================================

``stops.npy`` came later than the other files and is optional within format version 1: a
database written without it (older clalign) opens with all counts zero, the value they had
then; an older clalign opening a newer database ignores the file, as it did every extra
file. The ``trailing_stops`` header key says the file was written, so once the key is there a
missing ``stops.npy`` is an error (a truncated copy), not zeros.

No pickles: each ``.npy`` header is read and checked by us, then the array is memory-mapped
(``np.memmap``); the index arrays are checked at once, the residue codes in one pass.

``makedb`` writes atomically and replaces an existing database (``force=True``, and only a
folder that is provably one) safely: see :mod:`clalign.data.dbwrite`. What is checked when a
folder opens, and what :func:`verify` (``clalign makedb --verify``) adds: see
:mod:`clalign.data.dbfolder`. BLAST's makeblastdb silently overwrites; we prefer not to destroy
anything by surprise.
"""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from .alphabet import DNA, PROTEIN, Alphabet, alphabet_by_name
from .dbfolder import FORMAT, FORMAT_VERSION, HEADER  # noqa: F401 (HEADER: re-exported as before)
from .dbfolder import DERIVED, check_arrays, load_folder, verify_folder
from .dbwrite import check_target, recover, write_folder
from .fasta import FastaArrays, is_fasta_file, parse_fasta_arrays, path_arg


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
        return self._item(i)

    def _item(self, i):
        """Item ``i`` (0 <= i < len), after ``__getitem__`` has checked it; subclasses that decode
        items another way override this alone."""
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


def _ints(x, name, dtype):
    """``x`` as a 1-D array of ``dtype``; ValueError naming ``name`` when a value does not fit."""
    a = np.asarray(x)
    if a.size == 0:
        return a.astype(dtype).reshape(0)
    if a.ndim != 1 or a.dtype.kind not in "ui":
        raise ValueError(f"{name} must be a 1-D array of integers, not {a.dtype} {a.shape}")
    info = np.iinfo(dtype)
    if a.dtype != dtype and (int(a.min()) < info.min or int(a.max()) > info.max):
        raise ValueError(f"{name}: values must lie in {info.min}..{info.max} ({np.dtype(dtype).name})")
    return a.astype(dtype, copy=False)


def _strings(x, name):
    """A StringTable of str/bytes items (an int would make bytes(n) zeros: refused)."""
    if isinstance(x, StringTable):
        return StringTable(_ints(x.blob, f"{name}.blob", np.uint8), _ints(x.offsets, f"{name}.offsets", np.int64))
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be a list of str, not a single {type(x).__name__}")
    items = []
    for v in x:
        if isinstance(v, str):
            items.append(v.encode("utf-8"))
        elif isinstance(v, (bytes, bytearray)):
            items.append(bytes(v))
        else:
            raise TypeError(f"{name} must hold str or bytes, not {type(v).__name__}")
    return StringTable.from_bytes(items)


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
                 path=None, source=None, stops=None, _checked=False):
        self.alphabet = alphabet_by_name(alphabet)
        if not _checked:  # arrays from the API: types, value ranges, then every consistency rule
            residues, offsets = _ints(residues, "residues", np.uint8), _ints(offsets, "offsets", np.int64)
            lengths = None if lengths is None else _ints(lengths, "lengths", np.int32)
            order = None if order is None else _ints(order, "order", np.int64)
            stops = None if stops is None else _ints(stops, "stops", np.uint32)
            ids, descriptions = _strings(ids, "ids"), _strings(descriptions, "descriptions")
            if lengths is None and offsets.size:
                lengths = _ints(np.diff(offsets), "lengths (offset differences)", np.int32)
        self.residues = residues
        self.offsets = offsets
        self.lengths = lengths if lengths is not None else np.diff(offsets).astype(np.int32)
        self.stops = stops if stops is not None else np.zeros(len(self.lengths), dtype=np.uint32)
        if len(self.stops) != len(self.lengths):
            raise ValueError("stops must have one entry per sequence")
        self.ids, self.descriptions = ids, descriptions
        self.order = order if order is not None else np.argsort(self.lengths, kind="stable").astype(np.int64)
        if not _checked:
            check_arrays(self.residues, self.offsets, self.lengths, self.order, self.ids.blob, self.ids.offsets,
                         self.descriptions.blob, self.descriptions.offsets, self.stops, self.alphabet)
        self.path = path
        self.source = source

    # --- construction -------------------------------------------------------------------
    @classmethod
    def from_fasta(cls, path, alphabet="auto"):
        """Parse a FASTA file (plain or gzip) into an in-memory database."""
        path = path_arg(path, "path")
        return cls._from_parsed(parse_fasta_arrays(path, alphabet), source=os.path.basename(path))

    @classmethod
    def _from_parsed(cls, p, source=None):
        """From :class:`clalign.data.fasta.FastaArrays` (or a ParsedFasta, ids as lists)."""
        if isinstance(p, FastaArrays):
            ids, descs = StringTable(p.id_blob, p.id_offsets), StringTable(p.desc_blob, p.desc_offsets)
            offsets = p.offsets
        else:
            ids, descs = StringTable.from_bytes(p.ids), StringTable.from_bytes(p.descriptions)
            offsets = np.zeros(p.lengths.size + 1, dtype=np.int64)
            np.cumsum(p.lengths, out=offsets[1:])
        return cls(p.residues, offsets, ids, descs, p.alphabet, lengths=p.lengths.astype(np.int32), source=source,
                   stops=np.asarray(p.stops, dtype=np.uint32), _checked=True)

    @classmethod
    def from_sequences(cls, sequences, ids=None, descriptions=None, alphabet="protein"):
        """An in-memory database from strings (or code arrays); ids default to ``seq1, seq2...``."""
        alpha = alphabet_by_name(alphabet)
        if isinstance(sequences, (str, bytes, np.ndarray)):
            raise TypeError(f"sequences must be a list of sequences, not a single {type(sequences).__name__}")
        codes = []
        for i, s in enumerate(sequences):
            if isinstance(s, (str, bytes)):
                codes.append(alpha.encode(s))
            elif isinstance(s, (np.ndarray, list, tuple)):
                c = _ints(s, f"sequences[{i}]", np.uint8)
                if c.size and int(c.max()) >= alpha.size:
                    raise ValueError(f"sequences[{i}]: code {int(c.max())} is outside the {alpha.name} "
                                     f"alphabet (0..{alpha.size - 1})")
                codes.append(c)
            else:
                raise TypeError(f"sequences[{i}] must be a str, bytes or an array of codes, not {type(s).__name__}")
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
        """Open a prepared database folder (``clalign makedb``), memory-mapped by default,
        or a BLAST+ database prefix/alias (:mod:`clalign.data.blastdb`).

        Checked on open (see :mod:`clalign.data.dbfolder`): the header, every file's dtype,
        shape and size, and every consistency rule, in O(sequences) vectorised work plus one
        pass over the residue codes; checksums only by :func:`verify` (``makedb --verify``)."""
        path = path_arg(path, "path")
        from .blastdb import open_if_blastdb
        blast = open_if_blastdb(path)
        if blast is not None:
            return blast
        if not os.path.isdir(path):
            recover(path)  # a makedb killed while replacing it may have left it aside
        if not os.path.isdir(path):
            exists = os.path.exists(path)
            raise InputError("not a prepared database folder (a file)" if exists else
                             "no such prepared database folder", path)
        header, a = load_folder(path, mmap)
        return cls(a["residues"], a["offsets"], StringTable(a["ids"], a["id_offsets"]),
                   StringTable(a["descs"], a["desc_offsets"]), header["alphabet"], lengths=a["lengths"],
                   order=a["order"], path=path, source=header.get("source"), stops=a["stops"], _checked=True)

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
                        lengths=lengths, source=self.source, stops=np.asarray(self.stops[idx], dtype=np.uint32),
                        _checked=True)

    # --- writing -------------------------------------------------------------------------
    def save(self, out_dir, force=False, source=None):
        """Write this database as a prepared-database folder (atomically; see module doc)."""
        return _write(self, path_arg(out_dir, "out_dir"), force, source or self.source)


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


def _write(db, out_dir, force, source, extra=None):
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
    for name, arr in (extra or {}).items():
        if not DERIVED.fullmatch(name + ".npy") or not isinstance(arr, np.ndarray):
            raise ValueError(f"derived file {name!r}: names are nt_* and values numpy arrays")
        arrays[name] = arr
    return write_folder(arrays, _header(db, source), out_dir, force)


def verify(path) -> str:
    """The full check of a prepared database (checksums and every rule): a one-line "OK"
    summary, or InputError naming the damaged file and the problem."""
    path = path_arg(path, "path")
    if not os.path.isdir(path):
        raise InputError("no such prepared database folder", path)
    return verify_folder(path)


def makedb(fasta, out_dir, alphabet="auto", force=False, quiet=False, progress=None, derived=None):
    """Prepare a database folder from a FASTA file (plain or gzip); returns the opened Database.

    ``alphabet``: "auto", "protein"/"prot" or "dna"/"nucl". Prints a one-line summary to
    stderr unless ``quiet``. The output appears whole or not at all. ``derived``: optional
    callable(db) -> {name: 1-D array} of extra files (names ``nt_*``, e.g. a 2-bit nucleotide
    form) written into the same temporary folder, so they too appear atomically with checksums.
    """
    t0 = time.perf_counter()
    fasta = path_arg(fasta, "fasta")
    out_dir = path_arg(out_dir, "out_dir")
    check_target(os.path.abspath(out_dir), force)  # fail before the (long) parse
    p = parse_fasta_arrays(fasta, alphabet, progress=progress)
    if p.lengths.size == 0:
        raise InputError("no FASTA records (empty file?)", os.fspath(fasta))
    db = Database._from_parsed(p, source=os.path.basename(os.fspath(fasta)))
    _write(db, out_dir, force, db.source, derived(db) if derived is not None else None)
    dt = time.perf_counter() - t0
    if not quiet:
        print(f"makedb: {len(db)} sequences, {db.total_residues} residues ({db.alphabet.name}, "
              f"max length {db.max_length}) in {dt:.1f} s -> {out_dir}", file=sys.stderr)
    return Database.open(out_dir)


def as_database(x, alphabet="auto") -> Database:
    """A Database from a Database, a prepared-database folder, a BLAST+ database (its prefix
    wins over a FASTA file of the same name, as BLAST+'s ``-db``) or a FASTA file (plain or gzip)."""
    if isinstance(x, Database):
        return x
    if not isinstance(x, (str, os.PathLike)):
        raise TypeError(f"expected a Database or a path, got {type(x).__name__}")
    path = os.fspath(x)
    if not os.path.exists(path):
        recover(path)  # a makedb killed while replacing it may have left it aside
    if os.path.isdir(path):
        return Database.open(path)
    from .blastdb import open_if_blastdb
    blast = open_if_blastdb(path, alphabet)
    if blast is not None:
        return blast
    if not os.path.exists(path):
        raise InputError("no such file or prepared database", path)
    if is_fasta_file(path):
        return Database.from_fasta(path, alphabet)
    raise InputError("neither a prepared database folder nor a FASTA file", path)


__all__ = ["Database", "StringTable", "makedb", "as_database", "PROTEIN", "DNA", "Alphabet"]
