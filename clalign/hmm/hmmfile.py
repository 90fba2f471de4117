"""HMMER3 profile HMM text files (formats 3/a to 3/f), read with file:line errors.

Our own parser of the layout HMMER's ``p7_hmmfile.c`` reads (``read_asc30hmm``):

* a tag line ``HMMER3/x [...]``; header lines ``TAG value`` up to the ``HMM`` line;
  ``MAXL`` exists from 3/c; 3/a writes its statistics as ``STATS LOCAL VLAMBDA|VMU|FTAU x``
  (MSV and Viterbi then share mu and lambda), 3/b on as ``STATS LOCAL MSV|VITERBI|FORWARD mu lambda``;
  if one STATS line is present all three must be;
* the ``HMM`` line and the transition-names line, an optional ``COMPO`` line, node 0's insert
  emissions and transitions, then per node k = 1..M a match line (``k``, 20 values, MAP, CONS
  from 3/e, RF, MM from 3/f, CS), an insert line (20 values) and a transition line
  (7 values: MM MI MD IM II DM DD); the model ends with ``//``;
* values are negative natural logs, ``*`` meaning probability 0. Probabilities are converted as
  HMMER does, ``expf(-atof(x))`` in single precision with the C library's expf, so models and
  the profiles built from them are bit-identical to HMMER's.

Lines whose first token starts with ``#`` and blank lines are skipped (as HMMER's file parser
does). gzip input is recognised by its magic bytes. Only amino-acid models are accepted.
"""
from __future__ import annotations

import gzip
import re
import zlib
from dataclasses import dataclass, field
from typing import Iterator, Optional

import numpy as np

from ..errors import InputError
from .hmmprob import _bulk_prob, _neglog_to_prob

#: Easel's amino acid order for the 20 canonical residues (columns of ``mat``/``ins``/``compo``).
AMINO = "ACDEFGHIKLMNPQRSTVWY"
K = 20
#: Transition columns of ``HMM.t`` (HMMER's p7H order).
TRANSITIONS = ("MM", "MI", "MD", "IM", "II", "DM", "DD")
VERSIONS = ("3/a", "3/b", "3/c", "3/d", "3/e", "3/f")
_GZIP_MAGIC = b"\x1f\x8b"
@dataclass
class HMM:
    """One profile HMM, with everything needed to rebuild HMMER's search profiles.

    Probabilities are float32, converted exactly as HMMER does. ``mat``: (M+1, 20) match
    emissions (row 0 unused, as in HMMER: [1, 0, ...]); ``ins``: (M+1, 20) insert emissions;
    ``t``: (M+1, 7) transitions in :data:`TRANSITIONS` order; ``compo``: (20,) or None.
    ``msv``/``viterbi``/``forward``: (mu or tau, lambda) from the STATS lines, or None.
    """

    name: str
    M: int
    mat: np.ndarray
    ins: np.ndarray
    t: np.ndarray
    version: str = "3/f"
    acc: Optional[str] = None
    desc: Optional[str] = None
    alphabet: str = "amino"
    compo: Optional[np.ndarray] = None
    msv: Optional[tuple] = None
    viterbi: Optional[tuple] = None
    forward: Optional[tuple] = None
    ga: Optional[tuple] = None
    tc: Optional[tuple] = None
    nc: Optional[tuple] = None
    nseq: Optional[int] = None
    effn: Optional[float] = None
    cksum: Optional[int] = None
    max_length: Optional[int] = None
    date: Optional[str] = None
    com: list = field(default_factory=list)
    flags: dict = field(default_factory=dict)
    consensus: Optional[str] = None
    path: Optional[str] = None
    line: Optional[int] = None

    def require_stats(self) -> tuple:
        """STATS LOCAL MSV (mu, lambda); InputError naming file and line for an uncalibrated model."""
        if self.msv is None:
            raise InputError(f"model {self.name!r} has no STATS lines (not calibrated: run hmmbuild/hmmcalibrate)",
                             self.path, self.line)
        return self.msv

    @property
    def mu(self) -> float:
        """STATS LOCAL MSV mu (location of the MSV score Gumbel)."""
        return self.require_stats()[0]

    @property
    def lam(self) -> float:
        """STATS LOCAL MSV lambda (scale of the MSV score Gumbel)."""
        return self.require_stats()[1]

    def __repr__(self):
        return f"<HMM {self.name!r} M={self.M} {self.version}>"


def _locate_bad_value(mtok, itok, ttok, where, path):
    """Raise the InputError naming the line of the first unconvertible body value."""
    pos = {"m": 0, "i": 0, "t": 0}
    width = {"m": K, "i": K, "t": 7}
    toks = {"m": mtok, "i": itok, "t": ttok}
    for kind, lineno in where:
        chunk = toks[kind][pos[kind]:pos[kind] + width[kind]]
        pos[kind] += width[kind]
        _neglog_to_prob(chunk, path, lineno)


#: What separates tokens in HMMER's file parser (esl_fileparser: spaces and tabs; a CR before the
#: newline is tolerated). Not Python's str.split(), which also splits at \x1c-\x1f, \x85, \xa0 ...
_SPLIT = re.compile(r"[ \t\r]+").split


def _tokens(raw: str) -> list:
    """HMMER's tokens of a line: separated by spaces/tabs, ending at a token that starts with '#'
    (a comment, as esl_fileparser reads it)."""
    toks = raw.split() if raw.isascii() and raw.isprintable() else [t for t in _SPLIT(raw) if t]
    if "#" not in raw:
        return toks
    for i, t in enumerate(toks):
        if t.startswith("#"):
            return toks[:i]
    return toks


class _Lines:
    """Non-blank, non-comment lines of a text with their 1-based line numbers."""

    def __init__(self, text: str, path, first: int = 1):
        self.path = path
        self._lines = text.split("\n")
        self._i = 0
        self._base = first - 1          # a piece of a file (clalign.hmm.hmmpool): its first line's number

    def next(self):
        """(line number, tokens) of the next data line, or (None, None) at end of file."""
        while self._i < len(self._lines):
            raw = self._lines[self._i]
            self._i += 1
            toks = _tokens(raw)
            if not toks:
                continue
            return self._i + self._base, toks, raw
        return None, None, None

    @property
    def last_line(self):
        return max(1, self._i + self._base)


def _read_text(path) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except IsADirectoryError:
        raise InputError("is a directory, not an HMM file", path) from None
    except PermissionError:
        raise InputError("permission denied", path) from None
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"cannot read (corrupt gzip data?): {exc}", path) from None
    if len(data) >= 4 and data[3] & 0x80:  # HMMER's test: binary magic numbers have the high bit set
        raise InputError("binary (hmmpress/hmmconvert -b) HMM files are not supported; give the text HMM file",
                         path, 1)
    nul = data.find(b"\0")
    if nul >= 0:      # HMMER's line reader stops at a NUL and then misreads what follows: refuse
        raise InputError("NUL byte in the file (not a text HMM file)", path, data.count(b"\n", 0, nul) + 1)
    # Non-ASCII bytes can only be meaningful in free text (NAME, DESC, COM): decode them as Latin-1,
    # one character per byte, so ``text.encode("latin-1")`` is the file's bytes (HMMER keeps raw
    # bytes and writes them back as they were; see :func:`clalign.hmm.hmmtext.file_text`).
    return data.decode("latin-1")


def _need(toks, n, what, path, lineno):
    if len(toks) < n:
        raise InputError(f"too few fields on {what} line: expected {n - 1} after {toks[0]!r}, got {len(toks) - 1}",
                         path, lineno)


def _header_int(toks, what, path, lineno):
    """The integer of a ``TAG value`` header line (LENG, MAXL, NSEQ, CKSUM)."""
    _need(toks, 2, toks[0], path, lineno)
    try:
        return int(toks[1])
    except ValueError:
        raise InputError(f"invalid {what} {toks[1]!r} on {toks[0]} line", path, lineno) from None


def _stat_float(tok, path, lineno, finite=False):
    try:
        v = float(tok)
    except ValueError:
        raise InputError(f"not a number: {tok!r}", path, lineno) from None
    if finite and not np.isfinite(v):
        # HMMER reads it, then silently loses hits (every P-value NaN); we refuse the model
        raise InputError(f"STATS value {tok!r} is not a finite number (recalibrate the model with hmmbuild)",
                         path, lineno)
    return v


def _parse_one(lines: _Lines, path) -> Optional[HMM]:
    lineno, toks, raw = lines.next()
    if lineno is None:
        return None
    tag = toks[0]
    if tag.startswith("HMMER3/") and tag[7:] in "abcdef" and len(tag) == 8:
        version = "3/" + tag[7]
    elif tag.startswith("HMMER2"):
        raise InputError("HMMER2 format is not supported; convert it with `hmmconvert` (HMMER3)", path, lineno)
    else:
        raise InputError(f"expected a HMMER3/a..3/f tag line, found {tag!r} (not a HMMER3 text HMM file?)",
                         path, lineno)
    vidx = VERSIONS.index(version)
    start = lineno
    info = dict(name=None, acc=None, desc=None, M=None, max_length=None, nseq=None, effn=None, cksum=None,
                date=None, ga=None, tc=None, nc=None)
    flags, flag_lines = {}, {}
    com = []
    stats = {}
    alph_seen = False
    while True:
        lineno, toks, raw = lines.next()
        if lineno is None:
            raise InputError("premature end of file in the HMM header (no HMM line)", path, lines.last_line)
        tag = toks[0]
        if tag == "HMM":
            hmm_line = lineno
            break
        if tag == "NAME":
            _need(toks, 2, "NAME", path, lineno)
            info["name"] = toks[1]
        elif tag == "ACC":
            _need(toks, 2, "ACC", path, lineno)
            info["acc"] = toks[1]
        elif tag == "DESC":
            _need(toks, 2, "DESC", path, lineno)
            info["desc"] = raw.strip()[4:].strip()
        elif tag == "LENG":
            info["M"] = _header_int(toks, "model length", path, lineno)
            if info["M"] <= 0:
                raise InputError(f"invalid model length {toks[1]!r} on LENG line", path, lineno)
        elif tag == "MAXL" and vidx >= 2:
            info["max_length"] = _header_int(toks, "max length", path, lineno)
            if info["max_length"] == 0:        # HMMER: "Invalid max length"
                raise InputError(f"invalid max length {toks[1]!r} on MAXL line", path, lineno)
        elif tag == "ALPH":
            _need(toks, 2, "ALPH", path, lineno)
            kind = toks[1].lower()
            if kind in ("dna", "rna"):
                raise InputError(f"nucleotide models are not supported (ALPH {toks[1]}); "
                                 "clalign hmmsearch searches protein models only", path, lineno)
            if kind != "amino":
                raise InputError(f"unsupported alphabet {toks[1]!r} on ALPH line (only amino models)", path, lineno)
            alph_seen = True
        elif tag in ("RF", "MM", "CONS", "CS", "MAP"):
            _need(toks, 2, tag, path, lineno)
            val = toks[1].lower()
            if val not in ("yes", "no"):
                raise InputError(f"{tag} header line must say yes/no, not {toks[1]!r}", path, lineno)
            flags[tag] = val == "yes"
            flag_lines[tag] = lineno
        elif tag == "DATE":
            info["date"] = raw.strip()[4:].strip()
        elif tag == "COM":
            com.append(raw.strip()[3:].strip())
        elif tag == "NSEQ":
            info["nseq"] = _header_int(toks, "nseq", path, lineno)
            if info["nseq"] == 0:              # HMMER: "Invalid nseq on NSEQ line"
                raise InputError(f"invalid nseq {toks[1]!r} on NSEQ line", path, lineno)
        elif tag == "EFFN":
            _need(toks, 2, "EFFN", path, lineno)
            info["effn"] = _stat_float(toks[1], path, lineno)
            if info["effn"] <= 0:              # HMMER: "Invalid eff_nseq on EFFN line"
                raise InputError(f"invalid eff_nseq {toks[1]!r} on EFFN line (must be > 0)", path, lineno)
        elif tag == "CKSUM":
            info["cksum"] = _header_int(toks, "checksum", path, lineno)
        elif tag in ("GA", "TC", "NC"):
            _need(toks, 3, tag, path, lineno)
            info[tag.lower()] = (_stat_float(toks[1], path, lineno), _stat_float(toks[2], path, lineno))
        elif tag == "STATS":
            if vidx >= 1:
                _need(toks, 5, "STATS", path, lineno)
                if toks[1].upper() != "LOCAL":
                    raise InputError(f"failed to parse STATS: {toks[1]!r} unrecognized as field 2", path, lineno)
                kind = toks[2].upper()
                if kind not in ("MSV", "VITERBI", "FORWARD"):
                    raise InputError(f"failed to parse STATS: {toks[2]!r} unrecognized as field 3", path, lineno)
                stats[kind] = (_stat_float(toks[3], path, lineno, True), _stat_float(toks[4], path, lineno, True))
            else:
                _need(toks, 4, "STATS", path, lineno)
                if toks[1].upper() != "LOCAL":
                    raise InputError(f"failed to parse STATS: {toks[1]!r} unrecognized as field 2", path, lineno)
                kind = toks[2].upper()
                if kind not in ("VLAMBDA", "VMU", "FTAU"):
                    raise InputError(f"failed to parse STATS: {toks[2]!r} unrecognized as field 3", path, lineno)
                stats[kind] = _stat_float(toks[3], path, lineno, True)
        # Other tags are ignored, as HMMER does.
    if info["name"] is None:
        raise InputError("no NAME found for HMM", path, hmm_line)
    if info["M"] is None:
        raise InputError("no LENG found for HMM", path, hmm_line)
    if not alph_seen:
        raise InputError("no ALPH found for HMM", path, hmm_line)
    if vidx >= 4 and not flags.get("CONS"):   # HMMER then has no consensus and stops (modelconfig.c)
        raise InputError(f"format {version} needs 'CONS yes' (HMMER cannot configure a model without its "
                         "consensus)", path, flag_lines.get("CONS", hmm_line))
    msv = viterbi = forward = None
    if vidx >= 1:
        if stats:
            if len(stats) != 3:
                raise InputError("missing one or more STATS parameter lines", path, hmm_line)
            msv, viterbi, forward = stats["MSV"], stats["VITERBI"], stats["FORWARD"]
    elif stats:
        if len(stats) != 3:
            raise InputError("missing one or more STATS parameter lines", path, hmm_line)
        lam = stats["VLAMBDA"]
        msv = (stats["VMU"], lam)
        viterbi = (stats["VMU"], lam)
        forward = (stats["FTAU"], lam)

    M = info["M"]
    lineno, toks, raw = lines.next()  # transition names line
    if lineno is None:
        raise InputError("premature end of data before main model section", path, lines.last_line)
    lineno, toks, raw = lines.next()
    if lineno is None:
        raise InputError("premature end of data before main model section", path, lines.last_line)
    compo = None
    if toks[0] == "COMPO":
        _need(toks, K + 1, "COMPO", path, lineno)
        compo = _neglog_to_prob(toks[1:K + 1], path, lineno)
        lineno, toks, raw = lines.next()
        if lineno is None:
            raise InputError("premature end of data after COMPO line", path, lines.last_line)
    # Body values are collected as text per section and converted in bulk at the end (fast);
    # (tokens, line number) pairs let a conversion error name its line.
    mtok, itok, ttok, where = [], [], [], []
    if len(toks) < K:
        raise InputError(f"too few fields on insert line, node 0: expected {K}, got {len(toks)}", path, lineno)
    itok.extend(toks[:K])
    where.append(("i", lineno))
    lineno, toks, raw = lines.next()
    if lineno is None:
        raise InputError("premature end of data in main model: no node 0 transition line", path, lines.last_line)
    if len(toks) < 7:
        raise InputError(f"too few fields on begin (node 0) transition line: expected 7, got {len(toks)}",
                         path, lineno)
    ttok.extend(toks[:7])
    where.append(("t", lineno))
    # annotation fields after the 20 match values: MAP [CONS] RF [MM] CS
    n_annot = 3 + (vidx >= 4) + (vidx >= 5)
    cons = []
    for k in range(1, M + 1):
        lineno, toks, raw = lines.next()
        if lineno is None:
            raise InputError(f"premature end of data in main model section, at node {k} (expected {M})",
                             path, lines.last_line)
        if toks[0] == "//":
            raise InputError(f"model ends at node {k - 1} but LENG says {M}", path, lineno)
        try:
            node = int(toks[0])
        except ValueError:
            node = None
        if node != k:
            raise InputError(f"expected match line to start with {k} (of {M}); saw {toks[0]!r}", path, lineno)
        if len(toks) < 1 + K:
            raise InputError(f"too few probability fields on match line, node {k}: expected {K}, got {len(toks) - 1}",
                             path, lineno)
        if len(toks) < 1 + K + n_annot:
            raise InputError(f"missing annotation fields on match line for node {k} (format {version} has "
                             f"{n_annot}: MAP{' CONS' if vidx >= 4 else ''} RF{' MM' if vidx >= 5 else ''} CS; "
                             "each should at least be -)", path, lineno)
        mtok.extend(toks[1:1 + K])
        where.append(("m", lineno))
        if vidx >= 4:
            cons.append(toks[1 + K + 1])
        lineno, toks, raw = lines.next()
        if lineno is None:
            raise InputError(f"premature end of data in main model: no insert emission line, node {k}",
                             path, lines.last_line)
        if len(toks) < K:
            raise InputError(f"too few probability fields on insert line, node {k}: expected {K}, got {len(toks)}",
                             path, lineno)
        itok.extend(toks[:K])
        where.append(("i", lineno))
        lineno, toks, raw = lines.next()
        if lineno is None:
            raise InputError(f"premature end of data in main model: no transition line, node {k}",
                             path, lines.last_line)
        if len(toks) < 7:
            raise InputError(f"too few probability fields on transition line, node {k}: expected 7, got {len(toks)}",
                             path, lineno)
        ttok.extend(toks[:7])
        where.append(("t", lineno))
    lineno, toks, raw = lines.next()
    if lineno is None:
        raise InputError("premature end of data: missing // at the end of the model", path, lines.last_line)
    if toks[0] != "//":
        raise InputError(f"expected closing //; found {toks[0]!r} instead (more nodes than LENG {M}?)", path, lineno)
    try:
        mat = np.zeros((M + 1, K), dtype=np.float32)
        mat[0, 0] = 1.0
        mat[1:] = _bulk_prob(mtok).reshape(M, K)
        ins = _bulk_prob(itok).reshape(M + 1, K)
        t = _bulk_prob(ttok).reshape(M + 1, 7)
    except ValueError:
        _locate_bad_value(mtok, itok, ttok, where, path)
        raise
    return HMM(name=info["name"], M=M, mat=mat, ins=ins, t=t, version=version, acc=info["acc"], desc=info["desc"],
               compo=compo, msv=msv, viterbi=viterbi, forward=forward, ga=info["ga"], tc=info["tc"], nc=info["nc"],
               nseq=info["nseq"], effn=info["effn"], cksum=info["cksum"], max_length=info["max_length"],
               date=info["date"], com=com, flags=flags,
               consensus="".join(cons) if cons and flags.get("CONS") else None,
               path=None if path is None else str(path), line=start)


def read_hmms(path) -> Iterator[HMM]:
    """Yield every model of a HMMER3 text HMM file (plain or gzip), in file order.

    Raises :class:`~clalign.errors.InputError` ("path:line: reason") on malformed input,
    on nucleotide models and on an empty file.
    """
    yield from read_hmms_text(_read_text(path), path)


def read_hmms_text(text: str, path, first: int = 1, whole: bool = True) -> Iterator[HMM]:
    """:func:`read_hmms` of a file's text (``first``: the number of its first line; ``whole``
    False: a piece of a file, which may hold no model)."""
    lines = _Lines(text, path, first)
    n = 0
    while True:
        hmm = _parse_one(lines, path)
        if hmm is None:
            break
        n += 1
        yield hmm
    if n == 0 and whole:
        raise InputError("no HMM found (empty file?)", path, 1)


def read_hmm(path) -> HMM:
    """The single model of an HMM file; InputError if the file holds none or several."""
    hmms = list(read_hmms(path))
    if len(hmms) != 1:
        raise InputError(f"expected exactly one HMM, found {len(hmms)}", path, hmms[1].line)
    return hmms[0]
