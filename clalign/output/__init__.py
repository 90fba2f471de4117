"""One output module for every engine: alignment records, BLAST+ tabular (-outfmt 6/7), tsv, json.

API (stable; engines build :class:`Alignment` records and hand writers an open text handle --
this module never opens output paths itself):

- ``Alignment`` (frozen dataclass): query_id, subject_id, qlen, slen, score, bitscore, evalue,
  qstart, qend, sstart, send (1-based, inclusive), qseq, sseq (aligned, '-' = gap), nident,
  positive, gaps, gapopen, subject_index (database order), subject_title, query_title;
  properties length, mismatch, pident, ppos, cigar, btop.
  ``Alignment.make(query_id, subject_id, qlen, slen, score, bitscore, evalue, qstart, sstart,
  qseq, sseq, scores=None, letters=None, **extra)`` derives ends and counts from the strings.
- ``QueryHits(query_id, qlen, hits=[], title=None)``: what the writers take (any object with
  those attributes will do); ``hits`` a list of records, or (BLASTN) a ``columns.HitRows``: rows of
  a ``columns.RecordColumns`` block (records as arrays), an Alignment made per item asked for.
- ``order_hits(alignments) -> list``: BLAST+'s order (best E-value, score, later subject first;
  a subject's HSPs together). ``hsp_order_key(a)``, ``query_coverage(alignments, qlen)``.
- ``parse_outfmt(spec, extra=("tsv", "json")) -> (kind, columns)``: "6", "7", "6 qseqid ...".
- ``write_tabular(fh, results, columns=STD_FIELDS, comments=False, program="BLASTP 2.12.0+",
  database="")``: -outfmt 6 (comments=False) / 7; every column formatted for all rows at once
  (``tabular.column_values``, the ``FIELDS`` getters' text), the order by arrays (``tabular.order_rows``),
  the lines put together in one byte matrix (``tabular_bytes``).
- ``write_tsv(fh, results)``, ``write_json(fh, results)``.
- ``format_evalue(e)``, ``format_bitscore(b)``: BLAST+ 2.12's number formatting.
- ``FIELDS`` (column name -> (label, getter)), ``STD_FIELDS``, ``TSV_COLUMNS``.
"""
from .formats import TSV_COLUMNS, alignment_dict, write_json, write_tsv
from .record import Alignment, QueryHits, cigar, coverage_percent, hsp_order_key, order_hits, query_coverage
from .tabular import FIELDS, STD_FIELDS, format_bitscore, format_evalue, parse_outfmt, write_tabular

__all__ = ["Alignment", "QueryHits", "order_hits", "hsp_order_key", "query_coverage", "coverage_percent",
           "cigar", "parse_outfmt", "write_tabular", "write_tsv", "write_json", "alignment_dict",
           "format_evalue", "format_bitscore", "FIELDS", "STD_FIELDS", "TSV_COLUMNS"]
