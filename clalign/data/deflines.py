"""BLAST database headers: a small BER decoder for ``Blast-def-line-set`` and BLAST+'s id rules.

Each sequence's header in a ``.phr``/``.nhr`` file is one BER-encoded ASN.1 value (NCBI's
``asn.all``)::

    Blast-def-line-set ::= SEQUENCE OF Blast-def-line
    Blast-def-line ::= SEQUENCE { title [0] VisibleString OPTIONAL, seqid [1] SEQUENCE OF Seq-id,
                                  taxid [2] INTEGER OPTIONAL, memberships [3] ..., links [4] ...,
                                  other-info [5] ... }

makeblastdb writes constructed values with the indefinite length form (``0x80`` ... ``00 00``)
and every field with an explicit context tag (``a0``, ``a1`` ...). ``Seq-id`` is a CHOICE whose
context tag number selects the kind (see :data:`SEQID_KINDS`).

How BLAST+ 2.12 prints a subject in ``-outfmt 6`` (found by running blastp/blastn on databases
made here with and without ``-parse_seqids``; see ``tests/data/blastdb/README.md``):

- Without ``-parse_seqids`` the only seq-id is ``gnl|BL_ORD_ID|<oid>`` and the title is the whole
  FASTA defline: ``sseqid``, ``sacc`` and ``sallseqid`` are the title's first word, ``stitle``
  the whole title.
- With ``-parse_seqids``: ``sseqid`` is ``gi|N|`` (when the defline has a gi) followed by the
  *best* id of the defline in FASTA form, a local id printed bare (``myseq``, not
  ``lcl|myseq``). Best = lowest score: gi 20, general/gibbsq/gibbmt 15, local/patent 10,
  other (RefSeq) 8, every other kind 5; the first one wins ties (BLAST+'s ``CSeq_id`` text
  score). ``sacc`` is the best id without its version (``NP_000001``, ``1ABC_A`` for PDB,
  ``db:tag`` for general ids, the number for a lone gi). ``stitle`` is the title, ``N/A``
  when there is none.
- A defline set of several deflines (FASTA ``\\x01``-joined deflines): ``sseqid``/``sacc``/
  ``stitle`` come from the first; ``sallseqid``/``sallacc`` join all with ``;``, ``salltitles``
  with ``<>``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InputError

#: Seq-id CHOICE alternatives (context tag number -> FASTA prefix).
SEQID_KINDS = {0: "lcl", 1: "bbs", 2: "bbm", 3: "gim", 4: "gb", 5: "emb", 6: "pir", 7: "sp", 8: "pat",
               9: "ref", 10: "gnl", 11: "gi", 12: "dbj", 13: "prf", 14: "pdb", 15: "tpg", 16: "tpe",
               17: "tpd", 18: "gpp", 19: "nat"}
_TEXTSEQ = {4, 5, 6, 7, 9, 12, 13, 15, 16, 17, 18, 19}
_SCORE = {11: 20, 3: 20, 10: 15, 1: 15, 2: 15, 0: 10, 8: 10, 9: 8}
#: Nesting bound for hostile input (real headers nest about 8 deep).
MAX_DEPTH = 32


class BerError(ValueError):
    """Malformed BER data (caught by the database reader and reported with the file name)."""


def _node(buf, pos, end, depth):
    """Decode one TLV at ``buf[pos:end]``: ``((tag_class, number, value), next_pos)``.

    ``value`` is ``bytes`` for a primitive, a list of children for a constructed value.
    """
    if depth > MAX_DEPTH:
        raise BerError("nesting too deep")
    if pos >= end:
        raise BerError("truncated value")
    b = buf[pos]
    pos += 1
    cls, constructed, num = b >> 6, bool(b & 0x20), b & 0x1F
    if num == 0x1F:  # high tag number form
        num = 0
        for _ in range(4):
            if pos >= end:
                raise BerError("truncated tag")
            c = buf[pos]
            pos += 1
            num = (num << 7) | (c & 0x7F)
            if not c & 0x80:
                break
        else:
            raise BerError("tag number too long")
    if pos >= end:
        raise BerError("truncated length")
    ln = buf[pos]
    pos += 1
    if ln == 0x80:
        if not constructed:
            raise BerError("indefinite length on a primitive value")
        kids = []
        while True:
            if pos + 2 > end:
                raise BerError("missing end-of-contents")
            if buf[pos] == 0 and buf[pos + 1] == 0:
                return (cls, num, kids), pos + 2
            kid, pos = _node(buf, pos, end, depth + 1)
            kids.append(kid)
    if ln & 0x80:
        k = ln & 0x7F
        if k > 4 or pos + k > end:
            raise BerError("bad length")
        ln = int.from_bytes(buf[pos:pos + k], "big")
        pos += k
    stop = pos + ln
    if stop > end:
        raise BerError("length runs past the end")
    if not constructed:
        return (cls, num, bytes(buf[pos:stop])), stop
    kids = []
    while pos < stop:
        kid, pos = _node(buf, pos, stop, depth + 1)
        kids.append(kid)
    return (cls, num, kids), stop


def decode_ber(buf):
    """The single BER value that fills ``buf`` (bytes/memoryview), as nested tuples."""
    node, pos = _node(buf, 0, len(buf), 0)
    if pos != len(buf):
        raise BerError(f"{len(buf) - pos} bytes after the value")
    return node


def _kids(node):
    if not isinstance(node[2], list):
        raise BerError("expected a constructed value")
    return node[2]


def _inner(node):
    """The one value inside an explicit context tag ``[n] { value }``."""
    kids = _kids(node)
    if len(kids) != 1:
        raise BerError("explicit tag must hold exactly one value")
    return kids[0]


def _text(node):
    v = _inner(node)[2]
    if isinstance(v, list):
        raise BerError("expected a string")
    return v.decode("latin-1")


def _int(node):
    v = _inner(node)[2]
    if isinstance(v, list) or not 1 <= len(v) <= 9:
        raise BerError("expected an INTEGER")
    return int.from_bytes(v, "big", signed=True)


def _fields(node):
    return {k[1]: k for k in _kids(node) if k[0] == 2}


def _object_id(node):
    """Object-id ::= CHOICE { id INTEGER, str VisibleString } -> str."""
    kind = _inner(node)
    return str(_int(kind)) if kind[1] == 0 else _text(kind)


@dataclass(frozen=True)
class SeqId:
    """One decoded Seq-id: ``kind`` (CHOICE number), ``fasta`` form and ``acc`` (no version)."""

    kind: int
    fasta: str
    acc: str

    @property
    def score(self):
        return _SCORE.get(self.kind, 5)


def _seqid(node):
    if node[0] != 2 or node[1] not in SEQID_KINDS:
        raise BerError(f"unknown Seq-id kind {node[1]}")
    kind, prefix = node[1], SEQID_KINDS[node[1]]
    if kind == 0:
        s = _object_id(node)
        return SeqId(kind, f"lcl|{s}", s)
    if kind in (1, 2, 3, 11):
        if kind == 3:  # giim: Giimport-id SEQUENCE { id INTEGER, ... }
            n = str(_int(_fields(_inner(node))[0]))
        else:
            n = str(_int(node))
        return SeqId(kind, f"{prefix}|{n}", n)
    if kind == 10:  # general: Dbtag { db VisibleString, tag Object-id }
        f = _fields(_inner(node))
        db, tag = _text(f[0]), _object_id(f[1])
        return SeqId(kind, f"gnl|{db}|{tag}", f"{db}:{tag}")
    if kind == 14:  # pdb: PDB-seq-id { mol [0], chain [1] INTEGER, rel [2], chain-id [3] }
        f = _fields(_inner(node))
        mol = _text(f[0]) if 0 in f else ""
        chain = _text(f[3]) if 3 in f else (chr(_int(f[1])) if 1 in f else "")
        return SeqId(kind, f"pdb|{mol}|{chain}", f"{mol}_{chain}" if chain else mol)
    if kind == 8:  # patent: Patent-seq-id { seqid INTEGER, cit Id-pat { country, id { number | app-number } } }
        f = _fields(_inner(node))
        cit = _fields(_inner(f[1]))
        number = _text(_inner(cit[1]))
        country, sid = _text(cit[0]), _int(f[0])
        return SeqId(kind, f"pat|{country}|{number}|{sid}", f"{country}{number}_{sid}")
    # Textseq-id { name [0], accession [1], release [2], version [3] }
    f = _fields(_inner(node))
    name = _text(f[0]) if 0 in f else ""
    acc = _text(f[1]) if 1 in f else ""
    ver = _int(f[3]) if 3 in f else 0
    if kind == 7 and 2 in f and _text(f[2]) == "unreviewed":
        prefix = "tr"
    av = f"{acc}.{ver}" if acc and ver else acc
    return SeqId(kind, f"{prefix}|{av}|{name}", acc or name)


@dataclass
class Defline:
    """One Blast-def-line: ``title`` ("" when absent), ``seqids`` (list of SeqId), ``taxid`` (0 if none)."""

    title: str
    seqids: list = field(default_factory=list)
    taxid: int = 0

    @property
    def ordinal(self):
        """True when the only id is ``gnl|BL_ORD_ID|N`` (a database made without -parse_seqids)."""
        return len(self.seqids) == 1 and self.seqids[0].fasta.startswith("gnl|BL_ORD_ID|")

    def best(self):
        """The id BLAST+ shows (lowest text score, first on ties), None without ids."""
        return min(self.seqids, key=lambda s: s.score) if self.seqids else None

    def sseqid(self):
        if self.ordinal or not self.seqids:
            return self.title.split(None, 1)[0] if self.title.strip() else "N/A"
        best = self.best()
        gi = next((s for s in self.seqids if s.kind == 11), None)
        head = gi.fasta + "|" if gi is not None and best is not gi else ""
        return head + (best.fasta if best.kind != 0 else best.acc)

    def sacc(self):
        if self.ordinal or not self.seqids:
            return self.sseqid()
        return self.best().acc

    def stitle(self):
        return self.title if self.title else "N/A"


def decode_deflines(buf):
    """The deflines of one header (``bytes``); raises :class:`BerError` when malformed."""
    try:
        return _decode_deflines(buf)
    except (KeyError, IndexError) as exc:      # a field the structure requires is absent
        raise BerError(f"a required field is missing ({exc.__class__.__name__} {exc})") from None


def _decode_deflines(buf):
    root = decode_ber(buf)
    if root[0] != 0 or root[1] != 16:
        raise BerError("header is not a SEQUENCE")
    out = []
    for d in _kids(root):
        if d[0] != 0 or d[1] != 16:
            raise BerError("Blast-def-line is not a SEQUENCE")
        f = _fields(d)
        if 1 not in f:
            raise BerError("Blast-def-line without seqid")
        ids = _inner(f[1])
        if ids[0] != 0 or ids[1] != 16:
            raise BerError("seqid is not a SEQUENCE OF")
        out.append(Defline(_text(f[0]) if 0 in f else "", [_seqid(s) for s in _kids(ids)],
                           _int(f[2]) if 2 in f else 0))
    if not out:
        raise BerError("empty Blast-def-line-set")
    return out


_ORD_HEAD = b"\x30\x80\x30\x80\xa0\x80\x1a"
_ORD_TAIL = b"\x00\x00\xa1\x80\x30\x80\xaa\x80\x30\x80\xa0\x80\x1a\x09BL_ORD_ID"


def ordinal_title(buf):
    """Fast path: the title of a header whose first defline is ``title, gnl|BL_ORD_ID|N`` (what
    makeblastdb writes without -parse_seqids), read by byte comparison; None for any other header."""
    if len(buf) < 9 or not buf.startswith(_ORD_HEAD):
        return None
    n, p = buf[7], 8
    if n & 0x80:
        k = n & 0x7F
        if not 1 <= k <= 4:
            return None
        n, p = int.from_bytes(buf[8:8 + k], "big"), 8 + k
    if not buf.startswith(_ORD_TAIL, p + n):
        return None
    return buf[p:p + n].decode("latin-1")


def id_and_description(buf):
    """``(sseqid, description)`` of one header: our Database's ``ids``/``descriptions`` entries.

    The description is the FASTA defline after its first word (without -parse_seqids the
    title is the whole defline), so both equal what our FASTA reader gives for the same record.
    """
    t = ordinal_title(buf)
    if t is not None:
        parts = t.split(None, 1)
        return (parts[0] if parts else "N/A"), (parts[1] if len(parts) > 1 else "")
    d = decode_deflines(buf)[0]
    if d.ordinal or not d.seqids:
        parts = d.title.split(None, 1)
        return d.sseqid(), (parts[1] if len(parts) > 1 else "")
    return d.sseqid(), d.title


class BlastIds:
    """Per-OID subject ids exactly as BLAST+ 2.12 prints them (``-outfmt 6`` columns).

    ``header(oid)`` must return the raw header bytes of an OID; deflines are decoded on demand
    and cached, so looking up the few subjects that hit is cheap even in a large database.
    """

    def __init__(self, header, count, name="database", headers=None):
        self._header = header
        self._headers = headers
        self._count = count
        self._name = name
        self._cache = {}

    def __len__(self):
        return self._count

    def deflines(self, oid) -> list:
        d = self._cache.get(oid)
        if d is None:
            if not 0 <= oid < self._count:
                raise IndexError(f"OID {oid} out of range")
            try:
                d = decode_deflines(self._header(oid))
            except BerError as exc:
                raise InputError(f"bad header of OID {oid}: {exc}", self._name) from None
            self._cache[oid] = d
        return d

    def id_and_description(self, oid):
        """``(sseqid, description)`` of one OID (see :func:`id_and_description`)."""
        d = self.deflines(oid)[0]
        if d.ordinal or not d.seqids:
            parts = d.title.split(None, 1)
            return d.sseqid(), (parts[1] if len(parts) > 1 else "")
        return d.sseqid(), d.title

    def all_ids_and_descriptions(self):
        """Two lists (ids, descriptions) for every OID, decoded once without caching."""
        ids, descs = [], []
        headers = self._headers() if self._headers is not None else (self._header(i) for i in range(self._count))
        for oid, buf in enumerate(headers):
            try:
                a, b = id_and_description(buf)
            except BerError as exc:
                raise InputError(f"bad header of OID {oid}: {exc}", self._name) from None
            ids.append(a)
            descs.append(b)
        return ids, descs

    def sseqid(self, oid):
        return self.deflines(oid)[0].sseqid()

    def sacc(self, oid):
        return self.deflines(oid)[0].sacc()

    def stitle(self, oid):
        return self.deflines(oid)[0].stitle()

    def sallseqid(self, oid):
        return ";".join(d.sseqid() for d in self.deflines(oid))

    def sallacc(self, oid):
        return ";".join(d.sacc() for d in self.deflines(oid))

    def salltitles(self, oid):
        return "<>".join(d.stitle() for d in self.deflines(oid))

    def taxid(self, oid):
        return self.deflines(oid)[0].taxid

    def sgi(self, oid):
        """The first defline's gi (as text), "0" without one."""
        gi = next((s for s in self.deflines(oid)[0].seqids if s.kind == 11), None)
        return gi.acc if gi is not None else "0"


#: Bytes makeblastdb writes as '#' in a title: control characters and every byte of a non-ASCII
#: (UTF-8) character (makeblastdb 2.12 reports "Bad char" and stores '#').
_HASHED = bytes(range(32)) + bytes(range(127, 256))
_TO_HASH = bytes.maketrans(_HASHED, b"#" * len(_HASHED))


def blast_text(text):
    """``text`` as makeblastdb (without -parse_seqids) stores it in a title: a tab becomes three
    spaces, ctrl-A (the FASTA defline separator) a space, other control characters and each
    byte of a non-ASCII character '#'."""
    if text.isascii() and text.isprintable():
        return text
    raw = text.replace("\t", "   ").replace("\x01", " ").encode("utf-8", "replace")
    return raw.translate(_TO_HASH).decode("ascii")


class PlainIds:
    """BlastIds' interface for a database read from FASTA or a clalign folder.

    BLAST+ users compare with a database made by ``makeblastdb`` from the same FASTA (without
    ``-parse_seqids``), whose rules are: ``sseqid`` = ``sacc`` = the defline's first word,
    ``stitle`` = the whole defline (characters as :func:`blast_text`). Known gap:
    our FASTA reader keeps neither the blanks that separated id and description (a tab
    there becomes three spaces in BLAST's title) nor trailing blanks (BLAST keeps them).
    """

    def __init__(self, ids, descriptions):
        self._ids, self._descs = ids, descriptions

    def __len__(self):
        return len(self._ids)

    def sseqid(self, oid):
        return blast_text(self._ids[oid])

    sacc = sallseqid = sallacc = sseqid

    def stitle(self, oid):
        d = blast_text(self._descs[oid])
        return f"{self.sseqid(oid)} {d}" if d else self.sseqid(oid)

    salltitles = stitle

    def sgi(self, oid):
        return "0"

    def taxid(self, oid):
        return 0


def subject_ids(db):
    """The subject-id columns of any database: its ``blast_ids`` (a BLAST+ database) or :class:`PlainIds`."""
    ids = getattr(db, "blast_ids", None)
    return ids if ids is not None else PlainIds(db.ids, db.descriptions)
