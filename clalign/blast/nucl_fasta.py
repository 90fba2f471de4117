"""Nucleotide query files: :func:`read_queries` (the :class:`Query` list of a FASTA file) and
its fast path :func:`split_records`, the common layout (header lines, then sequence lines of
letters only) split with numpy, no Python per line.

:func:`read_queries` reads any other file line by line as its statement (~2 us a line:
0.25-0.35 s for 50,000 reads, on the main thread before anything else, while numba's import
wants the interpreter lock too). :func:`split_records` does the same split at once and returns
None for anything else (sequence data before the first header,
an empty record, no header): the line-by-line reader then gives the answer or the error.
The caller checks the letters (one ``bytes.translate``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError

#: Letters to BLASTNA codes (A C G T R Y M K W S B D H V N); U reads as T. A '-' in a query
#: is refused (BLAST+ drops it with a warning; code 15 would be the context sentinel here).
_LETTERS = "ACGTRYMKWSBDHVN"
BLASTNA_OF = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(_LETTERS):
    BLASTNA_OF[ord(_c)] = BLASTNA_OF[ord(_c.lower())] = _i
BLASTNA_OF[ord("U")] = BLASTNA_OF[ord("u")] = 3
#: BLASTNA_OF as a ``bytes.translate`` table, whitespace (which a sequence line's own reading
#: drops or refuses) as _SPACE_CODE
_SPACE_CODE = b"\xfe"
_CODE_BYTES = bytes(np.where(np.isin(np.arange(256), list(b" \t\r\x0b\x0c")), 254, BLASTNA_OF)
                    .astype(np.uint8))


def split_records(data: bytes):
    """(headers, letters, record starts) of ``data`` when every line is empty or a header (``>``
    first) or else a sequence line, with at least one header, no empty record and no sequence
    line before the first header: ``headers[k]`` is header line k without ``>`` and stripped,
    record k's sequence lines, joined, are ``letters[starts[k]:starts[k + 1]]`` (bytes as they
    are: the caller checks them; ``starts``: a list, one longer). None otherwise. Work per line
    and per byte is done by numpy and ``bytes``."""
    arr = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(arr == 10)
    ls = np.r_[0, nl + 1]
    le = np.r_[nl, len(arr)]
    live = np.flatnonzero(le > ls)
    is_head = arr[ls[live]] == 62
    head, body = live[is_head], live[~is_head]
    if not len(head) or (len(body) and body[0] < head[0]):
        return None
    bs, be = ls[body], le[body]
    per = np.bincount(np.searchsorted(head, body) - 1, weights=be - bs, minlength=len(head))
    if not per.all():
        return None
    starts = np.zeros(len(head) + 1, dtype=np.int64)
    np.cumsum(per.astype(np.int64), out=starts[1:])
    letters = b"".join([data[a:b] for a, b in zip(bs.tolist(), be.tolist())])
    headers = [data[a + 1:b].strip() for a, b in zip(ls[head].tolist(), le[head].tolist())]
    return headers, letters, starts.tolist()


@dataclass
class Query:
    qid: str
    title: str
    text: bytes          # the sequence as read (case kept)
    codes: np.ndarray    # BLASTNA


class Queries(list):
    """:func:`read_queries`' list of :class:`Query`, with every query's letters and codes also
    contiguous (``flat``: letters as bytes, BLASTNA codes, int64 starts one longer than the
    list; query k is ``[starts[k]:starts[k + 1]]`` and its ``text``/``codes`` are those
    slices), so that DUST and the context layout take whole buffers instead of joining 100,000
    pieces. Changing the list (setting, adding, removing, reordering items) sets ``flat`` to
    None; a slice is a plain list."""

    def __init__(self, items, letters: bytes, codes: np.ndarray, starts: np.ndarray):
        super().__init__(items)
        self.flat = (letters, codes, starts)


def _dropping_flat(name):
    def changed(self, *args):
        self.flat = None
        return getattr(list, name)(self, *args)
    changed.__name__ = name
    return changed


for _name in ("__setitem__", "__delitem__", "__iadd__", "__imul__", "append", "extend",
              "insert", "pop", "remove", "sort", "reverse", "clear"):
    setattr(Queries, _name, _dropping_flat(_name))


def flat_queries(queries):
    """(letters, codes, starts) of ``queries`` when it is an unchanged :class:`Queries`, else
    None (callers then read the queries one by one)."""
    flat = getattr(queries, "flat", None)
    if flat is None or len(flat[2]) != len(queries) + 1:
        return None
    return flat


def read_queries(path):
    """:class:`Queries` of a nucleotide FASTA file; one-line error naming file and line."""
    try:
        data = open(path, "rb").read()
    except OSError as exc:
        raise InputError(f"cannot read query file ({exc.strerror})", path) from None
    got = split_records(data)   # the common layout at once; anything else line by line below
    if got is not None:
        heads, letters, bounds = got
        text = letters.translate(_CODE_BYTES)
        if _SPACE_CODE not in text:   # whitespace in a sequence line: line by line
            if b"\xff" in text:
                _bad_letter(data, path)
            codes = np.frombuffer(text, dtype=np.uint8).copy()   # writable, as numpy makes it
            # field by field in comprehensions, then one map: no per-record loop body
            titles = [h.decode("utf-8", "replace") for h in heads]
            qids = [t.split(None, 1)[0] if t.strip() else f"Query_{k}"
                    for k, t in enumerate(titles, 1)]
            lo, hi = bounds[:-1], bounds[1:]
            return Queries(map(Query, qids, titles, [letters[a:b] for a, b in zip(lo, hi)],
                               [codes[a:b] for a, b in zip(lo, hi)]),
                           letters, codes, np.asarray(bounds, dtype=np.int64))
    out, head, seq, head_line = [], None, [], 0
    for n, line in enumerate(data.split(b"\n"), 1):
        line = line.rstrip(b"\r")
        if line.startswith(b">"):
            if head is not None:
                out.append((head, b"".join(seq), head_line))
            head, seq, head_line = line[1:].strip(), [], n
        elif line.strip():
            if head is None:
                raise InputError("sequence data before the first '>' header", path, n)
            seq.append(line.strip().replace(b" ", b""))
    if head is not None:
        out.append((head, b"".join(seq), head_line))
    # every letter checked at once (a numpy check per line cost ~10 us a line: ~2 s for
    # 100,000 reads); the line of a bad one is looked for only when there is one
    # and converted at once, each query's codes a view of its slice (a lookup per query cost
    # ~4 us: 0.2 s for 50,000 reads; a copy per query 2.4 us; nothing writes a query's codes)
    letters = b"".join(s for _, s, _ in out)
    codes = BLASTNA_OF[np.frombuffer(letters, dtype=np.uint8)]
    if (codes == 255).any():
        _bad_letter(data, path)
    queries, at = [], 0
    for head, s, line in out:
        if not s:
            raise InputError("empty query sequence", path, line)
        title = head.decode("utf-8", "replace")
        qid = title.split(None, 1)[0] if title.strip() else f"Query_{len(queries) + 1}"
        queries.append(Query(qid, title, s, codes[at:at + len(s)]))
        at += len(s)
    if not queries:
        raise InputError("no query sequences", path)
    starts = np.zeros(len(queries) + 1, dtype=np.int64)
    np.cumsum([len(s) for _, s, _ in out], out=starts[1:])
    return Queries(queries, letters, codes, starts)


def _bad_letter(data: bytes, path):
    """Raise the one-line error of the first sequence line of ``data`` with a letter that is
    not a nucleotide code (file and line)."""
    for n, line in enumerate(data.split(b"\n"), 1):
        line = line.rstrip(b"\r")
        if line.startswith(b">") or not line.strip():
            continue
        s = line.strip().replace(b" ", b"")
        bad = np.flatnonzero(BLASTNA_OF[np.frombuffer(s, dtype=np.uint8)] == 255)
        if bad.size:
            raise InputError(f"not a nucleotide letter: {chr(s[int(bad[0])])!r}", path, n)
