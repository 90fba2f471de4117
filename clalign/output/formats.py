"""clalign's own formats: ``tsv`` (one header line, one row per alignment) and ``json``
(per query: its hits with statistics, coordinates, CIGAR and aligned strings)."""
from __future__ import annotations

import json

from .record import order_hits
from .tabular import format_bitscore, format_evalue

TSV_COLUMNS = ("qseqid", "sseqid", "score", "qlen", "slen", "evalue", "bitscore", "qstart", "qend",
               "sstart", "send", "nident", "length", "cigar")


def write_tsv(fh, results) -> None:
    """Header line, then per alignment the TSV_COLUMNS (queries in input order, hits in BLAST order)."""
    fh.write("\t".join(TSV_COLUMNS) + "\n")
    for r in results:
        for a in order_hits(list(r.hits)):
            fh.write(f"{a.query_id}\t{a.subject_id}\t{a.score}\t{a.qlen}\t{a.slen}\t{format_evalue(a.evalue)}\t"
                     f"{format_bitscore(a.bitscore)}\t{a.qstart}\t{a.qend}\t{a.sstart}\t{a.send}\t"
                     f"{a.nident}\t{a.length}\t{a.cigar}\n")


def alignment_dict(a) -> dict:
    """JSON-ready fields of one alignment (numbers unformatted)."""
    return {"subject_index": a.subject_index, "subject_id": a.subject_id, "slen": a.slen, "score": a.score,
            "bitscore": a.bitscore, "evalue": a.evalue, "qstart": a.qstart, "qend": a.qend,
            "sstart": a.sstart, "send": a.send, "length": a.length, "nident": a.nident,
            "positive": a.positive, "mismatch": a.mismatch, "gapopen": a.gapopen, "gaps": a.gaps,
            "pident": a.pident, "cigar": a.cigar, "qseq": a.qseq, "sseq": a.sseq}


def write_json(fh, results) -> None:
    """A list of per-query objects: query_id, qlen, seconds (when known) and hits."""
    out = []
    for r in results:
        d = {"query_id": r.query_id, "qlen": r.qlen}
        if getattr(r, "seconds", None) is not None:
            d["seconds"] = round(float(r.seconds), 6)
        d["hits"] = [alignment_dict(a) for a in order_hits(list(r.hits))]
        out.append(d)
    fh.write(json.dumps(out, indent=1) + "\n")
