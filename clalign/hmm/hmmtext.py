"""HMM file text as HMMER sees it, for what is handed to HMMER (pyhmmer) or written back out.

:func:`~clalign.hmm.hmmfile.read_hmms` decodes a file one byte per character (Latin-1). HMMER
keeps names and descriptions as raw bytes and writes them back unchanged, whatever their
encoding; :func:`file_text` and :data:`RAW` do the same for our reports. :func:`hmmer_order`
rewrites a file's headers into the order HMMER writes them before pyhmmer reads it.
"""
from __future__ import annotations

from .hmmfile import _tokens

#: Codec of output text holding free text of HMM files: ``text.encode(*RAW)`` writes the file's
#: own bytes back (see :func:`file_text`), whatever their encoding, as HMMER does.
RAW = ("utf-8", "surrogateescape")


def file_text(s):
    """A NAME/ACC/DESC string (decoded one byte per character) as text that ``encode(*RAW)``
    turns back into the file's bytes: valid UTF-8 becomes its characters, other bytes (Latin-1
    ...) surrogate escapes."""
    return None if s is None else s.encode("latin-1").decode(*RAW)


#: Header tags in the order HMMER writes them (p7_hmmfile.c), for :func:`hmmer_order`.
_HEADER_ORDER = {t: i for i, t in enumerate(("NAME", "ACC", "DESC", "LENG", "MAXL", "ALPH", "RF", "MM", "CONS",
                                             "CS", "MAP", "DATE", "COM", "NSEQ", "EFFN", "CKSUM", "GA", "TC",
                                             "NC", "STATS"))}


def hmmer_order(text: str) -> bytes:
    """The file's bytes with every model's header lines (tag line to ``HMM`` line) stably sorted
    into the order HMMER writes them. HMMER's reader (3.3.2's hmmsearch, and pyhmmer's) crashes on
    a GA/TC/NC line before ALPH (it reads the alphabet there), so pyhmmer is given this text. Only
    for files :func:`~clalign.hmm.hmmfile.read_hmms` accepted: a header line means the same wherever it stands."""
    lines = text.split("\n")
    out, header, in_header = [], [], False
    for raw in lines:
        if not in_header and "HMMER3/" not in raw:     # model bodies: no tag line, kept as they are
            out.append(raw)
            continue
        toks = _tokens(raw)
        tag = toks[0] if toks else ""
        if tag.startswith("HMMER3/"):
            in_header = True
            out.append(raw)
        elif in_header and tag == "HMM":
            header.sort(key=lambda x: _HEADER_ORDER.get(x[0], len(_HEADER_ORDER)))
            out += [h for _, h in header] + [raw]
            header, in_header = [], False
        elif in_header:
            header.append((tag, raw))
        else:
            out.append(raw)
    out += [h for _, h in header]
    return "\n".join(out).encode("latin-1")
