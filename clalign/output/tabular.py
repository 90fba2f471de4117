"""BLAST+ tabular output (``-outfmt 6`` and ``7``), number formatting as BLAST+ 2.12 prints it.

Formatting rules (``CAlignFormatUtil::GetScoreString`` and ``CBlastTabularInfo::SetScores`` of
the NCBI C++ toolkit, checked against blastp 2.12 output):

- evalue: ``0.0`` below 1e-180; ``%.2e`` below 0.0009; ``%4.3f`` below 0.1; ``%3.2f`` below 1;
  ``%2.1f`` below 10; else ``%2.0f``;
- bitscore: ``%5.3e`` above 99999; the integer part (``%3ld`` of the truncated value) above 99.9;
  else ``%4.1f``;
- pident ``%.3f``, ppos ``%.2f``; query coverage ``+0.5`` below 99 % then truncated.
"""
from __future__ import annotations

from ..errors import ParameterError
from .record import coverage_percent, order_hits, query_coverage


def format_evalue(e: float) -> str:
    if e < 1.0e-180:
        return "0.0"
    if e < 0.0009:
        return "%.2e" % e
    if e < 0.1:
        return "%4.3f" % e
    if e < 1.0:
        return "%3.2f" % e
    if e < 10.0:
        return "%2.1f" % e
    return "%2.0f" % e


def format_bitscore(b: float) -> str:
    if b > 99999:
        return "%5.3e" % b
    if b > 99.9:
        return "%3d" % int(b)
    return "%4.1f" % b


def _first_word(s: str) -> str:
    return s.split(None, 1)[0] if s.strip() else s


# name -> (label in '# Fields:', value(alignment, context) -> str). ``ctx`` holds per-subject
# query coverage ('qcovs') for the current query.
FIELDS = {
    "qseqid": ("query id", lambda a, c: a.query_id),
    "qacc": ("query acc.", lambda a, c: a.query_id),
    "qaccver": ("query acc.ver", lambda a, c: a.query_id),
    "qlen": ("query length", lambda a, c: str(a.qlen)),
    "sseqid": ("subject id", lambda a, c: a.subject_id),
    "sallseqid": ("subject ids", lambda a, c: a.subject_id),
    "sacc": ("subject acc.", lambda a, c: a.subject_id),
    "saccver": ("subject acc.ver", lambda a, c: a.subject_id),
    "slen": ("subject length", lambda a, c: str(a.slen)),
    "qstart": ("q. start", lambda a, c: str(a.qstart)),
    "qend": ("q. end", lambda a, c: str(a.qend)),
    "sstart": ("s. start", lambda a, c: str(a.sstart)),
    "send": ("s. end", lambda a, c: str(a.send)),
    "qseq": ("query seq", lambda a, c: a.qseq),
    "sseq": ("subject seq", lambda a, c: a.sseq),
    "evalue": ("evalue", lambda a, c: format_evalue(a.evalue)),
    "bitscore": ("bit score", lambda a, c: format_bitscore(a.bitscore)),
    "score": ("score", lambda a, c: str(a.score if a.score > 0 else -1)),
    "length": ("alignment length", lambda a, c: str(a.length)),
    "pident": ("% identity", lambda a, c: "%.3f" % a.pident),
    "nident": ("identical", lambda a, c: str(a.nident)),
    "mismatch": ("mismatches", lambda a, c: str(a.mismatch)),
    "positive": ("positives", lambda a, c: str(a.positive)),
    "gapopen": ("gap opens", lambda a, c: str(a.gapopen)),
    "gaps": ("gaps", lambda a, c: str(a.gaps)),
    "ppos": ("% positives", lambda a, c: "%.2f" % a.ppos),
    "btop": ("BTOP", lambda a, c: a.btop),
    "stitle": ("subject title", lambda a, c: a.subject_title or a.subject_id),
    "salltitles": ("subject titles", lambda a, c: a.subject_title or a.subject_id),
    "sstrand": ("subject strand", lambda a, c: a.sstrand),
    "qcovs": ("% query coverage per subject", lambda a, c: str(c["qcovs"][(a.subject_index, a.subject_id)])),
    "qcovhsp": ("% query coverage per hsp",
                lambda a, c: str(coverage_percent(abs(a.qend - a.qstart) + 1, a.qlen))),
}

# BLAST+'s "std" column set (-outfmt 6 / 7 without a list).
STD_FIELDS = ("qaccver", "saccver", "pident", "length", "mismatch", "gapopen", "qstart", "qend",
              "sstart", "send", "evalue", "bitscore")


def std_row(a) -> str:
    """The ``STD_FIELDS`` row of ``a`` (no newline): what the ``FIELDS`` getters give, joined by
    tabs, in one format call (the default columns of every search's tabular output)."""
    n = len(a.qseq)
    pident = a.nident / n * 100 if n > 0 else 0.0
    return (f"{a.query_id}\t{a.subject_id}\t{pident:.3f}\t{n}\t{n - a.nident - a.gaps}\t"
            f"{a.gapopen}\t{a.qstart}\t{a.qend}\t{a.sstart}\t{a.send}\t{format_evalue(a.evalue)}\t"
            f"{format_bitscore(a.bitscore)}")


def parse_outfmt(spec, extra=("tsv", "json")):
    """(kind, columns) of an ``-outfmt`` value: ``"6"``, ``"7"``, ``"6 qseqid sseqid ..."`` (``std``
    expands to the 12 standard columns) or one of ``extra`` (then columns is None)."""
    text = str(spec).strip()
    if text in extra:
        return text, None
    parts = text.split()
    if not parts or parts[0] not in ("6", "7"):
        raise ParameterError(f"-outfmt {spec!r}: expected 6, 7 (optionally followed by column names) "
                             f"or one of {', '.join(extra)}")
    cols = []
    for name in parts[1:]:
        if name == "std":
            cols.extend(STD_FIELDS)
        elif name in FIELDS:
            cols.append(name)
        else:
            raise ParameterError(f"-outfmt: unknown column {name!r}; supported: std, {', '.join(FIELDS)}")
    return parts[0], tuple(cols) if cols else STD_FIELDS


def _coverage_map(hits, qlen):
    groups = {}
    for a in hits:
        groups.setdefault((a.subject_index, a.subject_id), []).append(a)
    return {k: query_coverage(v, qlen) for k, v in groups.items()}


def write_tabular(fh, results, columns=STD_FIELDS, comments=False, program="BLASTP 2.12.0+",
                  database=""):
    """Write BLAST tabular rows for ``results`` (QueryHits-like: query_id, qlen, hits, title) to
    the text handle ``fh``; ``comments=True`` is -outfmt 7 (BLAST+'s comment lines per query and
    the closing '# BLAST processed N queries'). Hits are written in BLAST+'s order."""
    getters = [FIELDS[c][1] for c in columns]
    fields_line = "# Fields: " + ", ".join(FIELDS[c][0] for c in columns) + "\n"
    need_cov = "qcovs" in columns
    std = tuple(columns) == STD_FIELDS and not comments
    n = 0
    for r in results:
        n += 1
        hits = order_hits(list(r.hits))
        ctx = {"qcovs": _coverage_map(hits, r.qlen) if need_cov else None}
        if comments:
            title = getattr(r, "title", None) or r.query_id
            fh.write(f"# {program}\n# Query: {title}\n# Database: {database}\n")
            if hits:
                fh.write(fields_line)
            fh.write(f"# {len(hits)} hits found\n")
        if std:
            fh.write("".join(std_row(a) + "\n" for a in hits))
            continue
        for a in hits:
            fh.write("\t".join(g(a, ctx) for g in getters))
            fh.write("\n")
    if comments:
        fh.write(f"# BLAST processed {n} queries\n")
