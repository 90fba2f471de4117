"""Read BLAST+ databases made by ``makeblastdb`` (protein and nucleotide, format v4 and v5).

Usage::

    from clalign.data.blastdb import open_blastdb, open_blast_nucleotide, is_blastdb
    db = open_blastdb("path/prefix")        # protein -> Database (NCBIstdaa codes = ours)
    db.blast_ids.sseqid(oid)                 # subject ids as BLAST+ 2.12 prints them
    nt = open_blast_nucleotide("genome")     # nucleotide -> NucleotideDatabase (2-bit + ambiguities)

``Database.open``/``as_database`` (and so every engine's ``-db``) accept a BLAST database
prefix or alias name as well: see :func:`is_blastdb`.

File layout (facts from BLAST+'s ``seqdb_reader``/``seqdb_writer``, checked on files made
here by makeblastdb 2.12). All integers big-endian except the total length:

- index ``.pin``/``.nin``: ``u32 version`` (4 or 5), ``u32 seqtype`` (1 protein, 0 nucleotide),
  v5 only ``u32 volume``; strings ``u32 len + bytes``: title, v5 only the LMDB file name, date;
  ``u32 n`` (OIDs), ``u64 total residues`` (little-endian), ``u32 max length``; then ``n+1``
  ``u32`` header offsets, ``n+1`` sequence offsets and, nucleotide only, ``n+1`` ambiguity
  offsets. Nothing follows.
- protein ``.psq``: a NUL byte, then each sequence's NCBIstdaa codes followed by a NUL;
  sequence i is ``psq[seq[i] : seq[i+1]-1]``. Our protein codes are NCBIstdaa, so residues
  are copied as they are, except trailing ``*`` (stops), moved to ``Database.stops`` as our
  FASTA reader does (BLAST+ keeps them as residues of the subject).
- nucleotide ``.nsq``: sequence i's NCBI2na bytes are ``nsq[seq[i] : amb[i]]`` (4 bases a
  byte, first base in the high bits; the last byte holds the 0-3 remaining bases and their
  count in its low 2 bits, so length = 4 * (bytes - 1) + (last & 3)); its ambiguity table is
  ``nsq[amb[i] : seq[i+1]]`` (empty when none): see :mod:`clalign.data.nucleotide`.
- headers ``.phr``/``.nhr``: header i is ``phr[hdr[i] : hdr[i+1]]``, a BER ``Blast-def-line-set``
  (:mod:`clalign.data.deflines`).
- multi-volume databases (``-max_file_sz``) are ``prefix.NN.*`` volumes listed by the alias
  file ``prefix.pal``/``.nal`` (``DBLIST`` line, paths relative to the alias file). v5's LMDB
  files (``.pdb``, ``.pos``, ``.pot`` ...) map accessions to OIDs and are not needed here.

Every field is checked against the file sizes before use; a damaged or hostile database gives
an :class:`InputError` naming the file and the field, never a crash or a wrong sequence.
"""
from __future__ import annotations

import os
import shlex
import struct
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..errors import InputError
from .alphabet import PROTEIN

#: NCBIstdaa code of '*' (stop).
STOP_CODE = PROTEIN.letters.index("*")
from .deflines import BlastIds
from .database import Database, StringTable
from .nucleotide import NucleotideDatabase, parse_ambiguities

_EXT = {"prot": ("pin", "psq", "phr", "pal"), "nucl": ("nin", "nsq", "nhr", "nal")}
#: Alias keys that restrict a database to a subset of OIDs; we refuse them rather than ignore them.
_FILTER_KEYS = {"GILIST", "TILIST", "SEQIDLIST", "TAXIDLIST", "OIDLIST", "MEMB_BIT", "FIRST_OID", "LAST_OID",
                "MASKLIST"}
_MAX_ALIAS_DEPTH = 16


def _candidates(prefix, search_env=True):
    yield prefix
    if search_env and not os.path.isabs(prefix):
        for d in os.environ.get("BLASTDB", "").split(os.pathsep):
            if d:
                yield os.path.join(d, prefix)


def find_blastdb(path, kind=None, search_env=True):
    """``(kind, resolved prefix, is_alias)`` for a BLAST db prefix, or None when there is none.

    The prefix is tried as given, then (``search_env``, relative names) in each ``$BLASTDB`` folder.
    """
    path = os.fspath(path)
    for base in _candidates(path, search_env):
        for k in ([kind] if kind else ["prot", "nucl"]):
            idx, _, _, alias = _EXT[k]
            if os.path.isfile(f"{base}.{alias}"):
                return k, base, True
            if os.path.isfile(f"{base}.{idx}"):
                return k, base, False
    return None


def is_blastdb(path) -> bool:
    """True when ``path`` names a BLAST database (``path.pin``/``.pal``/``.nin``/``.nal`` exists)."""
    return find_blastdb(path) is not None


def open_if_blastdb(path, alphabet=None):
    """The database at ``path`` when it names a BLAST database (and is not a folder), else None.

    The hook :meth:`Database.open` and :func:`as_database` call first. ``alphabet``
    ("protein"/"prot", "dna"/"nucl"; None or "auto": protein first) picks the kind when a
    protein and a nucleotide database share the name, as BLAST+'s program does.
    """
    path = os.fspath(path)
    kind = {"protein": "prot", "prot": "prot", "dna": "nucl", "nucl": "nucl"}.get(
        getattr(alphabet, "name", alphabet))
    # an existing file (a FASTA) only yields to a BLAST database beside it, never to one in $BLASTDB
    if os.path.isdir(path) or find_blastdb(path, kind, search_env=not os.path.exists(path)) is None:
        return None
    return open_blastdb(path, kind)


def _volumes(base, kind, is_alias, depth=0, seen=None):
    """Volume prefixes of a database, expanding alias files (recursively, cycles refused).

    A relative DBLIST entry is looked up beside the alias file, then as :func:`find_blastdb`
    looks up a name (current folder, then ``$BLASTDB``).
    """
    if not is_alias:
        return [base]
    alias = f"{base}.{_EXT[kind][3]}"
    seen = set() if seen is None else seen
    key = os.path.realpath(alias)
    if depth > _MAX_ALIAS_DEPTH or key in seen:
        raise InputError("alias files nest too deep or refer to themselves", alias)
    seen = seen | {key}
    try:
        with open(alias, "r", encoding="latin-1") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise InputError(f"cannot read alias file: {exc.strerror}", alias) from None
    dblist = None
    for lineno, line in enumerate(lines, 1):
        words = line.strip().split(None, 1)
        if not words or words[0].startswith("#"):
            continue
        key_ = words[0].upper()
        if key_ in _FILTER_KEYS:
            raise InputError(f"alias key {words[0]} (a subset of the database) is not supported", alias, lineno)
        if key_ == "DBLIST":
            try:
                dblist = shlex.split(words[1] if len(words) > 1 else "")
            except ValueError as exc:
                raise InputError(f"bad DBLIST: {exc}", alias, lineno) from None
    if not dblist:
        raise InputError("alias file has no DBLIST", alias)
    here = os.path.dirname(alias)
    out = []
    for name in dblist:
        p = name if os.path.isabs(name) else os.path.join(here, name)
        found = find_blastdb(p, kind) or (None if os.path.isabs(name) else find_blastdb(name, kind))
        if found is None:
            raise InputError(f"DBLIST names {name!r}, which is not a {kind} database", alias)
        out += _volumes(found[1], kind, found[2], depth + 1, seen)
    return out


def _map(path, what):
    """The bytes of a volume file, memory-mapped read-only (a zero-length array for an empty file)."""
    try:
        size = os.path.getsize(path)
        return np.memmap(path, dtype=np.uint8, mode="r") if size else np.zeros(0, dtype=np.uint8)
    except FileNotFoundError:
        raise InputError(f"{what} file is missing", path) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot map {what} file: {exc}", path) from None


class Volume:
    """One volume's index: offsets (int64) and header fields, every one range-checked."""

    def __init__(self, base, kind):
        self.base, self.kind = base, kind
        idx_ext, seq_ext, hdr_ext, _ = _EXT[kind]
        self.index_path = f"{base}.{idx_ext}"
        self.seq_path, self.hdr_path = f"{base}.{seq_ext}", f"{base}.{hdr_ext}"
        try:
            with open(self.index_path, "rb") as fh:
                raw = fh.read()
        except OSError as exc:
            raise InputError(f"cannot read index file: {exc.strerror}", self.index_path) from None
        self._parse(raw)

    def _fail(self, field, why):
        raise InputError(f"bad index field {field}: {why}", self.index_path)

    def _parse(self, raw):
        pos = 0

        def u32(field):
            nonlocal pos
            if pos + 4 > len(raw):
                self._fail(field, "file is truncated")
            pos += 4
            return struct.unpack_from(">I", raw, pos - 4)[0]

        def text(field):
            nonlocal pos
            n = u32(field + " length")
            if pos + n > len(raw):
                self._fail(field, f"length {n} runs past the end of the file")
            pos += n
            return raw[pos - n:pos].rstrip(b"\0").decode("latin-1")

        self.version = u32("format version")
        if self.version not in (4, 5):
            self._fail("format version", f"{self.version} (this reader knows BLAST db versions 4 and 5)")
        seqtype = u32("sequence type")
        want = 1 if self.kind == "prot" else 0
        if seqtype != want:
            self._fail("sequence type", f"{seqtype}, expected {want} ({self.kind})")
        self.volume = u32("volume number") if self.version == 5 else 0
        self.title = text("title")
        self.lmdb = text("LMDB name") if self.version == 5 else ""
        self.date = text("date")
        n = u32("sequence count")
        if pos + 12 > len(raw):
            self._fail("total length", "file is truncated")
        self.total = struct.unpack_from("<Q", raw, pos)[0]
        pos += 8
        self.max_length = u32("max length")
        arrays = 3 if self.kind == "nucl" else 2
        need = pos + arrays * 4 * (n + 1)
        if need != len(raw):
            self._fail("sequence count", f"{n} OIDs need a {need}-byte index, the file has {len(raw)} bytes")
        self.count = n
        off = np.frombuffer(raw, dtype=">u4", count=arrays * (n + 1), offset=pos).astype(np.int64)
        self.hdr = off[:n + 1]
        self.seq = off[n + 1:2 * (n + 1)]
        self.amb = off[2 * (n + 1):] if arrays == 3 else None
        self._check()

    def _check(self):
        hsize, ssize = (os.path.getsize(p) if os.path.exists(p) else -1 for p in (self.hdr_path, self.seq_path))
        if hsize < 0:
            raise InputError("header file is missing", self.hdr_path)
        if ssize < 0:
            raise InputError("sequence file is missing", self.seq_path)
        if self.hdr[0] != 0 or np.any(np.diff(self.hdr) < 0) or self.hdr[-1] != hsize:
            self._fail("header offsets", f"not increasing from 0 to the header file size {hsize}")
        if self.seq[-1] != ssize:
            self._fail("sequence offsets", f"last is {self.seq[-1]}, the sequence file has {ssize} bytes")
        if self.kind == "prot":
            if self.seq[0] != 1 or np.any(np.diff(self.seq) < 1):
                self._fail("sequence offsets", "not increasing from 1")
            self.lengths = np.diff(self.seq) - 1
        else:
            s, a = self.seq, self.amb
            if (s[0] != 1 or a[-1] != s[-1] or np.any(a[:-1] - s[:-1] < 1) or np.any(s[1:] - a[:-1] < 0)):
                self._fail("sequence/ambiguity offsets", "out of order or outside the sequence file")
        if self.kind == "prot":
            self._check_totals(self.lengths)

    def _check_totals(self, lengths):
        total = int(lengths.sum()) if lengths.size else 0
        mx = int(lengths.max()) if lengths.size else 0
        if total != self.total:
            self._fail("total length", f"{self.total}, the sequences add up to {total}")
        if mx != self.max_length:
            self._fail("max length", f"{self.max_length}, the longest sequence has {mx}")


class _VolumeHeaders:
    """Raw header bytes by global OID over several volumes (header files mapped once)."""

    def __init__(self, vols):
        self.vols = vols
        self.first = np.cumsum([0] + [v.count for v in vols])
        self.maps = [None] * len(vols)

    def __call__(self, oid):
        k = int(np.searchsorted(self.first, oid, side="right")) - 1
        if self.maps[k] is None:
            self.maps[k] = _map(self.vols[k].hdr_path, "header")
        v, i = self.vols[k], oid - int(self.first[k])
        return bytes(self.maps[k][v.hdr[i]:v.hdr[i + 1]])

    def __iter__(self):
        """Every header in OID order (each volume's header file read once)."""
        for v in self.vols:
            data = bytes(_map(v.hdr_path, "header"))
            off = v.hdr.tolist()
            for a, b in zip(off[:-1], off[1:]):
                yield data[a:b]

    def name(self):
        return self.vols[0].hdr_path if len(self.vols) == 1 else self.vols[0].base + " (volumes)"


class DeflineTable(StringTable):
    """``ids`` or ``descriptions`` of a BLAST database, decoded from the headers on first use.

    Items are decoded one by one (the few that an engine reports); ``blob``/``offsets`` (used
    by bulk readers) decode every header once, on first access, for both tables of a pair.
    """

    def __init__(self, blast_ids, which, twin=None):
        self._ids, self._which = blast_ids, which
        self._blob = self._offsets = None
        self._twin = twin
        if twin is not None:
            twin._twin = self

    def _one(self, oid):
        return self._ids.id_and_description(oid)[0 if self._which == "id" else 1]

    def _fill(self):
        if self._blob is None:
            ids, descs = self._ids.all_ids_and_descriptions()
            for table, items in ((self, ids if self._which == "id" else descs),
                                 (self._twin, descs if self._which == "id" else ids)):
                if table is not None and table._blob is None:
                    t = StringTable.from_bytes(x.encode("utf-8") for x in items)
                    table._blob, table._offsets = t.blob, t.offsets

    @property
    def blob(self):
        self._fill()
        return self._blob

    @property
    def offsets(self):
        self._fill()
        return self._offsets

    def __len__(self):
        return len(self._ids)

    _item = _one        # StringTable.__getitem__ checks the index, then decodes one header

    def __iter__(self):
        return (self._one(i) for i in range(len(self)))

    def subset(self, indices):
        """A plain StringTable of the items ``indices`` (decodes only those headers)."""
        if self._blob is not None:
            return super().subset(indices)
        return StringTable.from_bytes(self[int(i)].encode("utf-8") for i in np.asarray(indices).reshape(-1))


def open_volumes(path, kind=None):
    """``(kind, [Volume...], name)`` of the BLAST database ``path`` (a prefix or alias name)."""
    found = find_blastdb(path, kind)
    if found is None:
        want = {"prot": ".pin/.pal", "nucl": ".nin/.nal"}.get(kind, ".pin/.pal/.nin/.nal")
        raise InputError(f"no BLAST database here (no {want} file)", os.fspath(path))
    k, base, alias = found
    vols = [Volume(v, k) for v in _volumes(base, k, alias)]
    return k, vols, base


def open_blastdb(path, kind=None) -> Database:
    """A :class:`Database` of a BLAST+ database (protein; nucleotide too, unpacked to our DNA codes).

    Residues are NCBIstdaa codes as stored (ours are the same codes): one O(size) copy that
    drops the NUL separators and each sequence's trailing ``*``, counted in ``db.stops`` as
    the FASTA reader does (BLAST+ keeps them as residues: an engine that must match it uses
    ``lengths + stops``, as it must for FASTA input). ``db.blast_ids`` gives BLAST+'s
    ``sseqid``/``sacc``/``stitle``; ``db.ids`` are the ``sseqid`` values and
    ``db.descriptions`` the rest of the defline, both decoded lazily. A nucleotide database
    also carries ``db.nucleotide`` (:class:`~clalign.data.nucleotide.NucleotideDatabase`,
    the 2-bit form BLASTN scans).
    """
    k, vols, base = open_volumes(path, kind)
    headers = _VolumeHeaders(vols)
    ids = BlastIds(headers, int(headers.first[-1]), headers.name(), headers.__iter__)
    if k == "nucl":
        nt = _nucleotide(vols, ids)
        db = nt.to_database()
    else:
        parts, lengths, stops = [], [], []
        for v in vols:
            res, lens, st = _protein_volume(v)
            parts.append(res)
            lengths.append(lens)
            stops.append(st)
        residues = parts[0] if len(parts) == 1 else np.concatenate(parts)
        lens = np.concatenate(lengths).astype(np.int32)
        offsets = np.zeros(lens.size + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        id_table = DeflineTable(ids, "id")
        db = Database(residues, offsets, id_table, DeflineTable(ids, "desc", id_table), PROTEIN,
                      lengths=lens, path=os.fspath(path), source=vols[0].title,
                      stops=np.concatenate(stops).astype(np.uint32),
                      _checked=True)  # codes, offsets and lengths checked above; ids stay lazy
    db.blast_ids = ids
    db.blast_title = vols[0].title
    db.blast_volumes = [v.base for v in vols]
    return db


def protein_stream(path):
    """``(psq, starts)`` of a one-volume BLAST protein database at ``path``, else None: the
    ``.psq`` memory map (a NUL before every sequence and after the last) and each sequence's
    start in it (``starts[i + 1] - 1`` is sequence i's NUL), read from the index only; a damaged
    volume raises :class:`InputError` as :func:`open_blastdb` does.

    The stream a device scans (sequences with a separator after each) is a slice of it, so a
    BLASTP device can fill and upload its subject blocks without waiting for
    :func:`open_blastdb`'s copy of the residues; that copy still checks the codes and stops."""
    path = os.fspath(path)
    if os.path.isdir(path) or find_blastdb(path, "prot", search_env=not os.path.exists(path)) is None:
        return None
    k, vols, _ = open_volumes(path, "prot")
    if k != "prot" or len(vols) != 1:
        return None
    return _protein_sequences(vols[0]), np.asarray(vols[0].seq, dtype=np.int64)


def _protein_sequences(v):
    """A protein volume's ``.psq``, memory-mapped, with a NUL wherever its index says a sequence
    ends (the index's last offset is the file's size: checked by :class:`Volume`)."""
    psq = _map(v.seq_path, "sequence")
    if np.any(psq[v.seq - 1] != 0):
        raise InputError("sequence file: a sequence is not NUL-terminated where the index says", v.seq_path)
    return psq


#: volumes from this size are compacted in slices on several threads
THREADED_MIN_BYTES = 16 << 20


def _compact(src: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``src[keep]``, large arrays in slices on up to 8 threads (numpy's counting and boolean
    indexing release the GIL): a 205 MB ``.psq`` in a few tens of ms on the H100 host, with no
    compiled code, so a search's start does not wait for numba to copy its database."""
    n = src.size
    workers = max(1, min(8, os.cpu_count() or 1))
    if workers == 1 or n < THREADED_MIN_BYTES:
        return src[keep]
    cuts = np.linspace(0, n, workers + 1).astype(np.int64).tolist()
    parts = list(zip(cuts[:-1], cuts[1:]))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="clalign-compact") as pool:
        counts = list(pool.map(lambda ab: int(np.count_nonzero(keep[ab[0]:ab[1]])), parts))
        offs = np.cumsum([0] + counts).tolist()
        out = np.empty(offs[-1], dtype=src.dtype)

        def fill(k):
            a, b = parts[k]
            out[offs[k]:offs[k + 1]] = src[a:b][keep[a:b]]

        list(pool.map(fill, range(len(parts))))
    return out


def _protein_volume(v):
    """``(residues, lengths, stops)`` of one protein volume: NCBIstdaa codes without the NUL
    separators and without each sequence's trailing ``*`` (code 25), counted in ``stops``
    exactly as our FASTA reader counts the ones it strips, so a makeblastdb database and the
    FASTA it was made from give the same Database."""
    psq = _protein_sequences(v)
    sep = v.seq - 1
    ends, lens = v.seq[1:] - 1, v.lengths.copy()
    stops = np.zeros(lens.size, dtype=np.int64)
    live = np.flatnonzero(lens > 0)
    while live.size:  # peel trailing stops; total work = number of stops
        live = live[psq[ends[live] - 1 - stops[live]] == STOP_CODE]
        stops[live] += 1
        live = live[lens[live] > stops[live]]
    keep = np.ones(psq.size, dtype=bool)
    keep[sep] = False
    if stops.any():
        k = np.flatnonzero(stops)
        n = stops[k]
        keep[np.repeat(ends[k] - n, n) + np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)] = False
    res = _compact(psq, keep)
    if res.size and int(res.max()) >= PROTEIN.size:
        raise InputError(f"sequence file: residue code {int(res.max())} is not NCBIstdaa", v.seq_path)
    return res, lens - stops, stops


def _nucleotide(vols, ids):
    packed, starts, nbytes, lengths, runs = [], [], [], [], []
    base = 0
    for v in vols:
        nsq = _map(v.seq_path, "sequence")
        s, a = v.seq[:-1], v.amb[:-1]
        nb = a - s
        last = nsq[a - 1].astype(np.int64) if s.size else np.zeros(0, dtype=np.int64)
        lens = 4 * (nb - 1) + (last & 3)
        v._check_totals(lens)
        try:
            r = parse_ambiguities(nsq, a, v.seq[1:], lens)
        except ValueError as exc:
            raise InputError(f"ambiguity table: {exc}", v.seq_path) from None
        r[:, 0] += sum(x.count for x in vols[:vols.index(v)])
        packed.append(nsq)
        starts.append(s + base)
        nbytes.append(nb)
        lengths.append(lens)
        runs.append(r)
        base += nsq.size
    data = packed[0] if len(packed) == 1 else np.concatenate(packed)
    id_table = DeflineTable(ids, "id")
    return NucleotideDatabase(data, np.concatenate(starts), np.concatenate(lengths), np.concatenate(runs),
                              ids=id_table, descriptions=DeflineTable(ids, "desc", id_table),
                              blast_ids=ids, title=vols[0].title)


def open_blast_nucleotide(path) -> NucleotideDatabase:
    """The 2-bit :class:`NucleotideDatabase` of a ``makeblastdb -dbtype nucl`` database (no unpacking)."""
    _, vols, _ = open_volumes(path, "nucl")
    headers = _VolumeHeaders(vols)
    return _nucleotide(vols, BlastIds(headers, int(headers.first[-1]), headers.name(), headers.__iter__))
